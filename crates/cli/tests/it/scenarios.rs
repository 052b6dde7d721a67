//! The JavaScript crash-resume-index's scenarios, through the real binary: capture, re-record,
//! save and load across a reboot, resume commands per profile, touch, staleness, prune.

use std::fs;

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use serde_json::{Value, json};

use crate::{
    DAY, HOUR, MINUTE, Sandbox, check, crash_resume, entry, now_millis, record, sandbox_with,
    sandboxed,
};

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
fn lookup_prints_the_entry_in_the_index_format() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let output = crash_resume(&env)
        .args(["lookup", "S"])
        .assert()
        .success()
        .stderr("");
    let printed: Value = serde_json::from_slice(&output.get_output().stdout).unwrap();

    let mut fields: Vec<&str> = printed
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "captured_at",
            "last_active",
            "repo",
            "role",
            "sessionId",
            "surfaceId"
        ]
    );
    assert_eq!(printed["surfaceId"], "S");
    assert_eq!(printed["sessionId"], "SID");
    assert_eq!(printed["repo"], "REPO");
    assert_eq!(printed["role"], Value::Null);
    assert_eq!(
        printed,
        env.entry("S").unwrap(),
        "lookup prints the stored entry"
    );
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
fn resume_commands_per_profile() {
    let env = sandbox_with(&[
        ("orc", "sid-orc", "orchestrator"),
        ("golem", "sid-golem", "golems"),
        ("mixed", "sid-mixed", "MyRepo"),
    ]);

    // (how the profile is chosen, surface, expected command)
    let cases: [(Option<&str>, Option<&str>, &str, &str); 8] = [
        (Some("golems"), None, "orc", "orcClaude --resume sid-orc"),
        (
            Some("golems"),
            None,
            "golem",
            "golemsClaude --resume sid-golem",
        ),
        (
            Some("golems"),
            None,
            "mixed",
            "myrepoClaude --resume sid-mixed",
        ),
        (None, Some("golems"), "orc", "orcClaude --resume sid-orc"),
        (
            None,
            Some("golems"),
            "golem",
            "golemsClaude --resume sid-golem",
        ),
        (None, None, "orc", "claude --resume sid-orc"),
        (None, None, "golem", "claude --resume sid-golem"),
        (None, None, "mixed", "claude --resume sid-mixed"),
    ];
    for (flag, variable, surface, expected) in cases {
        let mut command = crash_resume(&env);
        if let Some(profile) = flag {
            command.args(["--profile", profile]);
        }
        if let Some(profile) = variable {
            command.env("CRASH_RESUME_PROFILE", profile);
        }
        command
            .args(["resume-cmd", surface])
            .assert()
            .code(0)
            .stdout(format!("{expected}\n"))
            .stderr("");
    }
}

#[test]
fn default_launcher_runs_in_the_sessions_dir_with_its_config_dir() {
    let env = Sandbox::default();
    let cwd = crate::harness::make_dir(&env.root().join("my proj"));
    let config = env.root().join(".claude-work");
    let session = crate::harness::uuid(1);
    crate::harness::write_transcript(&config, &cwd, &session, std::time::Duration::ZERO);
    let (cwd, config) = (cwd.to_str().unwrap(), config.to_str().unwrap());
    crash_resume(&env)
        .args(["record", "S", &session, "proj", "--cwd", cwd])
        .args(["--config-dir", config])
        .assert()
        .success();
    check(
        &env,
        &["resume-cmd", "S"],
        0,
        predicate::eq(format!(
            "cd '{cwd}' && CLAUDE_CONFIG_DIR={config} claude --resume {session}\n"
        )),
        is_empty(),
    );
    let stored = env.entry("S").unwrap();
    assert_eq!(stored["cwd"], cwd);
    assert_eq!(stored["config_dir"], config);

    // The default config dir is not spelled out; a session without a dir runs where it is.
    record(&env, "T", "sid-2", "proj");
    check(
        &env,
        &["resume-cmd", "T"],
        0,
        predicate::eq("claude --resume sid-2\n"),
        is_empty(),
    );

    // A relative --cwd is recorded as an absolute dir (against the current dir).
    crash_resume(&env)
        .args(["record", "U", "sid-3", "proj", "--cwd", "sub dir"])
        .assert()
        .success();
    let expected_cwd = env.root().join("sub dir");
    assert_eq!(
        env.entry("U").unwrap()["cwd"],
        expected_cwd.to_str().unwrap()
    );
}

#[test]
fn touch_keeps_a_long_running_session_resumable() {
    let env = Sandbox::default();
    let long_ago = now_millis() - 30 * DAY;
    env.write_index(&[entry("S", "sid-long", "REPO", long_ago, long_ago)]);
    check(
        &env,
        &["resume-cmd", "S", "1h"],
        4,
        is_empty(),
        contains("max age"),
    );

    let before = now_millis();
    check(
        &env,
        &["touch", "S"],
        0,
        predicate::eq("touched S\n"),
        is_empty(),
    );
    let stored = env.entry("S").unwrap();
    assert_eq!(
        stored["captured_at"],
        json!(long_ago),
        "touch keeps the first sight"
    );
    assert!(stored["last_active"].as_u64().unwrap() >= before);
    assert_eq!(stored["sessionId"], "sid-long");

    check(
        &env,
        &["resume-cmd", "S", "1h"],
        0,
        predicate::eq("claude --resume sid-long\n"),
        is_empty(),
    );
}

#[test]
fn no_max_age_never_denies() {
    let env = Sandbox::default();
    let years_ago = now_millis() - 3 * 365 * DAY;
    env.write_index(&[entry("S", "sid-ancient", "golems", years_ago, years_ago)]);
    let before = env.index_bytes();
    check(
        &env,
        &["resume-cmd", "S"],
        0,
        predicate::eq("claude --resume sid-ancient\n"),
        is_empty(),
    );
    check(
        &env,
        &["--profile", "golems", "resume-cmd", "S"],
        0,
        predicate::eq("golemsClaude --resume sid-ancient\n"),
        is_empty(),
    );
    assert_eq!(env.index_bytes(), before, "resume-cmd writes nothing");
}

#[test]
fn unknown_surface_gives_nothing() {
    let env = Sandbox::default();
    // No index file at all, then an index without the surface.
    check(
        &env,
        &["lookup", "nope"],
        4,
        predicate::eq("null\n"),
        contains("nope"),
    );
    check(
        &env,
        &["resume-cmd", "nope"],
        4,
        is_empty(),
        contains("nope"),
    );
    assert_eq!(env.index_bytes(), None, "reads create no index");

    record(&env, "S", "SID", "REPO");
    let before = env.index_bytes();
    check(
        &env,
        &["lookup", "nope"],
        4,
        predicate::eq("null\n"),
        contains("no entry"),
    );
    check(
        &env,
        &["resume-cmd", "nope"],
        4,
        is_empty(),
        contains("no session recorded"),
    );
    check(
        &env,
        &["resume-cmd", "nope", "1h"],
        4,
        is_empty(),
        contains("nope"),
    );
    check(
        &env,
        &["touch", "nope"],
        4,
        is_empty(),
        contains("nothing touched"),
    );
    check(
        &env,
        &["forget", "nope"],
        4,
        is_empty(),
        contains("nothing forgotten"),
    );
    assert_eq!(env.index_bytes(), before);
}

#[test]
fn stale_session_past_max_age_is_not_offered() {
    let env = Sandbox::default();
    let three_hours_ago = now_millis() - 3 * HOUR;
    env.write_index(&[entry(
        "S",
        "sid-stale",
        "REPO",
        three_hours_ago,
        three_hours_ago,
    )]);

    let cases: [(&str, i32); 6] = [
        ("2h", 4),
        ("7200000", 4),
        ("90m", 4),
        ("4h", 0),
        ("14400000", 0),
        ("1d", 0),
    ];
    for (max_age, code) in cases {
        let expected_stdout = if code == 0 {
            "claude --resume sid-stale\n"
        } else {
            ""
        };
        let assert = crash_resume(&env)
            .args(["resume-cmd", "S", max_age])
            .assert()
            .code(code)
            .stdout(expected_stdout.to_string());
        if code == 4 {
            assert.stderr(contains("last active").and(contains("max age")));
        } else {
            assert.stderr("");
        }
    }
    // Without a max age the stale session is still offered: staleness is opt-in.
    check(
        &env,
        &["resume-cmd", "S"],
        0,
        predicate::eq("claude --resume sid-stale\n"),
        is_empty(),
    );
}

#[test]
fn prune_drops_old_entries_and_keeps_fresh_ones() {
    let env = Sandbox::default();
    let now = now_millis();
    env.write_index(&[
        entry("old", "sid-old", "REPO", now - DAY, now - 2 * HOUR),
        entry("older", "sid-older", "REPO", now - 9 * DAY, now - 9 * DAY),
        entry("fresh", "sid-fresh", "REPO", now - DAY, now - MINUTE),
    ]);
    check(
        &env,
        &["prune", "1h"],
        0,
        predicate::eq("pruned 2 entries\nold\tsid-old\tREPO\nolder\tsid-older\tREPO\n"),
        is_empty(),
    );
    let entries = env.entries();
    assert_eq!(entries.keys().collect::<Vec<_>>(), ["fresh"]);
    assert_eq!(
        entries["fresh"],
        entry("fresh", "sid-fresh", "REPO", now - DAY, now - MINUTE)
    );

    // Nothing left to prune: nothing written.
    let before = env.index_bytes();
    check(
        &env,
        &["prune", "3600000"],
        0,
        predicate::eq("pruned 0 entries\n"),
        is_empty(),
    );
    assert_eq!(env.index_bytes(), before);
}

#[test]
fn forget_drops_one_entry() {
    let env = Sandbox::default();
    record(&env, "A", "sid-a", "REPO");
    record(&env, "B", "sid-b", "REPO");
    check(
        &env,
        &["forget", "A"],
        0,
        predicate::eq("forgot A → sid-a (REPO)\n"),
        is_empty(),
    );
    assert_eq!(env.entries().keys().collect::<Vec<_>>(), ["B"]);
    check(
        &env,
        &["lookup", "A"],
        4,
        predicate::eq("null\n"),
        contains("no entry"),
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
fn list_prints_one_line_per_entry() {
    let env = Sandbox::default();
    check(&env, &["list"], 0, is_empty(), is_empty());
    record(&env, "B", "sid-b", "repo-b");
    crash_resume(&env)
        .args(["record", "A", "sid-a", "repo-a", "lead"])
        .assert()
        .success();
    let listed = crash_resume(&env).arg("list").assert().success().stderr("");
    let listed = String::from_utf8(listed.get_output().stdout.clone()).unwrap();
    let lines: Vec<Vec<&str>> = listed
        .lines()
        .map(|line| line.split('\t').collect())
        .collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert_eq!(lines[0][..4], ["A", "sid-a", "repo-a", "lead"]);
    assert_eq!(lines[1][..4], ["B", "sid-b", "repo-b", "-"]);
    assert!(lines[0][4].ends_with(" ago"), "{listed}");
}

#[test]
fn unknown_fields_of_an_entry_are_kept_on_rewrite() {
    let env = Sandbox::default();
    let now = now_millis();
    let mut written = entry("S", "sid", "REPO", now - HOUR, now - HOUR);
    written["written_by"] = json!({ "tool": "crash-resume-index", "version": "0.9" });
    env.write_index(&[written]);
    let mut document = env.index();
    document["extra_top_level"] = json!([1, 2, 3]);
    env.write_index_bytes(&serde_json::to_vec(&document).unwrap());

    check(
        &env,
        &["touch", "S"],
        0,
        predicate::eq("touched S\n"),
        is_empty(),
    );
    let rewritten = env.index();
    assert_eq!(rewritten["extra_top_level"], json!([1, 2, 3]));
    assert_eq!(
        rewritten["entries"]["S"]["written_by"],
        json!({ "tool": "crash-resume-index", "version": "0.9" })
    );
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
