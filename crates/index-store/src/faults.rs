//! Named points on the write path where a test build can make the process stop, abort or fail,
//! so tests can crash a writer at an exact line instead of hoping a random kill lands there.
//!
//! Compiled in only with the `fault-injection` feature (the CLI's tests turn it on; a release
//! build has none of it). The point and action come from `CRASH_RESUME_FAULT=<point>:<action>`:
//! - `stop`: the process stops itself with SIGSTOP (a test then kills or continues it);
//! - `abort`: the process aborts, as a `kill -9` there would leave things;
//! - `fail`: the operation at that point fails with an I/O error, as a full disk would.
//!
//! With the same feature, [`record_file_ops`] records the file operations the store makes
//! (creations, writes, syncs, links, renames, removals), so a test can replay every state a power
//! cut could leave them in.

use std::io;

use camino::Utf8PathBuf;

/// A point on the write path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Holding the lock, before reading the index.
    Locked,
    /// The temp file is written, not yet synced.
    TempWritten,
    /// The temp file is synced, not yet renamed.
    TempSynced,
    /// A full write only: the backup (a synced copy of the new generation) is written, nothing
    /// renamed yet.
    BackupWritten,
    /// A scoped write only: the journal (the changes since the backup, this one with them) is
    /// written and synced, nothing renamed yet.
    JournalWritten,
    /// The new index is renamed into place, the directory not yet synced.
    Renamed,
    /// A scoped write only: the journal is renamed into place, the directory not yet synced.
    JournalRenamed,
}

// Used by the fault points, which only the `fault-injection` feature compiles in.
#[cfg_attr(not(feature = "fault-injection"), allow(dead_code))]
impl Point {
    /// Every point, in the order the write paths reach them (a full write reaches
    /// [`Point::FULL`], a scoped one [`Point::SCOPED`]).
    pub const ALL: [Point; 7] = [
        Point::Locked,
        Point::TempWritten,
        Point::TempSynced,
        Point::BackupWritten,
        Point::JournalWritten,
        Point::Renamed,
        Point::JournalRenamed,
    ];

    /// The points a full write reaches, in order.
    pub const FULL: [Point; 5] = [
        Point::Locked,
        Point::TempWritten,
        Point::TempSynced,
        Point::BackupWritten,
        Point::Renamed,
    ];

    /// The points a scoped write ([`crate::Store::update_entries`] with a journal) reaches, in
    /// order.
    pub const SCOPED: [Point; 6] = [
        Point::Locked,
        Point::TempWritten,
        Point::TempSynced,
        Point::JournalWritten,
        Point::Renamed,
        Point::JournalRenamed,
    ];

    /// The point's name in `CRASH_RESUME_FAULT`.
    pub fn name(self) -> &'static str {
        match self {
            Point::Locked => "locked",
            Point::TempWritten => "temp-written",
            Point::TempSynced => "temp-synced",
            Point::BackupWritten => "backup-written",
            Point::JournalWritten => "journal-written",
            Point::Renamed => "renamed",
            Point::JournalRenamed => "journal-renamed",
        }
    }
}

/// Reaches `point`: does what `CRASH_RESUME_FAULT` asks there, if anything.
#[cfg(feature = "fault-injection")]
pub(crate) fn reach(point: Point) -> io::Result<()> {
    let Ok(spec) = std::env::var("CRASH_RESUME_FAULT") else {
        return Ok(());
    };
    let Some((name, action)) = spec.split_once(':') else {
        return Ok(());
    };
    if name != point.name() {
        return Ok(());
    }
    match action {
        "stop" => {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::STOP,
            );
            Ok(())
        }
        "abort" => std::process::abort(),
        "fail" => Err(io::Error::other(format!(
            "injected fault at {}",
            point.name()
        ))),
        _ => Ok(()),
    }
}

#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn reach(_point: Point) -> io::Result<()> {
    Ok(())
}

/// A file operation of the store's write path, as [`record_file_ops`] records it. The lock file
/// is not recorded: its content is only ever a hint, and it is created whenever it is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// A directory was created (a new name in its parent).
    CreateDir(Utf8PathBuf),
    /// A new, empty file was created.
    CreateFile(Utf8PathBuf),
    /// These bytes were written to the file from its start; not durable before a `SyncFile`.
    Write { path: Utf8PathBuf, bytes: Vec<u8> },
    /// The file's data was synced to disk.
    SyncFile(Utf8PathBuf),
    /// The directory was synced: every name change in it so far is durable.
    SyncDir(Utf8PathBuf),
    /// `to` was made a second name of the file at `from`.
    HardLink { from: Utf8PathBuf, to: Utf8PathBuf },
    /// `from` was renamed over `to`.
    Rename { from: Utf8PathBuf, to: Utf8PathBuf },
    /// The name was removed.
    Remove(Utf8PathBuf),
}

#[cfg(feature = "fault-injection")]
thread_local! {
    static RECORDING: std::cell::RefCell<Option<Vec<FileOp>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `run` and returns what it returned with the file operations the store made on this
/// thread meanwhile, in order.
#[cfg(feature = "fault-injection")]
pub fn record_file_ops<T>(run: impl FnOnce() -> T) -> (T, Vec<FileOp>) {
    let outer = RECORDING.with(|recording| recording.borrow_mut().replace(Vec::new()));
    let value = run();
    let ops = RECORDING.with(|recording| std::mem::replace(&mut *recording.borrow_mut(), outer));
    (value, ops.unwrap_or_default())
}

/// Notes a file operation that was just made, when a test records them.
#[cfg(feature = "fault-injection")]
pub(crate) fn note(op: impl FnOnce() -> FileOp) {
    RECORDING.with(|recording| {
        if let Some(ops) = recording.borrow_mut().as_mut() {
            ops.push(op());
        }
    });
}

#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn note(_op: impl FnOnce() -> FileOp) {}
