//! `crash-resume hook install copilot` without the real CLI: a file of our own in
//! `$COPILOT_HOME/hooks/`, merged, idempotent, backed up, uninstalled.

use std::fs;

use serde_json::{Value, json};

use crate::Sandbox;
use crate::hook::copilot::{backups, hook_command, hooks, hooks_file};

#[test]
fn hook_install_copilot_writes_its_own_hooks_file_idempotently_and_uninstalls() {
    let env = Sandbox::default();
    let first = hook_command(&env, &["install", "copilot"]);
    assert!(first.status.success(), "{first:?}");
    let said = String::from_utf8_lossy(&first.stderr);
    assert!(said.contains("at the first prompt"), "{said}");
    let written = hooks(&env);
    assert_eq!(written["version"], 1, "{written}");
    let start = &written["hooks"]["sessionStart"][0];
    let command = start["bash"].as_str().unwrap();
    assert!(command.ends_with(" hook copilot sessionStart"), "{command}");
    assert_eq!(start["type"], "command");
    assert_eq!(start["timeoutSec"], 10);
    let end = written["hooks"]["sessionEnd"][0]["bash"].as_str().unwrap();
    assert_eq!(end, command.replace("sessionStart", "sessionEnd"));

    let again = hook_command(&env, &["install", "copilot"]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("already installed in "));
    assert_eq!(backups(&env), 0, "a new file has nothing to back up");

    // Another hook the user put in our file stays; ours from another binary path is replaced.
    let mut edited = hooks(&env);
    edited["hooks"]["sessionStart"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"type": "command", "bash": "other-tool start"}));
    let mut old = shlex::split(end).unwrap();
    old[0] = "/old/bin/crash-resume".to_string();
    edited["hooks"]["sessionEnd"][0]["bash"] =
        Value::from(shlex::try_join(old.iter().map(String::as_str)).unwrap());
    fs::write(hooks_file(&env), edited.to_string()).unwrap();
    let replaced = hook_command(&env, &["install", "copilot"]);
    assert!(replaced.status.success(), "{replaced:?}");
    let merged = hooks(&env);
    let starts = merged["hooks"]["sessionStart"].as_array().unwrap();
    assert_eq!(starts.len(), 2, "{merged}");
    assert_eq!(starts[0]["bash"], "other-tool start");
    let ends = merged["hooks"]["sessionEnd"].as_array().unwrap();
    assert_eq!(ends.len(), 1, "{merged}");
    assert_eq!(ends[0]["bash"], end);
    assert_eq!(backups(&env), 1);

    let removed = hook_command(&env, &["uninstall", "copilot"]);
    assert!(removed.status.success(), "{removed:?}");
    let left = hooks(&env);
    assert_eq!(
        left["hooks"]["sessionStart"],
        json!([{"type": "command", "bash": "other-tool start"}])
    );
    assert_eq!(left["hooks"].get("sessionEnd"), None, "{left}");
    assert_eq!(backups(&env), 2);
}

/// A relative `COPILOT_HOME`, or a home dir that is relative or not there, names no one dir
/// Copilot will read: the install refuses it (exit 2) and writes nothing anywhere, the dir it
/// runs in included. A `~` in the variable is the home dir.
#[test]
fn a_relative_or_missing_home_is_refused_and_nothing_is_written() {
    let env = Sandbox::default();
    let run = |vars: &[(&str, &str)]| {
        let mut command = crate::harness::crash_resume_agent(&env);
        command.current_dir(env.root()).env_remove("COPILOT_HOME");
        for (name, value) in vars {
            command.env(name, value);
        }
        command
            .args(["hook", "install", "copilot"])
            .output()
            .unwrap()
    };
    // The agent's environment (its bin and run dirs) is made with the first command.
    drop(crate::harness::crash_resume_agent(&env));
    let before = paths_under(env.root());
    let missing = env.root().join("no-such-home");
    for (vars, said) in [
        (
            vec![("COPILOT_HOME", "state")],
            "COPILOT_HOME is a relative path (state), which Copilot resolves from whichever dir",
        ),
        (
            vec![("HOME", "home")],
            "HOME is a relative path (home), which Copilot resolves",
        ),
        (
            vec![("HOME", missing.to_str().unwrap())],
            "is not an existing dir, so Copilot's settings under it would be written where",
        ),
    ] {
        let output = run(&vars);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{vars:?}: {stderr}");
        assert!(stderr.contains(said), "{vars:?}: {stderr}");
        assert_eq!(paths_under(env.root()), before, "{vars:?}");
    }
    let tilde = run(&[("COPILOT_HOME", "~/tilde-home")]);
    assert!(tilde.status.success(), "{tilde:?}");
    assert!(
        env.home()
            .join("tilde-home/hooks/crash-resume.json")
            .is_file()
    );
}

/// Every path under `dir`, sorted.
fn paths_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut paths = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            paths.extend(paths_under(&path));
        }
        paths.push(path);
    }
    paths.sort();
    paths
}

/// A hooks file of another format version is left as it is: Copilot would read hooks of ours
/// in it by that format, or not at all.
#[test]
fn a_hooks_file_of_another_version_is_left_as_it_is() {
    let env = Sandbox::default();
    fs::create_dir_all(hooks_file(&env).parent().unwrap()).unwrap();
    for version in ["2", "\"1\"", "null"] {
        let text = format!(r#"{{"version": {version}, "hooks": {{}}}}"#);
        fs::write(hooks_file(&env), &text).unwrap();
        let run = hook_command(&env, &["install", "copilot"]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{version}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "its \"version\" is {version}, not the format 1 that crash-resume writes hooks in"
            )),
            "{version}: {stderr}"
        );
        assert_eq!(fs::read_to_string(hooks_file(&env)).unwrap(), text);
        assert_eq!(backups(&env), 0);
    }
}
