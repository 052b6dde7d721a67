//! Making a file's data (or a directory's names) durable.
//!
//! On Linux and the BSDs that is `fsync`. On Apple systems `fsync` only hands the data to the
//! drive, which may keep it in its cache through a power cut; `F_FULLFSYNC` flushes that cache
//! too, and std's `File::sync_all` is exactly that call, with no fallback. Filesystems that
//! cannot do it say so with an error (SMB: `ENOTSUP`, exFAT: `ENOTTY`, macFUSE: `EINVAL`), and
//! every write there would fail. As SQLite, Go and restic do, such an error falls back to a
//! plain `fsync`; any other error is the write's failure.

use std::fs::File;
use std::io;

use rustix::io::Errno;

/// Errors that mean the filesystem has no full sync, rather than that the sync failed.
#[cfg_attr(not(target_vendor = "apple"), allow(dead_code))]
const NO_FULL_SYNC: [Errno; 4] = [Errno::NOTSUP, Errno::OPNOTSUPP, Errno::NOTTY, Errno::INVAL];

/// Syncs `file`: `F_FULLFSYNC`, else `fsync` where the filesystem has no full sync (Apple);
/// `fsync` elsewhere.
pub(crate) fn sync(file: &File) -> io::Result<()> {
    #[cfg(target_vendor = "apple")]
    return full_sync_or_fsync(
        || rustix::fs::fcntl_fullfsync(file),
        || rustix::fs::fsync(file),
    );
    #[cfg(not(target_vendor = "apple"))]
    file.sync_all()
}

/// Runs `full_sync`, and `fsync` instead when it fails for want of support (the seam the
/// tests drive with made-up errors).
#[cfg_attr(not(target_vendor = "apple"), allow(dead_code))]
fn full_sync_or_fsync(
    full_sync: impl FnOnce() -> rustix::io::Result<()>,
    fsync: impl FnOnce() -> rustix::io::Result<()>,
) -> io::Result<()> {
    match full_sync() {
        Err(errno) if NO_FULL_SYNC.contains(&errno) => fsync().map_err(io::Error::from),
        result => result.map_err(io::Error::from),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A call's error, or `None` for success.
    type Outcome = Option<Errno>;

    /// (what the full sync returns, what the fsync returns, whether fsync runs, the result)
    #[rustfmt::skip]
    const CASES: &[(Outcome, Outcome, bool, Outcome)] = &[
        (None,                  None,            false, None),
        (Some(Errno::NOTSUP),   None,            true,  None),
        (Some(Errno::OPNOTSUPP),None,            true,  None),
        (Some(Errno::NOTTY),    None,            true,  None),
        (Some(Errno::INVAL),    None,            true,  None),
        // The fallback's own failure is the result.
        (Some(Errno::NOTTY),    Some(Errno::IO), true,  Some(Errno::IO)),
        // Real failures are not papered over.
        (Some(Errno::IO),       None,            false, Some(Errno::IO)),
        (Some(Errno::NOSPC),    None,            false, Some(Errno::NOSPC)),
        (Some(Errno::BADF),     None,            false, Some(Errno::BADF)),
    ];

    #[test]
    fn a_full_sync_without_support_falls_back_to_fsync() {
        for (full, plain, falls_back, expected) in CASES {
            let fsync_ran = Cell::new(false);
            let result = full_sync_or_fsync(
                || full.map_or(Ok(()), Err),
                || {
                    fsync_ran.set(true);
                    plain.map_or(Ok(()), Err)
                },
            );
            let case = format!("{full:?} then {plain:?}");
            assert_eq!(fsync_ran.get(), *falls_back, "{case}");
            assert_eq!(
                result.err().and_then(|error| error.raw_os_error()),
                expected.map(Errno::raw_os_error),
                "{case}"
            );
        }
    }

    #[test]
    fn a_real_file_syncs() {
        let file = tempfile::tempfile().unwrap();
        sync(&file).unwrap();
    }
}
