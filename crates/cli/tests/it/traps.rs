//! The index's own files are never a trap, for every command (they all open the same index, its
//! lock and its log, so this is one table, not a copy per command): symlinks at the tool's own
//! files, a symlink at the index path that someone else could swap, a FIFO at the index path, and
//! an index overwritten from outside. Each through the real binary. (FIFOs in the agents' dirs
//! and huge transcripts: `restore` and `preflight`; the JavaScript tool's lock: `record::lock`.)

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use predicates::str::{contains, is_empty};

use crate::harness::{
    git_work_dir, hook_log, make_dir, mkfifo, run_with_stdin, session_start, uuid,
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
