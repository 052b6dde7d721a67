//! `crash-resume hook copilot <EVENT>` without the real CLI: Copilot's camelCase payload, the
//! event from the command line, Copilot's home recorded; and the Copilot session dirs (laid out as
//! Copilot 1.0.102 writes them) and hook files the install, preflight and restore tests share.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{crash_resume_agent, make_dir, uuid, with_vars};
use crate::{Sandbox, crash_resume};

/// `COPILOT_HOME` in the sandbox (not the default `~/.copilot`, so commands carry it).
pub fn copilot_home(env: &Sandbox) -> PathBuf {
    env.home().join(".copilot-work")
}

pub fn hooks_file(env: &Sandbox) -> PathBuf {
    copilot_home(env).join("hooks/crash-resume.json")
}

pub fn hook_command(env: &Sandbox, args: &[&str]) -> std::process::Output {
    crash_resume_agent(env)
        .env("COPILOT_HOME", copilot_home(env))
        .arg("hook")
        .args(args)
        .output()
        .unwrap()
}

pub fn hooks(env: &Sandbox) -> Value {
    serde_json::from_slice(&fs::read(hooks_file(env)).unwrap()).unwrap()
}

pub fn backups(env: &Sandbox) -> usize {
    fs::read_dir(copilot_home(env).join("hooks"))
        .unwrap()
        .flatten()
        .filter(|item| {
            item.file_name()
                .to_string_lossy()
                .starts_with("crash-resume.json.crash-resume-")
        })
        .count()
}

/// `sessionStart` and `sessionEnd` payloads as Copilot 1.0.102 sends them: camelCase, no event
/// name.
pub fn payload(session: &str, cwd: &Path, extra: Value) -> String {
    let mut payload = json!({ "sessionId": session, "timestamp": 1764600000000_u64, "cwd": cwd });
    if let (Some(payload), Value::Object(extra)) = (payload.as_object_mut(), extra) {
        payload.extend(extra);
    }
    payload.to_string()
}

/// A Copilot home holding `session`'s dir as a prompted session leaves it.
pub fn copilot_session(home: &Path, session: &str, cwd: &Path) -> PathBuf {
    let dir = make_dir(&home.join("session-state").join(session));
    let start = json!({
        "type": "session.start",
        "data": { "sessionId": session, "copilotVersion": "1.0.102", "context": { "cwd": cwd } },
        "id": "3954ca0e-6638-4d4d-9582-4054d63a68af",
        "timestamp": "2026-12-01T18:45:34.095Z",
        "parentId": null,
    });
    fs::write(
        dir.join("events.jsonl"),
        format!("{start}\n{{\"type\":\"user.message\"}}\n"),
    )
    .unwrap();
    fs::write(
        dir.join("workspace.yaml"),
        format!("id: {session}\ncwd: {}\n", cwd.display()),
    )
    .unwrap();
    dir
}

pub fn record_copilot(env: &Sandbox, surface: &str, session: &str, work: &Path) {
    crash_resume(env)
        .args([
            "record",
            surface,
            session,
            "work",
            "--provider",
            "copilot",
            "--cwd",
        ])
        .arg(work)
        .arg("--config-dir")
        .arg(copilot_home(env))
        .assert()
        .success();
}

#[test]
fn hook_copilot_takes_the_event_from_its_command_line_and_records_copilots_home() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let session = uuid(1);
    let home = copilot_home(&env);
    let vars = [
        ("CMUX_SURFACE_ID", "A"),
        ("COPILOT_HOME", home.to_str().unwrap()),
    ];
    let start = payload(
        &session,
        &work,
        json!({"source": "new", "initialPrompt": "hi"}),
    );
    let mut command = crash_resume_agent(&env);
    command.args(["hook", "copilot", "sessionStart"]);
    test_support::process::run_with_stdin(with_vars(command, &vars), &start)
        .assert_silent_success("sessionStart");
    let entries = env.entries();
    let entry = &entries["cmux:A"];
    assert_eq!(entry["sessionId"], session.as_str(), "{entry}");
    assert_eq!(entry["provider"], "copilot");
    assert_eq!(entry["cwd"], work.to_str().unwrap());
    assert_eq!(entry["config_dir"], copilot_home(&env).to_str().unwrap());

    // From a pane that still exists (a cmux process runs the agent), the end is the end.
    let cmux = env.root().join("cmux");
    fs::copy("/bin/sh", &cmux).unwrap();
    let mut command = crate::harness::agent_command(&env, &cmux);
    command.args([
        "-c",
        "\"$0\" \"$@\"",
        crate::BIN,
        "hook",
        "copilot",
        "sessionEnd",
    ]);
    let end = payload(&session, &work, json!({"reason": "user_exit"}));
    test_support::process::run_with_stdin(with_vars(command, &vars), &end)
        .assert_silent_success("sessionEnd");
    assert!(env.entries()["cmux:A"]["ended_at"].is_number());
}

/// A relative `COPILOT_HOME` is Copilot's from its working dir: the hook records it absolute
/// there, so the preflight finds the session wherever it runs.
#[test]
fn a_relative_copilot_home_is_recorded_from_the_working_dir() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let session = uuid(1);
    copilot_session(&work.join("state"), &session, &work);
    let vars = [("CRASH_RESUME_SURFACE", "S"), ("COPILOT_HOME", "state")];
    let start = payload(&session, &work, json!({"source": "new"}));
    let mut command = crash_resume_agent(&env);
    command.args(["hook", "copilot", "sessionStart"]);
    test_support::process::run_with_stdin(with_vars(command, &vars), &start)
        .assert_silent_success("sessionStart");
    let entry = &env.entries()["S"];
    assert_eq!(
        entry["config_dir"],
        work.join("state").to_str().unwrap(),
        "{entry}"
    );
    crash_resume(&env)
        .args(["preflight", "S"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("resume"));
}
