//! The process table, for every crate of crash-resume that asks about a process: its parent,
//! state, name, terminal and command line, its ancestors and children, its environment, and
//! who holds a lock on a file, when a process started, and a [`Snapshot`] of every running
//! process that answers which of them runs a program. Linux's `/proc` is read where it exists ([`Table::Proc`]); elsewhere
//! (macOS, a Linux without `/proc`) one `ps` call answers ([`Table::Ps`]), run through
//! `bounded-run` with the caller's deadline.
//!
//! A process that does not exist, or vanishes while it is read, is an answer (`None`, or not
//! listed), not an error. Names, command lines and environments are bytes ([`OsString`]),
//! never decoded lossily, and every read of a `/proc` file is capped.

#![deny(missing_docs)]

mod procfs;
mod ps;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

pub use rustix::fs::Dev;

/// The most bytes of a command line or an environment read (the rest is cut off).
pub const READ_CAP: u64 = 1 << 20;

/// One process, as the table shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid (0 for the first process).
    pub parent: u32,
    /// Its state as Linux names it: `R` running, `S` asleep, `D` waiting on the disk (macOS's
    /// `U`), `T` stopped, `Z` a zombie, ...
    pub state: char,
    /// The executable's base name (`/proc/<pid>/comm`, which Linux cuts at 15 bytes; `ps -o
    /// comm=`'s last path component elsewhere).
    pub name: OsString,
    /// The device of its controlling terminal; `None` without one.
    pub terminal: Option<Dev>,
}

impl Process {
    /// Whether it is a zombie (ended, not reaped) or dead: ended, even though it is listed.
    pub fn has_ended(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// A running process as a [`Snapshot`] holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Its pid.
    pub pid: u32,
    /// When it started (to within [`START_SLACK`]); `None` when that cannot be read.
    pub started: Option<SystemTime>,
    /// Its arguments, the program first (see [`Table::command_line`]).
    pub command_line: Vec<OsString>,
    /// Its environment, for the processes the reader asked for and could read.
    pub environment: Option<Vec<OsString>>,
}

/// How far two readings of one process's start time, or a start time and a file's
/// modification time, may be apart and still be taken as the same moment: `ps` gives whole
/// seconds, and `/proc`'s reading is measured against the clock.
pub const START_SLACK: Duration = Duration::from_secs(2);

/// Every running process, read once ([`Snapshot::read`]) for every question a command asks of
/// it, so that asking about many entries reads the table once.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    processes: Vec<Running>,
}

impl Snapshot {
    /// Every running process of `table`, with the environment of each whose command line runs
    /// one of `programs` ([`runs_program`]).
    pub fn read(table: Table, deadline: Instant, programs: &[&str]) -> Snapshot {
        let wants =
            |words: &[OsString]| programs.iter().any(|program| runs_program(words, program));
        let processes = match table {
            Table::Proc => procfs::running(&wants),
            Table::Ps => ps::running(deadline, &wants),
        };
        Snapshot { processes }
    }

    /// A snapshot of the given processes (for a caller that knows them, and for tests).
    pub fn of(processes: Vec<Running>) -> Snapshot {
        Snapshot { processes }
    }

    /// The process `pid`, when it runs.
    pub fn process(&self, pid: u32) -> Option<&Running> {
        self.processes.iter().find(|process| process.pid == pid)
    }

    /// Whether `pid` runs `program` and started before `written` (within [`START_SLACK`]): the
    /// process that wrote evidence at `written` (a file naming its pid) still holds it, and a
    /// pid used again since (after a reboot it may name anything) does not.
    pub fn holds_since(&self, pid: u32, program: &str, written: SystemTime) -> bool {
        self.process(pid).is_some_and(|process| {
            runs_program(&process.command_line, program)
                && process
                    .started
                    .is_some_and(|started| started <= written + START_SLACK)
        })
    }

    /// Whether `pid` runs and is the process that started at `started` (within
    /// [`START_SLACK`]), not another one given the same pid since.
    pub fn is_running_since(&self, pid: u32, started: SystemTime) -> bool {
        self.process(pid)
            .and_then(|process| process.started)
            .is_some_and(|seen| seen <= started + START_SLACK && started <= seen + START_SLACK)
    }

    /// The lowest pid of a process that runs `program` and whose environment holds
    /// `name=value`.
    pub fn carrying(&self, name: &str, value: &str, program: &str) -> Option<u32> {
        let wanted = format!("{name}={value}");
        self.processes
            .iter()
            .filter(|process| runs_program(&process.command_line, program))
            .filter(|process| {
                process.environment.as_ref().is_some_and(|environment| {
                    environment
                        .iter()
                        .any(|entry| entry.as_encoded_bytes() == wanted.as_bytes())
                })
            })
            .map(|process| process.pid)
            .min()
    }

    /// Every running process whose command line runs `program`.
    pub fn running(&self, program: &str) -> impl Iterator<Item = &Running> {
        self.processes
            .iter()
            .filter(move |process| runs_program(&process.command_line, program))
    }
}

/// The programs that run a script named on their command line: a command line of theirs runs
/// what its first word after them names.
const SCRIPT_RUNNERS: &[&str] = &[
    "node", "nodejs", "bun", "deno", "sh", "bash", "dash", "zsh", "python", "python3",
];

/// Whether a command line runs `program` (a lower-case name): its program's base name is
/// `program` (in any case, or with a suffix after `.`, `-` or `_`: `claude.exe`), or, for a
/// script runner (`node`, `sh`, ...), so is the script's, its first argument that is not an
/// option. Naming it in any other argument (`sh -c 'sleep 100 # claude'`) does not count.
pub fn runs_program(words: &[OsString], program: &str) -> bool {
    arguments_of(words, program).is_some()
}

/// The arguments a command line that runs `program` ([`runs_program`]) gives it: the words
/// after the program, or after the script for a script runner (`node --inspect /x/claude
/// --model opus` gives `--model opus`); `None` when it does not run `program`.
pub fn arguments_of<'w>(words: &'w [OsString], program: &str) -> Option<&'w [OsString]> {
    let names = |bytes: &[u8]| {
        let base = bytes
            .rsplit(|byte| *byte == b'/')
            .next()
            .unwrap_or(bytes)
            .to_ascii_lowercase();
        base.strip_prefix(program.as_bytes())
            .is_some_and(|rest| rest.is_empty() || matches!(rest[0], b'.' | b'-' | b'_'))
    };
    let first = words.first()?.as_encoded_bytes();
    if names(first) {
        return Some(&words[1..]);
    }
    let runner = first.rsplit(|byte| *byte == b'/').next().unwrap_or(first);
    if !SCRIPT_RUNNERS
        .iter()
        .any(|known| known.as_bytes() == runner)
    {
        return None;
    }
    // The script is the first word that is not an option (`node --max-old-space-size=N
    // script`); after `-c` or `-e` comes code, not a script.
    let at = words[1..].iter().position(|word| {
        let word = word.as_encoded_bytes();
        !word.starts_with(b"-") || matches!(word, b"-c" | b"-e" | b"--eval")
    })? + 1;
    let script = words[at].as_encoded_bytes();
    (!script.starts_with(b"-") && names(script)).then(|| &words[at + 1..])
}

/// A process and its ancestors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestry {
    /// The process asked about.
    pub process: Process,
    /// Its ancestors, nearest first, up to (not including) pid 1; fewer when one could not be
    /// read or the limit was reached.
    pub ancestors: Vec<Process>,
}

/// What kind of lock a holder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// `flock(2)`.
    Flock,
    /// A POSIX record lock (`fcntl(F_SETLK)`, `lockf`).
    Posix,
}

/// A process holding a lock on a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockHolder {
    /// The holder's pid.
    pub pid: u32,
    /// The kind of lock.
    pub kind: LockKind,
}

/// Where the answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// Linux's `/proc`: files read, no program run (the deadlines are not needed).
    Proc,
    /// One `ps` call per question, given up on at the deadline. It has no table of locks and,
    /// on Linux, shows no environment.
    Ps,
}

/// The table of this machine: `/proc` where it exists, else `ps`.
pub fn table() -> Table {
    static DETECTED: OnceLock<Table> = OnceLock::new();
    *DETECTED.get_or_init(|| match procfs::available() {
        true => Table::Proc,
        false => Table::Ps,
    })
}

impl Table {
    /// The process `pid`; `None` when there is none (or `ps` did not answer).
    pub fn process(self, pid: u32, deadline: Instant) -> Option<Process> {
        match self {
            Table::Proc => procfs::process(pid),
            Table::Ps => ps::processes_of(&[pid], deadline).pop(),
        }
    }

    /// Those of `pids` that exist, in no particular order.
    pub fn processes_of(self, pids: &[u32], deadline: Instant) -> Vec<Process> {
        match self {
            Table::Proc => pids
                .iter()
                .filter_map(|pid| procfs::process(*pid))
                .collect(),
            Table::Ps => ps::processes_of(pids, deadline),
        }
    }

    /// Every process, in no particular order.
    pub fn processes(self, deadline: Instant) -> Vec<Process> {
        match self {
            Table::Proc => procfs::processes(),
            Table::Ps => ps::processes(deadline),
        }
    }

    /// The process `pid` and at most `limit` of its ancestors (one `ps` listing for all of
    /// them); `None` when `pid` cannot be read.
    pub fn ancestry(self, pid: u32, limit: usize, deadline: Instant) -> Option<Ancestry> {
        match self {
            Table::Proc => ancestry_by(pid, limit, procfs::process),
            Table::Ps => {
                let listing = ps::processes(deadline);
                ancestry_by(pid, limit, |wanted| {
                    listing
                        .iter()
                        .find(|process| process.pid == wanted)
                        .cloned()
                })
            }
        }
    }

    /// The pids of the children of `pid`, lowest first.
    pub fn children(self, pid: u32, deadline: Instant) -> Vec<u32> {
        let mut children: Vec<u32> = self
            .processes(deadline)
            .into_iter()
            .filter(|process| process.parent == pid && process.pid != pid)
            .map(|process| process.pid)
            .collect();
        children.sort_unstable();
        children
    }

    /// The pids of every process below `pid` (its children, theirs, ...), lowest first.
    pub fn descendants(self, pid: u32, deadline: Instant) -> Vec<u32> {
        let listing = self.processes(deadline);
        let mut found = Vec::new();
        let mut queue = vec![pid];
        while let Some(parent) = queue.pop() {
            for process in &listing {
                if process.parent == parent
                    && process.pid != parent
                    && !found.contains(&process.pid)
                {
                    found.push(process.pid);
                    queue.push(process.pid);
                }
            }
        }
        found.sort_unstable();
        found
    }

    /// The arguments `pid` was started with (the program first), at most [`READ_CAP`] bytes of
    /// them; empty for a kernel thread or a zombie. `ps` shows them joined by spaces, so there
    /// an argument holding a space comes back as several.
    pub fn command_line(self, pid: u32, deadline: Instant) -> Option<Vec<OsString>> {
        match self {
            Table::Proc => procfs::command_line(pid),
            Table::Ps => ps::command_lines(&[pid], deadline)
                .pop()
                .map(|(_, words)| words),
        }
    }

    /// The command lines of those of `pids` that exist (one `ps` call for all of them).
    pub fn command_lines(self, pids: &[u32], deadline: Instant) -> Vec<(u32, Vec<OsString>)> {
        match self {
            Table::Proc => pids
                .iter()
                .filter_map(|pid| Some((*pid, procfs::command_line(*pid)?)))
                .collect(),
            Table::Ps => ps::command_lines(pids, deadline),
        }
    }

    /// The environment `pid` was started with, as `NAME=value` entries, at most [`READ_CAP`]
    /// bytes of it; `None` when it cannot be read (another user's process). macOS's `ps -E`
    /// prints it after the command line, joined by spaces: there the command's words come
    /// first, and an entry holding a space comes back as several.
    pub fn environment(self, pid: u32, deadline: Instant) -> Option<Vec<OsString>> {
        match self {
            Table::Proc => procfs::environment(pid),
            Table::Ps => ps::environment(pid, deadline),
        }
    }

    /// A number that tells this process `pid` from a later one of the same pid, the same at
    /// every read: its start in clock ticks since boot (`/proc/<pid>/stat`), or where there is
    /// no `/proc`, a digest of the start time `ps` prints (`lstart`, to the second). Unlike
    /// [`Table::started`], which is worked out from the clock and the uptime and moves by a few
    /// ms from one read to the next, it can name a process in a stored id. `None` when the
    /// process is not there or that cannot be read.
    pub fn start_mark(self, pid: u32, deadline: Instant) -> Option<u64> {
        match self {
            Table::Proc => procfs::start_mark(pid),
            Table::Ps => ps::start_mark(pid, deadline),
        }
    }

    /// When the process `pid` started; `None` when it is not there or that cannot be read.
    pub fn started(self, pid: u32, deadline: Instant) -> Option<SystemTime> {
        match self {
            Table::Proc => procfs::started(pid),
            Table::Ps => ps::started(pid, deadline),
        }
    }

    /// What the standard input of `pid` is (for a shell, its terminal's path); `None` where
    /// there is no `/proc`.
    pub fn standard_input(self, pid: u32) -> Option<PathBuf> {
        match self {
            Table::Proc => procfs::standard_input(pid),
            Table::Ps => None,
        }
    }

    /// The processes holding a granted lock on the file with this device and inode (not those
    /// waiting for one), from `/proc/locks`; none where there is no such table.
    pub fn lock_holders(self, device: u64, inode: u64) -> Vec<LockHolder> {
        match self {
            Table::Proc => procfs::lock_holders(device, inode),
            Table::Ps => Vec::new(),
        }
    }
}

/// Whether a process with this pid exists (a zombie too; one we may not signal too), without
/// reading the table: a signal 0.
pub fn exists(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(errno) => errno == rustix::io::Errno::PERM,
    }
}

/// The ancestry of `pid`, each process read by `read`.
fn ancestry_by(pid: u32, limit: usize, read: impl Fn(u32) -> Option<Process>) -> Option<Ancestry> {
    let process = read(pid)?;
    let mut ancestors: Vec<Process> = Vec::new();
    let mut current = process.parent;
    while current > 1 && ancestors.len() < limit {
        let Some(ancestor) = read(current) else {
            break;
        };
        // A table read while processes come and go could show a loop.
        if ancestor.pid == pid || ancestors.iter().any(|seen| seen.pid == ancestor.pid) {
            break;
        }
        current = ancestor.parent;
        ancestors.push(ancestor);
    }
    Some(Ancestry { process, ancestors })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expected: bool) {
        let words: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        assert_eq!(runs_program(&words, "claude"), expected, "{line}");
    }

    #[test]
    fn which_command_lines_run_a_program() {
        check("claude --resume x", true);
        check("/Users/u/.local/bin/Claude", true);
        check("node /opt/homebrew/bin/claude --resume x", true);
        check("/bin/sh /tmp/bin/claude --resume=x", true);
        check("claude.exe", true);
        check("sh -c sleep 100 # claude", false);
        check("sleep 100 claude", false);
        check("/usr/bin/claudette", false);
        check("node --max-old-space-size=8192 /x/bin/gemini", false);
        check("node --inspect /x/claude", true);
        check("node -e claude", false);
        check("bash -x -c claude", false);
        check("-zsh", false);
        assert!(!runs_program(&[], "claude"));
    }

    #[test]
    fn the_arguments_a_command_line_gives_the_program() {
        let args = |line: &str| {
            let words: Vec<OsString> = line.split(' ').map(OsString::from).collect();
            arguments_of(&words, "claude").map(|args| {
                args.iter()
                    .map(|word| word.to_str().unwrap().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        };
        assert_eq!(args("claude --model opus").as_deref(), Some("--model opus"));
        assert_eq!(args("/x/claude.exe").as_deref(), Some(""));
        assert_eq!(
            args("node --inspect /x/bin/claude -p hi").as_deref(),
            Some("-p hi")
        );
        assert_eq!(args("/bin/sh /t/claude a").as_deref(), Some("a"));
        assert_eq!(args("sh -c claude"), None);
        assert_eq!(args("node /x/gemini --model m"), None);
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
