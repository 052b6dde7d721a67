//! Running a program with something on its stdin, and what the process table (`proc-table`:
//! `/proc` on Linux, `ps` where there is none) says about a process.

use std::ffi::OsString;
use std::io::Write;
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// What one finished run of a program did.
#[derive(Debug)]
pub struct Ran {
    /// How it ended.
    pub status: ExitStatus,
    /// Its stdout, lossily decoded.
    pub stdout: String,
    /// Its stderr, lossily decoded.
    pub stderr: String,
}

impl Ran {
    /// Exit 0 and nothing on stdout, whatever happened: what every hook run must do.
    pub fn assert_silent_success(&self, what: &str) {
        assert_eq!(
            self.status.code(),
            Some(0),
            "{what}: the hook exits 0 ({}), stderr: {}",
            self.status,
            self.stderr
        );
        assert_eq!(self.stdout, "", "{what}: the hook prints nothing on stdout");
    }
}

impl From<Output> for Ran {
    fn from(output: Output) -> Ran {
        Ran {
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// A command for `program` with an empty environment but the caller's `PATH` (else
/// `/usr/bin:/bin`): the caller adds what the run may see.
pub fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_clear().env(
        "PATH",
        std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
    );
    command
}

/// Starts `command` with stdin, stdout and stderr piped; returns the child and its stdin (the
/// caller writes, then drops it to close the pipe).
pub fn spawn_piped(command: &mut Command) -> (Child, ChildStdin) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
    let stdin = child.stdin.take().expect("stdin is piped");
    (child, stdin)
}

/// Runs `command` with `input` written to its stdin, which is then closed.
pub fn run_with_stdin(mut command: Command, input: &str) -> Ran {
    let (child, mut stdin) = spawn_piped(&mut command);
    // A program may stop reading early (a hook reads one JSON value): a broken pipe is fine.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let output = child
        .wait_with_output()
        .unwrap_or_else(|error| panic!("cannot wait for {command:?}: {error}"));
    Ran::from(output)
}

/// Runs `command` to the end; its stdout, which must be UTF-8. Panics, with its stderr, when it
/// cannot start (`needs` says what the test machine lacks) or does not succeed.
pub fn stdout_of(command: &mut Command, needs: &str) -> String {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?} ({error}): {needs}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("its stdout is UTF-8")
}

/// What a question to the process table may take (`ps`, where there is no `/proc`).
const TABLE_DEADLINE: Duration = Duration::from_secs(10);

fn deadline() -> Instant {
    Instant::now() + TABLE_DEADLINE
}

/// The state of a process (`R`, `S`, `T` when stopped, `Z` a zombie, ...); `None` when there
/// is none.
pub fn process_state(pid: u32) -> Option<char> {
    proc_table::table()
        .process(pid, deadline())
        .map(|process| process.state)
}

/// Alive: it exists and is not a zombie (a dead process nobody reaped yet) or dead.
pub fn is_alive(pid: u32) -> bool {
    proc_table::table()
        .process(pid, deadline())
        .is_some_and(|process| !process.has_ended())
}

/// The parent pid of `pid`.
pub fn parent_of(pid: u32) -> Option<u32> {
    proc_table::table()
        .process(pid, deadline())
        .map(|process| process.parent)
}

/// Every process.
pub fn processes() -> Vec<proc_table::Process> {
    proc_table::table().processes(deadline())
}

/// Every process's pid.
pub fn all_pids() -> Vec<u32> {
    processes().into_iter().map(|process| process.pid).collect()
}

/// Every process below `pid`.
pub fn descendants(pid: u32) -> Vec<u32> {
    proc_table::table().descendants(pid, deadline())
}

/// The arguments `pid` was started with; `None` when there is no such process.
pub fn command_line(pid: u32) -> Option<Vec<OsString>> {
    proc_table::table().command_line(pid, deadline())
}

/// The environment `pid` was started with (`NAME=value` entries); `None` when it cannot be
/// read.
pub fn environment(pid: u32) -> Option<Vec<OsString>> {
    proc_table::table().environment(pid, deadline())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_with_its_parent_and_listed() {
        let me = std::process::id();
        assert!(is_alive(me));
        assert!(matches!(process_state(me), Some('R' | 'S')));
        assert_eq!(parent_of(me), Some(std::os::unix::process::parent_id()));
        assert!(all_pids().contains(&me));
    }

    #[test]
    fn run_with_stdin_feeds_and_closes_stdin() {
        let ran = run_with_stdin(Command::new("cat"), "hello\n");
        assert!(ran.status.success());
        assert_eq!(ran.stdout, "hello\n");
        run_with_stdin(Command::new("true"), "ignored").assert_silent_success("true");
        assert_eq!(stdout_of(Command::new("echo").arg("hi"), "echo"), "hi\n");
    }
}
