//! Activity counts from the conversation itself: a max age (`resume-cmd`, `prune`, `restore
//! --max-age`) is measured from the later of the entry's `last_active` and its transcript's
//! modification time, since typing prompts runs no hook that records.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    claude_dir, crash_resume_agent, git_work_dir, run_hook, session_start, uuid, write_transcript,
};
use crate::{HOUR, Sandbox, now_millis};

/// Binds `surface` to `session` in `cwd` through the real hook, then makes the entry look as
/// if the hook last ran three hours ago.
fn bind_three_hours_ago(env: &Sandbox, surface: &str, session: &str, cwd: &Path) {
    run_hook(
        env,
        "claude",
        &[("CRASH_RESUME_SURFACE", surface)],
        &session_start(session, cwd, "startup"),
    )
    .assert_silent_success(surface);
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
    let output = run(&env, &["--json", "restore", "--max-age", "2h"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    let surfaces: Vec<&str> = plan["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["surface"].as_str().unwrap())
        .collect();
    assert_eq!(surfaces, ["busy"]);
    let everything = run(&env, &["--json", "restore"]);
    let plan: Value = serde_json::from_slice(&everything.stdout).unwrap();
    assert_eq!(plan["surfaces"].as_array().unwrap().len(), 3);

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
    let output = run(&env, &["--json", "prune", "2h"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pruned: Value = serde_json::from_slice(&output.stdout).unwrap();
    let pruned: Vec<&str> = pruned["pruned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["surfaceId"].as_str().unwrap())
        .collect();
    assert_eq!(pruned, ["gone", "idle"]);
    let left: Vec<String> = env.entries().keys().cloned().collect();
    assert_eq!(left, ["busy"]);
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
