//! `crash-resume hook codex` and `restore` for Codex, through the real binary: a hook that runs
//! under Codex's daemon never uses the daemon's environment, records nothing when no pane's title
//! shows the session and says why once per daemon, and its `SessionEnd` marks nothing ended;
//! outside it, Codex's `SessionEnd` (always reason `other`) marks the end; `restore` says why a
//! Codex session is or is not offered. (The same, with the real Codex CLI in tmux panes:
//! `codex_tui.rs`.)

use std::fs;
use std::path::Path;

use serde_json::json;

use crate::Sandbox;
use crate::harness::{
    agent_command, codex_home, git_work_dir, hook_log, plan_by_surface, restore, run_hook,
};

const SESSION: &str = "01a23094-3121-70a0-bec0-cf272c3675d9";

fn payload(event: &str, cwd: &Path, extra: &serde_json::Value) -> String {
    let mut payload = json!({
        "session_id": SESSION,
        "transcript_path": null,
        "cwd": cwd,
        "hook_event_name": event,
        "model": "gpt-5",
        "permission_mode": "bypassPermissions",
    });
    payload
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    payload.to_string()
}

/// Runs the hook twice under one parent process whose command line is the daemon's, with the
/// surface of pane A in the environment (as the daemon has it).
fn run_twice_under_a_daemon(env: &Sandbox, payload_file: &Path) {
    run_under_a_daemon(env, payload_file, 2);
}

/// Runs the hook `times` times under one parent process whose command line is the daemon's.
fn run_under_a_daemon(env: &Sandbox, payload_file: &Path, times: usize) {
    let script = vec!["\"$1\" hook codex < \"$2\""; times].join("; ") + "; :";
    let output = agent_command(env, "sh")
        .args([
            "-c",
            &script,
            "codex",
            crate::BIN,
            payload_file.to_str().unwrap(),
            "app-server",
            "--listen",
            "unix://",
            "--managed-daemon",
        ])
        .env("CRASH_RESUME_SURFACE", "pane-a")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
}

#[test]
fn under_the_daemon_nothing_is_recorded_and_the_log_says_why_once() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "codex-proj", "");
    let payload_file = env.root().join("payload.json");
    fs::write(
        &payload_file,
        payload("SessionStart", &cwd, &json!({"source": "startup"})),
    )
    .unwrap();
    run_twice_under_a_daemon(&env, &payload_file);
    assert_eq!(env.index_bytes(), None, "nothing recorded under the daemon");
    let log = hook_log(&env);
    assert_eq!(
        log.matches("Codex runs its hooks in its shared daemon")
            .count(),
        1,
        "said once: {log}"
    );
    assert!(
        log.contains("--no-daemon")
            && log.contains("\"thread-id\"")
            // reboot-sim --real-codex counts the daemons by this.
            && log.contains("daemon (pid "),
        "{log}"
    );
    // Another daemon is news again.
    run_twice_under_a_daemon(&env, &payload_file);
    assert_eq!(
        hook_log(&env)
            .matches("Codex runs its hooks in its shared daemon")
            .count(),
        2
    );
    assert_eq!(env.index_bytes(), None);
}

#[test]
fn outside_the_daemon_codex_records_and_its_end_marks_the_session_ended() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "codex-proj", "");
    let vars = [("CRASH_RESUME_SURFACE", "pane-b")];
    run_hook(
        &env,
        "codex",
        &vars,
        &payload("SessionStart", &cwd, &json!({"source": "startup"})),
    )
    .assert_silent_success("start");
    let entry = env.entry("pane-b").expect("recorded");
    assert_eq!(entry["sessionId"], SESSION);
    assert_eq!(entry.get("ended_at"), None);
    run_hook(
        &env,
        "codex",
        &vars,
        &payload("SessionEnd", &cwd, &json!({"reason": "other"})),
    )
    .assert_silent_success("end");
    let entry = env.entry("pane-b").expect("kept");
    assert!(
        entry["ended_at"].is_u64(),
        "Codex's end is the end: {entry}"
    );
    // Claude's `other` is not a clean exit: the rule is Codex's alone.
    let claude_vars = [("CRASH_RESUME_SURFACE", "pane-c")];
    let claude = |event: &str, extra: serde_json::Value| {
        let mut value: serde_json::Value =
            serde_json::from_str(&payload(event, &cwd, &extra)).unwrap();
        value["session_id"] = json!("claude-session");
        value.to_string()
    };
    run_hook(
        &env,
        "claude",
        &claude_vars,
        &claude("SessionStart", json!({"source": "startup"})),
    )
    .assert_silent_success("claude start");
    run_hook(
        &env,
        "claude",
        &claude_vars,
        &claude("SessionEnd", json!({"reason": "other"})),
    )
    .assert_silent_success("claude end");
    assert_eq!(env.entry("pane-c").unwrap().get("ended_at"), None);
}

/// Codex's daemon sends SessionEnd alike after a /quit and a killed pane: one it runs marks
/// nothing ended, and `restore` offers the session, saying that the daemon reports no end.
#[test]
fn a_session_end_from_the_daemon_marks_nothing_ended() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "codex-proj", "");
    write_rollout(
        &codex_home(&env),
        SESSION,
        r#"{"timestamp":"2026-12-01T07:49:08.000Z","type":"session_meta","payload":{}}"#,
    );
    run_hook(
        &env,
        "codex",
        &[("CRASH_RESUME_SURFACE", "pane-a")],
        &payload("SessionStart", &cwd, &json!({"source": "startup"})),
    )
    .assert_silent_success("start");
    let payload_file = env.root().join("payload.json");
    fs::write(
        &payload_file,
        payload("SessionEnd", &cwd, &json!({"reason": "other"})),
    )
    .unwrap();
    run_under_a_daemon(&env, &payload_file, 1);
    let entry = env.entry("pane-a").expect("kept");
    assert_eq!(entry.get("ended_at"), None, "not an end: {entry}");
    let log = hook_log(&env);
    assert!(
        log.contains("ended in Codex's daemon") && log.contains("not marked ended"),
        "{log}"
    );
    let plan = plan_by_surface(&restore(&env, true, &["--all"]).stdout);
    let why = plan["pane-a"]["why"].as_str().unwrap();
    assert!(
        why.starts_with("offered: no end was reported from its pane (Codex in its shared daemon"),
        "{why}"
    );
}

/// A rollout as Codex 0.171 writes it, found by the search (no state database).
pub fn write_rollout(codex: &Path, session: &str, first_line: &str) {
    let dir = codex.join("sessions/2026/12/01");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join(format!("rollout-2026-12-01T07-49-08-{session}.jsonl")),
        format!("{first_line}\n"),
    )
    .unwrap();
}

#[test]
fn restore_says_why_a_codex_session_is_or_is_not_offered() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "codex-proj", "");
    let codex = codex_home(&env);
    let meta = r#"{"timestamp":"2026-12-01T07:49:08.000Z","type":"session_meta","payload":{}}"#;
    let sessions = [
        ("pane-live", "01a23094-0000-7000-8000-000000000001", meta),
        ("pane-quit", "01a23094-0000-7000-8000-000000000002", meta),
        (
            "pane-cut",
            "01a23094-0000-7000-8000-000000000003",
            "{\"timestamp\":\"2026",
        ),
    ];
    for (surface, session, first_line) in sessions {
        write_rollout(&codex, session, first_line);
        let start = json!({
            "session_id": session, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup",
        });
        run_hook(
            &env,
            "codex",
            &[("CRASH_RESUME_SURFACE", surface)],
            &start.to_string(),
        )
        .assert_silent_success(surface);
    }
    let end = json!({
        "session_id": sessions[1].1, "cwd": cwd, "hook_event_name": "SessionEnd", "reason": "other",
    });
    run_hook(
        &env,
        "codex",
        &[("CRASH_RESUME_SURFACE", "pane-quit")],
        &end.to_string(),
    )
    .assert_silent_success("quit");

    let plan = plan_by_surface(&restore(&env, true, &["--all"]).stdout);
    let why = |surface: &str| {
        plan.get(surface)
            .unwrap_or_else(|| panic!("{surface} in {plan:?}"))["why"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        why("pane-live").starts_with("offered: no end was reported"),
        "{}",
        why("pane-live")
    );
    assert!(
        why("pane-quit").starts_with("not offered: Codex reported its end"),
        "{}",
        why("pane-quit")
    );
    assert!(
        why("pane-cut").contains("cannot resume it")
            && why("pane-cut").contains("does not start with session metadata"),
        "{}",
        why("pane-cut")
    );
    // Without --all, the ended one is left out and the others say why in the text.
    let text = agent_command(&env, crate::BIN)
        .arg("restore")
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(!text.contains("pane-quit"), "{text}");
    assert!(
        text.contains("pane-live") && text.contains("(offered: no end was reported"),
        "{text}"
    );
}
