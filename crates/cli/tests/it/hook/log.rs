//! `hook.log`: expected conditions are information, not errors; the log is bounded (rotated to
//! `hook.log.1` past 256 KiB).

use std::fs;

use crate::Sandbox;
use crate::harness::{hook_log, run_hook, session_end, session_start, uuid};

/// A tmux that has died: `$TMUX` names a socket that is not there.
const DEAD_TMUX: [(&str, &str); 2] = [
    ("TMUX", "/crash-resume-tests-no-such-dir/socket,1,0"),
    ("TMUX_PANE", "%5"),
];

#[test]
fn a_session_end_after_tmux_died_is_information() {
    let env = Sandbox::default();
    let cwd = env.root().join("p");
    for reason in ["other", "logout", "prompt_input_exit"] {
        run_hook(
            &env,
            "claude",
            &DEAD_TMUX,
            &session_end(&uuid(1), &cwd, reason),
        )
        .assert_silent_success(reason);
    }
    let log = hook_log(&env);
    assert_eq!(log.lines().count(), 3, "{log}");
    for line in log.lines() {
        assert!(
            line.contains("hook claude (") && line.contains("): info: "),
            "{line}"
        );
        assert!(line.contains("no surface can be named any more"), "{line}");
        assert!(!line.contains("): error:"), "{line}");
    }

    // A SessionStart that cannot name its pane is still an error: nothing was recorded.
    run_hook(
        &env,
        "claude",
        &DEAD_TMUX,
        &session_start(&uuid(2), &cwd, "startup"),
    )
    .assert_silent_success("start");
    let log = hook_log(&env);
    let last = log.lines().last().unwrap();
    assert!(
        last.contains("): error: tmux could not name pane %5"),
        "{last}"
    );
}

#[test]
fn the_log_is_rotated_past_256_kib() {
    let env = Sandbox::default();
    fs::create_dir_all(env.index_dir()).unwrap();
    let log_path = env.index_dir().join("hook.log");
    let older_path = env.index_dir().join("hook.log.1");
    let old = "an old line\n".repeat(256 * 1024 / 12 + 1);
    fs::write(&log_path, &old).unwrap();
    let cwd = env.root().join("p");
    let end = session_end(&uuid(1), &cwd, "other");
    run_hook(&env, "claude", &DEAD_TMUX, &end).assert_silent_success("rotate");
    assert_eq!(
        fs::read_to_string(&older_path).unwrap(),
        old,
        "the full log moved aside"
    );
    assert_eq!(
        hook_log(&env).lines().count(),
        1,
        "a new log: {}",
        hook_log(&env)
    );

    // Below the limit it only grows; past it again, the older generation is replaced.
    run_hook(&env, "claude", &DEAD_TMUX, &end).assert_silent_success("append");
    assert_eq!(hook_log(&env).lines().count(), 2);
    let mut log = fs::OpenOptions::new().append(true).open(&log_path).unwrap();
    std::io::Write::write_all(&mut log, "x".repeat(256 * 1024).as_bytes()).unwrap();
    drop(log);
    run_hook(&env, "claude", &DEAD_TMUX, &end).assert_silent_success("rotate again");
    let older = fs::read_to_string(&older_path).unwrap();
    assert!(
        older.starts_with(&hook_log_line_prefix(&older)),
        "{}",
        &older[..80]
    );
    assert_eq!(
        older.lines().count(),
        3,
        "the second generation replaced the first"
    );
    assert_eq!(hook_log(&env).lines().count(), 1);
    let total = fs::metadata(&log_path).unwrap().len() + fs::metadata(&older_path).unwrap().len();
    assert!(total <= 2 * 256 * 1024 + 4096, "bounded: {total} bytes");
}

/// The first line of a log, which starts with a timestamp.
fn hook_log_line_prefix(log: &str) -> String {
    let first = log.lines().next().unwrap();
    assert!(first.starts_with("20"), "a timestamped line: {first}");
    first.to_string()
}
