//! Files are never a trap: symlinks at the tool's own files, a symlink at the index path that
//! someone else could swap, FIFOs where files should be, huge sparse transcripts, the
//! JavaScript crash-resume-index's lock, an index overwritten from outside, and the message of a
//! writer that gives up on the lock. Each through the real binary.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use predicates::str::{contains, is_empty};

use crate::harness::{
    claude_dir, git_work_dir, hook_log, make_dir, mkfifo, run_with_stdin, session_start, uuid,
};
use crate::{Sandbox, check, crash_resume, crash_resume_std, record};

const PRECIOUS: &str = "a file of the user's, not ours to touch\n";

/// A file of the user's that a symlink of ours must never write through.
fn precious(env: &Sandbox) -> PathBuf {
    let path = env.root().join("precious.txt");
    fs::write(&path, PRECIOUS).unwrap();
    path
}

fn assert_untouched(path: &Path) {
    assert_eq!(
        fs::read_to_string(path).unwrap(),
        PRECIOUS,
        "{}",
        path.display()
    );
}

#[test]
fn symlinks_at_the_lock_files_and_the_log_are_never_followed() {
    for name in ["index.json.flock", "index.json.lock"] {
        let env = Sandbox::default();
        let victim = precious(&env);
        make_dir(&env.index_dir());
        symlink(&victim, env.index_dir().join(name)).unwrap();
        check(
            &env,
            &["record", "S", "sid", "REPO"],
            1,
            is_empty(),
            contains(name).and(contains("symbolic link")),
        );
        assert_untouched(&victim);
        assert!(env.index_bytes().is_none(), "{name}: nothing written");
    }

    // hook.log: the hook fails (no surface), and its line goes to stderr instead.
    let env = Sandbox::default();
    let victim = precious(&env);
    make_dir(&env.index_dir());
    symlink(&victim, env.index_dir().join("hook.log")).unwrap();
    let cwd = git_work_dir(&env, "proj", "");
    let mut hook = crash_resume_std(&env);
    hook.args(["hook", "claude"]);
    let output = run_with_stdin(hook, &session_start(&uuid(1), &cwd, "startup"));
    assert!(output.status.success());
    assert!(output.stderr.contains("no surface"));
    assert_untouched(&victim);

    // The backup is replaced by a rename: a link there is replaced, its target left alone.
    let env = Sandbox::default();
    let victim = precious(&env);
    record(&env, "A", "sid-a", "REPO");
    fs::remove_file(env.backup_path()).unwrap();
    symlink(&victim, env.backup_path()).unwrap();
    record(&env, "B", "sid-b", "REPO");
    assert_untouched(&victim);
    assert!(
        !fs::symlink_metadata(env.backup_path())
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn a_symlink_at_the_index_path_is_followed_only_when_no_one_else_could_have_planted_it() {
    let env = Sandbox::default();
    let target_dir = make_dir(&env.root().join("real"));
    let target = target_dir.join("index.json");

    // The user's own link in the user's own dir: followed (a dotfile manager's link).
    let own_dir = make_dir(&env.root().join("own"));
    fs::set_permissions(&own_dir, fs::Permissions::from_mode(0o755)).unwrap();
    let link = own_dir.join("index.json");
    symlink(&target, &link).unwrap();
    crash_resume(&env)
        .env("CRASH_RESUME_INDEX_PATH", &link)
        .args(["record", "S", "sid", "REPO"])
        .assert()
        .success();
    assert!(fs::read_to_string(&target).unwrap().contains("\"sid\""));

    // A link in a sticky, world-writable dir: anyone could have put it there.
    let shared = make_dir(&env.root().join("shared"));
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = shared.join("index.json");
    symlink(&target, &planted).unwrap();
    let before = fs::read(&target).unwrap();
    for args in [&["record", "T", "sid-t", "REPO"][..], &["list"][..]] {
        crash_resume(&env)
            .env("CRASH_RESUME_INDEX_PATH", &planted)
            .args(args)
            .assert()
            .code(1)
            .stderr(
                contains(planted.to_str().unwrap())
                    .and(contains("can be written by others (mode 1777)"))
                    .and(contains("not followed")),
            );
    }
    assert_eq!(fs::read(&target).unwrap(), before);

    // A link owned by another user (only root can make one to test with).
    if rustix::process::geteuid().is_root() {
        let theirs = own_dir.join("theirs.json");
        symlink(&target, &theirs).unwrap();
        rustix::fs::chownat(
            rustix::fs::CWD,
            &theirs,
            Some(rustix::process::Uid::from_raw(65534)),
            None,
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .unwrap();
        crash_resume(&env)
            .env("CRASH_RESUME_INDEX_PATH", &theirs)
            .args(["record", "T", "sid-t", "REPO"])
            .assert()
            .code(1)
            .stderr(contains("owned by uid 65534, not by you"));
        assert_eq!(fs::read(&target).unwrap(), before);
    }
}

#[test]
fn a_fifo_at_the_index_path_is_an_error_at_once_for_every_command() {
    let env = Sandbox::default();
    make_dir(&env.index_dir());
    mkfifo(&env.index_path());
    // No one ever writes to the FIFO: a blocking open would hang each of these.
    for args in [
        &["list"][..],
        &["lookup", "S"][..],
        &["resume-cmd", "S"][..],
        &["record", "S", "sid", "REPO"][..],
    ] {
        check(
            &env,
            args,
            1,
            is_empty(),
            contains("a FIFO, not a regular file"),
        );
    }
    let cwd = git_work_dir(&env, "proj", "");
    crate::harness::run_hook(
        &env,
        "claude",
        &[("CRASH_RESUME_SURFACE", "S")],
        &session_start(&uuid(1), &cwd, "startup"),
    )
    .assert_silent_success("a FIFO at the index");
    assert!(
        hook_log(&env).contains("a FIFO, not a regular file"),
        "{}",
        hook_log(&env)
    );
}

/// An index entry for `surface` whose session is `session`, run in `cwd` with Claude's config
/// dir of the sandbox.
fn record_claude(env: &Sandbox, surface: &str, session: &str, cwd: &Path) {
    crash_resume(env)
        .args(["record", surface, session, "proj", "--provider", "claude"])
        .arg("--cwd")
        .arg(cwd)
        .arg("--config-dir")
        .arg(claude_dir(env))
        .assert()
        .success();
}

#[test]
fn fifos_in_the_agents_dirs_never_hang_restore_or_preflight() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let session = uuid(1);
    let transcript =
        crate::harness::write_transcript(&claude_dir(&env), &cwd, &session, Duration::ZERO);
    record_claude(&env, "S", &session, &cwd);
    // A running session's file and the settings as FIFOs.
    make_dir(&claude_dir(&env).join("sessions"));
    mkfifo(&claude_dir(&env).join("sessions").join("4242.json"));
    mkfifo(&claude_dir(&env).join("settings.json"));
    crash_resume(&env)
        .args(["restore"])
        .assert()
        .success()
        .stdout(contains("S").and(contains(&session)));
    // The transcript continues in a session whose transcript is a FIFO.
    let next = uuid(2);
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(
        file,
        "{{\"type\":\"system\",\"continuedInSessionId\":\"{next}\"}}"
    )
    .unwrap();
    mkfifo(&transcript.with_file_name(format!("{next}.jsonl")));
    crash_resume(&env)
        .args(["preflight", "S"])
        .assert()
        .code(4)
        .stdout(contains(format!("moved on to {next}")).and(contains("not a regular file")));
}

#[test]
fn a_huge_sparse_transcript_is_judged_from_its_head() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let held = uuid(1);
    let other = uuid(2);
    let transcript =
        crate::harness::write_transcript(&claude_dir(&env), &cwd, &held, Duration::ZERO);
    crate::harness::write_transcript(&claude_dir(&env), &cwd, &other, Duration::ZERO);
    // The held session's transcript: 2 GiB of holes, then a message line. Only its first MiB is
    // read, so it holds no conversation; and the recovery scan, which opens the largest file
    // first, goes on to the other one.
    let file = fs::File::create(&transcript).unwrap();
    file.set_len(2 << 30).unwrap();
    drop(file);
    record_claude(&env, "S", &held, &cwd);
    crash_resume(&env)
        .args(["--json", "preflight", "S"])
        .assert()
        .code(0)
        .stdout(contains("\"recover\"").and(contains(&other)));
}

#[test]
fn garbage_over_the_index_loses_nothing_acknowledged() {
    let env = Sandbox::default();
    for surface in ["A", "B", "C"] {
        record(&env, surface, &format!("sid-{surface}"), "REPO");
    }
    // Written over in place from outside, as a careless script or a disk error would.
    fs::write(env.index_path(), b"\x00\x00garbage").unwrap();
    check(
        &env,
        &["list"],
        0,
        contains("A").and(contains("B")).and(contains("C")),
        contains("from the backup"),
    );
    check(
        &env,
        &["touch", "A"],
        0,
        contains("touched A"),
        contains("moved it aside"),
    );
    let entries = env.entries();
    assert_eq!(entries.keys().collect::<Vec<_>>(), ["A", "B", "C"]);
}

#[test]
fn a_corrupt_index_that_cannot_be_replaced_keeps_one_copy_however_often_a_write_fails() {
    let env = Sandbox::default();
    record(&env, "A", "sid-a", "REPO");
    fs::write(env.index_path(), b"{ not json").unwrap();
    for _ in 0..3 {
        // The repaired index cannot be written (as in a dir that cannot be written to).
        crash_resume(&env)
            .env("CRASH_RESUME_FAULT", "temp-written:fail")
            .args(["touch", "A"])
            .assert()
            .code(1)
            .stderr(contains("cannot write"));
        // A read writes nothing, and keeps nothing aside.
        crash_resume(&env)
            .args(["list"])
            .assert()
            .success()
            .stdout(contains("A"));
    }
    let kept = env.corrupt_copies();
    assert_eq!(kept.len(), 1, "{:?}", env.index_dir_files());
    assert_eq!(env.index_bytes().unwrap(), b"{ not json");
}

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
        contains("a lock dir made in the future (clock skew?)").and(contains("stale 15 s after")),
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
