//! Named points on the write path where a test build can make the process stop, abort or fail,
//! so tests can crash a writer at an exact line instead of hoping a random kill lands there.
//!
//! Compiled in only with the `fault-injection` feature (the CLI's tests turn it on; a release
//! build has none of it). The point and action come from `CRASH_RESUME_FAULT=<point>:<action>`:
//! - `stop`: the process stops itself with SIGSTOP (a test then kills or continues it);
//! - `abort`: the process aborts, as a `kill -9` there would leave things;
//! - `fail`: the operation at that point fails with an I/O error, as a full disk would.

use std::io;

/// A point on the write path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Holding the lock, before reading the index.
    Locked,
    /// The temp file is written, not yet synced.
    TempWritten,
    /// The temp file is synced, not yet renamed.
    TempSynced,
    /// The backup is linked, the temp file not yet renamed.
    BackupLinked,
    /// The new index is renamed into place, the directory not yet synced.
    Renamed,
}

impl Point {
    pub const ALL: [Point; 5] = [
        Point::Locked,
        Point::TempWritten,
        Point::TempSynced,
        Point::BackupLinked,
        Point::Renamed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Point::Locked => "locked",
            Point::TempWritten => "temp-written",
            Point::TempSynced => "temp-synced",
            Point::BackupLinked => "backup-linked",
            Point::Renamed => "renamed",
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
