//! Writers that die: killed with SIGKILL at random moments or at each named point of the write
//! path, aborting there, failing there; and an index that was corrupted behind the tool's back.
//! Whatever happens, the index parses and every acknowledged record is in it.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use rustix::process::Signal;
use serde_json::Value;

use crate::{
    Reaped, Sandbox, XorShift, check, crash_resume, crash_resume_std, parse_index, record,
    sandbox_with, seed,
};

/// The named points of a record's write path, a scoped write over an index of ours
/// (index-store's `faults::Point::SCOPED`), in order.
const FAULT_POINTS: [&str; 6] = [
    "locked",
    "temp-written",
    "temp-synced",
    "journal-written",
    "renamed",
    "journal-renamed",
];

/// Whether a writer stopped at `point` has already replaced the index.
fn replaced_at(point: &str) -> bool {
    matches!(point, "renamed" | "journal-renamed")
}

/// Checks that the index (if there is one) and its backup (if there is one) parse as version 1
/// indexes, and that every acknowledged surface holds its session.
fn assert_nothing_acknowledged_lost(
    env: &Sandbox,
    acknowledged: &BTreeMap<String, String>,
    context: &str,
) {
    let Some(bytes) = env.index_bytes() else {
        assert!(
            acknowledged.is_empty(),
            "{context}: no index, but {} records were acknowledged",
            acknowledged.len()
        );
        return;
    };
    let index = parse_index(&bytes, &env.index_path());
    if let Ok(backup) = fs::read(env.backup_path()) {
        parse_index(&backup, &env.backup_path());
    }
    for (surface, session) in acknowledged {
        assert_eq!(
            index["entries"][surface]["sessionId"].as_str(),
            Some(session.as_str()),
            "{context}: acknowledged record of {surface} is missing"
        );
    }
}

#[test]
fn lock_holder_killed_mid_update_does_not_block_the_next_writer() {
    let env = Sandbox::default();
    let mut acknowledged = BTreeMap::new();
    for earlier in ["A", "B", "C"] {
        record(&env, earlier, &format!("sid-{earlier}"), "REPO");
        acknowledged.insert(earlier.to_string(), format!("sid-{earlier}"));
    }
    for point in FAULT_POINTS {
        let victim = format!("killed-at-{point}");
        let holder = Reaped::new(
            crash_resume_std(&env)
                .env("CRASH_RESUME_FAULT", format!("{point}:stop"))
                .args(["record", &victim, &format!("sid-{victim}"), "REPO"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        holder.wait_until_stopped();
        holder.signal(Signal::KILL);
        let status = holder.wait();
        assert_eq!(
            status.signal(),
            Some(Signal::KILL.as_raw()),
            "{point}: {status:?}"
        );

        // The kernel dropped the dead holder's lock: the next writer gets it at once.
        let survivor = format!("after-{point}");
        check(
            &env,
            &[
                "--lock-timeout",
                "300ms",
                "record",
                &survivor,
                &format!("sid-{survivor}"),
                "REPO",
            ],
            0,
            predicate::eq(format!("recorded {survivor} → sid-{survivor} (REPO)\n").as_str()),
            is_empty(),
        );
        acknowledged.insert(survivor.clone(), format!("sid-{survivor}"));
        assert_nothing_acknowledged_lost(&env, &acknowledged, point);
        assert_eq!(
            env.entry(&victim).is_some(),
            replaced_at(point),
            "{point}: the killed writer's record is there only if it was renamed into place"
        );
        assert!(
            env.temp_files().is_empty(),
            "{point}: {:?}",
            env.index_dir_files()
        );
    }
}

#[test]
fn writers_killed_at_random_moments_lose_nothing_acknowledged() {
    const WRITERS: usize = 240;
    let seed = seed();
    let mut random = XorShift::new(seed);
    let env = Sandbox::default();
    let mut acknowledged = BTreeMap::new();

    // Kills land anywhere from the writer's start to past its end: 0 to 10 ms, or to twice as
    // long as an undisturbed write takes on this machine if that is longer.
    let mut longest_write = Duration::ZERO;
    for n in 0..3 {
        let started = Instant::now();
        record(
            &env,
            &format!("calibration-{n}"),
            &format!("sid-calibration-{n}"),
            "REPO",
        );
        longest_write = longest_write.max(started.elapsed());
        acknowledged.insert(format!("calibration-{n}"), format!("sid-calibration-{n}"));
    }
    let span = Duration::from_millis(10).max(2 * longest_write).as_micros() as u64;

    let (mut spared, mut killed, mut finished_first) = (0, 0, 0);
    let mut spawned = 0;
    while spawned < WRITERS {
        // A batch of one to four writers at once; most are killed at a random moment, a few
        // are left to finish, competing for the lock with the ones that die.
        let batch = 1 + random.below(4) as usize;
        let started = Instant::now();
        let mut writers: Vec<(String, Child, Option<Duration>)> = Vec::new();
        for _ in 0..batch {
            let surface = format!("pane-{spawned}");
            spawned += 1;
            let child = crash_resume_std(&env)
                .env("CRASH_RESUME_LOCK_TIMEOUT", "30s")
                .args(["record", &surface, &format!("sid-{surface}"), "REPO"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let kill_after =
                (random.below(8) != 0).then(|| Duration::from_micros(random.below(span + 1)));
            writers.push((surface, child, kill_after));
        }
        writers.sort_by_key(|(_, _, kill_after)| kill_after.unwrap_or(Duration::MAX));
        for (surface, mut child, kill_after) in writers {
            if let Some(kill_after) = kill_after {
                // The random moment of the kill, not a wait for anything.
                std::thread::sleep(kill_after.saturating_sub(started.elapsed()));
                let _ = child.kill();
            }
            let status = child.wait().unwrap();
            let context = format!("seed {seed}, writer {surface}");
            match (status.success(), kill_after) {
                (true, Some(_)) => finished_first += 1,
                (true, None) => spared += 1,
                (false, Some(_)) => {
                    assert_eq!(
                        status.signal(),
                        Some(Signal::KILL.as_raw()),
                        "{context}: {status:?}"
                    );
                    killed += 1;
                }
                (false, None) => panic!("{context}: a writer left alone failed: {status:?}"),
            }
            if status.success() {
                acknowledged.insert(surface.clone(), format!("sid-{surface}"));
            }
            assert_nothing_acknowledged_lost(&env, &acknowledged, &context);
        }
    }
    assert!(killed > 0, "seed {seed}: no writer was killed");
    assert_eq!(
        acknowledged.len(),
        3 + spared + finished_first,
        "seed {seed}"
    );

    // The next successful write cleans up what the killed writers left behind.
    record(&env, "last", "sid-last", "REPO");
    acknowledged.insert("last".into(), "sid-last".into());
    assert_nothing_acknowledged_lost(&env, &acknowledged, &format!("seed {seed}, at the end"));
    assert!(
        env.temp_files().is_empty(),
        "seed {seed}: {:?}",
        env.index_dir_files()
    );
}

#[test]
fn writers_aborting_at_each_fault_point_lose_nothing_acknowledged() {
    let env = Sandbox::default();
    let mut acknowledged = BTreeMap::new();
    for point in FAULT_POINTS {
        for n in 0..2 {
            let surface = format!("ok-{point}-{n}");
            record(&env, &surface, &format!("sid-{surface}"), "REPO");
            acknowledged.insert(surface.clone(), format!("sid-{surface}"));
        }
        let victim = format!("aborted-at-{point}");
        let status = crash_resume_std(&env)
            .env("CRASH_RESUME_FAULT", format!("{point}:abort"))
            .args(["record", &victim, &format!("sid-{victim}"), "REPO"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(
            status.signal(),
            Some(Signal::ABORT.as_raw()),
            "{point}: {status:?}"
        );
        assert_nothing_acknowledged_lost(&env, &acknowledged, point);
        assert_eq!(env.entry(&victim).is_some(), replaced_at(point), "{point}");
        // Past `journal-renamed`, both temp files have their names.
        let temp_left = matches!(
            point,
            "temp-written" | "temp-synced" | "journal-written" | "renamed"
        );
        assert_eq!(
            !env.temp_files().is_empty(),
            temp_left,
            "{point}: a temp file is left exactly when the writer died holding one: {:?}",
            env.index_dir_files()
        );

        let survivor = format!("after-{point}");
        record(&env, &survivor, &format!("sid-{survivor}"), "REPO");
        acknowledged.insert(survivor.clone(), format!("sid-{survivor}"));
        assert_nothing_acknowledged_lost(&env, &acknowledged, point);
        assert!(
            env.temp_files().is_empty(),
            "{point}: {:?}",
            env.index_dir_files()
        );
    }
}

#[test]
fn no_stray_file_is_left_after_the_write_that_follows_a_crash() {
    // A writer that dies mid-write leaves a temp file and, past `locked`, the JavaScript
    // tool's lock dir; the next successful write removes both.
    for point in FAULT_POINTS {
        let env = sandbox_with(&[("A", "sid-a", "REPO"), ("B", "sid-b", "REPO")]);
        let status = crash_resume_std(&env)
            .env("CRASH_RESUME_FAULT", format!("{point}:abort"))
            .args(["record", "C", "sid-c", "REPO"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.signal(), Some(Signal::ABORT.as_raw()), "{point}");
        record(&env, "D", "sid-d", "REPO");
        // Killed at `renamed`, the writer left an index its journal does not lead to: the next
        // write copies the backup as a full write does, and removes the journal.
        let mut expected = vec!["index.json", "index.json.bak", "index.json.bak.journal"];
        if point == "renamed" {
            expected.pop();
        }
        expected.push("index.json.flock");
        assert_eq!(
            env.index_dir_files(),
            expected,
            "after a crash at {point}, the next write leaves only the index and its sidecars"
        );
    }
}

#[test]
fn failing_at_each_fault_point_reports_failure_and_keeps_the_index() {
    let env = sandbox_with(&[("A", "sid-a", "REPO"), ("B", "sid-b", "REPO")]);
    for point in FAULT_POINTS.into_iter().filter(|point| !replaced_at(point)) {
        let before = env.index_bytes().unwrap();
        let backup_before = fs::read(env.backup_path()).unwrap();
        crash_resume(&env)
            .env("CRASH_RESUME_FAULT", format!("{point}:fail"))
            .args(["record", "C", "sid-c", "REPO"])
            .assert()
            .code(1)
            .stdout("")
            .stderr(contains(format!("injected fault at {point}")).and(contains("left as it was")));
        assert_eq!(
            env.index_bytes().unwrap(),
            before,
            "{point}: the index is unchanged"
        );
        // The backup is still a good generation: the one before, or (once linked) this one.
        let backup = parse_index(&fs::read(env.backup_path()).unwrap(), &env.backup_path());
        assert!(
            backup == parse_index(&backup_before, &env.backup_path())
                || backup == parse_index(&before, &env.index_path()),
            "{point}: the backup holds neither good generation: {backup}"
        );
        assert!(
            env.temp_files().is_empty(),
            "{point}: {:?}",
            env.index_dir_files()
        );
    }
}

#[test]
fn a_failure_after_the_rename_does_not_claim_the_index_was_left_as_it_was() {
    // The last point of the write path is after the new index is renamed into place (only the
    // directory fsync is left). A failure there must not tell the user the index is unchanged.
    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    let before = env.index_bytes().unwrap();
    let assert = crash_resume(&env)
        .env("CRASH_RESUME_FAULT", "renamed:fail")
        .args(["record", "C", "sid-c", "REPO"])
        .assert()
        .code(1)
        .stdout("");
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let changed = env.index_bytes().unwrap() != before;
    assert!(
        !(changed && stderr.contains("left as it was")),
        "the index was replaced (C is {}), yet stderr says it was left as it was: {stderr}",
        if env.entry("C").is_some() {
            "present"
        } else {
            "absent"
        }
    );
}

#[test]
fn store_errors_name_their_cause_once() {
    let env = sandbox_with(&[("A", "sid-a", "REPO")]);
    let assert = crash_resume(&env)
        .env("CRASH_RESUME_FAULT", "temp-synced:fail")
        .args(["record", "C", "sid-c", "REPO"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(
        stderr.matches("injected fault at temp-synced").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn corrupt_index_is_kept_aside_and_the_latest_acknowledged_generation_restored() {
    let env = sandbox_with(&[
        ("A", "sid-a", "REPO"),
        ("B", "sid-b", "REPO"),
        ("C", "sid-c", "REPO"),
    ]);
    let backup = parse_index(&fs::read(env.backup_path()).unwrap(), &env.backup_path());
    let backup_surfaces: Vec<String> = backup["entries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    // The backup is the generation of the first record (the others were scoped writes); its
    // journal holds the records since: together, the latest acknowledged generation.
    assert_eq!(backup_surfaces, ["A"], "the backup");
    let journal_path = env.index_dir().join("index.json.bak.journal");
    let journal: Value = serde_json::from_slice(&fs::read(&journal_path).unwrap()).unwrap();
    let journaled: Vec<&String> = journal["set"].as_object().unwrap().keys().collect();
    assert_eq!(journaled, ["B", "C"], "the journal: {journal}");

    let acknowledged = env.entries();
    // Garbage written over the index from outside, in place.
    let garbage = b"\x00{\"version\": 1, \"entries\": {\"A\": garbage\xff".to_vec();
    env.write_index_bytes(&garbage);

    let assert = check(
        &env,
        &["record", "N", "sid-n", "REPO"],
        0,
        predicate::eq("recorded N → sid-n (REPO)\n"),
        contains("warning:"),
    );
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let kept = env.corrupt_copies();
    assert_eq!(kept.len(), 1, "{:?}", env.index_dir_files());
    let kept_path = env.index_dir().join(&kept[0]);
    assert!(
        stderr.contains(kept_path.to_str().unwrap()),
        "the warning names {}: {stderr}",
        kept_path.display()
    );
    assert!(stderr.contains("backup"), "{stderr}");
    assert_eq!(
        fs::read(&kept_path).unwrap(),
        garbage,
        "the corrupt file is kept byte for byte"
    );

    let entries = env.entries();
    assert_eq!(
        entries.keys().cloned().collect::<Vec<_>>(),
        ["A", "B", "C", "N"]
    );
    for surface in ["A", "B", "C"] {
        assert_eq!(
            entries[surface], acknowledged[surface],
            "{surface} as in the backup with its journal: nothing acknowledged is lost"
        );
    }
    assert_eq!(entries["N"]["sessionId"], "sid-n");

    // Repaired: the next command has nothing to warn about.
    check(&env, &["lookup", "A"], 0, contains("sid-a"), is_empty());
}

#[test]
fn corrupt_index_found_by_a_read_is_read_from_the_backup_and_repaired_by_the_next_write() {
    let env = sandbox_with(&[("A", "sid-a", "REPO"), ("B", "sid-b", "REPO")]);
    env.write_index_bytes(b"{ not json");
    let files_before = env.index_dir_files();
    check(
        &env,
        &["lookup", "A"],
        0,
        contains("sid-a"),
        contains("warning:")
            .and(contains("from the backup"))
            .and(contains("the next write")),
    );
    // The read wrote nothing.
    assert_eq!(env.index_bytes().unwrap(), b"{ not json");
    assert_eq!(env.index_dir_files(), files_before);
    check(
        &env,
        &["touch", "B"],
        0,
        contains("touched B"),
        contains("warning:").and(contains("index.json.corrupt-")),
    );
    let index: Value = env.index();
    assert_eq!(
        index["entries"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["A", "B"]
    );
}

/// What a crash of the JavaScript tool, which rewrites the file in place and keeps no backup,
/// can leave: the start of an index. It is ours, so it is kept aside and a new index started.
#[test]
fn corrupt_index_without_a_backup_starts_empty() {
    let env = Sandbox::default();
    let torn = b"{\n  \"version\": 1,\n  \"entries\": {\n    \"A\": {\"surfaceId\"";
    env.write_index_bytes(torn);
    check(
        &env,
        &["record", "N", "sid-n", "REPO"],
        0,
        predicate::eq("recorded N → sid-n (REPO)\n"),
        contains("warning:").and(contains("no usable backup")),
    );
    assert_eq!(env.entries().keys().collect::<Vec<_>>(), ["N"]);
    let kept = env.corrupt_copies();
    assert_eq!(kept.len(), 1);
    assert_eq!(fs::read(env.index_dir().join(&kept[0])).unwrap(), torn);
}
