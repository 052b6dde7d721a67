//! How each agent was started, read by its hook from the agent's own process, and started so
//! again: a stand-in per agent (its program's name, run as the agents are run: a script run by
//! `sh`, by `node` through its shebang, through a symlink) is started with session-shaping
//! flags, one-shot flags, a prompt and a credential among its variables, and fires the real
//! hook as its child. The entry keeps exactly the allowed flags and the agent's model and
//! provider variables; the command `resume-cmd` gives starts a process whose argv holds exactly
//! those flags after the resume arguments, with the variables set; a recorded flag the pinned
//! CLI does not take is dropped with a note.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    claude_dir, crash_resume_agent, make_dir, run_with_stdin, session_start, shell_word, uuid,
    write_transcript,
};
use crate::{BIN, Sandbox};

/// One agent's case: how its stand-in is started, what its hook gets, and what must be kept.
struct Case {
    agent: &'static str,
    /// The hook's arguments after `hook`.
    hook: &'static [&'static str],
    /// How the stand-in is run: `sh`, `node` or `symlink`.
    how: &'static str,
    /// Its command line after the program.
    args: &'static [&'static str],
    /// What the entry must keep of it.
    kept: &'static [&'static str],
    /// Its variables besides the sandbox's.
    vars: &'static [(&'static str, &'static str)],
    /// Those the entry must keep.
    kept_vars: &'static [(&'static str, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        agent: "claude",
        hook: &["claude"],
        how: "sh",
        args: &[
            "--model",
            "opus",
            "--permission-mode",
            "acceptEdits",
            "-p",
            "a secret prompt",
            "--add-dir",
            "../common-lib dir",
            "--output-format",
            "json",
            "--resume",
            "abc",
        ],
        kept: &[
            "--model",
            "opus",
            "--permission-mode",
            "acceptEdits",
            "--add-dir",
            "../common-lib dir",
        ],
        vars: &[
            ("ANTHROPIC_MODEL", "claude-x $(id)"),
            ("ANTHROPIC_API_KEY", "sk-secret"),
        ],
        kept_vars: &[("ANTHROPIC_MODEL", "claude-x $(id)")],
    },
    Case {
        agent: "codex",
        hook: &["codex"],
        how: "sh",
        args: &[
            "--profile",
            "work",
            "-s",
            "workspace-write",
            "-i",
            "a.png",
            "fix it",
        ],
        kept: &["--profile", "work", "-s", "workspace-write"],
        vars: &[
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_API_KEY", "sk-secret"),
        ],
        kept_vars: &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")],
    },
    Case {
        agent: "gemini",
        hook: &["gemini"],
        how: "node",
        args: &[
            "-m",
            "gemini-2.5-pro",
            "--approval-mode",
            "auto_edit",
            "-p",
            "secret",
            "-y",
        ],
        kept: &["-m", "gemini-2.5-pro", "--approval-mode", "auto_edit", "-y"],
        vars: &[("GEMINI_MODEL", "gemini-x"), ("GEMINI_API_KEY", "secret")],
        kept_vars: &[("GEMINI_MODEL", "gemini-x")],
    },
    Case {
        agent: "copilot",
        hook: &["copilot", "sessionStart"],
        how: "sh",
        args: &[
            "--model",
            "gpt-5",
            "--allow-tool",
            "write",
            "shell",
            "-i",
            "secret",
            "--no-such",
        ],
        kept: &["--model", "gpt-5", "--allow-tool", "write", "shell"],
        vars: &[("COPILOT_MODEL", "gpt-5"), ("GH_TOKEN", "secret")],
        kept_vars: &[("COPILOT_MODEL", "gpt-5")],
    },
    Case {
        agent: "qwen",
        hook: &["qwen"],
        how: "symlink",
        args: &[
            "--approval-mode",
            "auto-edit",
            "--openai-api-key",
            "sk-1",
            "fix",
            "-mqwen3",
        ],
        kept: &["--approval-mode", "auto-edit", "-mqwen3"],
        vars: &[("OPENAI_MODEL", "qwen3"), ("OPENAI_API_KEY", "sk-1")],
        kept_vars: &[("OPENAI_MODEL", "qwen3")],
    },
];

/// Every variable of every agent's table, and the credentials above: none of the test
/// machine's reaches a stand-in.
fn clear_agent_vars(command: &mut Command) {
    for facts in agent_paths::AGENTS {
        for name in facts.launch.env {
            command.env_remove(name);
        }
    }
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GH_TOKEN",
    ] {
        command.env_remove(name);
    }
}

/// Writes the stand-in of `case` in `dir`, named as the agent's program: it runs the hook as
/// its child, the payload on its stdin. Returns the path to start.
fn stand_in(dir: &Path, case: &Case) -> PathBuf {
    let hook: Vec<String> = case.hook.iter().map(|word| shell_word(word)).collect();
    let (text, name) = match case.how {
        "node" => (
            format!(
                "#!/usr/bin/env node\nconst r = require('child_process').spawnSync({}, {}, \
                 {{ stdio: 'inherit' }});\nprocess.exit(r.status === null ? 1 : r.status);\n",
                json!(BIN),
                json!(["hook"].iter().chain(case.hook).collect::<Vec<_>>()),
            ),
            case.agent.to_string(),
        ),
        _ => (
            format!("#!/bin/sh\n{} hook {}\n", shell_word(BIN), hook.join(" ")),
            match case.how {
                "symlink" => format!("{}-cli.sh", case.agent),
                _ => case.agent.to_string(),
            },
        ),
    };
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    if case.how == "symlink" {
        let link = dir.join(case.agent);
        std::os::unix::fs::symlink(&path, &link).unwrap();
        return link;
    }
    path
}

/// The agent's SessionStart payload for session 1 in `work`.
fn payload(agent: &str, work: &Path) -> String {
    match agent {
        "claude" => session_start(&uuid(1), work, "startup"),
        "copilot" => json!({ "sessionId": uuid(1), "timestamp": 1_764_600_000_000_u64, "cwd": work,
            "source": "new" })
        .to_string(),
        _ => json!({ "session_id": uuid(1), "cwd": work, "hook_event_name": "SessionStart",
            "source": "startup", "transcript_path": null })
        .to_string(),
    }
}

/// Starts `case`'s stand-in in `surface`; returns the entry its hook recorded.
fn start(env: &Sandbox, case: &Case, surface: &str, work: &Path) -> Value {
    start_with(env, case, surface, work, &[])
}

/// [`start`], with `vars` besides the case's.
fn start_with(
    env: &Sandbox,
    case: &Case,
    surface: &str,
    work: &Path,
    vars: &[(&str, &str)],
) -> Value {
    let dir = make_dir(&env.root().join(format!("agents-{}", case.agent)));
    // The sandbox's environment, the stand-in as the program.
    let sandboxed = crash_resume_agent(env);
    let mut command = Command::new(stand_in(&dir, case));
    for (name, value) in sandboxed.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    clear_agent_vars(&mut command);
    command
        .args(case.args)
        .current_dir(work)
        .env("CRASH_RESUME_SURFACE", surface)
        .envs(case.vars.iter().copied())
        .envs(vars.iter().copied());
    run_with_stdin(command, &payload(case.agent, work)).assert_silent_success(case.agent);
    env.entries()[surface].clone()
}

#[test]
fn each_agent_keeps_its_allowed_flags_and_variables_read_from_its_own_process() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    for (n, case) in CASES.iter().enumerate() {
        let surface = format!("tmux:launch:0.{n}");
        let entry = start(&env, case, &surface, &work);
        assert_eq!(entry["provider"], case.agent, "{entry}");
        assert_eq!(
            entry["launch"]["args"],
            json!(case.kept),
            "{}: {entry}",
            case.agent
        );
        let vars: serde_json::Map<String, Value> = case
            .kept_vars
            .iter()
            .map(|(name, value)| (name.to_string(), json!(value)))
            .collect();
        assert_eq!(
            entry["launch"]["env"],
            Value::Object(vars),
            "{}: {entry}",
            case.agent
        );
        let text = entry.to_string();
        for secret in ["secret", "sk-1", "fix it", "a.png"] {
            assert!(
                !text.contains(secret),
                "{}: {secret} kept: {entry}",
                case.agent
            );
        }
    }
}

/// A hook not run by its agent (here by a shell of the test) reads no launch: the entry has
/// none, and a later one of the same pane keeps the one before.
#[test]
fn a_hook_without_its_agent_among_its_ancestors_records_no_launch() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let entry = start(&env, &CASES[0], "tmux:launch:0.0", &work);
    assert!(entry["launch"].is_object(), "{entry}");
    let mut hook = crash_resume_agent(&env);
    hook.args(["hook", "claude"])
        .env("CRASH_RESUME_SURFACE", "tmux:launch:0.0");
    run_with_stdin(hook, &payload("claude", &work)).assert_silent_success("by hand");
    assert_eq!(env.entries()["tmux:launch:0.0"]["launch"], entry["launch"]);

    let mut hook = crash_resume_agent(&env);
    hook.args(["hook", "claude"])
        .env("CRASH_RESUME_SURFACE", "tmux:launch:0.1");
    run_with_stdin(hook, &payload("claude", &work)).assert_silent_success("by hand");
    assert_eq!(env.entries()["tmux:launch:0.1"].get("launch"), None);
}

/// The argv and the model variable of the program a resume command starts, as a recording
/// stand-in `claude` on `PATH` writes them (one word a line).
fn started_by(env: &Sandbox, command: &str) -> (Vec<String>, String) {
    let bin = make_dir(&env.root().join("restored-bin"));
    let out = env.root().join("restored-argv");
    let _ = fs::remove_file(&out);
    let recorder = bin.join("claude");
    fs::write(
        &recorder,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"model=${{ANTHROPIC_MODEL-}}\" \"$@\" > {}\n",
            shell_word(out.to_str().unwrap())
        ),
    )
    .unwrap();
    fs::set_permissions(&recorder, fs::Permissions::from_mode(0o755)).unwrap();
    let mut shell = Command::new("sh");
    clear_agent_vars(&mut shell);
    let path = std::env::var("PATH").unwrap_or_default();
    let ran = shell
        .args(["-c", command])
        .env("PATH", format!("{}:{path}", bin.display()))
        .output()
        .unwrap();
    assert!(ran.status.success(), "{command}: {ran:?}");
    let text = fs::read_to_string(&out).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let model = lines.remove(0);
    (lines, model)
}

#[test]
fn the_resume_command_starts_the_agent_with_exactly_the_kept_flags_and_its_variables() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let work = fs::canonicalize(work).unwrap();
    let case = &CASES[0];
    start(&env, case, "tmux:launch:0.0", &work);
    write_transcript(
        &claude_dir(&env),
        &work,
        &uuid(1),
        Duration::from_secs(3600),
    );

    let ran = crash_resume_agent(&env)
        .args(["resume-cmd", "tmux:launch:0.0"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let command = String::from_utf8(ran.stdout).unwrap();
    let (argv, model) = started_by(&env, command.trim_end());
    let mut expected = vec!["--resume".to_string(), uuid(1)];
    expected.extend(case.kept.iter().map(ToString::to_string));
    assert_eq!(argv, expected, "{command}");
    assert_eq!(model, "model=claude-x $(id)", "{command}");

    // `--json`: the command and the launch it was made from.
    let ran = crash_resume_agent(&env)
        .args(["--json", "resume-cmd", "tmux:launch:0.0"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(json["command"], command.trim_end(), "{json}");
    assert_eq!(json["launch"]["args"], json!(case.kept), "{json}");
    assert_eq!(
        json["launch"]["env"]["ANTHROPIC_MODEL"], "claude-x $(id)",
        "{json}"
    );
    assert_eq!(json["launch"].get("dropped"), None, "{json}");

    // The restore plan's command is the same, in its table and its --json.
    let plan = crash_resume_agent(&env)
        .args(["--json", "restore"])
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(plan["surfaces"][0]["command"], command.trim_end(), "{plan}");
    let table = crash_resume_agent(&env).args(["restore"]).output().unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("--permission-mode acceptEdits"), "{table}");
}

/// A flag recorded by an older version that the pinned CLI no longer takes is left out of the
/// command, and `resume-cmd` and `restore` say so.
#[test]
fn a_recorded_flag_the_cli_no_longer_takes_is_dropped_with_a_note() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let work = fs::canonicalize(work).unwrap();
    start(&env, &CASES[0], "tmux:launch:0.0", &work);
    write_transcript(
        &claude_dir(&env),
        &work,
        &uuid(1),
        Duration::from_secs(3600),
    );
    let mut index: Value = serde_json::from_slice(&env.index_bytes().unwrap()).unwrap();
    index["entries"]["tmux:launch:0.0"]["launch"]["args"] =
        json!(["--model", "opus", "--old-flag", "--verbose"]);
    fs::write(env.index_path(), serde_json::to_vec_pretty(&index).unwrap()).unwrap();

    let ran = crash_resume_agent(&env)
        .args(["resume-cmd", "tmux:launch:0.0"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let stderr = String::from_utf8(ran.stderr).unwrap();
    assert!(
        stderr.contains("--old-flag") && stderr.contains("no longer takes"),
        "{stderr}"
    );
    let (argv, _) = started_by(&env, String::from_utf8(ran.stdout).unwrap().trim_end());
    assert_eq!(argv, ["--resume", &uuid(1), "--model", "opus", "--verbose"]);
    let restore = crash_resume_agent(&env)
        .args(["--json", "restore"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(restore.stderr).unwrap();
    assert!(stderr.contains("--old-flag"), "{stderr}");
    let plan: Value = serde_json::from_slice(&restore.stdout).unwrap();
    assert_eq!(
        plan["surfaces"][0]["launch"]["dropped"],
        json!(["--old-flag"]),
        "{plan}"
    );
}

/// Writes an executable shell script `name` in `dir` with `body`; returns its path.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Starts Claude Code's stand-in through `wrapper` (found on `PATH`, as a user runs it) with
/// `args`; returns the entry.
fn start_through(env: &Sandbox, wrapper: &Path, args: &[&str], work: &Path) -> Value {
    let agents = make_dir(&env.root().join("agents-claude"));
    stand_in(&agents, &CASES[0]);
    let sandboxed = crash_resume_agent(env);
    let mut command = Command::new("sh");
    for (name, value) in sandboxed.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    clear_agent_vars(&mut command);
    let path = std::env::var("PATH").unwrap_or_default();
    command
        .args(["-c", "name=$1; shift; \"$name\" \"$@\"", "sh"])
        .arg(wrapper.file_name().unwrap())
        .args(args)
        .current_dir(work)
        .env(
            "PATH",
            format!(
                "{}:{}:{path}",
                wrapper.parent().unwrap().display(),
                agents.display()
            ),
        )
        .env("CRASH_RESUME_SURFACE", "tmux:launch:0.0")
        .env("ANTHROPIC_MODEL", "m1");
    run_with_stdin(command, &payload("claude", work)).assert_silent_success("wrapper");
    env.entries()["tmux:launch:0.0"].clone()
}

/// A wrapper of the user's that passes its arguments on (`"$@"`) is recorded, and the resume
/// command runs it with the resume arguments and the flags the user gave it; the agent it
/// starts gets exactly those.
#[test]
fn a_wrapper_that_passes_its_arguments_on_is_run_again_with_them() {
    let env = Sandbox::default();
    let work = fs::canonicalize(make_dir(&env.root().join("work"))).unwrap();
    let bin = make_dir(&env.root().join("user bin"));
    let wrapper = script(&bin, "cl", "claude --verbose \"$@\"");
    let entry = start_through(&env, &wrapper, &["--model", "opus", "-p", "secret"], &work);
    assert_eq!(
        entry["launch"]["wrapper"],
        json!({"path": wrapper.to_str().unwrap(), "passes_args": true}),
        "{entry}"
    );
    // The flags the user gave the wrapper, not the one it adds itself.
    assert_eq!(
        entry["launch"]["args"],
        json!(["--model", "opus"]),
        "{entry}"
    );
    write_transcript(
        &claude_dir(&env),
        &work,
        &uuid(1),
        Duration::from_secs(3600),
    );
    let ran = crash_resume_agent(&env)
        .args(["--json", "resume-cmd", "tmux:launch:0.0"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&ran.stdout).unwrap();
    let command = json["command"].as_str().unwrap();
    assert!(
        command.contains(&format!("'{}' --resume {}", wrapper.display(), uuid(1))),
        "{command}"
    );
    assert_eq!(json["launch"]["wrapper"]["used"], true, "{json}");
    let (argv, model) = started_by(&env, command);
    assert_eq!(argv, ["--verbose", "--resume", &uuid(1), "--model", "opus"]);
    assert_eq!(model, "model=m1");
}

/// A wrapper that does not pass its arguments on is not run again: the agent is started
/// itself, with the flags it got, and `resume-cmd` says so.
#[test]
fn a_wrapper_that_does_not_pass_its_arguments_on_is_not_run_and_the_plan_says_so() {
    let env = Sandbox::default();
    let work = fs::canonicalize(make_dir(&env.root().join("work"))).unwrap();
    let bin = make_dir(&env.root().join("user bin"));
    let wrapper = script(&bin, "cl", "claude --model sonnet --permission-mode plan");
    let entry = start_through(&env, &wrapper, &["ignored"], &work);
    assert_eq!(entry["launch"]["wrapper"]["passes_args"], false, "{entry}");
    assert_eq!(
        entry["launch"]["args"],
        json!(["--model", "sonnet", "--permission-mode", "plan"]),
        "{entry}"
    );
    write_transcript(
        &claude_dir(&env),
        &work,
        &uuid(1),
        Duration::from_secs(3600),
    );
    let ran = crash_resume_agent(&env)
        .args(["resume-cmd", "tmux:launch:0.0"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let stderr = String::from_utf8(ran.stderr).unwrap();
    assert!(
        stderr.contains("does not pass its arguments on") && stderr.contains("Claude Code itself"),
        "{stderr}"
    );
    let (argv, _) = started_by(&env, String::from_utf8(ran.stdout).unwrap().trim_end());
    assert_eq!(
        argv,
        [
            "--resume",
            &uuid(1),
            "--model",
            "sonnet",
            "--permission-mode",
            "plan"
        ]
    );
}

/// A recorded wrapper that another user could change since (writable by others) is never run
/// on a restore: the agent is started itself, and `resume-cmd` says why.
#[test]
fn a_wrapper_others_can_write_is_not_run() {
    let env = Sandbox::default();
    let work = fs::canonicalize(make_dir(&env.root().join("work"))).unwrap();
    let bin = make_dir(&env.root().join("user bin"));
    let wrapper = script(&bin, "cl", "claude \"$@\"");
    let entry = start_through(&env, &wrapper, &["--model", "opus"], &work);
    assert_eq!(entry["launch"]["wrapper"]["passes_args"], true, "{entry}");
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o777)).unwrap();
    write_transcript(
        &claude_dir(&env),
        &work,
        &uuid(1),
        Duration::from_secs(3600),
    );
    let ran = crash_resume_agent(&env)
        .args(["--json", "resume-cmd", "tmux:launch:0.0"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let json: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(json["launch"]["wrapper"]["used"], false, "{json}");
    let why = json["launch"]["wrapper"]["why"].as_str().unwrap();
    assert!(
        why.contains("is not safe to run") && why.contains("written by others"),
        "{why}"
    );
    let command = json["command"].as_str().unwrap();
    assert!(!command.contains(wrapper.to_str().unwrap()), "{command}");
    let (argv, _) = started_by(&env, command);
    assert_eq!(argv, ["--resume", &uuid(1), "--model", "opus"]);
}

/// Qwen Code's `QWEN_RUNTIME_DIR`, set only in the environment it ran with: recorded with its
/// launch (the hook no longer warns that a restore will not find the session), the session is
/// looked for there, and the resume command sets it again.
#[test]
fn qwens_runtime_dir_is_recorded_looked_in_and_set_again() {
    let env = Sandbox::default();
    let work = fs::canonicalize(make_dir(&env.root().join("work"))).unwrap();
    let runtime = make_dir(&env.root().join("qwen runtime"));
    let runtime = runtime.to_str().unwrap();
    let qwen = &CASES[4];
    let entry = start_with(
        &env,
        qwen,
        "tmux:launch:0.4",
        &work,
        &[("QWEN_RUNTIME_DIR", runtime)],
    );
    assert_eq!(
        entry["launch"]["env"]["QWEN_RUNTIME_DIR"], runtime,
        "{entry}"
    );
    let log = crate::harness::hook_log(&env);
    assert!(!log.contains("QWEN_RUNTIME_DIR"), "{log}");

    let resume_cmd = || {
        crash_resume_agent(&env)
            .args(["resume-cmd", "tmux:launch:0.4"])
            .output()
            .unwrap()
    };
    // Nothing in the runtime dir yet: fresh.
    assert_eq!(resume_cmd().status.code(), Some(4));
    let cwd = camino::Utf8Path::from_path(&work).unwrap();
    let chats = preflight::qwen::chats_dir(
        camino::Utf8Path::new(runtime),
        &preflight::qwen::physical_dir(cwd.as_str(), None),
    );
    fs::create_dir_all(&chats).unwrap();
    let line = json!({
        "uuid": "u1", "parentUuid": null, "sessionId": uuid(1), "type": "user", "cwd": cwd,
        "timestamp": "2026-12-01T07:49:08.000Z",
        "message": {"role": "user", "parts": [{"text": "hi"}]},
    });
    fs::write(
        chats.join(format!("{}.jsonl", uuid(1))),
        format!("{line}\n"),
    )
    .unwrap();
    let ran = resume_cmd();
    assert!(ran.status.success(), "{ran:?}");
    let command = String::from_utf8(ran.stdout).unwrap();
    assert!(
        command.contains(&format!("QWEN_RUNTIME_DIR='{runtime}'"))
            && command.trim_end().ends_with(&format!(
                "qwen --resume {} --approval-mode auto-edit -mqwen3",
                uuid(1)
            )),
        "{command}"
    );
}
