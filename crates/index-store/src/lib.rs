//! The durable, locked store of a crash-resume index: the only code that opens, locks, renames
//! or syncs the index file.
//!
//! - Reads take no lock: writes replace the file by an atomic rename, so a reader sees the old
//!   generation or the new one, never a partial file.
//! - Every read-modify-write holds an exclusive lock on the sidecar `<index>.flock` (never
//!   renamed or deleted; the kernel drops it when the holder dies) and the JavaScript
//!   crash-resume-index's lock dir `<index>.lock` (see `lock.rs`), waits for them up to a
//!   deadline, reloads, applies the change and writes durably: temp file in the same directory,
//!   write, fsync, a synced copy of the new generation as `<index>.bak`, rename, fsync the
//!   directory. The backup with its journal (below) is the latest acknowledged generation, so an
//!   index overwritten from outside loses nothing that was acknowledged.
//! - A change of a few entries ([`Store::update_entries`]: a record) parses only those entries
//!   and copies every other into the new file as it was, when the file is an ordinary one; it
//!   writes what the full read-change-write writes. Its durable write leaves the backup as it is
//!   and writes, synced, the journal `<index>.bak.journal` of the changes since the backup
//!   (`journal.rs`), renamed into place after the index: one write of the index's size. A read
//!   of the backup applies the journal made for it (its size and digest).
//! - Every file is opened through `safe-open`: no symlink followed at the index's own files,
//!   no wait on a FIFO, regular files only.
//! - A missing file is an empty index. Reads never create, move or change a file.
//! - A file that is not an index is never touched: one that does not parse is taken for a
//!   damaged index of ours only when it begins as an index does (`{"version": 1`), when a
//!   readable backup `<index>.bak` is beside it, or, for an empty file, when a sidecar of ours
//!   or the JavaScript tool's is beside it; anything else is refused
//!   ([`StoreError::NotAnIndex`]). A read of a damaged index uses the backup (or an empty
//!   index), with the entries a file that begins as an index still holds whole over it, and
//!   says so; the next write keeps the damaged file as `<index>.corrupt-<time>`
//!   (never deleted or overwritten) and writes the repaired index over it.
//! - The index, and every dir on its path, must be the user's (or root's) and writable by no
//!   one else (a sticky dir aside), as OpenSSH requires of its files
//!   ([`StoreError::UnsafeOwnership`]).
//! - A file crash-resume edits but does not own (an agent's settings) goes through
//!   [`edit_file`]: the same durable write as a locked read-change-write that loses neither a
//!   concurrent edit of ours nor the owner's own write, and leaves no backup when it fails.

#![deny(missing_docs)]

// The crash points and file-operation recording are test hooks: public only with the
// `fault-injection` feature that tests enable, and hidden from the docs even then.
mod edit;
#[cfg(feature = "fault-injection")]
#[doc(hidden)]
pub mod faults;
#[cfg(not(feature = "fault-injection"))]
mod faults;
pub mod format;
mod journal;
mod location;
mod lock;
mod partial;
mod removal;
mod sync;

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};
use faults::FileOp;
use index_core::Index;
use journal::Identity;
use safe_open::Symlinks;
use thiserror::Error;

pub use edit::{ATTEMPTS as EDIT_ATTEMPTS, Edited, MAX_EDITABLE_BYTES, edit_file, read_editable};
pub use format::{Document, FORMAT_VERSION, Problem};
pub use location::{
    Durability, FILE_NAME, default_index_path, durability, durability_with,
    resolve as resolve_path, untrusted_path,
};
pub use partial::Scope;
pub use removal::{Forgotten, Pruned};

/// The largest index (or backup) read: 256 MiB, about 700,000 entries of about 370 bytes each,
/// far past any real index. A larger file is refused unread ([`StoreError::TooLarge`]), so no
/// command (the hook at every agent start among them) holds more than this in memory for it.
pub const MAX_INDEX_BYTES: u64 = 256 << 20;

/// How a [`Store`] behaves.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How long an update waits for the lock before giving up.
    pub lock_timeout: Duration,
    /// Accept an index on a volatile filesystem (`/tmp`, tmpfs), which a reboot wipes.
    pub allow_volatile: bool,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            lock_timeout: Duration::from_secs(5),
            allow_volatile: false,
        }
    }
}

/// Everything that can go wrong with the index file. Every variant about a file names it.
/// The messages say what is wrong and what to do about the file; how to choose another path
/// or accept a volatile one is the caller's to say (a command line has its own words for it).
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("index path {path} is {reason}, which a reboot wipes")]
    /// The index is on a filesystem a reboot wipes.
    Volatile {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Why, in words.
        reason: String,
    },
    #[error("index path {} is not valid UTF-8; choose a path with a UTF-8 name", path.display())]
    /// The path is not UTF-8.
    NotUtf8 {
        /// The file concerned.
        path: PathBuf,
    },
    #[error("cannot find the home directory to place the index in")]
    /// No home dir to place the default index in.
    NoHome,
    #[error("index path {path} is a directory; give the path of the index file itself")]
    /// The path is a directory.
    IsDirectory {
        /// The file concerned.
        path: Utf8PathBuf,
    },
    #[error("cannot read index at {path}: {cause}")]
    /// The index could not be read.
    Read {
        /// The file concerned.
        path: Utf8PathBuf,
        /// The I/O error.
        cause: io::Error,
    },
    #[error("cannot write {path}: {cause}; the index was left as it was")]
    /// The index could not be written.
    Write {
        /// The file concerned.
        path: Utf8PathBuf,
        /// The I/O error.
        cause: io::Error,
    },
    #[error(
        "the new {path} is in place but could not be synced to disk ({cause}); it may not \
         survive a power cut: check the disk, then run the command again"
    )]
    /// The write went through but could not be made durable (a sync failed).
    NotDurable {
        /// The file concerned.
        path: Utf8PathBuf,
        /// The I/O error.
        cause: io::Error,
    },
    #[error(
        "index at {path} has format version {found}, newer than this crash-resume reads (up to \
         {supported}); upgrade crash-resume. The file was left untouched",
        supported = FORMAT_VERSION
    )]
    /// The file was written by a newer version.
    NewerVersion {
        /// The file concerned.
        path: Utf8PathBuf,
        /// The version the file declares.
        found: u64,
    },
    #[error(
        "index at {path} is locked by another process ({holder}); gave up after {waited:.1?}. \
         Nothing was written; try again once it finishes"
    )]
    /// Another process held the lock past the deadline.
    LockTimeout {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Who holds the lock: its pid and state, as far as known.
        holder: String,
        /// How long the wait was.
        waited: Duration,
    },
    #[error("cannot lock {path}: {cause}")]
    /// The lock could not be taken.
    Lock {
        /// The file concerned.
        path: Utf8PathBuf,
        /// The I/O error.
        cause: io::Error,
    },
    /// The JavaScript tool's lock dir is stale but cannot be removed (it is not empty), so
    /// neither that tool nor this one can take it; waited out like [`StoreError::LockTimeout`].
    #[error(
        "index at {path} cannot be locked: a lock dir {lock_dir} ({made}) that is not empty is \
         in the way and cannot be removed ({cause}); remove it if no crash-resume-index process \
         runs, then write again. Nothing was written; gave up after {waited:.1?}"
    )]
    LockDirInTheWay {
        /// The index file.
        path: Utf8PathBuf,
        /// The lock dir in the way.
        lock_dir: Utf8PathBuf,
        /// When it was made, as words ("made 21.0s ago").
        made: String,
        /// Why it could not be removed.
        cause: io::Error,
        /// How long the writer waited.
        waited: Duration,
    },
    #[error(
        "{path} is a symlink to {target}, and {reason}, so another user could point it \
         elsewhere; it was not followed. Replace the link with the file itself, or give the \
         target's path instead"
    )]
    /// A symlink on the path that another user could point elsewhere; it was not followed.
    UnsafeSymlink {
        /// The symlink.
        path: Utf8PathBuf,
        /// Where it points.
        target: Utf8PathBuf,
        /// Why it is unsafe, in words.
        reason: String,
    },
    #[error(
        "index at {path} was not used: {reason}, so another user could change what it holds. \
         Make it and its dirs yours and writable only by you (chown, chmod go-w)"
    )]
    /// The index, or a dir on its path, is another user's or writable by others: the
    /// symlink rule ([`StoreError::UnsafeSymlink`]) applied to the file and its dirs.
    UnsafeOwnership {
        /// The index file.
        path: Utf8PathBuf,
        /// Which file or dir, and why, in words.
        reason: String,
    },
    #[error(
        "index at {path} is {size} bytes, more than the {cap} bytes crash-resume reads (no index \
         of real entries comes near it); it was left as it is. Move it aside and run again (a \
         new index is started)"
    )]
    /// The index, or its backup, is larger than [`MAX_INDEX_BYTES`]: it is not read (a hook
    /// would otherwise hold that much memory at every agent start), moved or replaced.
    TooLarge {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Its size, or what was read of it.
        size: u64,
        /// The largest index read ([`MAX_INDEX_BYTES`]).
        cap: u64,
    },
    #[error(
        "{path} is not a crash-resume index ({reason}), and no backup of one is beside it; it \
         was left as it is"
    )]
    /// The file at the index path is not an index, nor recognisably a damaged one of ours: it
    /// is never read as one, moved or replaced.
    NotAnIndex {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Why it is not an index, in words.
        reason: String,
    },
    #[error("cannot read {path}: {cause}")]
    /// A file crash-resume edits but does not own (an agent's settings) could not be read.
    FileRead {
        /// The file concerned.
        path: Utf8PathBuf,
        /// The I/O error.
        cause: io::Error,
    },
    #[error(
        "cannot write {path}: {cause}; it was left as it was and no backup of it was kept: make \
         its directory writable or free some disk space"
    )]
    /// A file crash-resume edits but does not own could not be written; nothing changed.
    FileWrite {
        /// The file concerned.
        path: Utf8PathBuf,
        /// The I/O error.
        cause: io::Error,
    },
    #[error(
        "{path} is {size} bytes, more than the {cap} bytes a settings file edited here may be; \
         crash-resume leaves it as it is"
    )]
    /// A file crash-resume edits but does not own is larger than it reads for an edit.
    FileTooLarge {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Its size.
        size: u64,
        /// The largest size edited ([`MAX_EDITABLE_BYTES`]).
        cap: u64,
    },
    #[error(
        "{path} belongs to uid {owner}, not to you (uid {me}), so crash-resume leaves it as it \
         is (rewritten, it would become yours); run this as its owner (under sudo, $HOME may \
         still be theirs)"
    )]
    /// A file crash-resume edits but does not own belongs to another user: it is not written.
    FileNotOwned {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// This process's effective uid.
        me: u32,
    },
    #[error(
        "{path} is read-only, so crash-resume leaves it as it is; make it writable \
         (chmod u+w {path}) and run this again"
    )]
    /// A file crash-resume edits but does not own is read-only: it is not written.
    FileReadOnly {
        /// The file concerned.
        path: Utf8PathBuf,
    },
    #[error(
        "{path} is being changed by another crash-resume process ({holder}); gave up after \
         {waited:.1?}. Nothing was written; try again once it finishes"
    )]
    /// Another crash-resume process held the lock on the file's dir past the deadline.
    FileLocked {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Who holds the lock: its pid and state, as far as known.
        holder: String,
        /// How long the wait was.
        waited: Duration,
    },
    #[error(
        "{path} changed while crash-resume was writing it, {attempts} times in a row (another \
         program is writing it); nothing was written: try again once that program is done"
    )]
    /// The file kept changing between its read and its replacement.
    FileKeptChanging {
        /// The file concerned.
        path: Utf8PathBuf,
        /// How many times the change was made.
        attempts: u32,
    },
}

/// Something the caller should tell the user; the operation itself went through.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// The index did not parse; it was moved aside.
    Quarantined {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Where the corrupt file was kept.
        moved_to: Utf8PathBuf,
        /// Why, in words.
        reason: String,
        /// Whether the index was rebuilt from the backup.
        from_backup: bool,
        /// How many entries the damaged file still held whole were kept over the backup.
        salvaged: usize,
    },
    /// A read found a damaged index of ours and used its backup (or an empty index) instead;
    /// nothing was written: the next write repairs the file.
    Damaged {
        /// The file concerned.
        path: Utf8PathBuf,
        /// Why, in words.
        reason: String,
        /// Whether the backup was read (else an empty index).
        from_backup: bool,
        /// How many entries the damaged file still holds whole were read over the backup.
        salvaged: usize,
    },
    /// Part of the file could not be used.
    Problem {
        /// The file concerned.
        path: Utf8PathBuf,
        /// What was wrong.
        problem: Problem,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let source = |from_backup: bool, salvaged: usize| {
            let base = if from_backup {
                "using the previous generation from the backup"
            } else {
                "no usable backup, starting from an empty index"
            };
            match salvaged {
                0 => base.to_string(),
                1 => format!("{base}, with the 1 entry the damaged file holds whole"),
                _ => format!("{base}, with the {salvaged} entries the damaged file holds whole"),
            }
        };
        match self {
            Warning::Quarantined {
                path,
                moved_to,
                reason,
                from_backup,
                salvaged,
            } => write!(
                f,
                "index at {path} could not be read ({reason}); moved it aside to {moved_to}, {}",
                source(*from_backup, *salvaged)
            ),
            Warning::Damaged {
                path,
                reason,
                from_backup,
                salvaged,
            } => write!(
                f,
                "index at {path} could not be read ({reason}); {}; the file is left as it is \
                 until the next write keeps it aside as {path}.corrupt-<time> and repairs it",
                source(*from_backup, *salvaged)
            ),
            Warning::Problem {
                path,
                problem: Problem::UnusableEntry { surface, reason },
            } => write!(
                f,
                "index at {path}: entry {} is not usable ({reason}); kept in the file as is",
                index_core::text::escape(surface)
            ),
            Warning::Problem {
                path,
                problem:
                    Problem::DuplicateSession {
                        session,
                        dropped,
                        kept,
                    },
            } => write!(
                f,
                "index at {path}: session {} was bound to both {} and {}; keeping the later, {}",
                index_core::text::escape(session.as_str()),
                index_core::text::escape(dropped.as_str()),
                index_core::text::escape(kept.as_str()),
                index_core::text::escape(kept.as_str())
            ),
        }
    }
}

/// An index as read, with what the caller should report.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The index.
    pub index: Index,
    /// What the caller should tell the user.
    pub warnings: Vec<Warning>,
}

/// The result of [`Store::update`].
#[derive(Debug)]
pub struct Updated<T> {
    /// What the change returned.
    pub value: T,
    /// Whether a new generation was written (an update that changed nothing writes nothing).
    pub written: bool,
    /// What the caller should tell the user.
    pub warnings: Vec<Warning>,
}

/// One index file and its sidecars.
#[derive(Debug, Clone)]
pub struct Store {
    path: Utf8PathBuf,
    options: StoreOptions,
}

/// How a read found the file.
enum Read {
    Missing,
    Parsed(Box<Document>, Vec<u8>),
    /// Not a readable index: why, and the bytes, for telling a damaged index of ours from a
    /// file that is not one.
    Corrupt(String, Vec<u8>),
}

impl Store {
    /// Opens the store at `path` (nothing is created yet): resolves a symlink at the end of the
    /// path and refuses a volatile location (by the path as given or where it leads) unless
    /// allowed.
    pub fn open(path: &Utf8Path, options: StoreOptions) -> Result<Store, StoreError> {
        let real = location::resolve(path)?;
        let durability = location::judge(path, &real, &std::env::temp_dir());
        let path = real;
        if let (Durability::Volatile(reason), false) = (durability, options.allow_volatile) {
            return Err(StoreError::Volatile { path, reason });
        }
        if path.is_dir() {
            return Err(StoreError::IsDirectory { path });
        }
        if let Some(reason) = untrusted_path(&path) {
            return Err(StoreError::UnsafeOwnership { path, reason });
        }
        Ok(Store { path, options })
    }

    /// The index file's resolved path.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// The sidecar lock file (our own; `<index>.lock` is the JavaScript tool's lock dir).
    pub fn lock_path(&self) -> Utf8PathBuf {
        sidecar(&self.path, ".flock")
    }

    /// The JavaScript crash-resume-index's lock dir, which every write of ours holds too.
    pub fn shared_lock_path(&self) -> Utf8PathBuf {
        lock::shared_dir_path(&self.path)
    }

    /// The backup: with its journal ([`Store::journal_path`]), the latest generation written.
    pub fn backup_path(&self) -> Utf8PathBuf {
        sidecar(&self.path, ".bak")
    }

    /// The backup's journal: the changes the scoped writes ([`Store::update_entries`]) made
    /// since the backup was written, which a read of the backup applies (when it is of that
    /// file).
    pub fn journal_path(&self) -> Utf8PathBuf {
        sidecar(&self.path, ".bak.journal")
    }

    /// Reads the index without locking, and never writes: a damaged index of ours is read
    /// from its backup (or as empty) with a [`Warning::Damaged`], and left for the next write
    /// to repair; a file that is not an index is refused ([`StoreError::NotAnIndex`]).
    pub fn load(&self) -> Result<Snapshot, StoreError> {
        match self.read(&self.path)? {
            Read::Missing => Ok(Snapshot::default()),
            Read::Parsed(document, _) => Ok(self.snapshot(*document, Vec::new())),
            Read::Corrupt(reason, bytes) => {
                let (document, from_backup, salvaged) =
                    self.adopt_damaged(reason.clone(), &bytes, self.has_sidecar())?;
                let warning = Warning::Damaged {
                    path: self.path.clone(),
                    reason,
                    from_backup,
                    salvaged,
                };
                Ok(self.snapshot(document, vec![warning]))
            }
        }
    }

    /// One surface's entry, for commands that need no other: read without building the whole
    /// index when the file allows it, else through [`Store::load`] (with its warnings and
    /// repairs). The answer is the same either way.
    pub fn load_entry(
        &self,
        surface: &str,
    ) -> Result<(Option<index_core::Entry>, Vec<Warning>), StoreError> {
        match read_trusted(&self.path) {
            Ok(bytes) => {
                if let Some(found) = format::parse_one(&bytes, surface) {
                    return Ok((found, Vec::new()));
                }
            }
            Err(ReadError::Io(error)) if error.kind() == io::ErrorKind::NotFound => {
                return Ok((None, Vec::new()));
            }
            // Errors (a directory, no permission, another user's file) are reported by the
            // full load below.
            Err(_) => {}
        }
        let snapshot = self.load()?;
        Ok((snapshot.index.lookup(surface).cloned(), snapshot.warnings))
    }

    /// Runs `critical` holding an exclusive lock on the sidecar `<index>.<name>.lock`, waited
    /// for up to `timeout`: for work over the index's surfaces that must not run twice at once
    /// but is not a write of the index (a restore re-opening panes). The index's own lock is
    /// not held, so updates go on meanwhile. Giving up is [`StoreError::LockTimeout`] naming
    /// the sidecar.
    pub fn exclusive<T>(
        &self,
        name: &str,
        timeout: Duration,
        critical: impl FnOnce() -> T,
    ) -> Result<T, StoreError> {
        self.ensure_dir()?;
        let lock_path = sidecar(&self.path, &format!(".{name}.lock"));
        let mut lock = lock::Lock::open(&lock_path)?;
        let paths = lock::Paths {
            own: &lock_path,
            shared_dir: None,
            index: &lock_path,
        };
        lock.hold(paths, timeout, || Ok(critical()))
    }

    /// The path of the sidecar `<index>.<name>`, a small file of a caller's (the restore's
    /// ledger of boots).
    pub fn sidecar_path(&self, name: &str) -> Utf8PathBuf {
        sidecar(&self.path, &format!(".{name}"))
    }

    /// The content of the sidecar `<index>.<name>` ([`Store::sidecar_path`]), read no further
    /// than `max_bytes` (no symlink followed, refused when another user could have written
    /// it); `None` when there is none. Never writes.
    pub fn read_sidecar(&self, name: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.sidecar_path(name);
        let read_error = |cause: io::Error| StoreError::Read {
            path: path.clone(),
            cause,
        };
        let file = match safe_open::open_read(path.as_std_path(), Symlinks::Refuse) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(read_error(error)),
        };
        let metadata = file.metadata().map_err(read_error)?;
        if let Some(reason) = location::untrusted(&metadata, false) {
            return Err(StoreError::UnsafeOwnership {
                path: path.clone(),
                reason: format!("it {reason}"),
            });
        }
        match safe_open::read_whole_within(file, max_bytes).map_err(read_error)? {
            safe_open::Within::Whole(bytes) => Ok(Some(bytes)),
            safe_open::Within::TooLarge(size) => Err(read_error(io::Error::other(format!(
                "it holds {size} bytes, more than the {max_bytes} a sidecar may"
            )))),
        }
    }

    /// Replaces the sidecar `<index>.<name>` with `bytes`, durably (a temp file beside it,
    /// synced, renamed over it, the dir synced), so that a reader sees the old content or the
    /// new, whole. The caller serialises its writers (the restore lock, [`Store::exclusive`]).
    pub fn write_sidecar(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.ensure_dir()?;
        let path = self.sidecar_path(name);
        let temp = write_temp(&path, bytes, None)?;
        #[allow(clippy::disallowed_methods)] // a sidecar of the index, replaced here only
        temp.persist(&path).map_err(|error| StoreError::Write {
            path: path.clone(),
            cause: error.error,
        })?;
        sync_dir(parent(&path)).map_err(|cause| StoreError::NotDurable {
            path: path.clone(),
            cause,
        })
    }

    /// Locked read-modify-write: waits for the lock (up to the deadline), reloads the index,
    /// applies `change`, and, when the file would change, writes it durably before returning.
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut Index) -> T,
    ) -> Result<Updated<T>, StoreError> {
        self.update_document(|document| change(&mut document.index))
    }

    /// [`Store::update`] of a change that reads and writes only the entries in `scope` (the
    /// entries of its surfaces and those holding its sessions), as [`Index::record`] does: the
    /// same locking, the same result and the same durable write, but when the file is an
    /// ordinary one of ours only those entries are parsed, and every other entry is copied into
    /// the new file as it was. `change` is then applied to an index of the entries in scope
    /// alone, so it must not look at any other; should it reach beyond them (bind a session or
    /// a surface out of scope), or the file be anything unusual, it is applied again, to the
    /// whole index, as [`Store::update`] applies it, and that run's value is returned.
    pub fn update_entries<T>(
        &self,
        scope: Scope<'_>,
        mut change: impl FnMut(&mut Index) -> T,
    ) -> Result<Updated<T>, StoreError> {
        let sidecar_seen = self.has_sidecar();
        self.refuse_foreign(sidecar_seen)?;
        self.ensure_dir()?;
        let lock_path = self.lock_path();
        let shared_dir = self.shared_lock_path();
        let mut lock = lock::Lock::open(&lock_path)?;
        let paths = lock::Paths {
            own: &lock_path,
            shared_dir: Some(&shared_dir),
            index: &self.path,
        };
        lock.hold(paths, self.options.lock_timeout, || {
            self.begin_locked()?;
            if let Some(updated) = self.update_scoped(scope, &mut change)? {
                return Ok(updated);
            }
            self.update_loaded(|document| change(&mut document.index), sidecar_seen)
        })
    }

    /// The scoped write of [`Store::update_entries`], under the lock; `None` when the full
    /// path must do it (having changed nothing).
    fn update_scoped<T>(
        &self,
        scope: Scope<'_>,
        change: &mut impl FnMut(&mut Index) -> T,
    ) -> Result<Option<Updated<T>>, StoreError> {
        // Any failure to read is the full path's to report.
        let Ok((bytes, metadata)) = read_trusted_with_metadata(&self.path) else {
            return Ok(None);
        };
        let Some(mut split) = partial::split(&bytes, scope) else {
            return Ok(None);
        };
        let mut index = std::mem::take(&mut split.index);
        let value = change(&mut index);
        let Some(joined) = partial::join(&split, &index) else {
            return Ok(None);
        };
        let written = joined.bytes != bytes;
        if written {
            self.write_scoped(&bytes, &metadata, joined)?;
        }
        Ok(Some(Updated {
            value,
            written,
            warnings: Vec::new(),
        }))
    }

    /// Drops the entry of `surface` under the lock: the usable one, or else one kept verbatim
    /// because it could not be used (which `resume-cmd` refuses); `None` when there is neither.
    pub fn forget(&self, surface: &str) -> Result<Updated<Option<Forgotten>>, StoreError> {
        self.update_document(|document| removal::forget(document, surface))
    }

    /// Drops, under the lock, every entry not active within `max_age`
    /// ([`Index::prune_inactive`]), and every unusable one whose readable timestamps
    /// (`captured_at`, `last_active`) are all older than that; one with none readable stays.
    pub fn prune(
        &self,
        max_age: index_core::Millis,
        now: index_core::Millis,
        conversation_active: impl Fn(&index_core::Entry) -> Option<index_core::Millis>,
    ) -> Result<Updated<Pruned>, StoreError> {
        self.update_document(|document| removal::prune(document, max_age, now, conversation_active))
    }

    /// [`Store::update`] of the whole document, unusable entries included.
    fn update_document<T>(
        &self,
        change: impl FnOnce(&mut Document) -> T,
    ) -> Result<Updated<T>, StoreError> {
        // Whether a sidecar was here before this write made its own: what makes an empty file
        // ours. A file that is not an index is refused before anything is created beside it.
        let sidecar_seen = self.has_sidecar();
        self.refuse_foreign(sidecar_seen)?;
        self.ensure_dir()?;
        let lock_path = self.lock_path();
        let shared_dir = self.shared_lock_path();
        let mut lock = lock::Lock::open(&lock_path)?;
        let paths = lock::Paths {
            own: &lock_path,
            shared_dir: Some(&shared_dir),
            index: &self.path,
        };
        lock.hold(paths, self.options.lock_timeout, || {
            self.update_locked(change, sidecar_seen)
        })
    }

    fn update_locked<T>(
        &self,
        change: impl FnOnce(&mut Document) -> T,
        sidecar_seen: bool,
    ) -> Result<Updated<T>, StoreError> {
        self.begin_locked()?;
        self.update_loaded(change, sidecar_seen)
    }

    /// What every write does first under the lock.
    fn begin_locked(&self) -> Result<(), StoreError> {
        faults::reach(faults::Point::Locked).map_err(|source| StoreError::Write {
            path: self.path.clone(),
            cause: source,
        })?;
        self.remove_stale_temp_files();
        Ok(())
    }

    /// The full path of a write under the lock: the whole index parsed, changed, serialized.
    fn update_loaded<T>(
        &self,
        change: impl FnOnce(&mut Document) -> T,
        sidecar_seen: bool,
    ) -> Result<Updated<T>, StoreError> {
        let mut warnings = Vec::new();
        let (mut document, previous) = match self.read(&self.path)? {
            Read::Missing => (Document::default(), None),
            Read::Parsed(document, bytes) => (*document, Some(bytes)),
            Read::Corrupt(reason, bytes) => {
                let (document, from_backup, salvaged) =
                    self.adopt_damaged(reason.clone(), &bytes, sidecar_seen)?;
                let moved_to = self.quarantine()?;
                warnings.push(Warning::Quarantined {
                    path: self.path.clone(),
                    moved_to,
                    reason,
                    from_backup,
                    salvaged,
                });
                (document, None)
            }
        };
        let value = change(&mut document);
        // After the change: an unusable entry it dropped is no longer a problem of the file.
        warnings.extend(self.problems(&document));
        let bytes = format::serialize(&document);
        let written = previous.as_deref() != Some(bytes.as_slice());
        if written {
            self.write_durably(&bytes)?;
        }
        Ok(Updated {
            value,
            written,
            warnings,
        })
    }

    fn snapshot(&self, document: Document, mut warnings: Vec<Warning>) -> Snapshot {
        warnings.extend(self.problems(&document));
        Snapshot {
            index: document.index,
            warnings,
        }
    }

    fn problems(&self, document: &Document) -> Vec<Warning> {
        document
            .problems
            .iter()
            .filter(|problem| match problem {
                Problem::UnusableEntry { surface, .. } => document.unusable.contains_key(surface),
                Problem::DuplicateSession { .. } => true,
            })
            .map(|problem| Warning::Problem {
                path: self.path.clone(),
                problem: problem.clone(),
            })
            .collect()
    }

    /// Reads `path` (the index or its backup), refusing a file another user could have
    /// written (checked on the open file, so it is the one read).
    fn read(&self, path: &Utf8Path) -> Result<Read, StoreError> {
        let bytes = match read_trusted(path) {
            Ok(bytes) => bytes,
            Err(ReadError::Untrusted(reason)) => {
                return Err(StoreError::UnsafeOwnership {
                    path: path.to_owned(),
                    reason,
                });
            }
            Err(ReadError::TooLarge(size)) => {
                return Err(StoreError::TooLarge {
                    path: path.to_owned(),
                    size,
                    cap: MAX_INDEX_BYTES,
                });
            }
            Err(ReadError::Io(error)) => return Self::read_failure(path, error),
        };
        if bytes.is_empty() {
            return Ok(Read::Corrupt("it is empty".into(), bytes));
        }
        match format::parse(&bytes) {
            Ok(document) => Ok(Read::Parsed(Box::new(document), bytes)),
            Err(format::ParseError::Corrupt(reason)) => Ok(Read::Corrupt(reason, bytes)),
            Err(format::ParseError::NewerVersion(found)) => Err(StoreError::NewerVersion {
                path: path.to_owned(),
                found,
            }),
        }
    }

    /// What a failed read of `path` is: a missing file an empty index, else an error naming it.
    fn read_failure(path: &Utf8Path, error: io::Error) -> Result<Read, StoreError> {
        match error {
            error if error.kind() == io::ErrorKind::NotFound => Ok(Read::Missing),
            error if error.kind() == io::ErrorKind::IsADirectory => Err(StoreError::IsDirectory {
                path: path.to_owned(),
            }),
            cause => Err(StoreError::Read {
                path: path.to_owned(),
                cause,
            }),
        }
    }

    /// The index to use in place of a file that is not a readable index, when the file is a
    /// damaged index of ours: it begins as an index does, or a readable backup of ours is
    /// beside it, or it is empty and a sidecar of ours or the JavaScript tool's was beside it
    /// (`sidecar_seen`, looked at before this process made any: a crash of that tool while it
    /// rewrites the file in place can leave it empty). The backup generation when it parses
    /// (`true`), else an empty index, with the entries a file that begins as an index still
    /// holds whole over it (how many is the third value): that tool's torn write keeps those it
    /// acknowledged since our last write. Any other file is not ours: [`StoreError::NotAnIndex`].
    fn adopt_damaged(
        &self,
        reason: String,
        bytes: &[u8],
        sidecar_seen: bool,
    ) -> Result<(Document, bool, usize), StoreError> {
        let (document, from_backup) = self.backup_document();
        let begins_as_index = format::begins_as_index(bytes);
        let ours = from_backup || begins_as_index || (bytes.is_empty() && sidecar_seen);
        if !ours {
            return Err(StoreError::NotAnIndex {
                path: self.path.clone(),
                reason,
            });
        }
        let salvaged = match begins_as_index {
            true => format::salvage(bytes),
            false => Vec::new(),
        };
        let count = salvaged.len();
        match count {
            0 => Ok((document, from_backup, 0)),
            _ => Ok((
                format::merge_salvaged(document, salvaged),
                from_backup,
                count,
            )),
        }
    }

    /// Refuses, before a write creates or changes anything beside it (its lock file
    /// included), a file at the index path that is not an index of ours or is larger than
    /// [`MAX_INDEX_BYTES`]. The common file is judged by its size and first bytes alone; the
    /// full judgement is made again under the lock.
    fn refuse_foreign(&self, sidecar_seen: bool) -> Result<(), StoreError> {
        if let Ok(metadata) = fs::symlink_metadata(&self.path)
            && metadata.is_file()
            && metadata.len() > MAX_INDEX_BYTES
        {
            return Err(StoreError::TooLarge {
                path: self.path.clone(),
                size: metadata.len(),
                cap: MAX_INDEX_BYTES,
            });
        }
        let head = safe_open::read_head(self.path.as_std_path(), Symlinks::Refuse, 64);
        // A file that cannot be read is reported by the read under the lock.
        match head {
            Ok(head) if !format::begins_as_index(&head.bytes) => {
                if let Read::Corrupt(reason, bytes) = self.read(&self.path)? {
                    self.adopt_damaged(reason, &bytes, sidecar_seen)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether a sidecar of ours (`<index>.bak`, `<index>.flock`) or the JavaScript tool's
    /// lock dir (`<index>.lock`) is beside the index.
    fn has_sidecar(&self) -> bool {
        [
            self.backup_path(),
            self.lock_path(),
            self.shared_lock_path(),
        ]
        .iter()
        .any(|sidecar| fs::symlink_metadata(sidecar).is_ok())
    }

    /// The backup generation, if it parses, with its journal applied when the journal is of
    /// that file; else an empty document.
    fn backup_document(&self) -> (Document, bool) {
        let Ok(bytes) = read_trusted(&self.backup_path()) else {
            return (Document::default(), false);
        };
        let Ok(document) = format::parse(&bytes) else {
            return (Document::default(), false);
        };
        match journal::read(&self.journal_path()) {
            Some(journal) if journal.base == journal::Content::of(&bytes) => {
                (journal.apply(document), true)
            }
            _ => (document, true),
        }
    }

    /// A scoped write of `joined` over the file `current` (its bytes and metadata, read under
    /// the lock): the new index and the journal of every change since the backup, this one
    /// with them ([`write_journaled`]). Where the backup with a journal cannot be sure to be
    /// the new generation (the journal does not lead to the current file, which is not the
    /// backup's generation either: another tool wrote it; no inodes), or the journal would
    /// grow past [`journal::compacted_above`], the full write's copy, which starts it again.
    fn write_scoped(
        &self,
        current: &[u8],
        metadata: &fs::Metadata,
        joined: partial::Joined,
    ) -> Result<(), StoreError> {
        if let Some(so_far) = self.journal_to(current, metadata) {
            let journal = so_far.then(joined.set, joined.removed);
            // Measured before its result is set: a digest is a few bytes either way.
            if journal.to_bytes().len() <= journal::compacted_above(joined.bytes.len()) {
                return write_journaled(&self.path, &joined.bytes, journal);
            }
        }
        self.write_durably(&joined.bytes)
    }

    /// The journal that leads from the backup to the current file (`current`, its bytes and
    /// `metadata`): the journal beside the backup when it does, an empty one when the backup
    /// holds the same bytes; `None` when neither, or the backup is a second name of the index.
    fn journal_to(&self, current: &[u8], metadata: &fs::Metadata) -> Option<journal::Journal> {
        let backup_metadata = fs::symlink_metadata(self.backup_path()).ok()?;
        if !backup_metadata.is_file()
            || same_file(&backup_metadata, metadata)
            || location::untrusted(&backup_metadata, false).is_some()
        {
            return None;
        }
        // The journal leads from the backup file it was started beside (its bytes were checked
        // then; a write since would have changed its identity) to the bytes the index holds
        // (another tool's write since would have changed them).
        let backup = Identity::of(&backup_metadata)?;
        if let Some(journal) = journal::read(&self.journal_path())
            && journal.backup == backup
            && journal.result == journal::Content::of(current)
        {
            return Some(journal);
        }
        let (bytes, read) = read_trusted_with_metadata(&self.backup_path()).ok()?;
        (bytes == current && Identity::of(&read) == Some(backup))
            .then(|| journal::Journal::empty(journal::Content::of(&bytes), backup))
    }

    fn ensure_dir(&self) -> Result<(), StoreError> {
        let dir = parent(&self.path);
        if dir.is_dir() {
            return Ok(());
        }
        create_private_dir(dir).map_err(|source| StoreError::Write {
            path: dir.to_owned(),
            cause: source,
        })
    }

    /// Keeps the corrupt index as `<index>.corrupt-<epoch ms>[-n]`, never over an existing file:
    /// a hard link (a copy where links are not supported). The corrupt file itself stays until
    /// the repaired index is renamed over it, so there is never a moment with no index. A copy
    /// already kept of the same file (an earlier repair that could not finish) is used again,
    /// so repeated writes that fail keep at most one.
    fn quarantine(&self) -> Result<Utf8PathBuf, StoreError> {
        if let Some(kept) = self.kept_copy() {
            return Ok(kept);
        }
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_millis())
            .unwrap_or_default();
        let base = sidecar(&self.path, &format!(".corrupt-{stamp}"));
        for attempt in 0..1000u32 {
            let target = match attempt {
                0 => base.clone(),
                n => Utf8PathBuf::from(format!("{base}-{n}")),
            };
            if target.exists() {
                continue;
            }
            let kept = match fs::hard_link(&self.path, &target) {
                Ok(()) => {
                    faults::note(|| FileOp::HardLink {
                        from: self.path.clone(),
                        to: target.clone(),
                    });
                    Ok(())
                }
                Err(_) => copy_new(&self.path, &target),
            };
            return match kept {
                // The kept name must be durable before the repaired index replaces the corrupt
                // one, or a power cut could leave neither.
                Ok(()) => match sync_dir(parent(&self.path)) {
                    Ok(()) => Ok(target),
                    Err(source) => Err(StoreError::Write {
                        path: parent(&self.path).to_owned(),
                        cause: source,
                    }),
                },
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(source) => Err(StoreError::Write {
                    path: target,
                    cause: source,
                }),
            };
        }
        Err(StoreError::Write {
            path: base,
            cause: io::Error::new(io::ErrorKind::AlreadyExists, "too many files kept aside"),
        })
    }

    /// A `<index>.corrupt-*` file that already keeps the current (corrupt) index: the same
    /// file, or the same bytes.
    fn kept_copy(&self) -> Option<Utf8PathBuf> {
        let current = fs::symlink_metadata(&self.path).ok()?;
        let prefix = format!("{}.corrupt-", self.path.file_name()?);
        let mut current_bytes = None;
        fs::read_dir(parent(&self.path))
            .ok()?
            .flatten()
            .filter(|item| item.file_name().to_string_lossy().starts_with(&prefix))
            .find(|item| {
                let Ok(kept) = item.metadata() else {
                    return false;
                };
                if same_file(&current, &kept) {
                    return true;
                }
                if kept.len() != current.len() || !kept.is_file() {
                    return false;
                }
                let current_bytes = current_bytes.get_or_insert_with(|| {
                    safe_open::read(self.path.as_std_path(), Symlinks::Refuse).ok()
                });
                current_bytes.is_some()
                    && safe_open::read(&item.path(), Symlinks::Refuse).ok() == *current_bytes
            })
            .map(|item| utf8_lossy(&item.path()))
    }

    fn write_durably(&self, bytes: &[u8]) -> Result<(), StoreError> {
        write_index(&self.path, bytes)?;
        // A journal is of a backup this write replaced with a copy, which it was not made from:
        // removed for tidiness, after the sync (removed before, a power cut could keep the
        // removal and not the new backup).
        let journal = self.journal_path();
        if fs::remove_file(&journal).is_ok() {
            faults::note(|| FileOp::Remove(journal));
        }
        Ok(())
    }

    fn remove_stale_temp_files(&self) {
        remove_stale_temp_files(&self.path);
    }
}

/// Removes the temp files for `path` a killed writer of ours left behind, named as
/// [`write_temp`] names them, letters and digits between the prefix and `.tmp` (and nothing
/// else, in a dir that may be an agent's). Only called under the lock, when no other writer of
/// ours can have one open.
fn remove_stale_temp_files(path: &Utf8Path) {
    let prefix = temp_prefix(path);
    let Ok(listing) = fs::read_dir(parent(path)) else {
        return;
    };
    for item in listing.flatten() {
        let name = item.file_name();
        let name = name.to_string_lossy();
        let ours = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .is_some_and(|random| {
                !random.is_empty() && random.bytes().all(|byte| byte.is_ascii_alphanumeric())
            });
        if ours && fs::remove_file(item.path()).is_ok() {
            faults::note(|| FileOp::Remove(utf8_lossy(&item.path())));
        }
    }
}

/// A temp file in `path`'s dir holding `bytes`, synced, with `permissions` when given;
/// [`faults::Point::TempWritten`] is reached once it is written.
fn write_temp(
    path: &Utf8Path,
    bytes: &[u8],
    permissions: Option<fs::Permissions>,
) -> Result<tempfile::NamedTempFile, StoreError> {
    let temp = write_unsynced(path, bytes, permissions, Some(faults::Point::TempWritten))?;
    sync::sync(temp.as_file()).map_err(|source| StoreError::Write {
        path: parent(path).to_owned(),
        cause: source,
    })?;
    faults::note(|| FileOp::SyncFile(utf8_lossy(temp.path())));
    Ok(temp)
}

/// [`write_temp`] but for the sync, which is the caller's, reaching `written` (if any) once the
/// bytes are written.
fn write_unsynced(
    path: &Utf8Path,
    bytes: &[u8],
    permissions: Option<fs::Permissions>,
    written: Option<faults::Point>,
) -> Result<tempfile::NamedTempFile, StoreError> {
    let dir = parent(path);
    let write_error = |source| StoreError::Write {
        path: dir.to_owned(),
        cause: source,
    };
    let mut temp = tempfile::Builder::new()
        .prefix(&temp_prefix(path))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_error)?;
    let temp_path = utf8_lossy(temp.path());
    faults::note(|| FileOp::CreateFile(temp_path.clone()));
    if let Some(permissions) = permissions {
        temp.as_file()
            .set_permissions(permissions)
            .map_err(write_error)?;
    }
    temp.write_all(bytes).map_err(write_error)?;
    faults::note(|| FileOp::Write {
        path: temp_path.clone(),
        bytes: bytes.to_vec(),
    });
    if let Some(point) = written {
        faults::reach(point).map_err(write_error)?;
    }
    Ok(temp)
}

/// Syncs two files at once (a filesystem that commits its log for one sync takes the other
/// along, so both cost about one), one after the other where no thread can be started.
fn sync_both(first: &fs::File, second: &fs::File) -> (io::Result<()>, io::Result<()>) {
    std::thread::scope(|scope| {
        let Ok(other) = std::thread::Builder::new().spawn_scoped(scope, || sync::sync(second))
        else {
            return (sync::sync(first), sync::sync(second));
        };
        let first = sync::sync(first);
        let second = other
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the sync's thread panicked")));
        (first, second)
    })
}

/// Writes a new generation of the index: a temp file with the new bytes and a second one with
/// the same bytes, both synced; the first renamed over the index, the second over
/// `<index>.bak`; the dir synced. Success is reported only after that, so the backup always holds the
/// latest acknowledged generation, in a file of its own (a tool that writes the index in place
/// does not change it).
fn write_index(path: &Utf8Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = parent(path);
    let write_error = |path: &Utf8Path| {
        let path = path.to_owned();
        move |source| StoreError::Write {
            path,
            cause: source,
        }
    };
    let temp = write_temp(path, bytes, None)?;
    faults::reach(faults::Point::TempSynced).map_err(write_error(dir))?;
    let backup = sidecar(path, ".bak");
    let backup_temp = write_temp(path, bytes, None)?;
    faults::reach(faults::Point::BackupWritten).map_err(write_error(dir))?;
    replace_index(temp, path)?;
    // From here on the new file is in place: a failure means it may not be durable yet.
    let not_durable = |cause| StoreError::NotDurable {
        path: path.to_owned(),
        cause,
    };
    faults::reach(faults::Point::Renamed).map_err(not_durable)?;
    replace_sidecar(backup_temp, &backup, "its backup").map_err(not_durable)?;
    sync_dir(dir).map_err(not_durable)
}

/// Renames `temp` over the index at `path`: the one place that replaces the index.
fn replace_index(temp: tempfile::NamedTempFile, path: &Utf8Path) -> Result<(), StoreError> {
    let temp_path = utf8_lossy(temp.path());
    #[allow(clippy::disallowed_methods)] // this is the one place that replaces the index
    temp.persist(path).map_err(|error| StoreError::Write {
        path: path.to_owned(),
        cause: error.error,
    })?;
    faults::note(|| FileOp::Rename {
        from: temp_path,
        to: path.to_owned(),
    });
    Ok(())
}

/// Renames `temp` over the index's sidecar `to` (`what` names it in the error), once the new
/// index is in place.
fn replace_sidecar(
    temp: tempfile::NamedTempFile,
    to: &Utf8Path,
    what: &str,
) -> Result<(), io::Error> {
    let temp_path = utf8_lossy(temp.path());
    #[allow(clippy::disallowed_methods)] // the backup and its journal are the index's sidecars
    temp.persist(to).map_err(|error| {
        io::Error::other(format!(
            "{what}, {to}, could not be replaced: {}",
            error.error
        ))
    })?;
    faults::note(|| FileOp::Rename {
        from: temp_path,
        to: to.to_owned(),
    });
    Ok(())
}

/// The scoped write of `bytes` over the index at `path`, whose backup `journal` (the changes
/// since the backup, this one with them) makes the new generation: the new generation written
/// to a temp file, the journal to another, with the new file as its result, both synced at
/// once; the new index renamed into place, then the journal over `<index>.bak.journal`; the
/// dir synced. The backup is not touched: with the old journal it is the old generation, with
/// the new one the new generation, whichever rename a power cut keeps.
fn write_journaled(
    path: &Utf8Path,
    bytes: &[u8],
    mut journal: journal::Journal,
) -> Result<(), StoreError> {
    let dir = parent(path);
    let write_error = |source| StoreError::Write {
        path: dir.to_owned(),
        cause: source,
    };
    let temp = write_unsynced(path, bytes, None, Some(faults::Point::TempWritten))?;
    journal.result = journal::Content::of(bytes);
    let journal_temp = write_unsynced(path, &journal.to_bytes(), None, None)?;
    let (index_synced, journal_synced) = sync_both(temp.as_file(), journal_temp.as_file());
    index_synced.map_err(write_error)?;
    faults::note(|| FileOp::SyncFile(utf8_lossy(temp.path())));
    faults::reach(faults::Point::TempSynced).map_err(write_error)?;
    journal_synced.map_err(write_error)?;
    faults::note(|| FileOp::SyncFile(utf8_lossy(journal_temp.path())));
    faults::reach(faults::Point::JournalWritten).map_err(write_error)?;

    replace_index(temp, path)?;
    // From here on the new file is in place: a failure means it may not be durable yet (the
    // backup with the old journal is the old generation until the new journal is renamed).
    let not_durable = |cause| StoreError::NotDurable {
        path: path.to_owned(),
        cause,
    };
    faults::reach(faults::Point::Renamed).map_err(not_durable)?;
    let journal_path = sidecar(path, ".bak.journal");
    replace_sidecar(journal_temp, &journal_path, "the journal of its backup")
        .map_err(not_durable)?;
    faults::reach(faults::Point::JournalRenamed).map_err(not_durable)?;
    sync_dir(dir).map_err(not_durable)
}

/// Why a file could not be read: an I/O error, it is not trusted (why, in words), or it is
/// larger than [`MAX_INDEX_BYTES`] (its size, or what was read of it).
enum ReadError {
    Io(io::Error),
    Untrusted(String),
    TooLarge(u64),
}

/// Reads the file at `path` (no symlink followed), refusing it when its owner or mode, read
/// from the open file, says another user could have written it, or when it is larger than
/// [`MAX_INDEX_BYTES`] (read no further than one byte past it, should it grow meanwhile).
fn read_trusted(path: &Utf8Path) -> Result<Vec<u8>, ReadError> {
    read_trusted_with_metadata(path).map(|(bytes, _)| bytes)
}

/// [`read_trusted`], with the metadata of the file read (from the open file).
fn read_trusted_with_metadata(path: &Utf8Path) -> Result<(Vec<u8>, fs::Metadata), ReadError> {
    let file = safe_open::open_read(path.as_std_path(), Symlinks::Refuse).map_err(ReadError::Io)?;
    let metadata = file.metadata().map_err(ReadError::Io)?;
    if let Some(reason) = location::untrusted(&metadata, false) {
        return Err(ReadError::Untrusted(format!("it {reason}")));
    }
    match safe_open::read_whole_within(file, MAX_INDEX_BYTES).map_err(ReadError::Io)? {
        safe_open::Within::Whole(bytes) => Ok((bytes, metadata)),
        safe_open::Within::TooLarge(size) => Err(ReadError::TooLarge(size)),
    }
}

/// Copies `from` to `to`, a new file (never over an existing one), and syncs it: how a corrupt
/// index is kept where hard links are not supported.
fn copy_new(from: &Utf8Path, to: &Utf8Path) -> io::Result<()> {
    let bytes = safe_open::read(from.as_std_path(), Symlinks::Refuse)?;
    let mut copy = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    faults::note(|| FileOp::CreateFile(to.to_owned()));
    copy.write_all(&bytes)?;
    faults::note(|| FileOp::Write {
        path: to.to_owned(),
        bytes,
    });
    sync::sync(&copy)?;
    faults::note(|| FileOp::SyncFile(to.to_owned()));
    Ok(())
}

/// Whether two metadata describe one file (device and inode).
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// Syncs a directory: every name created, linked, renamed or removed in it so far is durable.
fn sync_dir(dir: &Utf8Path) -> io::Result<()> {
    fs::File::open(dir).and_then(|handle| sync::sync(&handle))?;
    faults::note(|| FileOp::SyncDir(dir.to_owned()));
    Ok(())
}

/// A path the store made itself (from UTF-8 parts) as UTF-8.
fn utf8_lossy(path: &std::path::Path) -> Utf8PathBuf {
    Utf8PathBuf::from(path.to_string_lossy().into_owned())
}

fn temp_prefix(path: &Utf8Path) -> String {
    format!(".{}.", path.file_name().unwrap_or(FILE_NAME))
}

fn sidecar(path: &Utf8Path, suffix: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(format!("{path}{suffix}"))
}

fn parent(path: &Utf8Path) -> &Utf8Path {
    match path.parent() {
        Some(parent) if !parent.as_str().is_empty() => parent,
        _ => Utf8Path::new("."),
    }
}

/// Creates `dir` and its missing parents, private to the user (mode 0700 on Unix), then syncs
/// the parent of each directory it created: a new directory is a name in its parent, and the
/// index inside survives a power cut only if that name does.
fn create_private_dir(dir: &Utf8Path) -> io::Result<()> {
    let created = safe_open::create_private_dirs(dir.as_std_path())?;
    for created in &created {
        faults::note(|| FileOp::CreateDir(utf8_lossy(created)));
    }
    for created in &created {
        sync_dir(parent(&utf8_lossy(created)))?;
    }
    Ok(())
}

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
