//! bounded-run at its boundary: real programs that answer, flood their pipes, hang or are
//! missing.

use std::process::Command;
use std::time::{Duration, Instant};

use bounded_run::{RunError, output};

#[test]
fn a_program_that_answers_gives_its_output_and_status() {
    let ran = output(
        Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(ran.stdout, b"out\n");
    assert_eq!(ran.stderr, b"err\n");
    assert_eq!(ran.status.code(), Some(3));
}

#[test]
fn a_large_output_on_both_pipes_does_not_block_the_program() {
    // Far more than a pipe holds (64 KiB on Linux) on each of stdout and stderr.
    let ran = output(
        Command::new("sh").args([
            "-c",
            "head -c 3000000 /dev/zero >&2; head -c 2000000 /dev/zero",
        ]),
        Duration::from_secs(60),
    )
    .unwrap();
    assert!(ran.status.success());
    assert_eq!(ran.stderr.len(), 3_000_000);
    assert_eq!(ran.stdout.len(), 2_000_000);
}

#[test]
fn a_program_that_does_not_answer_is_killed_and_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 600", pid_file.display());
    let started = Instant::now();
    let error = output(
        Command::new("sh").args(["-c", &script]),
        Duration::from_millis(500),
    )
    .unwrap_err();
    // Well under the program's own 600 s: it did not run to its end.
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        matches!(&error, RunError::TimedOut { program, limit }
            if program == "sh" && *limit == Duration::from_millis(500)),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "sh did not answer within 500ms");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    // Reaped: not even a zombie is left (a zombie keeps its /proc entry).
    #[cfg(target_os = "linux")]
    assert!(!std::path::Path::new(&format!("/proc/{}", pid.trim())).exists());
    #[cfg(not(target_os = "linux"))]
    let _ = pid;
}

#[test]
fn with_no_time_left_nothing_is_started() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let error = output(Command::new("touch").arg(&marker), Duration::ZERO).unwrap_err();
    assert!(error.is_timeout());
    assert!(!marker.exists());
}

#[test]
fn a_missing_program_says_so() {
    let error = output(
        &mut Command::new("/nonexistent/crash-resume-no-such-program"),
        Duration::from_secs(5),
    )
    .unwrap_err();
    assert!(matches!(error, RunError::Start { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("cannot run crash-resume-no-such-program: "),
        "{error}"
    );
}
