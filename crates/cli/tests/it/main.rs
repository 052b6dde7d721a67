//! Integration tests of the `crash-resume` binary: the real executable, run in a throwaway
//! directory per test, judged by its exit code, its stdout and stderr, and the index file it
//! leaves on disk.
//!
//! The binary under test is built with index-store's `fault-injection` feature (see the
//! dev-dependencies), so `CRASH_RESUME_FAULT=<point>:<action>` can stop, abort or fail a writer
//! at an exact line of the write path.

mod bad_input;
mod crash_points;
mod doctor;
mod forget;
mod harness;
mod hook;
mod install;
mod json;
mod list;
mod lookup;
mod man;
mod messages;
mod next_steps;
mod path;
mod preflight;
mod prune;
mod reads;
mod record;
mod restore;
mod resume_cmd;
mod service;
mod snapshot;
mod soak;
mod touch;
mod traps;

use std::process::{Child, ExitStatus, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use assert_cmd::Command;
use assert_cmd::assert::Assert;
use predicates::Predicate;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};
use serde_json::{Value, json};
pub use test_support::process::process_state;
pub use test_support::random::{XorShift, seed};
pub use test_support::sandbox::{Sandbox, parse_index, sandboxed};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_crash-resume");

pub const SECOND: u64 = 1000;
pub const MINUTE: u64 = 60 * SECOND;
pub const HOUR: u64 = 60 * MINUTE;
pub const DAY: u64 = 24 * HOUR;

/// The binary under test, in the sandbox's environment.
pub fn crash_resume(env: &Sandbox) -> Command {
    Command::from_std(sandboxed(env, BIN))
}

/// The binary under test run as the user nobody (uid and gid 65534, through `setpriv`; the
/// tests must run as root), in the sandbox's environment.
pub fn crash_resume_as_nobody(env: &Sandbox) -> std::process::Command {
    let mut command = sandboxed(env, "setpriv");
    command.args([
        "--reuid",
        "65534",
        "--regid",
        "65534",
        "--clear-groups",
        "--",
        BIN,
    ]);
    command
}

/// The binary under test as a `std` command, for spawning many or signalling one.
pub fn crash_resume_std(env: &Sandbox) -> std::process::Command {
    sandboxed(env, BIN)
}

/// Runs the binary with `args` and checks its exit code, stdout and stderr.
pub fn check(
    env: &Sandbox,
    args: &[&str],
    code: i32,
    stdout: impl Predicate<str>,
    stderr: impl Predicate<str>,
) -> Assert {
    crash_resume(env)
        .args(args)
        .assert()
        .code(code)
        .stdout(stdout)
        .stderr(stderr)
}

/// `record SURFACE SESSION REPO`, which must succeed.
pub fn record(env: &Sandbox, surface: &str, session: &str, repo: &str) {
    crash_resume(env)
        .args(["record", surface, session, repo])
        .assert()
        .success()
        .stdout(format!("recorded {surface} → {session} ({repo})\n"));
}

/// A new sandbox whose index holds `records` (surface, session, repo), each written by
/// [`record`].
pub fn sandbox_with(records: &[(&str, &str, &str)]) -> Sandbox {
    let env = Sandbox::default();
    for (surface, session, repo) in records {
        record(&env, surface, session, repo);
    }
    env
}

/// The current time in epoch milliseconds, as the index stores it.
pub fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// An entry in the index format of the JavaScript tool.
pub fn entry(
    surface: &str,
    session: &str,
    repo: &str,
    captured_at: u64,
    last_active: u64,
) -> Value {
    json!({
        "surfaceId": surface,
        "sessionId": session,
        "repo": repo,
        "role": null,
        "captured_at": captured_at,
        "last_active": last_active,
    })
}

/// `record held sid-held REPO` stopped (SIGSTOP) while it holds the index lock; stdout and
/// stderr piped.
pub fn stopped_lock_holder(env: &Sandbox) -> Reaped {
    let holder = Reaped::new(
        crash_resume_std(env)
            .env("CRASH_RESUME_FAULT", "locked:stop")
            .args(["record", "held", "sid-held", "REPO"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    holder.wait_until_stopped();
    holder
}

/// A child that is killed and reaped if the test ends (or panics) before it is.
#[derive(Debug)]
pub struct Reaped(Option<Child>);

impl Reaped {
    pub fn new(child: Child) -> Reaped {
        Reaped(Some(child))
    }

    pub fn pid(&self) -> u32 {
        self.child().id()
    }

    fn child(&self) -> &Child {
        self.0.as_ref().expect("the child is not reaped yet")
    }

    pub fn signal(&self, signal: Signal) {
        rustix::process::kill_process(Pid::from_child(self.child()), signal)
            .expect("signal the child");
    }

    /// Blocks until the child has stopped itself (SIGSTOP at a fault point); panics if it
    /// exits instead.
    pub fn wait_until_stopped(&self) {
        let pid = Pid::from_child(self.child());
        let options = WaitIdOptions::STOPPED | WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
        let status = loop {
            match rustix::process::waitid(WaitId::Pid(pid), options) {
                Ok(Some(status)) => break status,
                Ok(None) => continue,
                Err(rustix::io::Errno::INTR) => continue,
                Err(error) => panic!("waitid on the child: {error}"),
            }
        };
        assert!(
            status.stopped(),
            "the child exited instead of stopping at its fault point ({status:?}); was the \
             binary built without index-store's fault-injection feature (for example by a \
             concurrent `cargo build` in the same target dir)?"
        );
        assert_eq!(
            process_state(self.pid()),
            Some('T'),
            "the state of a stopped child"
        );
    }

    pub fn wait(mut self) -> ExitStatus {
        self.0.take().unwrap().wait().expect("wait for the child")
    }

    pub fn wait_with_output(mut self) -> Output {
        self.0
            .take()
            .unwrap()
            .wait_with_output()
            .expect("wait for the child")
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
