//! `crash-resume record` and the JavaScript crash-resume-index's scenarios through the real binary:
//! capture, re-record, one session bound to one surface, and the index across a reboot and across
//! processes, and ids of 512 bytes. The write path that every writer shares is tested through
//! `record`: writers that die (`crashes`), many at once (`concurrency`), and the lock (`lock`).

mod concurrency;
mod crashes;
mod lock;

use std::fs;

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use serde_json::{Value, json};

use crate::{HOUR, MINUTE, Sandbox, check, crash_resume, entry, now_millis, record, sandboxed};

#[test]
fn capture_prints_the_binding_and_stores_the_entry() {
    let env = Sandbox::default();
    let before = now_millis();
    check(
        &env,
        &[
            "record",
            "cmux-pane-42",
            "01J-orc-lead-xyz",
            "orchestrator",
            "lead",
        ],
        0,
        predicate::eq("recorded cmux-pane-42 → 01J-orc-lead-xyz (orchestrator)\n"),
        is_empty(),
    );
    let after = now_millis();

    let stored = env
        .entry("cmux-pane-42")
        .expect("the entry is in the index file");
    assert_eq!(stored["surfaceId"], "cmux-pane-42");
    assert_eq!(stored["sessionId"], "01J-orc-lead-xyz");
    assert_eq!(stored["repo"], "orchestrator");
    assert_eq!(stored["role"], "lead");
    let captured_at = stored["captured_at"].as_u64().unwrap();
    assert!(
        (before..=after).contains(&captured_at),
        "captured_at {captured_at} in {before}..={after}"
    );
    assert_eq!(stored["last_active"], stored["captured_at"]);
    assert_eq!(env.entries().len(), 1);
}

#[test]
fn re_record_keeps_captured_at_and_role() {
    let env = Sandbox::default();
    let long_ago = now_millis() - 3 * HOUR;
    let mut old = entry("S", "SID-1", "REPO", long_ago, long_ago + MINUTE);
    old["role"] = json!("lead");
    env.write_index(&[old]);

    // The same session again, no role given: the role and first sight stay.
    let before = now_millis();
    record(&env, "S", "SID-1", "REPO");
    let stored = env.entry("S").unwrap();
    assert_eq!(stored["captured_at"], json!(long_ago));
    assert_eq!(stored["role"], "lead");
    assert!(stored["last_active"].as_u64().unwrap() >= before);

    // A new session on the surface: still the same first sight and role; the old id is kept
    // in the surface's chain.
    record(&env, "S", "SID-2", "REPO");
    let stored = env.entry("S").unwrap();
    assert_eq!(stored["sessionId"], "SID-2");
    assert_eq!(stored["captured_at"], json!(long_ago));
    assert_eq!(stored["role"], "lead");
    assert_eq!(stored["previous_sessions"], json!(["SID-1"]));

    // A role given replaces the old one.
    check(
        &env,
        &["record", "S", "SID-2", "REPO", "worker"],
        0,
        predicate::eq("recorded S → SID-2 (REPO)\n"),
        is_empty(),
    );
    let stored = env.entry("S").unwrap();
    assert_eq!(stored["role"], "worker");
    assert_eq!(stored["captured_at"], json!(long_ago));
}

#[test]
fn index_survives_a_simulated_reboot() {
    let before_reboot = Sandbox::default();
    record(&before_reboot, "cmux:1", "sess-1", "orchestrator");
    record(&before_reboot, "tmux:main:0.1", "sess-2", "golems");
    crash_resume(&before_reboot)
        .args(["record", "kitty:7", "sess-3", "web", "--cwd", "/src/web"])
        .assert()
        .success();
    let saved = before_reboot.index();

    // After the "reboot": a new process, a new home, only the index file carried over.
    let after_reboot = Sandbox::default();
    fs::create_dir_all(after_reboot.index_dir()).unwrap();
    fs::copy(before_reboot.index_path(), after_reboot.index_path()).unwrap();
    drop(before_reboot);
    assert_eq!(after_reboot.index_dir_files(), ["index.json"]);

    let listed = crash_resume(&after_reboot).arg("list").assert().success();
    let listed = String::from_utf8(listed.get_output().stdout.clone()).unwrap();
    let surfaces: Vec<&str> = listed
        .lines()
        .map(|line| line.split('\t').next().unwrap())
        .collect();
    assert_eq!(surfaces, ["cmux:1", "kitty:7", "tmux:main:0.1"]);

    let looked_up = crash_resume(&after_reboot)
        .args(["lookup", "tmux:main:0.1"])
        .assert()
        .success();
    let looked_up: Value = serde_json::from_slice(&looked_up.get_output().stdout).unwrap();
    assert_eq!(looked_up, saved["entries"]["tmux:main:0.1"]);

    // Its dir is not on this machine: nothing to resume there, and no command that would fail.
    check(
        &after_reboot,
        &["resume-cmd", "kitty:7"],
        4,
        is_empty(),
        contains("the preflight says fresh"),
    );
    check(
        &after_reboot,
        &["--profile", "golems", "resume-cmd", "cmux:1"],
        0,
        predicate::eq("orcClaude --resume sess-1\n"),
        is_empty(),
    );
    assert_eq!(
        after_reboot.index(),
        saved,
        "reads leave the index as it was"
    );
}

#[test]
fn one_session_is_bound_to_one_surface() {
    let env = Sandbox::default();
    record(&env, "A", "sid-shared", "REPO");
    record(&env, "B", "sid-shared", "REPO");
    assert_eq!(env.entries().keys().collect::<Vec<_>>(), ["B"]);
}

#[test]
fn a_separate_process_with_the_default_path_sees_the_same_index() {
    let env = Sandbox::default();
    // Without CRASH_RESUME_INDEX_PATH the index is under XDG_STATE_HOME.
    let mut first = sandboxed(&env, crate::BIN);
    first
        .env_remove("CRASH_RESUME_INDEX_PATH")
        .args(["record", "S", "SID", "REPO"]);
    let status = first.status().unwrap();
    assert!(status.success());
    let default_index = env.state_home().join("crash-resume").join("index.json");
    let stored: Value = serde_json::from_slice(&fs::read(&default_index).unwrap()).unwrap();
    assert_eq!(stored["entries"]["S"]["sessionId"], "SID");
    assert_eq!(
        env.index_bytes(),
        None,
        "nothing at the sandbox's explicit index path"
    );
}

#[test]
fn ids_of_512_bytes_are_accepted() {
    let env = Sandbox::default();
    let longest = "é".repeat(256);
    assert_eq!(longest.len(), 512);
    record(&env, &longest, &longest, &longest);
    assert_eq!(env.entry(&longest).unwrap()["sessionId"], longest.as_str());
}
