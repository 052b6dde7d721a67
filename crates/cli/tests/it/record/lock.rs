//! The index lock as writers meet it, through `record` (every writer takes the same lock): the
//! message of a writer that gives up names the holder; the JavaScript crash-resume-index's lock
//! dir is held, waited for, taken over when stale, and both tools' writers share one index.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use predicates::str::{contains, is_empty};

use crate::harness::{git_work_dir, hook_log, session_start, uuid};
use crate::{Sandbox, check, crash_resume, crash_resume_std, record};

#[test]
fn a_writer_that_gives_up_names_the_process_holding_the_lock() {
    let env = Sandbox::default();
    record(&env, "A", "sid-a", "REPO");
    // A pid that is not the holder's, where earlier versions looked for one.
    let lock_path = env.index_dir().join("index.json.flock");
    fs::write(&lock_path, "999999\n").unwrap();
    let lock = fs::File::open(&lock_path).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    check(
        &env,
        &["--lock-timeout", "200ms", "record", "B", "sid-b", "REPO"],
        1,
        is_empty(),
        contains(format!("pid {}, running", std::process::id())).and(contains("999999").not()),
    );
    drop(lock);
    record(&env, "B", "sid-b", "REPO");
}

/// The JavaScript tool's stand-in, run with Node.
fn js_tool() -> Command {
    let mut command = Command::new("node");
    command.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../index-store/tests/fixtures/js-tool.mjs"
    ));
    command
}

fn set_mtime(path: &Path, age: Duration) {
    let times = fs::FileTimes::new().set_modified(SystemTime::now() - age);
    fs::File::open(path).unwrap().set_times(times).unwrap();
}

/// A sandbox whose index holds entry `A`, with the JavaScript tool's lock dir made beside it.
fn an_index_with_a_javascript_lock_dir() -> (Sandbox, PathBuf) {
    let env = Sandbox::default();
    record(&env, "A", "sid-a", "REPO");
    let js_lock = env.index_dir().join("index.json.lock");
    fs::create_dir(&js_lock).unwrap();
    (env, js_lock)
}

/// A stale lock dir that is not empty cannot be removed, by us or by the JavaScript tool: a
/// write waits for it up to its deadline (it never spins), then says what is in the way and
/// what to do; the hook hands its record to its retry, which lands it once the dir is gone.
#[test]
fn a_stale_lock_dir_that_is_not_empty_ends_the_wait_at_the_deadline() {
    let (env, js_lock) = an_index_with_a_javascript_lock_dir();
    fs::write(js_lock.join("junk"), "").unwrap();
    set_mtime(&js_lock, Duration::from_secs(20));
    crash_resume(&env)
        .args(["--lock-timeout", "300ms", "record", "B", "sid-b", "REPO"])
        // Only a guard against the hang this test is about; the wait itself is 300 ms.
        .timeout(Duration::from_secs(120))
        .assert()
        .code(1)
        .stdout(is_empty())
        .stderr(
            contains(format!("a lock dir {} (made 2", js_lock.display()))
                .and(contains("that is not empty is in the way"))
                .and(contains("remove it if no crash-resume-index process runs"))
                .and(contains("Nothing was written")),
        );
    assert!(env.entry("B").is_none());
    assert!(
        js_lock.join("junk").exists(),
        "what is in the dir is left alone"
    );

    hook_hands_off_until_the_lock_dir_is_gone(&env, 8, "that is not empty is in the way", || {
        fs::remove_dir_all(&js_lock).unwrap()
    });
}

/// Runs the hook for surface `H` and session `uuid(n)` while the JavaScript tool's lock dir is
/// in the way: the hook returns, logs `blocked` and hands its record to its background retry,
/// which lands it once `free` has removed the lock dir.
fn hook_hands_off_until_the_lock_dir_is_gone(
    env: &Sandbox,
    n: u32,
    blocked: &str,
    free: impl FnOnce(),
) {
    let js_lock = env.index_dir().join("index.json.lock");
    let cwd = git_work_dir(env, "proj", "");
    crate::harness::run_hook(
        env,
        "claude",
        &[("CRASH_RESUME_SURFACE", "H")],
        &session_start(&uuid(n), &cwd, "startup"),
    )
    .assert_silent_success(blocked);
    let log = hook_log(env);
    assert!(
        log.contains(blocked) && log.contains("handed to a background retry"),
        "{log}"
    );
    free();
    // The record is in place before the retry lets go of the lock dir: wait for both.
    let entry = crate::harness::wait_until("the retry's record, and its lock dir gone", || {
        env.entry("H").filter(|_| !js_lock.exists())
    });
    assert_eq!(entry["sessionId"], uuid(n));
}

/// A lock dir made in the future (a clock set back) is never taken as stale, as the
/// JavaScript tool would not, and the message says so plainly.
#[test]
fn a_lock_dir_made_in_the_future_is_waited_for_and_named_so() {
    let (env, js_lock) = an_index_with_a_javascript_lock_dir();
    let times = fs::FileTimes::new().set_modified(SystemTime::now() + Duration::from_secs(3600));
    fs::File::open(&js_lock).unwrap().set_times(times).unwrap();
    check(
        &env,
        &["--lock-timeout", "300ms", "record", "B", "sid-b", "REPO"],
        1,
        is_empty(),
        contains("a lock dir made in the future (clock skew?)")
            .and(contains("stale 15 s after it was made, not before"))
            .and(contains("remove it if no crash-resume-index process runs")),
    );
    assert!(js_lock.exists(), "not taken over");
    assert!(env.entry("B").is_none());
}

#[test]
fn the_javascript_tools_lock_is_held_waited_for_and_taken_over_when_stale() {
    let env = Sandbox::default();
    record(&env, "A", "sid-a", "REPO");
    let js_lock = env.index_dir().join("index.json.lock");
    assert!(
        !js_lock.exists(),
        "our write removed the JavaScript tool's lock dir"
    );

    // Held by the JavaScript tool: our write waits for it up to its deadline, then says so.
    fs::create_dir(&js_lock).unwrap();
    check(
        &env,
        &["--lock-timeout", "300ms", "record", "B", "sid-b", "REPO"],
        1,
        is_empty(),
        contains("the JavaScript crash-resume-index holds").and(contains("stale 15 s after")),
    );
    assert!(env.entry("B").is_none());
    // The hook does not drop its record: it hands it to its background retry, which lands it
    // once the JavaScript tool lets go.
    hook_hands_off_until_the_lock_dir_is_gone(
        &env,
        7,
        "the JavaScript crash-resume-index holds",
        || fs::remove_dir(&js_lock).unwrap(),
    );

    // Left behind more than 15 s ago: stale, as that tool takes it.
    fs::create_dir(&js_lock).unwrap();
    set_mtime(&js_lock, Duration::from_secs(20));
    record(&env, "B", "sid-b", "REPO");
    assert!(!js_lock.exists());

    // The plain lock file earlier versions left at that name is cleared, so the JavaScript
    // tool can lock again.
    fs::write(&js_lock, "12345").unwrap();
    record(&env, "C", "sid-c", "REPO");
    assert!(!js_lock.exists());
    let output = js_tool()
        .arg("record")
        .arg(env.index_path())
        .args(["J", "sid-j", "REPO", "1700000000000"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(env.entry("J").unwrap()["sessionId"], "sid-j");
    assert_eq!(env.entry("C").unwrap()["sessionId"], "sid-c");
}

#[test]
fn ten_writers_of_ours_and_ten_of_the_javascript_tool_share_one_index() {
    let env = Sandbox::default();
    record(&env, "seed", "sid-seed", "REPO");
    let spawn = |surface: String, mut command: Command| {
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        (surface, child)
    };
    let ours: Vec<(String, std::process::Child)> = (0..10)
        .map(|n| {
            let surface = format!("rs-{n}");
            let mut command = crash_resume_std(&env);
            command
                .args(["--lock-timeout", "30s", "record", &surface])
                .args([format!("sid-{surface}").as_str(), "REPO"]);
            spawn(surface, command)
        })
        .collect();
    let theirs: Vec<(String, std::process::Child)> = (0..10)
        .map(|n| {
            let surface = format!("js-{n}");
            let mut command = js_tool();
            command.arg("record").arg(env.index_path()).args([
                surface.as_str(),
                &format!("sid-{surface}"),
                "REPO",
                "1700000000000",
            ]);
            spawn(surface, command)
        })
        .collect();
    let mut acknowledged = vec!["seed".to_string()];
    for (surface, child) in ours {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{surface}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        acknowledged.push(surface);
    }
    let mut js_timeouts = 0;
    for (surface, child) in theirs {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            acknowledged.push(surface);
        } else {
            // Its own 4 s timeout is the only way it may fail.
            assert!(
                stderr.contains("gave up after 4000 ms"),
                "{surface}: {stderr}"
            );
            js_timeouts += 1;
        }
    }
    let entries = env.entries();
    for surface in &acknowledged {
        assert_eq!(
            entries.get(surface).map(|entry| entry["sessionId"].clone()),
            Some(format!("sid-{surface}").into()),
            "{surface} was acknowledged ({js_timeouts} JavaScript writers timed out)"
        );
    }
    let js_lock = env.index_dir().join("index.json.lock");
    assert!(!js_lock.exists(), "no lock dir left behind");
    assert!(
        env.index_dir()
            .join("index.json.flock")
            .metadata()
            .unwrap()
            .mode()
            & 0o077
            == 0,
        "our lock file is private"
    );
}
