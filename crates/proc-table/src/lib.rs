//! The process table, for every crate of crash-resume that asks about a process: its parent,
//! state, name, terminal and command line, its ancestors and children, its environment, and
//! who holds a lock on a file. Linux's `/proc` is read where it exists ([`Table::Proc`]); elsewhere
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
use std::time::Instant;

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

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
