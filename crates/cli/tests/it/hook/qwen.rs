//! `crash-resume hook qwen` without the real CLI, with Qwen Code's payloads as 0.24.4 sends them:
//! the start records the session with Qwen Code's config dir, prints nothing on stdout (Qwen
//! Code reads a hook's stdout as its JSON answer); an end (`prompt_input_exit`, alike for a
//! `/quit` and a crash) counts only from a pane that still exists.

use serde_json::json;

use crate::Sandbox;
use crate::harness::{
    Vars, crash_resume_agent, hook_log, make_dir, run_with_stdin, uuid, with_vars,
};

/// A Qwen Code payload of `event` for session 1 in `work`.
fn payload(work: &std::path::Path, event: &str) -> String {
    let mut payload = json!({
        "session_id": uuid(1),
        "transcript_path": work.join(format!("{}.jsonl", uuid(1))),
        "cwd": work,
        "hook_event_name": event,
        "timestamp": "2026-12-02T21:00:00.000Z",
    });
    match event {
        "SessionStart" => {
            payload["source"] = json!("startup");
            payload["model"] = json!("mock-model");
        }
        _ => payload["reason"] = json!("prompt_input_exit"),
    }
    payload.to_string()
}

/// The hook at `event` with `vars`, silent on stdout.
fn hook(env: &Sandbox, work: &std::path::Path, event: &str, vars: &[(&str, &str)]) {
    let mut hook = crash_resume_agent(env);
    hook.args(["hook", "qwen"]);
    run_with_stdin(with_vars(hook, vars), &payload(work, event)).assert_silent_success(event);
}

#[test]
fn the_start_records_qwens_config_dir_and_an_end_from_a_gone_pane_marks_nothing() {
    const DEAD_TMUX: Vars = &[
        ("CRASH_RESUME_SURFACE", "tmux:work:0.0"),
        ("TMUX_PANE", "%5"),
        ("TMUX", "/crash-resume-tests-no-such-dir/socket,1,0"),
    ];
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let qwen_home = env.root().join("qh");
    let qwen_home = qwen_home.to_str().unwrap();
    let start: Vars = &[("CRASH_RESUME_SURFACE", "tmux:work:0.0")];
    let with_home: Vec<(&str, &str)> = start
        .iter()
        .copied()
        .chain([("QWEN_HOME", qwen_home)])
        .collect();
    hook(&env, &work, "SessionStart", &with_home);
    let entry = &env.entries()["tmux:work:0.0"];
    assert_eq!(entry["provider"], "qwen", "{entry}");
    assert_eq!(entry["config_dir"], qwen_home, "{entry}");
    hook(&env, &work, "SessionEnd", DEAD_TMUX);
    let entry = &env.entries()["tmux:work:0.0"];
    assert!(
        entry["ended_at"].is_null(),
        "a gone pane's end is no end: {entry}"
    );
    let log = hook_log(&env);
    assert!(
        log.contains("ended where no surface can be named any more"),
        "{log}"
    );
}

#[test]
fn a_relative_qwen_home_is_recorded_against_the_working_dir() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    hook(
        &env,
        &work,
        "SessionStart",
        &[
            ("CRASH_RESUME_SURFACE", "cmux:A"),
            ("QWEN_HOME", "state/../qh"),
        ],
    );
    let entry = &env.entries()["cmux:A"];
    assert_eq!(
        entry["config_dir"],
        work.join("qh").to_str().unwrap(),
        "{entry}"
    );
}

/// A `QWEN_RUNTIME_DIR` that only the environment names cannot be recorded: the log says so and
/// what to do; one that the config dir's `.env` names is found again by a restore, and nothing
/// is said.
#[test]
fn a_runtime_dir_only_the_environment_names_is_said_in_the_log() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let runtime = env.root().join("runtime");
    let runtime = runtime.to_str().unwrap();
    let vars = [
        ("CRASH_RESUME_SURFACE", "cmux:A"),
        ("QWEN_RUNTIME_DIR", runtime),
    ];
    hook(&env, &work, "SessionStart", &vars);
    let log = hook_log(&env);
    assert!(
        log.contains("hook qwen: warning:") && log.contains("QWEN_RUNTIME_DIR in"),
        "{log}"
    );

    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let qwen_dir = make_dir(&env.home().join(".qwen"));
    std::fs::write(
        qwen_dir.join(".env"),
        format!("QWEN_RUNTIME_DIR={runtime}\n"),
    )
    .unwrap();
    hook(&env, &work, "SessionStart", &vars);
    assert!(!hook_log(&env).contains("warning"), "{}", hook_log(&env));
}
