//! Reads never write, and a file that is not our index is never touched: every read command
//! against a missing, a healthy and a damaged index leaves every file as it was; every command
//! (the hook too) refuses a file at the index path that is not an index, and leaves it exactly
//! as it was; and an index, or a dir on its path, that another user owns or can write is
//! refused as a symlink there would be; a torn write of the JavaScript tool loses none of the
//! entries it holds whole; and a read run in a zellij pane renames no pane. Each
//! through the real binary. One table across every command (each reads the same index), so it
//! stays one file.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use predicates::prelude::*;
use predicates::str::contains;

use crate::harness::{git_work_dir, hook_log, run_hook, session_start, uuid};
use crate::{Sandbox, check, crash_resume, record, sandbox_with};

/// The commands that only read the index.
const READS: [&[&str]; 6] = [
    &["list"],
    &["lookup", "A"],
    &["resume-cmd", "A"],
    &["restore"],
    &["preflight", "A"],
    &["path"],
];

/// The commands that write the index.
const WRITES: [&[&str]; 4] = [
    &["record", "B", "sid-b", "REPO"],
    &["touch", "A"],
    &["prune", "1d"],
    &["forget", "A"],
];

/// A file as it is: its bytes, mode, owner, inode and change time (seconds, nanoseconds),
/// which any write, rename, chmod or chown changes.
type FileState = (Vec<u8>, u32, u32, u64, i64, i64);

/// Every file in `dir` as it is.
fn files_in(dir: &Path) -> BTreeMap<String, FileState> {
    let Ok(listing) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    listing
        .map(|item| {
            let item = item.unwrap();
            let metadata = fs::symlink_metadata(item.path()).unwrap();
            let bytes = match metadata.is_file() {
                true => fs::read(item.path()).unwrap(),
                false => Vec::new(),
            };
            let state = (
                bytes,
                metadata.mode(),
                metadata.uid(),
                metadata.ino(),
                metadata.ctime(),
                metadata.ctime_nsec(),
            );
            (item.file_name().to_string_lossy().into_owned(), state)
        })
        .collect()
}

fn run(env: &Sandbox, args: &[&str]) -> std::process::Output {
    crash_resume(env).args(args).output().unwrap()
}

#[test]
fn reads_never_create_move_or_change_a_file() {
    // No index: nothing is created, not even its dir.
    let env = Sandbox::default();
    for args in READS {
        let output = run(&env, args);
        assert_ne!(output.status.code(), Some(1), "{args:?}: {output:?}");
        assert!(!env.index_dir().exists(), "{args:?} created the index dir");
    }

    // A healthy index, and then a damaged one of ours (garbage written over it from outside):
    // the reads answer from it, or from its backup with a warning, and change nothing.
    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    for damaged in [false, true] {
        if damaged {
            fs::write(env.index_path(), b"\x00\x00garbage").unwrap();
        }
        let before = files_in(&env.index_dir());
        for args in READS {
            let output = run(&env, args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_ne!(output.status.code(), Some(1), "{args:?}: {stderr}");
            if damaged && args[0] != "path" {
                assert!(
                    stderr.contains("from the backup") && stderr.contains("the next write"),
                    "{args:?}: {stderr}"
                );
            }
            assert_eq!(files_in(&env.index_dir()), before, "{args:?} wrote");
        }
        check(
            &env,
            &["lookup", "A"],
            0,
            contains("sid-a"),
            predicate::always(),
        );
    }
    // The next write repairs it from the backup, keeping the damaged file aside.
    check(
        &env,
        &["touch", "A"],
        0,
        contains("touched A"),
        contains("index.json.corrupt-"),
    );
    assert!(env.entry("A").is_some());
    assert_eq!(
        fs::read(env.index_dir().join(&env.corrupt_copies()[0])).unwrap(),
        b"\x00\x00garbage"
    );
}

/// Runs every command but `path` (which does not read the file) and the hook against the
/// sandbox's index path, and checks each is refused with `message`, leaving the index dir as
/// it was (the hook's log aside).
fn every_command_refuses(env: &Sandbox, message: &str, context: &str) {
    let before = files_in(&env.index_dir());
    let index = env.index_path();
    for args in READS.iter().chain(&WRITES).filter(|args| args[0] != "path") {
        crash_resume(env)
            .args(*args)
            .assert()
            .code(1)
            .stderr(contains(index.to_str().unwrap()).and(contains(message)));
        assert_eq!(files_in(&env.index_dir()), before, "{context}: {args:?}");
    }
    let cwd = git_work_dir(env, "proj", "");
    run_hook(
        env,
        "claude",
        &[("CMUX_SURFACE_ID", "abc")],
        &session_start(&uuid(1), &cwd, "startup"),
    )
    .assert_silent_success(context);
    let log = hook_log(env);
    assert!(
        log.contains("error:") && log.contains(message),
        "{context}: {log}"
    );
    let mut after = files_in(&env.index_dir());
    after.remove("hook.log");
    assert_eq!(after, before, "{context}: the hook");
}

#[test]
fn a_file_that_is_not_an_index_is_refused_by_every_command_and_left_as_it_was() {
    let foreign: [&[u8]; 4] = [
        b"export PATH=$HOME/bin:$PATH\n",
        b"{\"name\": \"app\", \"version\": \"1.0.0\", \"dependencies\": {}}\n",
        b"{\"theme\": \"dark\"}",
        // Empty, with nothing of ours beside it.
        b"",
    ];
    for bytes in foreign {
        let context = String::from_utf8_lossy(bytes).into_owned();
        let env = Sandbox::default();
        env.write_index_bytes(bytes);
        fs::set_permissions(env.index_path(), fs::Permissions::from_mode(0o644)).unwrap();
        every_command_refuses(&env, "is not a crash-resume index", &context);
        assert_eq!(env.index_bytes().unwrap(), bytes, "{context}");
    }
}

/// An index past the largest one read (256 MiB; a sparse file here, which takes no disk) is
/// refused unread by every command and left as it is; the hook records nothing and says why in
/// its log, so no agent start holds that much memory for it.
#[test]
fn an_index_too_large_to_be_real_is_refused_unread_by_every_command() {
    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    let file = fs::OpenOptions::new()
        .write(true)
        .open(env.index_path())
        .unwrap();
    file.set_len(index_store::MAX_INDEX_BYTES + 1).unwrap();
    drop(file);
    every_command_refuses(
        &env,
        &format!(
            "is {} bytes, more than the {} bytes crash-resume reads",
            index_store::MAX_INDEX_BYTES + 1,
            index_store::MAX_INDEX_BYTES
        ),
        "an index too large",
    );
    assert_eq!(
        fs::metadata(env.index_path()).unwrap().len(),
        index_store::MAX_INDEX_BYTES + 1
    );
}

/// The JavaScript crash-resume-index rewrites the file in place: a crash of it can leave the
/// file empty, holding its lock dir. With that, or a sidecar of ours, beside it, an empty file
/// is an empty index: reads say so and write nothing, and the next write replaces it.
#[test]
fn an_empty_file_beside_a_sidecar_is_an_empty_index_that_the_next_write_replaces() {
    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    fs::remove_file(env.backup_path()).unwrap();
    env.write_index_bytes(b"");
    let before = files_in(&env.index_dir());
    check(
        &env,
        &["list"],
        0,
        predicate::str::is_empty(),
        contains("it is empty").and(contains("empty index")),
    );
    assert_eq!(files_in(&env.index_dir()), before);
    record(&env, "B", "sid-b", "REPO");
    assert!(env.entry("B").is_some());
}

/// The JavaScript tool rewrites the index in place: killed mid-write, it leaves whole the
/// entries it wrote before the tear, one it recorded after our last write (so not in our
/// backup) among them. Every read shows it, and the repair keeps it.
#[test]
fn a_torn_write_of_the_javascript_tool_loses_none_of_the_entries_it_holds_whole() {
    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    let mut written: serde_json::Value =
        serde_json::from_slice(&fs::read(env.index_path()).unwrap()).unwrap();
    let at = 1_700_000_000_000;
    written["entries"]["js-acked"] = crate::entry("js-acked", "sid-js-acked", "REPO", at, at);
    written["entries"]["js-torn"] = crate::entry("js-torn", "sid-js-torn", "REPO", at, at);
    let whole = serde_json::to_vec_pretty(&written).unwrap();
    env.write_index_bytes(&whole[..whole.len() - 40]);
    for with_backup in [true, false] {
        if !with_backup {
            fs::remove_file(env.backup_path()).unwrap();
        }
        check(
            &env,
            &["lookup", "js-acked"],
            0,
            contains("sid-js-acked"),
            contains("the damaged file holds whole"),
        );
        check(
            &env,
            &["list"],
            0,
            contains("js-acked").and(contains("A")),
            contains(""),
        );
    }
    record(&env, "B", "sid-b", "REPO");
    for surface in ["A", "js-acked", "B"] {
        assert!(env.entry(surface).is_some(), "{surface}");
    }
    assert!(env.entry("js-torn").is_none());
}

/// Another user's index, or a dir on its path that others can write (a sticky dir aside), is
/// refused as a symlink that another user could swap is. Owners other than ours take root to
/// set up, as CI runs the tests.
#[test]
fn an_index_or_dir_another_user_could_change_is_refused_as_a_symlink_is() {
    const NOBODY: u32 = 65534;
    let as_root = rustix::process::geteuid().is_root();

    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    fs::set_permissions(env.index_path(), fs::Permissions::from_mode(0o666)).unwrap();
    every_command_refuses(
        &env,
        "it can be written by others (mode 666), so another user could",
        "a file others can write",
    );

    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    let dir = env.index_dir();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o702)).unwrap();
    every_command_refuses(
        &env,
        &format!(
            "the directory {} on its path can be written by others (mode 702)",
            dir.display()
        ),
        "a dir others can write",
    );

    // A sticky dir that everyone can write, such as /var/tmp, is fine: no one else can replace
    // or remove what is ours in it.
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o1777)).unwrap();
    check(
        &env,
        &["lookup", "A"],
        0,
        contains("sid-a"),
        predicate::always(),
    );
    record(&env, "B", "sid-b", "REPO");

    // Group write in the user's private group (the group of the user's own id, under the
    // umask 002 of systems with a group per user) is the user's alone; in another group it is
    // not.
    let (uid, gid) = (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    );
    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    let dir = env.index_dir();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o770)).unwrap();
    if uid == gid {
        check(
            &env,
            &["lookup", "A"],
            0,
            contains("sid-a"),
            predicate::always(),
        );
    }
    if as_root {
        std::os::unix::fs::chown(&dir, None, Some(NOBODY)).unwrap();
        every_command_refuses(
            &env,
            &format!(
                "the directory {} on its path can be written by others (mode 770)",
                dir.display()
            ),
            "a dir another group can write",
        );
    }

    if as_root {
        // An index planted by another user in a shared dir.
        let env = sandbox_with(&[("A", "sid-a", "REPO")]);
        fs::set_permissions(env.index_dir(), fs::Permissions::from_mode(0o1777)).unwrap();
        std::os::unix::fs::chown(env.index_path(), Some(NOBODY), Some(NOBODY)).unwrap();
        every_command_refuses(
            &env,
            "it is owned by uid 65534, not by you, so another user could",
            "another user's index",
        );
        assert_eq!(fs::metadata(env.index_path()).unwrap().uid(), NOBODY);

        // A dir of another user on the path.
        let env = sandbox_with(&[("A", "sid-a", "REPO")]);
        std::os::unix::fs::chown(env.index_dir(), Some(NOBODY), Some(NOBODY)).unwrap();
        every_command_refuses(
            &env,
            &format!(
                "the directory {} on its path is owned by uid 65534, not by you",
                env.index_dir().display()
            ),
            "another user's dir",
        );

        // A damaged index of ours beside a backup another user planted: the backup is not
        // read, and the file, with nothing of ours to say it is ours, is refused.
        let env = sandbox_with(&[("A", "sid-a", "REPO")]);
        fs::write(env.index_path(), b"garbage").unwrap();
        std::os::unix::fs::chown(env.backup_path(), Some(NOBODY), Some(NOBODY)).unwrap();
        check(
            &env,
            &["lookup", "A"],
            1,
            predicate::str::is_empty(),
            contains("is not a crash-resume index"),
        );
    }
}

/// Run in a zellij pane, the reads ask zellij at most to list the panes and dump the layout: the pane, which bears
/// no name of ours, is not renamed (the hook names panes, `restore` only looks), and a pane
/// that bears one is found by it.
#[test]
fn reads_in_a_zellij_pane_rename_no_pane() {
    let env = sandbox_with(&[("zellij:w:cr-4-1", "s-1", "r")]);
    let bin = crate::harness::make_dir(&env.root().join("bin"));
    let calls = env.root().join("zellij-calls");
    let panes = r#"[{"id":3,"is_plugin":false,"title":"sh","exited":false,"is_held":false,"tab_id":0,"pane_command":"sh"},{"id":4,"is_plugin":false,"title":"cr-4-1","exited":false,"is_held":false,"tab_id":0,"pane_command":"sh"}]"#;
    // The name is the layout's, as zellij dumps it; a title alone would not be one.
    let layout =
        "layout {\n    tab name=\"Tab #1\" {\n        pane\n        pane name=\"cr-4-1\"\n    }\n}";
    let zellij = bin.join("zellij");
    fs::write(
        &zellij,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncase \"$*\" in *list-panes*) echo '{panes}';; *dump-layout*) echo '{layout}';; esac\n",
            calls.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&zellij, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    for (pane, note) in [("3", false), ("4", true)] {
        for args in READS {
            let output = crash_resume(&env)
                .args(args)
                .env("PATH", &path)
                .env("ZELLIJ", "0")
                .env("ZELLIJ_SESSION_NAME", "w")
                .env("ZELLIJ_PANE_ID", pane)
                .output()
                .unwrap();
            if args == ["restore"] {
                let said = String::from_utf8_lossy(&output.stderr);
                assert_eq!(
                    said.contains("this restore runs in zellij:w:cr-4-1"),
                    note,
                    "pane {pane}: {said}"
                );
            }
        }
    }
    let asked = fs::read_to_string(&calls).unwrap_or_default();
    // Only the two reads: the panes and the layout that names them.
    assert!(
        asked
            .lines()
            .all(|call| call.contains("list-panes") || call.contains("dump-layout")),
        "{asked}"
    );
}
