//! Each agent's launch facts (`agent_paths::launch`) against its real pinned CLI, offline
//! (`unshare -n`, a home of the test's own): every option its `--help` lists is in the table,
//! kept or dropped, and the table names none it does not list; and it refuses an option it does
//! not know, exiting non-zero with its parser's message, which is why a restore drops a recorded
//! flag the table no longer has rather than pass it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::{codex_offline, copilot_offline, gemini_offline, qwen_offline};

use crate::Sandbox;
use crate::harness::make_dir;

const TARGET_TMPDIR: &str = env!("CARGO_TARGET_TMPDIR");

/// The pinned CLI of `agent` in the build dir, and the environment it needs besides a home.
fn installed(agent: &str) -> (PathBuf, Vec<(&'static str, PathBuf)>) {
    match agent {
        "claude" => {
            let cli = Path::new(TARGET_TMPDIR)
                .parent()
                .unwrap()
                .join("claude-code/claude");
            assert!(
                cli.is_file(),
                "Claude Code is not installed at {}: run `cargo xtask claude-cli install`",
                cli.display()
            );
            (cli, Vec::new())
        }
        "codex" => (codex_offline::installed_cli(TARGET_TMPDIR), Vec::new()),
        "gemini" => (gemini_offline::installed_cli(TARGET_TMPDIR), Vec::new()),
        "copilot" => {
            let installed = copilot_offline::installed_cli(TARGET_TMPDIR);
            (installed.cli, vec![("COPILOT_CACHE_HOME", installed.cache)])
        }
        "qwen" => (qwen_offline::installed_cli(TARGET_TMPDIR), Vec::new()),
        other => panic!("no pinned CLI for {other}"),
    }
}

/// Runs the pinned CLI of `agent` with `args`, without a network, in a home of its own.
fn run(env: &Sandbox, agent: &str, args: &[&str]) -> Output {
    let (cli, vars) = installed(agent);
    let home = make_dir(&env.root().join(format!("home-{agent}")));
    Command::new("unshare")
        .args(["-n", "--"])
        .arg(cli)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("NO_COLOR", "1")
        .envs(vars)
        .current_dir(&home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The option names a `--help` lists: the names at the start of each option line (indented a
/// little; a description's continuation is indented further), before its description.
fn help_options(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let line = line.trim();
        if !line.starts_with('-') || indent > 8 {
            continue;
        }
        let head = line.split("  ").next().unwrap_or(line);
        for word in head.split([' ', ',', '=', '<', '[']) {
            let name = word.trim_end_matches(',');
            let is_name = name.len() > 1
                && name.starts_with('-')
                && name
                    .trim_start_matches('-')
                    .starts_with(|c: char| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if is_name {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// The names of `agent`'s table.
fn table(agent: &str) -> BTreeSet<String> {
    let facts = agent_paths::facts_of(agent).unwrap();
    facts
        .launch
        .flags
        .iter()
        .flat_map(|flag| flag.names.iter().map(ToString::to_string))
        .collect()
}

#[test]
fn each_tables_options_are_the_ones_its_pinned_cli_lists() {
    let env = Sandbox::default();
    let cases: [(&str, &[&[&str]]); 5] = [
        ("claude", &[&["--help"]]),
        // `codex resume` takes the same session-shaping options, and a few of its own.
        ("codex", &[&["--help"], &["resume", "--help"]]),
        ("gemini", &[&["--help"]]),
        ("copilot", &[&["--help"]]),
        ("qwen", &[&["--help"]]),
    ];
    for (agent, helps) in cases {
        let mut listed = BTreeSet::new();
        for args in helps {
            let output = run(&env, agent, args);
            assert!(output.status.success(), "{agent} {args:?}: {output:?}");
            listed.extend(help_options(&String::from_utf8_lossy(&output.stdout)));
        }
        assert!(listed.len() > 20, "{agent}: {listed:?}");
        let table = table(agent);
        let unlisted: Vec<_> = listed.difference(&table).collect();
        let extra: Vec<_> = table.difference(&listed).collect();
        assert!(
            unlisted.is_empty() && extra.is_empty(),
            "{agent}: listed by --help, not in the table: {unlisted:?}; in the table, not \
             listed: {extra:?}"
        );
    }
}

#[test]
fn each_pinned_cli_refuses_an_option_it_does_not_know() {
    let env = Sandbox::default();
    let flag = "--crash-resume-no-such-option";
    // (agent, its exit code, what its parser says)
    let answers = [
        (
            "claude",
            1,
            "unknown option '--crash-resume-no-such-option'",
        ),
        (
            "codex",
            2,
            "unexpected argument '--crash-resume-no-such-option'",
        ),
        (
            "gemini",
            1,
            "Unknown arguments: crash-resume-no-such-option",
        ),
        (
            "copilot",
            1,
            "unexpected argument '--crash-resume-no-such-option'",
        ),
        ("qwen", 1, "Unknown arguments: crash-resume-no-such-option"),
    ];
    for (agent, code, says) in answers {
        let output = run(&env, agent, &[flag]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(code), "{agent}: {output:?}");
        assert!(
            stderr.contains(says) || stdout.contains(says),
            "{agent}: {stderr} {stdout}"
        );
    }
}

/// The real Claude Code, started in a pane through a wrapper of the user's with flags, a model
/// variable and a prompt (`-p`, offline: its API on a loopback port nothing listens on, in the
/// pane's network namespace): its SessionStart hook runs inside Claude Code, and the entry keeps
/// the wrapper, exactly the allowed flags and the variable, never the prompt. After the pane is
/// killed, `restore --apply tmux` runs the wrapper again, and the Claude Code it starts has
/// exactly those flags after `--resume <id>`, and the variable.
#[test]
fn the_flags_claude_code_was_started_with_are_kept_and_passed_again_by_restore() {
    use crate::harness::{
        PANE_SHELL, PanePlace, bin_dir, crash_resume_agent, plan_by_surface, restore, server_name,
        shell_word,
    };
    use crate::hook::agent_tui::{
        OfflineTmux, alive, descendants, enter, hooks_running, keys, recorded, wait_for,
    };
    let env = Sandbox::default();
    let (cli, _) = installed("claude");
    let installed_hooks = crash_resume_agent(&env)
        .args(["hook", "install", "claude"])
        .output()
        .unwrap();
    assert!(installed_hooks.status.success(), "{installed_hooks:?}");
    let project = make_dir(&env.root().join("proj"));
    let project = project.canonicalize().unwrap();
    let bin = bin_dir(&env);
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("cl");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\n{} \"$@\"\n", shell_word(cli.to_str().unwrap())),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let name = server_name("claude");
    let place = (PanePlace::new("claude", 0, 0), project, PANE_SHELL);
    let tmux = OfflineTmux::start(&env, &name, &[place]);
    let server = tmux.server();
    let pane = "claude:0.0";
    let offline = "ANTHROPIC_BASE_URL=http://127.0.0.1:9 ANTHROPIC_API_KEY=dummy \
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=0";
    keys(
        server,
        pane,
        &format!(
            "{offline} ANTHROPIC_MODEL=claude-x cl --add-dir ../common-lib --model opus \
             --permission-mode acceptEdits -p 'hello secret'; echo ran-$?"
        ),
    );
    enter(server, pane);
    wait_for("Claude Code's print run to end", || {
        server.capture(pane).contains("ran-1").then_some(())
    });
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let surface = recorded(&env, "claude", 0, 0);
    let entry = env.entry(&surface).expect("the session is recorded");
    let session = entry["sessionId"].as_str().unwrap().to_string();
    let kept = [
        "--add-dir",
        "../common-lib",
        "--model",
        "opus",
        "--permission-mode",
        "acceptEdits",
    ];
    assert_eq!(entry["launch"]["args"], serde_json::json!(kept), "{entry}");
    assert_eq!(
        entry["launch"]["env"]["ANTHROPIC_MODEL"], "claude-x",
        "{entry}"
    );
    assert_eq!(
        entry["launch"]["wrapper"],
        serde_json::json!({"path": wrapper.to_str().unwrap(), "passes_args": true}),
        "{entry}"
    );
    assert!(!entry.to_string().contains("hello secret"), "{entry}");

    // A crash of the pane; restore runs the wrapper in it again.
    let shell: u32 = server.display(pane, "#{pane_pid}").parse().unwrap();
    let family = descendants(shell);
    server.tmux(&["kill-pane", "-t", pane]);
    wait_for("the pane's processes to end", || {
        family.iter().all(|pid| !alive(*pid)).then_some(())
    });
    for (variable, value) in [
        ("ANTHROPIC_API_KEY", "dummy"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ] {
        server.tmux(&["set-environment", "-g", variable, value]);
    }
    let plan = plan_by_surface(&restore(&env, true, &[]).stdout);
    let command = plan[&surface]["command"].as_str().unwrap().to_string();
    assert!(
        command.contains(&format!(
            "ANTHROPIC_MODEL=claude-x {} --resume {session} {}",
            wrapper.display(),
            kept.join(" ")
        )),
        "{command}"
    );
    let applied = restore(&env, true, &["--apply", "tmux", "--tmux-socket", &name]);
    assert!(applied.status.success(), "{applied:?}");
    let shell: u32 = wait_for("the restored pane", || {
        server
            .try_tmux(&["display-message", "-p", "-t", pane, "#{pane_pid}"])
            .ok()
            .and_then(|pid| pid.parse().ok())
    });
    let mut expected = vec!["--resume".to_string(), session];
    expected.extend(kept.map(String::from));
    let claude = wait_for("Claude Code to run in the restored pane", || {
        descendants(shell).into_iter().find_map(|pid| {
            let words = test_support::process::command_line(pid)?;
            let args = proc_table::arguments_of(&words, "claude")?;
            let args: Vec<String> = args
                .iter()
                .map(|word| word.to_string_lossy().into_owned())
                .collect();
            Some((pid, args))
        })
    });
    assert_eq!(claude.1, expected, "the restored Claude Code's argv");
    let environment = test_support::process::environment(claude.0).unwrap();
    assert!(
        environment
            .iter()
            .any(|entry| entry == "ANTHROPIC_MODEL=claude-x"),
        "the restored Claude Code's environment"
    );
}
