//! Many writers at once, and a lock holder that stops: every acknowledged write lands, and a
//! writer that cannot get the lock says who holds it and loses nothing.

use std::process::Stdio;

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use rustix::process::Signal;

use crate::{Sandbox, check, crash_resume, crash_resume_std, record, stopped_lock_holder};

#[test]
fn hundred_concurrent_records_all_land() {
    let env = Sandbox::default();
    let writers: Vec<(usize, std::process::Child)> = (0..100)
        .map(|n| {
            let child = crash_resume_std(&env)
                .env("CRASH_RESUME_LOCK_TIMEOUT", "30s")
                .args([
                    "record",
                    &format!("pane-{n}"),
                    &format!("session-{n}"),
                    "REPO",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn a writer");
            (n, child)
        })
        .collect();
    for (n, child) in writers {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "writer {n} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            format!("recorded pane-{n} → session-{n} (REPO)\n")
        );
        assert!(
            output.stderr.is_empty(),
            "writer {n}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let entries = env.entries();
    assert_eq!(entries.len(), 100);
    for n in 0..100 {
        assert_eq!(
            entries[&format!("pane-{n}")]["sessionId"],
            format!("session-{n}")
        );
    }
    assert!(env.temp_files().is_empty(), "{:?}", env.index_dir_files());
}

#[test]
fn stopped_lock_holder_makes_writers_fail_clearly_and_loses_nothing() {
    let env = Sandbox::default();
    record(&env, "A", "sid-a", "REPO");
    record(&env, "B", "sid-b", "REPO");

    let holder = stopped_lock_holder(&env);
    let pid = holder.pid();
    let before = env.index_bytes().unwrap();

    let index = env.index_path();
    crash_resume(&env)
        .env("CRASH_RESUME_LOCK_TIMEOUT", "500ms")
        .args(["record", "waiter", "sid-waiter", "REPO"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            contains(index.to_str().unwrap())
                .and(contains("locked by another process"))
                .and(contains(format!("pid {pid}")))
                .and(contains("stopped"))
                .and(contains(format!("kill -CONT {pid}")))
                .and(contains("Nothing was written")),
        );
    // Other writes give up the same way; reads do not wait for the lock.
    check(
        &env,
        &["--lock-timeout", "300ms", "touch", "A"],
        1,
        is_empty(),
        contains("kill -CONT"),
    );
    check(
        &env,
        &["--lock-timeout", "300ms", "forget", "A"],
        1,
        is_empty(),
        contains("kill -CONT"),
    );
    check(
        &env,
        &["--lock-timeout", "300ms", "prune", "1s"],
        1,
        is_empty(),
        contains("kill -CONT"),
    );
    check(&env, &["lookup", "A"], 0, contains("sid-a"), is_empty());
    check(
        &env,
        &["resume-cmd", "B"],
        0,
        predicate::eq("claude --resume sid-b\n"),
        is_empty(),
    );
    assert_eq!(
        env.index_bytes().unwrap(),
        before,
        "nothing was written while the lock was held"
    );

    holder.signal(Signal::CONT);
    let output = holder.wait_with_output();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "recorded held → sid-held (REPO)\n"
    );
    let entries = env.entries();
    assert_eq!(entries.keys().collect::<Vec<_>>(), ["A", "B", "held"]);
    assert_eq!(entries["held"]["sessionId"], "sid-held");

    // With the lock free again, the waiter's write goes through.
    check(
        &env,
        &[
            "--lock-timeout",
            "300ms",
            "record",
            "waiter",
            "sid-waiter",
            "REPO",
        ],
        0,
        predicate::eq("recorded waiter → sid-waiter (REPO)\n"),
        is_empty(),
    );
}
