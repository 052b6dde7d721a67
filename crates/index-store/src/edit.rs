//! Edits of small files crash-resume changes but does not own (an agent's settings): a locked
//! read-change-write that loses neither a concurrent edit of ours nor one of the file's owner.
//!
//! - Edits of ours are serialised by an exclusive lock on the file's directory (no lock file is
//!   left beside the user's file, and a lock on the dir outlives the rename of the file).
//! - The owner (the agent writing its own settings) takes no lock of ours: the file is read
//!   again right before the rename and compared with what the change was made from; when it
//!   differs, the change is made again from the new content, up to [`ATTEMPTS`] times. Only a
//!   write that lands between that last read and the rename, microseconds, can still be lost.
//! - Temp files a killed edit of ours left beside the file (named as ours are, nothing else)
//!   are removed under the lock.
//! - The previous content is kept in a new file `<path>.crash-resume-<UTC time>[-n].bak`, which
//!   appears whole or not at all (written to a temp file, synced, then given its name, never
//!   over an existing file), and is removed again when the edit fails before the rename: a
//!   failure leaves the file as it was and no backup.
//! - A change to no content at all removes the file (an uninstall that leaves nothing of anyone's
//!   in a file it created), after the backup, as a rename would replace it.

use std::fs;
use std::io;
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};
use safe_open::Symlinks;

use crate::faults::{self, FileOp};
use crate::{
    StoreError, lock, parent, remove_stale_temp_files, sidecar, sync_dir, utf8_lossy, write_temp,
};

/// How many times a change is made again when the file changed under it.
pub const ATTEMPTS: u32 = 5;

/// The largest file edited: an agent's settings are kilobytes, and the file is read whole, its
/// copy parsed and merged in memory several times over.
pub const MAX_EDITABLE_BYTES: u64 = 16 << 20;

/// What [`edit_file`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// Whether the file was written (the change asked for new content).
    pub written: bool,
    /// Where the previous content was kept, when there was a file to keep.
    pub backup: Option<Utf8PathBuf>,
    /// Whether the change asked for no content at all, and the file was removed instead.
    pub removed: bool,
}

/// A file's content and permissions, as read for an edit.
struct Current {
    bytes: Vec<u8>,
    permissions: fs::Permissions,
}

/// The content of `path` (a regular file, no symlink followed), or `None` when there is no file.
/// A read-only file is refused: crash-resume does not write what the user protected; so is one
/// larger than [`MAX_EDITABLE_BYTES`], and one another user owns (the file written in its place
/// would be this user's).
pub fn read_editable(path: &Utf8Path) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(read_current(path)?.map(|current| current.bytes))
}

fn read_current(path: &Utf8Path) -> Result<Option<Current>, StoreError> {
    let read_error = |cause| StoreError::FileRead {
        path: path.to_owned(),
        cause,
    };
    let file = match safe_open::open_read(path.as_std_path(), Symlinks::Refuse) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(read_error(error)),
    };
    let metadata = file.metadata().map_err(read_error)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = rustix::process::geteuid().as_raw();
        if metadata.uid() != me {
            return Err(StoreError::FileNotOwned {
                path: path.to_owned(),
                owner: metadata.uid(),
                me,
            });
        }
    }
    let permissions = metadata.permissions();
    if permissions.readonly() {
        return Err(StoreError::FileReadOnly {
            path: path.to_owned(),
        });
    }
    let bytes = match safe_open::read_whole_within(file, MAX_EDITABLE_BYTES).map_err(read_error)? {
        safe_open::Within::Whole(bytes) => bytes,
        safe_open::Within::TooLarge(size) => {
            return Err(StoreError::FileTooLarge {
                path: path.to_owned(),
                size,
                cap: MAX_EDITABLE_BYTES,
            });
        }
    };
    Ok(Some(Current { bytes, permissions }))
}

/// Replaces `path` with what `change` makes of its content (`None` when there is no file),
/// durably (temp file in the same dir, write, fsync, rename, fsync the dir), keeping the file's
/// permissions, holding the lock on its dir (waited for up to `lock_timeout`). `change` returns
/// the new content (empty: remove the file, whose content the backup keeps), or `None` to leave
/// the file alone; it may be called again with newer
/// content when the file changed under it (see the module's notes), so it must not act on the
/// world. `path` is the file itself: a symlink there is refused, and its dir must exist.
pub fn edit_file<E: From<StoreError>>(
    path: &Utf8Path,
    lock_timeout: Duration,
    mut change: impl FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>, E>,
) -> Result<Edited, E> {
    let dir = parent(path);
    let mut lock = lock::Lock::open_dir(dir).map_err(|error| as_file_error(path, error))?;
    let paths = lock::Paths {
        own: dir,
        shared_dir: None,
        index: path,
    };
    let held = lock.hold(paths, lock_timeout, || {
        remove_stale_temp_files(path);
        for _ in 0..ATTEMPTS {
            match attempt(path, &mut change) {
                Attempt::Done(result) => return Ok(result),
                Attempt::Changed => continue,
            }
        }
        Err(StoreError::FileKeptChanging {
            path: path.to_owned(),
            attempts: ATTEMPTS,
        })
    });
    match held {
        Ok(result) => result,
        Err(error) => Err(as_file_error(path, error).into()),
    }
}

/// The outcome of one read-change-write.
enum Attempt<E> {
    Done(Result<Edited, E>),
    /// The file changed between the read and the rename; nothing was written.
    Changed,
}

fn attempt<E: From<StoreError>>(
    path: &Utf8Path,
    change: &mut impl FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>, E>,
) -> Attempt<E> {
    let done = |result| Attempt::Done(result);
    let current = match read_current(path) {
        Ok(current) => current,
        Err(error) => return done(Err(error.into())),
    };
    let bytes = match change(current.as_ref().map(|current| current.bytes.as_slice())) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            return done(Ok(Edited {
                written: false,
                backup: None,
                removed: false,
            }));
        }
        Err(error) => return done(Err(error)),
    };
    match replace(path, current, &bytes) {
        Ok(Some(edited)) => done(Ok(edited)),
        Ok(None) => Attempt::Changed,
        Err(error) => done(Err(as_file_error(path, error).into())),
    }
}

/// Writes `bytes` over `path`, whose content was `current`, keeping that in a backup; `None`
/// when the file no longer holds `current` by the time of the rename (nothing written, no
/// backup left).
fn replace(
    path: &Utf8Path,
    current: Option<Current>,
    bytes: &[u8],
) -> Result<Option<Edited>, StoreError> {
    let dir = parent(path);
    let write_error = |cause| StoreError::FileWrite {
        path: path.to_owned(),
        cause,
    };
    let (previous, permissions) = match current {
        Some(Current { bytes, permissions }) => (Some(bytes), Some(permissions)),
        None => (None, None),
    };
    let temp = write_temp(path, bytes, permissions)?;
    faults::reach(faults::Point::TempSynced).map_err(write_error)?;
    let backup = match &previous {
        Some(previous) => Some(keep_previous(path, previous)?),
        None => None,
    };
    // From here until the rename, a failure takes the backup away again.
    let undo = |backup: &Option<Utf8PathBuf>| {
        if let Some(backup) = backup
            && fs::remove_file(backup).is_ok()
        {
            faults::note(|| FileOp::Remove(backup.clone()));
        }
    };
    if let Err(cause) = faults::reach(faults::Point::BackupWritten) {
        undo(&backup);
        return Err(write_error(cause));
    }
    // The owner may have written the file since it was read: then the change is made again.
    let now = match read_current(path) {
        Ok(now) => now.map(|now| now.bytes),
        Err(error) => {
            undo(&backup);
            return Err(error);
        }
    };
    if now != previous {
        undo(&backup);
        return Ok(None);
    }
    let removed = bytes.is_empty() && previous.is_some();
    if removed {
        // Nothing is left in it: the file goes (its content is in the backup), and the temp
        // file with it.
        if let Err(cause) = fs::remove_file(path) {
            undo(&backup);
            return Err(write_error(cause));
        }
        faults::note(|| FileOp::Remove(path.to_owned()));
    } else {
        let temp_path = utf8_lossy(temp.path());
        #[allow(clippy::disallowed_methods)] // index-store is the one place that replaces files
        if let Err(error) = temp.persist(path) {
            undo(&backup);
            return Err(write_error(error.error));
        }
        faults::note(|| FileOp::Rename {
            from: temp_path,
            to: path.to_owned(),
        });
    }
    let not_durable = |cause| StoreError::NotDurable {
        path: path.to_owned(),
        cause,
    };
    faults::reach(faults::Point::Renamed).map_err(not_durable)?;
    sync_dir(dir).map_err(not_durable)?;
    Ok(Some(Edited {
        written: true,
        backup,
        removed,
    }))
}

/// Keeps `content` in a new file `<path>.crash-resume-<UTC time>[-n].bak` (the time as
/// `20261202T213645Z`, [`backup_stamp`]): written to a temp file, synced, then linked to its
/// name (never over an existing file), so it appears whole or not at all.
fn keep_previous(path: &Utf8Path, content: &[u8]) -> Result<Utf8PathBuf, StoreError> {
    let stamp = backup_stamp(SystemTime::now());
    let mut temp = write_temp(path, content, None)?;
    for attempt in 0..1000u32 {
        let backup = match attempt {
            0 => sidecar(path, &format!(".crash-resume-{stamp}.bak")),
            n => sidecar(path, &format!(".crash-resume-{stamp}-{n}.bak")),
        };
        match temp.persist_noclobber(&backup) {
            Ok(_) => return Ok(backup),
            Err(error) if error.error.kind() == io::ErrorKind::AlreadyExists => {
                temp = error.file;
            }
            Err(error) => {
                return Err(StoreError::FileWrite {
                    path: backup,
                    cause: error.error,
                });
            }
        }
    }
    Err(StoreError::FileWrite {
        path: path.to_owned(),
        cause: io::Error::new(io::ErrorKind::AlreadyExists, "too many backups"),
    })
}

/// A backup's time: UTC, to the second, in ISO 8601's basic form (`20261202T213645Z`), which
/// sorts as the times do and holds no `:` (which some tools take for a host name).
fn backup_stamp(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time)
        .to_string()
        .chars()
        .filter(|character| !matches!(character, '-' | ':'))
        .collect()
}

/// An error of the index's write path, said of `path`, a file that is not the index.
fn as_file_error(path: &Utf8Path, error: StoreError) -> StoreError {
    match error {
        StoreError::Write { cause, .. } => StoreError::FileWrite {
            path: path.to_owned(),
            cause,
        },
        StoreError::Read { cause, .. } => StoreError::FileRead {
            path: path.to_owned(),
            cause,
        },
        StoreError::LockTimeout { holder, waited, .. } => StoreError::FileLocked {
            path: path.to_owned(),
            holder,
            waited,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    #[test]
    fn a_backup_is_named_by_its_utc_time_to_the_second() {
        let time = UNIX_EPOCH + Duration::from_millis(1_796_333_805_123);
        assert_eq!(backup_stamp(time), "20261203T213645Z");
    }
}
