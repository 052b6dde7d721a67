//! Activity counts from the conversation itself: a max age (`resume-cmd`, `prune`, `restore
//! --max-age`) is measured from the later of the entry's `last_active` and its transcript's
//! modification time, since typing prompts runs no hook that records.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{claude_dir, crash_resume_agent, git_work_dir, uuid, write_transcript};
use crate::{HOUR, Sandbox, now_millis};

/// Binds `surface` to `session` in `cwd` through the real hook, then makes the entry look as
/// if the hook last ran three hours ago.
fn bind_three_hours_ago(env: &Sandbox, surface: &str, session: &str, cwd: &Path) {
    crate::restore::bind(env, surface, session, cwd);
    let mut index = env.index();
    let entry = &mut index["entries"][surface];
    let three_hours_ago = now_millis() - 3 * HOUR;
    entry["captured_at"] = three_hours_ago.into();
    entry["last_active"] = three_hours_ago.into();
    env.write_index_bytes(&serde_json::to_vec_pretty(&index).unwrap());
}

/// Three surfaces that started three hours ago: `busy` (its transcript changed a minute ago),
/// `idle` (its transcript last changed three hours ago) and `gone` (no transcript).
fn three_surfaces() -> Sandbox {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    for (n, surface, transcript_age) in [
        (1, "busy", Some(Duration::from_secs(60))),
        (2, "idle", Some(Duration::from_secs(3 * 3600))),
        (3, "gone", None),
    ] {
        let session = uuid(n);
        bind_three_hours_ago(&env, surface, &session, &cwd);
        if let Some(age) = transcript_age {
            write_transcript(&claude_dir(&env), &cwd, &session, age);
        }
    }
    env
}

/// The JSON document `args` print, which must succeed; the `field` of each item of `list`.
fn json_list(env: &Sandbox, args: &[&str], list: &str, field: &str) -> Vec<String> {
    let output = run(env, args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    document[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item[field].as_str().unwrap().to_string())
        .collect()
}

fn run(env: &Sandbox, args: &[&str]) -> std::process::Output {
    crash_resume_agent(env)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn resume_cmd_counts_a_recent_transcript_as_activity() {
    let env = three_surfaces();
    let busy = run(&env, &["resume-cmd", "busy", "2h"]);
    assert_eq!(
        busy.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&busy.stderr)
    );
    assert!(String::from_utf8_lossy(&busy.stdout).contains(&uuid(1)));
    for surface in ["idle", "gone"] {
        let output = run(&env, &["resume-cmd", surface, "2h"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{surface}: {stderr}");
        assert!(stderr.contains("was last active 3h"), "{surface}: {stderr}");
    }
    // No max age: staleness is opt-in, every one is resumable.
    assert_eq!(run(&env, &["resume-cmd", "idle"]).status.code(), Some(0));
}

#[test]
fn restore_with_a_max_age_keeps_the_surfaces_active_within_it() {
    let env = three_surfaces();
    let within = json_list(
        &env,
        &["--json", "restore", "--max-age", "2h"],
        "surfaces",
        "surface",
    );
    assert_eq!(within, ["busy"]);
    let everything = json_list(&env, &["--json", "restore"], "surfaces", "surface");
    assert_eq!(everything.len(), 3);

    let none = run(&env, &["restore", "--max-age", "1s"]);
    assert!(none.status.success());
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("was active within 1s"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
    let bad = run(&env, &["restore", "--max-age", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
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

    let output = run(&env, &["--json", "prune", "20s"]);
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
    let output = run(&env, &["prune", "20s"]);
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

/// A plain number is milliseconds: `restore` says it back with its unit, and a number under
/// 1000 (`90`, meant as minutes) gets a warning, for every command that takes a max age.
#[test]
fn a_plain_number_max_age_is_said_back_as_milliseconds() {
    let env = three_surfaces();
    let output = run(&env, &["restore", "--max-age", "90"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: the max age 90 is 90 milliseconds (a plain number is milliseconds); write 90s, 90m, 90h or 90d for longer"),
        "{stderr}"
    );
    assert!(stderr.contains("was active within 90ms"), "{stderr}");
    // 1000 and more, or a unit: no warning.
    for max_age in ["1000", "90m"] {
        let output = run(&env, &["restore", "--max-age", max_age]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("warning"), "{max_age}: {stderr}");
    }
    let output = run(&env, &["restore", "--max-age", "7200000"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("busy\t"), "{text}");
    // The other commands that take a max age warn the same way (prune last: it drops them).
    for (args, said) in [
        (
            &["resume-cmd", "busy", "5"][..],
            "the max age 5 is 5 milliseconds",
        ),
        (&["prune", "999"], "the max age 999 is 999 milliseconds"),
    ] {
        let output = run(&env, args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}

#[test]
fn list_shows_the_age_of_the_latest_activity() {
    let env = three_surfaces();
    let output = run(&env, &["list"]);
    let text = String::from_utf8_lossy(&output.stdout);
    let line = |surface: &str| {
        text.lines()
            .find(|line| line.starts_with(surface))
            .unwrap_or_else(|| panic!("{surface} in {text}"))
            .to_string()
    };
    assert!(line("busy").contains("1m"), "{text}");
    assert!(line("idle").contains("3h"), "{text}");
}

/// The age `resume-cmd` says an entry is past its max age: never one that is within it, even
/// when the age is under a second or a few hundred milliseconds past a whole second.
#[test]
fn an_age_past_the_max_age_is_said_precisely_enough_to_be_past_it() {
    for (ago, max_age) in [(5, "1"), (1500, "1s"), (1500, "1"), (3 * HOUR + 10, "3h")] {
        let env = Sandbox::default();
        let last_active = now_millis() - ago;
        env.write_index(&[crate::entry(
            "m1",
            "sid-m1",
            "REPO",
            last_active,
            last_active,
        )]);
        let output = crate::crash_resume(&env)
            .args(["resume-cmd", "m1", max_age])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(4),
            "{ago} ms, {max_age}: {stderr}"
        );
        let said = stderr
            .split_once("last active ")
            .and_then(|(_, rest)| rest.split_once(" ago"))
            .map(|(age, _)| age)
            .unwrap_or_else(|| panic!("an age in: {stderr}"));
        let said = humantime::parse_duration(said).unwrap();
        let limit = humantime::parse_duration(max_age)
            .unwrap_or_else(|_| Duration::from_millis(max_age.parse().unwrap()));
        assert!(said > limit, "{said:?} is not past {limit:?}: {stderr}");
    }
    // A just-recorded entry, as the review ran it: resumed, or an age past 1 ms.
    let env = Sandbox::default();
    crate::crash_resume(&env)
        .args(["record", "m1", "s1-zz", "r", "--provider", "claude"])
        .assert()
        .success();
    let output = crate::crash_resume(&env)
        .args(["resume-cmd", "m1", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(" 0s ago"), "{stderr}");
}
