//! `crash-resume doctor` through the real binary in a sandbox whose `PATH` holds only the
//! programs a test puts there: all well exits 0; a missing hook, a hook that runs another
//! binary, a volatile index, a state dir that cannot be written, errors in `hook.log` each exit
//! 1 and name the command that fixes them; `--json` says the same as a document.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::snapshot::assert_cli_snapshot;
use crate::{BIN, Sandbox, crash_resume_as_nobody, sandboxed};

/// The dir that is the whole `PATH` of the commands run here.
fn bin_dir(env: &Sandbox) -> PathBuf {
    let dir = env.root().join("doctor-bin");
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A program named `name` on the sandbox's `PATH` that prints `version` (as `--version` or
/// `-V` ask) and exits 0.
fn put_program(env: &Sandbox, name: &str, version: &str) {
    let path = bin_dir(env).join(name);
    fs::write(&path, format!("#!/bin/sh\nprintf '%s\\n' '{version}'\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// The binary under test in the sandbox, its `PATH` the sandbox's programs alone and no agent's
/// config-dir variable from the caller.
fn crash_resume(env: &Sandbox) -> std::process::Command {
    let mut command = sandboxed(env, BIN);
    command.env("PATH", bin_dir(env));
    for variable in ["GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR"] {
        command.env_remove(variable);
    }
    command
}

fn run(env: &Sandbox, args: &[&str]) -> Output {
    crash_resume(env).args(args).output().unwrap()
}

fn install(env: &Sandbox, target: &str) {
    let output = run(env, &["hook", "install", target]);
    assert!(output.status.success(), "hook install {target}: {output:?}");
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn doctor_json(env: &Sandbox, args: &[&str]) -> (Option<i32>, Value) {
    let output = run(env, &[&["--json", "doctor"], args].concat());
    let document = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", text(&output)));
    (output.status.code(), document)
}

/// The problems of a `--json` document as (subject, fix) pairs.
fn problems(document: &Value) -> Vec<(String, String)> {
    document["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| {
            (
                problem["subject"].as_str().unwrap().to_string(),
                problem["fix"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A sandbox where all is well: Claude Code at the pinned version with its hook, tmux at the
/// pinned version with its restore at server start.
fn all_well() -> Sandbox {
    let env = Sandbox::default();
    put_program(
        &env,
        "claude",
        &format!(
            "{} (Claude Code)",
            test_support::transcript::CLAUDE_CODE_VERSION
        ),
    );
    put_program(&env, "tmux", "tmux 3.3a");
    install(&env, "claude");
    install(&env, "tmux");
    env
}

#[test]
fn all_well_exits_0_and_says_each_check() {
    let env = all_well();
    let output = run(&env, &["doctor"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(output.stderr.is_empty(), "{}", text(&output));
    assert_cli_snapshot!(&env, "all_well", text(&output));

    let (code, document) = doctor_json(&env, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(document["version"], 1);
    assert_eq!(document["all_well"], true);
    assert_eq!(document["problems"], json!([]));
    let claude = &document["hooks"][0];
    assert_eq!(
        (
            &claude["target"],
            &claude["installed"],
            &claude["runs_this_binary"]
        ),
        (&json!("claude"), &json!(true), &json!(true))
    );
    let tmux = document["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hook| hook["target"] == "tmux")
        .unwrap();
    assert_eq!(tmux["installed"], true);
    let program = |name: &str| {
        document["programs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|program| program["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(program("claude")["standing"], "pinned");
    assert_eq!(program("tmux")["version"], "3.3a");
    assert_eq!(program("qwen")["standing"], "missing");
    assert_eq!(
        program("qwen")["pinned"],
        test_support::transcript::QWEN_VERSION
    );
    assert_cli_snapshot!(
        &env,
        "all_well_json",
        String::from_utf8(run(&env, &["--json", "doctor"]).stdout).unwrap()
    );
}

#[test]
fn an_agent_on_path_without_its_hook_needs_the_install_that_fixes_it() {
    let env = all_well();
    put_program(&env, "qwen", test_support::transcript::QWEN_VERSION);
    // Another version than the pinned one is a note, not a problem.
    put_program(&env, "codex", "codex-cli 0.1.0");
    let output = run(&env, &["hook", "install", "codex", "--codex-title"]);
    assert!(output.status.success(), "{output:?}");
    let output = run(&env, &["doctor"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert_cli_snapshot!(&env, "qwen_not_hooked", text(&output));
    let output = run(&env, &["--json", "doctor"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: 1 thing needs doing; each is in `problems`, with the command that fixes it as \
         its `fix`\n"
    );
    let (code, document) = doctor_json(&env, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(document["all_well"], false);
    let index = env.index_path();
    assert_eq!(
        problems(&document),
        [(
            "qwen".to_string(),
            format!("crash-resume --path {} hook install qwen", index.display())
        )]
    );

    // The fix it names fixes it.
    install(&env, "qwen");
    assert_eq!(run(&env, &["doctor"]).status.code(), Some(0));
}

/// Codex's hooks run in its daemon, which finds the pane by its title: a title without the
/// thread id records nothing, and `--codex-title` fixes it.
#[test]
fn a_codex_hook_whose_title_lacks_the_thread_id_needs_codex_title() {
    let env = all_well();
    install(&env, "codex");
    let (code, document) = doctor_json(&env, &[]);
    assert_eq!(code, Some(1));
    let fix = format!(
        "crash-resume --path {} hook install codex --codex-title",
        env.index_path().display()
    );
    assert_eq!(problems(&document), [("codex".to_string(), fix)]);
    let codex = &document["hooks"][1];
    assert_eq!(codex["title_shows_thread_id"], false, "{codex}");
    assert!(document["hooks"][0].get("title_shows_thread_id").is_none());

    let output = run(&env, &["hook", "install", "codex", "--codex-title"]);
    assert!(output.status.success(), "{output:?}");
    let (code, document) = doctor_json(&env, &[]);
    assert_eq!(code, Some(0), "{document}");
    assert_eq!(document["hooks"][1]["title_shows_thread_id"], true);
}

#[test]
fn a_hook_that_runs_another_binary_needs_installing_again() {
    let env = all_well();
    let settings = env.home().join(".claude/settings.json");
    let old = env.root().join("old/crash-resume");
    let written = fs::read_to_string(&settings)
        .unwrap()
        .replace(&format!("\"{BIN} "), &format!("\"{} ", old.display()));
    assert!(written.contains(old.to_str().unwrap()), "{written}");
    fs::write(&settings, written).unwrap();
    let output = run(&env, &["doctor"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert_cli_snapshot!(&env, "hook_runs_another_binary", text(&output));

    install(&env, "claude");
    assert_eq!(run(&env, &["doctor"]).status.code(), Some(0));
}

#[test]
fn no_hook_at_all_and_no_agent_says_to_hook_one() {
    let env = Sandbox::default();
    let (code, document) = doctor_json(&env, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        problems(&document),
        [(
            "agents".to_string(),
            format!(
                "crash-resume --path {} hook install claude",
                env.index_path().display()
            )
        )]
    );
}

/// A volatile index (one under /tmp) is a problem whose fix installs each hook again with a
/// durable index; with `--allow-volatile` it is a note.
#[test]
fn a_volatile_index_needs_a_durable_one() {
    let env = all_well();
    let volatile = std::env::temp_dir()
        .join(format!("crash-resume-doctor-{}", std::process::id()))
        .join("index.json");
    let volatile = volatile.to_str().unwrap();
    let output = run(&env, &["--path", volatile, "doctor"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let said = String::from_utf8(output.stdout).unwrap();
    let durable = env.home().join(".local/state/crash-resume/index.json");
    let fix = format!(
        "fix: crash-resume --path {0} hook install claude && crash-resume --path {0} hook \
         install tmux (and set CRASH_RESUME_INDEX_PATH={0} where you run list and restore)",
        durable.display()
    );
    let reason = match index_store::durability(camino::Utf8Path::new(volatile)) {
        index_store::Durability::Volatile(reason) => reason,
        index_store::Durability::Durable => panic!("{volatile} is durable here"),
    };
    assert!(
        said.contains(&format!("volatile ({reason}): a reboot wipes it")),
        "{said}"
    );
    assert!(said.contains(&fix), "{said}");
    // The hooks record into the sandbox's index, not the one checked.
    assert!(said.contains("records into"), "{said}");
    assert!(
        !Path::new(volatile).exists(),
        "doctor creates nothing: {volatile}"
    );

    let (_, document) = doctor_json(&env, &["--allow-volatile", "--path", volatile]);
    assert!(
        !problems(&document)
            .iter()
            .any(|(subject, _)| subject == volatile),
        "{document}"
    );
    assert!(
        document["notes"].as_array().unwrap().iter().any(|note| note
            .as_str()
            .unwrap()
            .contains("accepted by --allow-volatile")),
        "{document}"
    );
}

/// A state dir that cannot be made (a file where its parent should be), and one another user
/// owns (doctor run as nobody).
#[test]
fn a_state_dir_that_cannot_be_written_is_a_problem_with_its_fix() {
    let env = all_well();
    let file = env.root().join("a-file");
    fs::write(&file, "").unwrap();
    let index = file.join("state/index.json");
    let (code, document) = doctor_json(&env, &["--path", index.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    let state_dir = file.join("state");
    assert_eq!(document["index"]["state_dir_writable"], false);
    assert!(
        problems(&document).contains(&(
            state_dir.display().to_string(),
            format!(
                "mkdir -p -m 700 {} (as a user who may), or choose another index with --path",
                state_dir.display()
            )
        )),
        "{document}"
    );

    // The sandbox's state dir is root's, 0700: nobody can write into it.
    test_support::sandbox::open_to_others(env.root());
    fs::create_dir_all(env.index_dir()).unwrap();
    fs::set_permissions(env.index_dir(), fs::Permissions::from_mode(0o755)).unwrap();
    // `setpriv` found on the test's `PATH`; the binary then runs with the sandbox's.
    let setpriv = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("setpriv"))
        .find(|path| path.is_file())
        .expect("setpriv on PATH");
    let output = sandboxed(&env, setpriv)
        .args(crash_resume_as_nobody(&env).get_args())
        .env("PATH", bin_dir(&env))
        .args(["--json", "doctor"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["index"]["state_dir_exists"], true);
    assert_eq!(document["index"]["state_dir_writable"], false);
    let state_dir = env.index_dir().display().to_string();
    assert!(
        problems(&document).contains(&(
            state_dir.clone(),
            format!("chmod u+rwx {state_dir} (as its owner), or choose another index with --path")
        )),
        "{document}"
    );
}

/// Errors in `hook.log`: the last ones are shown; a last line that is an error is a problem.
#[test]
fn errors_in_the_hook_log_are_shown_and_the_latest_failing_is_a_problem() {
    let env = all_well();
    let log = env.index_dir().join("hook.log");
    fs::create_dir_all(env.index_dir()).unwrap();
    let lines: Vec<String> = (1..=7)
        .map(|n| {
            format!(
                "2026-12-02T21:00:0{n}.000Z pid {n} hook claude (3ms): error: cannot find the \
                 pane (attempt {n})"
            )
        })
        .collect();
    fs::write(&log, lines.join("\n") + "\n").unwrap();
    let output = run(&env, &["doctor"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert_cli_snapshot!(&env, "hook_log_errors", text(&output));
    let (_, document) = doctor_json(&env, &[]);
    assert_eq!(
        document["hook_log"]["last_errors"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(
        problems(&document),
        [(
            log.display().to_string(),
            format!("tail -n 20 {}", log.display())
        )]
    );

    // A record since the log's last line: its errors stay shown, nothing needs doing.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    fs::File::options()
        .append(true)
        .open(&log)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let output = run(&env, &["record", "tmux:/x/default:w:0.0", "s-1", "proj"]);
    assert!(output.status.success(), "{}", text(&output));
    let (code, document) = doctor_json(&env, &[]);
    assert_eq!(code, Some(0), "{document}");
    assert_eq!(document["hook_log"]["index_written_since"], true);
    assert_eq!(
        document["hook_log"]["last_errors"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}
