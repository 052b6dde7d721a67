//! Codex CLI's on-disk layout, and whether `codex resume <id>` would load a session, as the real
//! Codex CLI 0.171 decides it.
//!
//! Codex keeps a session in three places: a rollout file,
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<id>.jsonl`, whose first line is a
//! `session_meta` record; a row in the `threads` table of `$CODEX_HOME/state_5.sqlite` (with
//! `rollout_path`, `cwd`, `archived`); and `thread_history_1.sqlite`, which resume does not
//! depend on. Measured against the real CLI (`codex exec resume <id>`, run offline; the
//! conformance test `tests/it/codex_cli.rs` keeps it so):
//!
//! | state | Codex 0.171 |
//! |---|---|
//! | rollout and row intact | resumes, appends to the same file |
//! | no row, rollout intact | finds the rollout by its id, resumes and rebuilds the row |
//! | row kept, rollout deleted | `no rollout found for thread id`, exit 1 |
//! | row kept, rollout moved to another date dir | follows the row's `rollout_path`: not found |
//! | first line cut short | `does not start with session metadata`, exit 1 |
//! | `session_meta` line missing | `does not start with session metadata`, exit 1 |
//! | empty file | `is empty`, exit 1 |
//! | archived (`codex archive`: row `archived = 1`, file moved to `archived_sessions/`) | `is archived`, exit 1 |
//!
//! So the check runs in that order: the row's `rollout_path` when a row exists, else the search
//! by id through the date folders; then the file itself (empty, first line a `session_meta`
//! record); then the row's `archived` flag. The state database is opened read-only and never
//! written: a reader does not block Codex, which keeps the database in WAL mode. There is no disk
//! recovery for Codex.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs;
use std::io::{BufRead as _, BufReader, Read as _};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use serde::Deserialize;

/// The state database, relative to `$CODEX_HOME`.
pub const STATE_DB: &str = "state_5.sqlite";

/// Where archived rollouts are moved, relative to `$CODEX_HOME`.
pub const ARCHIVED_DIR: &str = "archived_sessions";

/// The longest first line read when looking for the `session_meta` record (it carries the
/// model's instructions, tens of kilobytes); a longer one is judged on what was read.
const MAX_FIRST_LINE: u64 = 16 << 20;

/// How long a read of the state database waits for a lock Codex holds.
const BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// What `codex resume <id>` would make of a session, in the terms its answer depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reachability {
    /// A rollout that starts with a `session_meta` record, not archived: resume loads it.
    Reachable,
    /// No rollout at the row's `rollout_path`, or none found by id (`no rollout found`).
    Missing,
    /// The rollout is an empty file (`is empty`).
    Empty,
    /// The first line is not a complete `session_meta` record (cut short, or another record).
    NoSessionMeta,
    /// The session is archived (`codex unarchive <id>` first).
    Archived,
    /// Something other than a regular file is at the rollout's path.
    NotAFile,
    /// The rollout exists but cannot be read.
    Unreadable,
}

impl Reachability {
    /// Whether the CLI would load it.
    pub fn is_reachable(self) -> bool {
        self == Reachability::Reachable
    }

    /// Words for a step's detail.
    pub fn describe(self) -> &'static str {
        match self {
            Reachability::Reachable => "a rollout that starts with its session metadata",
            Reachability::Missing => "no rollout there (Codex: no rollout found)",
            Reachability::Empty => "an empty rollout (Codex: is empty)",
            Reachability::NoSessionMeta => {
                "the first line is not session metadata (Codex: does not start with session metadata)"
            }
            Reachability::Archived => "archived (Codex resumes it only after `codex unarchive`)",
            Reachability::NotAFile => "not a regular file",
            Reachability::Unreadable => "cannot be read",
        }
    }
}

/// How the rollout was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `threads` row's `rollout_path`.
    StateRow,
    /// No row: the search by id through the date folders (then `archived_sessions/`).
    Search,
    /// The state database exists but could not be read (the reason); the search was used.
    SearchAfterStateError(String),
}

/// The answer for one session id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Whether the CLI would load it, and why not.
    pub reachability: Reachability,
    /// The rollout judged, or where it was looked for.
    pub path: Utf8PathBuf,
    /// Where the rollout was found.
    pub source: Source,
}

impl Located {
    /// Words for a step's detail: where it looked, and what it found.
    pub fn describe(&self) -> String {
        let how = match &self.source {
            Source::StateRow => format!("{STATE_DB} row"),
            Source::Search => "search by id".to_string(),
            Source::SearchAfterStateError(reason) => {
                format!("search by id; {STATE_DB} could not be read: {reason}")
            }
        };
        format!("{} ({how})", self.reachability.describe())
    }
}

/// A session's row in the `threads` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRow {
    /// The rollout file the row names.
    pub rollout_path: Utf8PathBuf,
    /// The working dir the thread ran in.
    pub cwd: String,
    /// Whether the thread is archived.
    pub archived: bool,
}

/// What a batch of preflights (a restore plan) learned about Codex's state databases: each one
/// found locked (Codex writing it past the 250 ms busy timeout), with the reason, so the batch
/// waits for a locked database once, not once per session. Keep one for one batch, not longer.
#[derive(Debug, Default)]
pub struct Cache {
    locked: RefCell<HashMap<Utf8PathBuf, String>>,
}

impl Cache {
    /// [`locate`], a database found locked earlier in the batch not waited for again: the
    /// answer is the one a locked database gives (the search, with the same reason).
    pub fn locate(&self, codex_home: &Utf8Path, session: &str) -> Located {
        let db = codex_home.join(STATE_DB);
        let known = self.locked.borrow().get(&db).cloned();
        let row = match known {
            Some(reason) => Err(reason),
            None => read_row(&db, session).map_err(|error| {
                let reason = error.to_string();
                if is_locked(&error) {
                    self.locked.borrow_mut().insert(db.clone(), reason.clone());
                }
                reason
            }),
        };
        located(codex_home, session, row)
    }
}

/// Whether the database was locked past the busy timeout.
fn is_locked(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// What `codex resume <session>` would make of the session under `codex_home`.
pub fn locate(codex_home: &Utf8Path, session: &str) -> Located {
    located(codex_home, session, thread_row(codex_home, session))
}

/// The answer for `session` given its row (or why the database could not be read).
fn located(
    codex_home: &Utf8Path,
    session: &str,
    row: Result<Option<ThreadRow>, String>,
) -> Located {
    match row {
        Ok(Some(row)) => {
            let path = if row.rollout_path.is_absolute() {
                row.rollout_path
            } else {
                codex_home.join(row.rollout_path)
            };
            let mut reachability = judge_rollout(&path);
            if reachability.is_reachable() && row.archived {
                reachability = Reachability::Archived;
            }
            Located {
                reachability,
                path,
                source: Source::StateRow,
            }
        }
        Ok(None) => search(codex_home, session, Source::Search),
        Err(reason) => search(codex_home, session, Source::SearchAfterStateError(reason)),
    }
}

/// No usable row: the rollout found by id in the date folders, else in `archived_sessions/`.
fn search(codex_home: &Utf8Path, session: &str, source: Source) -> Located {
    if let Some(path) = find_rollout(codex_home, session) {
        return Located {
            reachability: judge_rollout(&path),
            path,
            source,
        };
    }
    if let Some(path) = find_in(&codex_home.join(ARCHIVED_DIR), session) {
        return Located {
            reachability: Reachability::Archived,
            path,
            source,
        };
    }
    Located {
        reachability: Reachability::Missing,
        path: codex_home.join(format!("sessions/*/*/*/rollout-*-{session}.jsonl")),
        source,
    }
}

/// The session's row in `$CODEX_HOME/state_5.sqlite`, read-only. `Ok(None)`: no database, or no
/// row for this id. `Err`: the database exists but could not be read (the reason).
pub fn thread_row(codex_home: &Utf8Path, session: &str) -> Result<Option<ThreadRow>, String> {
    read_row(&codex_home.join(STATE_DB), session).map_err(|error| error.to_string())
}

fn read_row(db: &Utf8Path, session: &str) -> Result<Option<ThreadRow>, rusqlite::Error> {
    use rusqlite::{Connection, OpenFlags, OptionalExtension as _};

    if !db.is_file() {
        return Ok(None);
    }
    // Read-only and without creating anything: Codex's database is never written or migrated.
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(db, flags)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection
        .query_row(
            "SELECT rollout_path, cwd, archived FROM threads WHERE id = ?1",
            [session],
            |row| {
                Ok(ThreadRow {
                    rollout_path: Utf8PathBuf::from(row.get::<_, String>(0)?),
                    cwd: row.get(1)?,
                    archived: row.get::<_, i64>(2)? != 0,
                })
            },
        )
        .optional()
}

/// Judges a rollout file as Codex reads it: a regular file, not empty, whose first line is a
/// complete JSON record of type `session_meta`. Reads the first line only.
pub fn judge_rollout(path: &Utf8Path) -> Reachability {
    let metadata = match fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Reachability::Missing,
        Err(_) => return Reachability::Unreadable,
    };
    if !metadata.is_file() {
        return Reachability::NotAFile;
    }
    if metadata.len() == 0 {
        return Reachability::Empty;
    }
    // Never waited on: a FIFO swapped in after the look above is refused here.
    let Ok(file) = safe_open::open_read(path.as_std_path(), safe_open::Symlinks::Follow) else {
        return Reachability::Unreadable;
    };
    let mut line = Vec::new();
    if BufReader::new(file.take(MAX_FIRST_LINE))
        .read_until(b'\n', &mut line)
        .is_err()
    {
        return Reachability::Unreadable;
    }
    if is_session_meta(&line) {
        Reachability::Reachable
    } else {
        Reachability::NoSessionMeta
    }
}

#[derive(Deserialize)]
struct RecordType<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

fn is_session_meta(line: &[u8]) -> bool {
    serde_json::from_slice::<RecordType<'_>>(line)
        .is_ok_and(|record| record.kind.as_deref() == Some("session_meta"))
}

/// The rollout file of `session` under `codex_home/sessions`, found by its id (any size: an
/// empty one is judged, not skipped). Date folders are searched newest first.
pub fn find_rollout(codex_home: &Utf8Path, session: &str) -> Option<Utf8PathBuf> {
    if !crate::claude::is_file_name_safe(session) {
        return None;
    }
    let sessions = codex_home.join("sessions");
    for year in sorted_dirs(&sessions) {
        for month in sorted_dirs(&year) {
            for day in sorted_dirs(&month) {
                if let Some(found) = find_in(&day, session) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// `rollout-*-<session>.jsonl` directly in `dir`.
fn find_in(dir: &Utf8Path, session: &str) -> Option<Utf8PathBuf> {
    if !crate::claude::is_file_name_safe(session) {
        return None;
    }
    let suffix = format!("-{session}.jsonl");
    let listing = fs::read_dir(dir).ok()?;
    listing.flatten().find_map(|item| {
        let name = item.file_name().into_string().ok()?;
        (name.starts_with("rollout-") && name.ends_with(&suffix)).then(|| dir.join(name))
    })
}

/// The sub-directories of `dir`, newest name first.
fn sorted_dirs(dir: &Utf8Path) -> Vec<Utf8PathBuf> {
    let Ok(listing) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<Utf8PathBuf> = listing
        .flatten()
        .filter(|item| item.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter_map(|item| item.file_name().into_string().ok())
        .map(|name| dir.join(name))
        .collect();
    dirs.sort_by(|a, b| b.cmp(a));
    dirs
}
