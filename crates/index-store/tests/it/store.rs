//! The store's behaviour on disk: missing files, backups, corruption, files that are not an
//! index, ownership, locking, volatile paths, private directories, symlinks.

use std::time::Duration;

use camino::Utf8PathBuf;
use index_store::{
    Durability, Store, StoreError, StoreOptions, Warning, durability, durability_with,
};

use crate::{quarantined_from_backup, rec, store_at, temp_dir};

fn names_in(dir: &camino::Utf8Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|item| item.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_missing_file_is_an_empty_index_and_reading_creates_nothing() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("state/crash-resume/index.json");
    let snapshot = store_at(&path).load().unwrap();
    assert!(snapshot.index.is_empty());
    assert!(!dir.join("state").exists());
}

#[test]
fn the_first_write_creates_private_directories() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("state/crash-resume/index.json");
    store_at(&path)
        .update(|index| index.record(rec("p", "s", "r"), 1))
        .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for created in [dir.join("state"), dir.join("state/crash-resume")] {
            let mode = std::fs::metadata(&created).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{created}");
        }
    }
    assert_eq!(
        names_in(path.parent().unwrap()),
        ["index.json", "index.json.bak", "index.json.flock"]
    );
}

#[test]
fn each_write_keeps_a_copy_of_the_new_generation_and_leaves_no_temp_file() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    store
        .update(|index| index.record(rec("p", "s1", "r"), 1))
        .unwrap();
    assert_eq!(
        std::fs::read(store.backup_path()).unwrap(),
        std::fs::read(&path).unwrap()
    );
    store
        .update(|index| index.record(rec("p", "s2", "r"), 2))
        .unwrap();
    let second = std::fs::read(&path).unwrap();
    assert_eq!(std::fs::read(store.backup_path()).unwrap(), second);
    // A file of its own: a tool writing the index in place does not change the backup.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let index_inode = std::fs::metadata(&path).unwrap().ino();
        assert_ne!(
            std::fs::metadata(store.backup_path()).unwrap().ino(),
            index_inode
        );
    }
    // The JavaScript tool's lock dir is removed after the write.
    assert_eq!(
        names_in(&dir),
        ["index.json", "index.json.bak", "index.json.flock"]
    );
}

/// Records (scoped writes) leave the backup as it is and journal their changes beside it; an
/// index torn in place is read from the backup with the journal, which is used only with the
/// backup it was made for and only when it is ours.
#[test]
fn records_journal_their_change_beside_the_backup_and_a_torn_index_recovers_them() {
    use index_store::Scope;
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    store
        .update(|index| index.record(rec("p1", "s1", "r"), 1))
        .unwrap();
    let backup = std::fs::read(store.backup_path()).unwrap();
    for (n, (surface, session)) in [("p2", "s2"), ("p3", "s3"), ("p4", "s1")]
        .iter()
        .enumerate()
    {
        let scope = Scope {
            surfaces: &[surface],
            sessions: &[session],
        };
        store
            .update_entries(scope, |index| {
                index.record(rec(surface, session, "r"), 2 + n as u64)
            })
            .unwrap();
    }
    assert_eq!(
        std::fs::read(store.backup_path()).unwrap(),
        backup,
        "not copied"
    );
    assert_eq!(
        names_in(&dir),
        [
            "index.json",
            "index.json.bak",
            "index.json.bak.journal",
            "index.json.flock"
        ]
    );
    let latest = store.load().unwrap().index;
    // p4 took s1 from p1: the journal drops p1.
    assert!(latest.lookup("p1").is_none());
    let tear = || std::fs::write(&path, b"{\"version\": 1, \"entries\": {\"p").unwrap();
    tear();
    let snapshot = store.load().unwrap();
    assert!(matches!(
        &snapshot.warnings[..],
        [Warning::Damaged {
            from_backup: true,
            salvaged: 0,
            ..
        }]
    ));
    assert_eq!(snapshot.index, latest, "the latest acknowledged generation");

    #[cfg(unix)]
    if rustix::process::geteuid().is_root() {
        // Another user's journal is not used (the backup alone is).
        let journal = store.journal_path();
        std::os::unix::fs::chown(&journal, Some(65534), Some(65534)).unwrap();
        let snapshot = store.load().unwrap();
        assert!(snapshot.index.lookup("p1").is_some() && snapshot.index.lookup("p2").is_none());
        std::os::unix::fs::chown(&journal, Some(0), Some(0)).unwrap();
        assert_eq!(store.load().unwrap().index, latest);
    }

    // A backup the journal was not made for (the same generation, laid out otherwise).
    let mut other = backup.clone();
    other.push(b'\n');
    std::fs::write(store.backup_path(), &other).unwrap();
    let snapshot = store.load().unwrap();
    assert!(snapshot.index.lookup("p1").is_some() && snapshot.index.lookup("p2").is_none());

    // The repair writes the backup as a copy again and removes the journal.
    std::fs::write(store.backup_path(), &backup).unwrap();
    store.update(|_| ()).unwrap();
    assert_eq!(store.load().unwrap().index, latest);
    assert_eq!(
        std::fs::read(store.backup_path()).unwrap(),
        std::fs::read(&path).unwrap()
    );
    assert!(!store.journal_path().exists());
}

/// The journal stays small: once it would outgrow a quarter of the index (at least 4 KiB), a
/// record copies the backup again and the journal starts over; recovery holds throughout.
#[test]
fn the_journal_is_compacted_into_a_copy_of_the_backup_once_it_grows() {
    use index_store::Scope;
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    store
        .update(|index| index.record(rec("p0", "s0", "r"), 1))
        .unwrap();
    let mut copies = 0;
    let mut backup = std::fs::read(store.backup_path()).unwrap();
    for n in 1..60u64 {
        let (surface, session) = (format!("pane-{n}"), format!("session-{n}"));
        let scope = Scope {
            surfaces: &[surface.as_str()],
            sessions: &[session.as_str()],
        };
        store
            .update_entries(scope, |index| {
                index.record(rec(&surface, &session, "r"), 1 + n)
            })
            .unwrap();
        let now = std::fs::read(store.backup_path()).unwrap();
        copies += usize::from(now != backup);
        backup = now;
        let index_len = std::fs::metadata(&path).unwrap().len();
        let journal_len = std::fs::metadata(store.journal_path()).map_or(0, |m| m.len());
        assert!(
            journal_len <= (index_len / 4).max(4096),
            "{n}: {journal_len} of {index_len}"
        );
    }
    assert!(copies > 0, "compacted");
    let latest = store.load().unwrap().index;
    std::fs::write(&path, b"{\"version\": 1, \"entries\": {\"p").unwrap();
    assert_eq!(store.load().unwrap().index, latest);
}

#[test]
fn an_update_that_changes_nothing_writes_nothing() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    store
        .update(|index| index.record(rec("p", "s", "r"), 1))
        .unwrap();
    let backup_before = std::fs::metadata(store.backup_path())
        .unwrap()
        .modified()
        .unwrap();
    let updated = store.update(|index| index.touch("ghost", 2)).unwrap();
    assert!(!updated.value);
    assert!(!updated.written);
    let backup_after = std::fs::metadata(store.backup_path())
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(backup_before, backup_after);
}

#[test]
fn temp_files_left_by_a_killed_writer_are_cleaned_under_the_lock() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    std::fs::write(dir.join(".index.json.abc123.tmp"), b"{\"half").unwrap();
    std::fs::write(dir.join("unrelated.tmp"), b"keep").unwrap();
    // Named as another program might name its own temp file: not ours, kept.
    std::fs::write(dir.join(".index.json.other-tool.tmp"), b"keep").unwrap();
    store_at(&path)
        .update(|index| index.record(rec("p", "s", "r"), 1))
        .unwrap();
    assert_eq!(
        names_in(&dir),
        [
            ".index.json.other-tool.tmp",
            "index.json",
            "index.json.bak",
            "index.json.flock",
            "unrelated.tmp"
        ]
    );
}

#[test]
fn a_corrupt_index_is_read_from_the_backup_and_kept_aside_by_the_next_write() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    store
        .update(|index| index.record(rec("p1", "s1", "r"), 1))
        .unwrap();
    store
        .update(|index| index.record(rec("p2", "s2", "r"), 2))
        .unwrap();
    let garbage = b"{\"version\":1,\"entries\":{\"p1\":";
    std::fs::write(&path, garbage).unwrap();
    let names_before = names_in(&dir);

    // A read uses the backup, says so, and writes nothing.
    let snapshot = store.load().unwrap();
    assert!(
        matches!(
            &snapshot.warnings[..],
            [Warning::Damaged {
                from_backup: true,
                ..
            }]
        ),
        "{:?}",
        snapshot.warnings
    );
    assert!(snapshot.warnings[0].to_string().contains("the next write"));
    // The backup held the latest acknowledged generation: nothing acknowledged is lost.
    assert!(snapshot.index.lookup("p1").is_some());
    assert!(snapshot.index.lookup("p2").is_some());
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    assert_eq!(names_in(&dir), names_before);

    // The next write keeps the corrupt file aside and repairs the index from the backup.
    let updated = store
        .update(|index| index.record(rec("p3", "s3", "r"), 3))
        .unwrap();
    let moved_to = quarantined_from_backup(&updated.warnings, "a corrupt index");
    assert!(
        moved_to.as_str().contains("index.json.corrupt-"),
        "{moved_to}"
    );
    assert_eq!(std::fs::read(moved_to).unwrap(), garbage);
    assert!(updated.warnings[0].to_string().contains(moved_to.as_str()));
    let snapshot = store.load().unwrap();
    assert_eq!(snapshot.warnings, []);
    let index = snapshot.index;
    assert!(index.lookup("p1").is_some() && index.lookup("p2").is_some());
    assert!(index.lookup("p3").is_some());
}

#[test]
fn a_second_corruption_never_overwrites_the_first_kept_file() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    store
        .update(|index| index.record(rec("p", "s", "r"), 1))
        .unwrap();
    let mut kept = Vec::new();
    for garbage in ["not json", "[1,2,3]", "{\"entries\": 5}"] {
        std::fs::write(&path, garbage).unwrap();
        let updated = store
            .update(|index| index.record(rec("p", "s", "r"), 1))
            .unwrap();
        let [Warning::Quarantined { moved_to, .. }] = &updated.warnings[..] else {
            panic!("{:?}", updated.warnings);
        };
        assert_eq!(std::fs::read_to_string(moved_to).unwrap(), garbage);
        kept.push(moved_to.clone());
    }
    kept.sort();
    kept.dedup();
    assert_eq!(kept.len(), 3);
}

#[test]
fn a_damaged_index_that_begins_as_one_is_ours_even_without_a_backup() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    // What a torn in-place write of the JavaScript tool leaves.
    let torn = b"{\n  \"version\": 1,\n  \"entries\": {\n    \"p1\": {";
    std::fs::write(&path, torn).unwrap();
    let store = store_at(&path);
    let snapshot = store.load().unwrap();
    assert!(matches!(
        &snapshot.warnings[..],
        [Warning::Damaged {
            from_backup: false,
            ..
        }]
    ));
    assert!(snapshot.index.is_empty());
    assert_eq!(names_in(&dir), ["index.json"]);
    let updated = store
        .update(|index| index.record(rec("p", "s", "r"), 1))
        .unwrap();
    let [Warning::Quarantined { moved_to, .. }] = &updated.warnings[..] else {
        panic!("{:?}", updated.warnings);
    };
    assert_eq!(std::fs::read(moved_to).unwrap(), torn);
}

/// The JavaScript tool rewrites the index in place: killed mid-write, it leaves the entries it
/// wrote before the tear whole, and among them entries it acknowledged after our last write,
/// which our backup does not hold. Reads and the repair keep them.
#[test]
fn a_torn_write_of_the_javascript_tool_keeps_the_entries_it_holds_whole() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    store
        .update(|index| index.record(rec("ours", "s-ours", "r"), 1))
        .unwrap();
    // The JavaScript tool records `js0` (acknowledged), then is killed writing `js1`.
    let entry = |surface: &str, session: &str| {
        format!(
            "\"{surface}\": {{\"surfaceId\": \"{surface}\", \"sessionId\": \"{session}\", \
             \"repo\": \"r\", \"role\": null, \"captured_at\": 2, \"last_active\": 2.0e0}}"
        )
    };
    let torn = format!(
        "{{\"version\": 1, \"entries\": {{{}, {}, {}",
        entry("ours", "s-ours"),
        entry("js0", "s-js0"),
        &entry("js1", "s-js1")[..40]
    );
    let backup = std::fs::read(store.backup_path()).unwrap();
    for with_backup in [true, false] {
        std::fs::write(&path, &torn).unwrap();
        if with_backup {
            std::fs::write(store.backup_path(), &backup).unwrap();
        } else {
            let _ = std::fs::remove_file(store.backup_path());
        }
        let snapshot = store.load().unwrap();
        let [warning @ Warning::Damaged { from_backup, .. }] = &snapshot.warnings[..] else {
            panic!("{:?}", snapshot.warnings);
        };
        assert_eq!(*from_backup, with_backup);
        assert!(
            warning
                .to_string()
                .contains("2 entries the damaged file holds whole"),
            "{warning}"
        );
        assert!(snapshot.index.lookup("ours").is_some());
        assert!(snapshot.index.lookup("js0").is_some(), "{with_backup}");
        assert!(snapshot.index.lookup("js1").is_none());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            torn.as_bytes(),
            "a read wrote"
        );

        let updated = store
            .update(|index| index.record(rec("p3", "s3", "r"), 3))
            .unwrap();
        let [Warning::Quarantined { moved_to, .. }] = &updated.warnings[..] else {
            panic!("{:?}", updated.warnings);
        };
        assert_eq!(std::fs::read(moved_to).unwrap(), torn.as_bytes());
        std::fs::remove_file(moved_to).unwrap();
        let index = store.load().unwrap().index;
        for surface in ["ours", "js0", "p3"] {
            assert!(index.lookup(surface).is_some(), "{surface}, {with_backup}");
        }
        store.update(|index| index.forget("p3")).unwrap();
    }
}

/// Runs every read and write of `store` and hands each result to `refused`.
fn every_operation(store: &Store, refused: impl Fn(Result<(), StoreError>)) {
    refused(store.load().map(drop));
    refused(store.load_entry("p").map(drop));
    refused(
        store
            .update(|index| index.record(rec("p", "s", "r"), 1))
            .map(drop),
    );
    refused(store.forget("p").map(drop));
    refused(store.prune(1, 2, |_| None).map(drop));
}

/// Files a mistyped `--path` could name: not JSON, JSON of another tool (a `package.json`, a
/// `launch.json` whose `version` is a string), an empty file with nothing of ours beside it.
#[test]
fn a_file_that_is_not_an_index_is_refused_by_reads_and_writes_and_left_as_it_was() {
    use std::os::unix::fs::PermissionsExt;
    let foreign: [&[u8]; 6] = [
        b"export PATH=$HOME/bin:$PATH\n",
        &[0xff, 0xfe, 0x00],
        b"{}",
        b"{\"name\": \"app\", \"dependencies\": {}}",
        b"{\"version\": \"0.2.0\", \"configurations\": []}",
        b"",
    ];
    for bytes in foreign {
        let context = String::from_utf8_lossy(bytes).into_owned();
        let (_dir, dir) = temp_dir();
        let path = dir.join("notes");
        std::fs::write(&path, bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let store = store_at(&path);
        let refused = |result: Result<(), StoreError>| match result {
            Err(StoreError::NotAnIndex { path: named, .. }) => assert_eq!(named, path),
            other => panic!("{context}: {other:?}"),
        };
        every_operation(&store, refused);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{context}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o644, "{context}");
        assert_eq!(names_in(&dir), ["notes"], "{context}");
    }
}

/// An index past [`index_store::MAX_INDEX_BYTES`] (a sparse file here: no disk is used) is
/// refused unread by every read and write, and left as it was.
#[test]
fn an_index_past_the_largest_read_is_refused_and_left_as_it_was() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, br#"{"version": 1, "entries": {"#).unwrap();
    file.set_len(index_store::MAX_INDEX_BYTES + 1).unwrap();
    drop(file);
    let store = store_at(&path);
    let refused = |result: Result<(), StoreError>| match result {
        Err(error @ StoreError::TooLarge { .. }) => {
            let StoreError::TooLarge {
                path: named,
                size,
                cap,
            } = &error
            else {
                unreachable!()
            };
            assert_eq!(
                (named, *size, *cap),
                (
                    &path,
                    index_store::MAX_INDEX_BYTES + 1,
                    index_store::MAX_INDEX_BYTES
                )
            );
            assert!(error.to_string().contains("Move it aside"), "{error}");
        }
        other => panic!("{other:?}"),
    };
    every_operation(&store, refused);
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        index_store::MAX_INDEX_BYTES + 1
    );
    // Refused before the writers' lock: nothing beside it.
    assert_eq!(names_in(&dir), ["index.json"]);
}

/// A crash of the JavaScript tool while it rewrites the file in place can leave it empty,
/// holding its lock dir; a file of ours that was emptied has our sidecars beside it.
#[test]
fn an_empty_file_with_a_sidecar_beside_it_is_an_empty_index() {
    for sidecar in ["index.json.lock", "index.json.flock", "index.json.bak"] {
        let (_dir, dir) = temp_dir();
        let path = dir.join("index.json");
        std::fs::write(&path, b"").unwrap();
        match sidecar {
            "index.json.lock" => std::fs::create_dir(dir.join(sidecar)).unwrap(),
            _ => std::fs::write(dir.join(sidecar), b"").unwrap(),
        }
        let store = store_at(&path);
        let snapshot = store.load().unwrap();
        assert!(snapshot.index.is_empty(), "{sidecar}");
        assert!(
            matches!(&snapshot.warnings[..], [Warning::Damaged { .. }]),
            "{sidecar}: {:?}",
            snapshot.warnings
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"",
            "{sidecar}: a read wrote"
        );
        if sidecar == "index.json.lock" {
            // The JavaScript tool's lock dir, left by its crash, is stale once 15 s old; this
            // one is fresh, so the write would wait for it.
            continue;
        }
        store
            .update(|index| index.record(rec("p", "s", "r"), 1))
            .unwrap();
        assert!(
            store.load().unwrap().index.lookup("p").is_some(),
            "{sidecar}"
        );
    }
}

#[test]
fn a_held_lock_times_out_with_a_clear_error_and_nothing_is_lost() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let options = StoreOptions {
        lock_timeout: Duration::from_millis(200),
        ..StoreOptions::default()
    };
    let store = Store::open(&path, options).unwrap();
    store
        .update(|index| index.record(rec("p", "s", "r"), 1))
        .unwrap();
    let inner = store
        .update(|index| {
            index.record(rec("q", "t", "r"), 2);
            store.update(|index| index.record(rec("x", "y", "r"), 3))
        })
        .unwrap();
    let error = inner.value.unwrap_err();
    let StoreError::LockTimeout { holder, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(
        holder.contains(&format!("pid {}", std::process::id())),
        "{holder}"
    );
    let message = error.to_string();
    assert!(
        message.contains(path.as_str()) && message.contains("gave up after"),
        "{message}"
    );
    let index = store.load().unwrap().index;
    assert!(index.lookup("p").is_some() && index.lookup("q").is_some());
    assert!(index.lookup("x").is_none());
}

#[test]
fn volatile_paths_are_refused_unless_allowed() {
    for volatile in [
        "/tmp/x/index.json",
        "/dev/shm/index.json",
        "/run/user/1000/index.json",
    ] {
        let path = Utf8PathBuf::from(volatile);
        assert!(
            matches!(durability(&path), Durability::Volatile(_)),
            "{volatile}"
        );
        let error = Store::open(&path, StoreOptions::default()).unwrap_err();
        assert!(
            matches!(error, StoreError::Volatile { .. }),
            "{volatile}: {error:?}"
        );
        // It says what is wrong; choosing another path is the caller's to say.
        assert!(
            error.to_string().ends_with("which a reboot wipes"),
            "{error}"
        );
        let allowed = StoreOptions {
            allow_volatile: true,
            ..StoreOptions::default()
        };
        assert!(Store::open(&path, allowed).is_ok());
    }
    let (_dir, dir) = temp_dir();
    assert_eq!(durability(&dir.join("index.json")), Durability::Durable);
}

/// Paths as macOS names its volatile dirs (`/tmp` is `/private/tmp`, `$TMPDIR` is under
/// `/private/var/folders`), and the temp dir, as named and as it really is.
#[test]
fn volatile_paths_by_their_macos_names_and_the_temp_dir() {
    let (_dir, dir) = temp_dir();
    let temp = dir.join("temp");
    std::fs::create_dir(&temp).unwrap();
    let temp_link = dir.join("temp-link");
    std::os::unix::fs::symlink(&temp, &temp_link).unwrap();
    #[rustfmt::skip]
    let cases: [(Utf8PathBuf, Option<&str>); 9] = [
        ("/private/tmp/x/index.json".into(),                    Some("under /private/tmp")),
        ("/private/var/folders/zz/abc_d/T/index.json".into(),   Some("under /private/var/folders")),
        ("/var/folders/zz/abc_d/T/index.json".into(),           Some("under /var/folders")),
        ("/private/var/run/index.json".into(),                  Some("under /private/var/run")),
        ("/private/var/db/index.json".into(),                   None),
        (temp_link.join("x/index.json"),                        Some("under the temp dir")),
        // The temp dir reached by its real name.
        (temp.join("index.json"),                               Some("under the temp dir")),
        (dir.join("index.json"),                                None),
        ("/privatetmp/index.json".into(),                       None),
    ];
    for (path, expected) in cases {
        match (durability_with(&path, temp_link.as_std_path()), expected) {
            (Durability::Volatile(reason), Some(expected)) => {
                assert!(reason.starts_with(expected), "{path}: {reason}");
            }
            (Durability::Durable, None) => {}
            (got, _) => panic!("{path}: {got:?}, expected {expected:?}"),
        }
    }
}

/// A symlink in `/tmp` goes with `/tmp` at a reboot, wherever it points: the path as given
/// counts, not only where it leads.
#[test]
fn a_symlink_in_tmp_to_a_durable_dir_is_volatile() {
    let (_dir, dir) = temp_dir();
    let link = tempfile::Builder::new()
        .prefix("crash-resume-store-link-")
        .tempdir_in("/tmp")
        .unwrap();
    let link_path = link.path().join("index-dir");
    std::os::unix::fs::symlink(&dir, &link_path).unwrap();
    let through_link = Utf8PathBuf::from_path_buf(link_path.join("index.json")).unwrap();
    assert!(
        matches!(durability(&through_link), Durability::Volatile(reason) if reason.contains("/tmp")),
        "{through_link}"
    );
    assert!(matches!(
        Store::open(&through_link, StoreOptions::default()),
        Err(StoreError::Volatile { .. })
    ));
    assert_eq!(durability(&dir.join("index.json")), Durability::Durable);
}

#[cfg(target_os = "linux")]
#[test]
fn a_tmpfs_mount_is_volatile_wherever_it_is() {
    // /dev/shm is tmpfs on Linux; reach it through a path that does not name it.
    let (_dir, dir) = temp_dir();
    let link = dir.join("shm-link");
    std::os::unix::fs::symlink("/dev/shm", &link).unwrap();
    let shm = Utf8PathBuf::from("/dev/shm");
    let resolved = Store::open(
        &link.join("index.json"),
        StoreOptions {
            allow_volatile: true,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    assert!(resolved.path().starts_with(&shm));
    assert!(matches!(
        Store::open(&link.join("index.json"), StoreOptions::default()),
        Err(StoreError::Volatile { .. })
    ));
}

#[cfg(unix)]
#[test]
fn a_symlinked_index_is_followed_and_stays_a_symlink() {
    let (_dir, dir) = temp_dir();
    std::fs::create_dir(dir.join("real")).unwrap();
    let target = dir.join("real/index.json");
    let link = dir.join("index.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let store = store_at(&link);
    assert_eq!(
        store.path(),
        target.canonicalize_utf8().unwrap_or(target.clone())
    );
    store
        .update(|index| index.record(rec("p", "s", "r"), 1))
        .unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(store_at(&link).load().unwrap().index.lookup("p").is_some());
}

#[test]
fn an_index_path_that_is_a_directory_is_an_error_and_leaves_no_lock_file() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    std::fs::create_dir(&path).unwrap();
    let error = Store::open(&path, StoreOptions::default()).unwrap_err();
    assert!(matches!(error, StoreError::IsDirectory { .. }), "{error:?}");
    assert!(error.to_string().contains("is a directory"));
    assert_eq!(names_in(&dir), ["index.json"]);
}
