//! `crash-resume prune`: entries past the max age dropped, fresh ones kept; the age counts from the
//! later of `last_active` and the transcript's modification time, and a session a running agent
//! holds is never dropped.

use std::time::Duration;

use predicates::prelude::*;
use predicates::str::is_empty;
use serde_json::Value;

use crate::harness::{claude_dir, git_work_dir, uuid, write_transcript};
use crate::restore::{bind_three_hours_ago, json_list, run_as_agent, three_surfaces};
use crate::{DAY, HOUR, MINUTE, Sandbox, check, entry, now_millis};

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
fn prune_keeps_a_surface_whose_transcript_changed_recently() {
    let env = three_surfaces();
    let pruned = json_list(&env, &["--json", "prune", "2h"], "pruned", "surfaceId");
    assert_eq!(pruned, ["gone", "idle"]);
    let left: Vec<String> = env.entries().keys().cloned().collect();
    assert_eq!(left, ["busy"]);
}

/// Three agents that have sat quiet at their prompts for three hours: the two still running
/// (their `sessions/<pid>.json` names their session) are kept however old, and `prune` says
/// so; the one whose agent is gone is dropped.
#[test]
fn prune_never_drops_a_surface_whose_session_a_running_agent_holds() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let config = claude_dir(&env);
    for (n, surface) in [(1, "running-a"), (2, "running-b"), (3, "gone")] {
        let session = uuid(n);
        bind_three_hours_ago(&env, surface, &session, &cwd);
        write_transcript(&config, &cwd, &session, Duration::from_secs(3 * 3600));
    }
    let agents = [
        crate::restore::fake_claude_process(),
        crate::restore::fake_claude_process(),
    ];
    crate::restore::write_running_session(&config, agents[0].pid(), &uuid(1), &cwd);
    crate::restore::write_running_session(&config, agents[1].pid(), &uuid(2), &cwd);

    let output = run_as_agent(&env, &["--json", "prune", "20s"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let pruned: Vec<&str> = document["pruned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["surfaceId"].as_str().unwrap())
        .collect();
    assert_eq!(pruned, ["gone"]);
    assert_eq!(
        document["kept"],
        serde_json::json!([
            {"surface": "running-a", "session": uuid(1), "pid": agents[0].pid()},
            {"surface": "running-b", "session": uuid(2), "pid": agents[1].pid()},
        ])
    );
    for (surface, agent) in [("running-a", &agents[0]), ("running-b", &agents[1])] {
        assert!(
            stderr.contains(&format!(
                "kept {surface} → {}: a running agent (pid {}) holds its session",
                uuid(if surface == "running-a" { 1 } else { 2 }),
                agent.pid()
            )),
            "{stderr}"
        );
    }
    let left: Vec<String> = env.entries().keys().cloned().collect();
    assert_eq!(left, ["running-a", "running-b"]);

    // Once the agents have exited, their quiet surfaces go as any other.
    drop(agents);
    let output = run_as_agent(&env, &["prune", "20s"]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!(
            "pruned 2 entries\nrunning-a\t{}\tproj\nrunning-b\t{}\tproj\n",
            uuid(1),
            uuid(2)
        )
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}
