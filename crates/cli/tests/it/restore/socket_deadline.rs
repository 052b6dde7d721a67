//! A multiplexer socket that accepts no connection (its listen backlog full: a hung kitty)
//! makes `restore --apply kitty` give up at its deadline and say so, rather than wait for
//! good.

use std::process::Stdio;
use std::time::Duration;

use test_support::fake_terminal::full_socket;

use crate::Sandbox;
use crate::harness::{
    claude_dir, crash_resume_agent, make_dir, plan_by_surface, uuid, wait_within, write_transcript,
};

#[test]
fn a_kitty_socket_that_accepts_nothing_ends_the_restore_at_its_deadline() {
    let env = Sandbox::default();
    let socket = env.root().join("kitty.sock");
    let _full = full_socket(&socket);
    let cwd = make_dir(&env.root().join("work/a"));
    let session = uuid(1);
    write_transcript(&claude_dir(&env), &cwd, &session, Duration::from_secs(3600));
    let recorded = crash_resume_agent(&env)
        .args([
            "record",
            "kitty:41:3",
            &session,
            "repo",
            "--provider",
            "claude",
        ])
        .arg("--cwd")
        .arg(&cwd)
        .arg("--config-dir")
        .arg(claude_dir(&env))
        .output()
        .unwrap();
    assert!(recorded.status.success(), "{recorded:?}");

    let mut restore = crash_resume_agent(&env)
        .args(["--json", "restore", "--apply", "kitty", "--kitty-socket"])
        .arg(format!("unix:{}", socket.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Well past the restore's own deadline for the call (5 s): a restore still waiting then
    // waits for good.
    let ended = wait_within(Duration::from_secs(30), "the restore to give up", || {
        restore.try_wait().unwrap()
    });
    let output = restore.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!ended.success(), "{said}");
    let plan = plan_by_surface(&output.stdout);
    let applied = plan["kitty:41:3"]["applied"].as_str().unwrap_or_default();
    assert!(
        applied.contains("kitty did not answer"),
        "{plan:#?}\n{said}"
    );
}
