//! `crash-resume hook install qwen` and `uninstall qwen` without the real CLI: the hooks in
//! `$QWEN_HOME/settings.json`, else in the `QWEN_HOME` of `~/.qwen/.env` or `~/.env`, else
//! `~/.qwen/settings.json`, every other setting kept; uninstall takes ours out and nothing else.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::Sandbox;
use crate::harness::{crash_resume_agent, make_dir};

/// Settings a user already has: an unrelated `general` key and another tool's hook.
const EXISTING: &str = r#"{
  "general": { "enableAutoUpdate": false },
  "hooks": {
    "SessionStart": [ { "hooks": [ { "type": "command", "command": "other-tool start" } ] } ]
  },
  "model": { "name": "qwen3-coder-plus" }
}
"#;

fn hook(env: &Sandbox, verb: &str, vars: &[(&str, &str)]) -> std::process::Output {
    crash_resume_agent(env)
        .args(["hook", verb, "qwen"])
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}

fn settings(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// The commands of the `event` hooks in `settings`.
fn commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|hook| Some(hook["command"].as_str()?.to_string()))
        .collect()
}

/// Installs twice and uninstalls in the settings at `path`, with `vars`.
fn check_round_trip(env: &Sandbox, path: &Path, vars: &[(&str, &str)]) {
    make_dir(path.parent().unwrap());
    fs::write(path, EXISTING).unwrap();
    for _ in 0..2 {
        let installed = hook(env, "install", vars);
        assert!(installed.status.success(), "{installed:?}");
    }
    let merged = settings(path);
    assert_eq!(merged["general"], json!({ "enableAutoUpdate": false }));
    assert_eq!(merged["model"]["name"], "qwen3-coder-plus");
    let starts = commands(&merged, "SessionStart");
    assert_eq!(starts.len(), 2, "idempotent: {starts:?}");
    assert_eq!(starts[0], "other-tool start");
    assert!(starts[1].ends_with(" hook qwen"), "{starts:?}");
    let ends = commands(&merged, "SessionEnd");
    assert_eq!(ends.len(), 1);
    assert!(ends[0].ends_with(" hook qwen"), "{ends:?}");

    let removed = hook(env, "uninstall", vars);
    assert!(removed.status.success(), "{removed:?}");
    let left = settings(path);
    assert_eq!(commands(&left, "SessionStart"), ["other-tool start"]);
    assert!(commands(&left, "SessionEnd").is_empty(), "{left}");
    assert_eq!(left["model"]["name"], "qwen3-coder-plus");
}

#[test]
fn the_hooks_go_into_the_default_config_dir() {
    let env = Sandbox::default();
    let path = env.home().join(".qwen/settings.json");
    check_round_trip(&env, &path, &[]);
}

#[test]
fn the_hooks_go_into_qwen_home() {
    let env = Sandbox::default();
    let dir = env.root().join("qwen-home");
    check_round_trip(
        &env,
        &dir.join("settings.json"),
        &[("QWEN_HOME", dir.to_str().unwrap())],
    );
    assert!(!env.home().join(".qwen/settings.json").exists());
}

#[test]
fn the_hooks_go_into_the_qwen_home_of_the_home_env_file() {
    let env = Sandbox::default();
    let dir = env.root().join("from-env");
    fs::write(
        env.home().join(".env"),
        format!("QWEN_HOME={}\n", dir.display()),
    )
    .unwrap();
    check_round_trip(&env, &dir.join("settings.json"), &[]);
}
