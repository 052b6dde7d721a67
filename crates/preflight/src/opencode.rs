//! opencode's on-disk layout, and whether `opencode -s <id>` would load a session, as the real
//! opencode 1.18.33 decides it.
//!
//! opencode keeps everything in one SQLite database in WAL mode,
//! `$XDG_DATA_HOME/opencode/opencode.db` (`~/.local/share/opencode/opencode.db` without the
//! variable; `OPENCODE_DB` names another file). A session is a row of its `session` table
//! (`id`, `project_id`, `parent_id`, `directory`, `time_archived`, …), ids `ses_` and 26
//! characters; the row appears at the first prompt. Measured against the real CLI
//! (`opencode run -s <id> <prompt>` from the session's `directory`, offline; the conformance
//! test `tests/it/opencode_cli.rs` keeps it so):
//!
//! | state | opencode 1.18.33 |
//! |---|---|
//! | row intact, directory there | resumes, adds to the same session |
//! | row archived (`time_archived` set) | resumes |
//! | no such row | `Session not found`, exit 1 |
//! | database deleted, or an empty file | `Session not found`, exit 1 |
//! | database cut short or overwritten | fails (not a database) |
//! | row intact, its directory deleted | cannot start there: not resumed |
//!
//! So the check is: the database opens read-only (never created, never migrated: a missing
//! file is not opened at all), the row exists, and its `directory` is a directory. The database
//! is opened read-only with a busy deadline, as Codex's is: a reader does not block opencode.
//! There is no disk recovery for opencode.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};

/// The database, relative to the data dir (`$XDG_DATA_HOME`).
pub const DATABASE: &str = "opencode/opencode.db";

/// How long a read of the database waits for a lock opencode holds.
const BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// The longest session id read from a row or taken as input; opencode's are 30 characters.
const MAX_ID: usize = 128;

/// The database opencode opens: `OPENCODE_DB` when set and not blank (relative to the
/// working dir as opencode resolves it, so only an absolute value is taken), else
/// `<XDG_DATA_HOME>/opencode/opencode.db` when that is absolute, else
/// `<home>/.local/share/opencode/opencode.db`; `None` when none is known.
pub fn database_path(
    opencode_db: Option<&str>,
    xdg_data_home: Option<&str>,
    home: Option<&Utf8Path>,
) -> Option<Utf8PathBuf> {
    let absolute = |value: Option<&str>| {
        value
            .filter(|value| !value.trim().is_empty())
            .map(Utf8PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    if let Some(db) = absolute(opencode_db) {
        return Some(db);
    }
    if let Some(data) = absolute(xdg_data_home) {
        return Some(data.join(DATABASE));
    }
    home.map(|home| home.join(".local/share").join(DATABASE))
}

/// What `opencode -s <id>` would make of a session, in the terms its answer depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reachability {
    /// The row exists and its directory is there: resume loads it (archived or not).
    Reachable,
    /// No database file (`Session not found`).
    NoDatabase,
    /// The database has no row for the id (an empty file included): `Session not found`.
    NoRow,
    /// The row's `directory` is gone or not a directory.
    DirectoryMissing,
    /// The database could not be opened or read (cut short, overwritten, locked past the
    /// deadline): the reason.
    Unreadable(String),
}

impl Reachability {
    /// Whether the CLI would load it.
    pub fn is_reachable(&self) -> bool {
        matches!(self, Reachability::Reachable)
    }

    /// The state in words.
    pub fn describe(&self) -> String {
        match self {
            Reachability::Reachable => "session row found, its directory exists".to_string(),
            Reachability::NoDatabase => "no database (opencode says Session not found)".to_string(),
            Reachability::NoRow => "no session row (opencode says Session not found)".to_string(),
            Reachability::DirectoryMissing => {
                "session row found, but its directory is gone".to_string()
            }
            Reachability::Unreadable(reason) => format!("database cannot be read: {reason}"),
        }
    }
}

/// A session's row in the `session` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// The dir opencode ran in, where `opencode -s <id>` must start.
    pub directory: String,
    /// The session it was forked from or is a subagent of.
    pub parent_id: Option<String>,
    /// Whether it is archived (it still resumes).
    pub archived: bool,
}

/// What was found for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Whether and why the CLI would load it.
    pub reachability: Reachability,
    /// The database looked at.
    pub database: Utf8PathBuf,
    /// The row, when there is one.
    pub row: Option<SessionRow>,
}

/// What `opencode -s <session>` (from the row's directory) would make of `session` in the
/// database `database`. Reads only; never creates, migrates or writes the database.
pub fn locate(database: &Utf8Path, session: &str) -> Located {
    let (reachability, row) = match read_row(database, session) {
        Err(error) => (Reachability::Unreadable(error), None),
        Ok(Lookup::NoDatabase) => (Reachability::NoDatabase, None),
        Ok(Lookup::NoRow) => (Reachability::NoRow, None),
        Ok(Lookup::Row(row)) => {
            let reachability = if Utf8Path::new(&row.directory).is_dir() {
                Reachability::Reachable
            } else {
                Reachability::DirectoryMissing
            };
            (reachability, Some(row))
        }
    };
    Located {
        reachability,
        database: database.to_path_buf(),
        row,
    }
}

enum Lookup {
    NoDatabase,
    NoRow,
    Row(SessionRow),
}

fn read_row(database: &Utf8Path, session: &str) -> Result<Lookup, String> {
    use rusqlite::{Connection, OpenFlags, OptionalExtension as _};

    let metadata = match std::fs::metadata(database) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Lookup::NoDatabase);
        }
        Err(error) => return Err(error.to_string()),
    };
    if !metadata.is_file() {
        return Err("not a regular file".to_string());
    }
    // An empty file is an empty database to SQLite: opencode finds no session in it.
    if metadata.len() == 0 || session.len() > MAX_ID {
        return Ok(Lookup::NoRow);
    }
    // Read-only and without creating anything: opencode's database is never written or
    // migrated. Without a WAL beside it (no opencode has it open: the last one to close folds
    // the WAL in and removes it), SQLite would create an empty WAL and shared-memory file for a
    // read-only reader; opened as immutable it creates none, and the file is the whole truth.
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let wal = Utf8PathBuf::from(format!("{database}-wal"));
    let connection = if wal.exists() {
        Connection::open_with_flags(database, flags)
    } else {
        Connection::open_with_flags(immutable_uri(database), flags | OpenFlags::SQLITE_OPEN_URI)
    }
    .map_err(|e| e.to_string())?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| e.to_string())?;
    let row = connection
        .query_row(
            "SELECT directory, parent_id, time_archived FROM session WHERE id = ?1",
            [session],
            |row| {
                Ok(SessionRow {
                    directory: row.get(0)?,
                    parent_id: row.get(1)?,
                    archived: row.get::<_, Option<i64>>(2)?.is_some(),
                })
            },
        )
        .optional();
    match row {
        Ok(Some(row)) => Ok(Lookup::Row(row)),
        Ok(None) => Ok(Lookup::NoRow),
        // A database without opencode's tables yet (created, never migrated) holds no session.
        Err(rusqlite::Error::SqliteFailure(_, Some(message)))
            if message.starts_with("no such table: session") =>
        {
            Ok(Lookup::NoRow)
        }
        Err(error) => Err(error.to_string()),
    }
}

/// `file:<path>?mode=ro&immutable=1`, the path's `%`, `?` and `#` escaped as a URI's.
fn immutable_uri(database: &Utf8Path) -> String {
    let mut uri = String::from("file:");
    for character in database.as_str().chars() {
        match character {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            other => uri.push(other),
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    uri
}

/// Whether `value` has the shape of an opencode session id: `ses_` and 26 ASCII letters or
/// digits.
pub fn is_session_id(value: &str) -> bool {
    value.len() == 30
        && value.starts_with("ses_")
        && value[4..].bytes().all(|byte| byte.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_follows_opencode_db_then_xdg_data_home_then_home() {
        let home = Utf8Path::new("/home/u");
        assert_eq!(
            database_path(Some("/x/o.db"), Some("/d"), Some(home)).unwrap(),
            "/x/o.db"
        );
        assert_eq!(
            database_path(Some(" "), Some("/d"), Some(home)).unwrap(),
            "/d/opencode/opencode.db"
        );
        assert_eq!(
            database_path(None, Some("rel"), Some(home)).unwrap(),
            "/home/u/.local/share/opencode/opencode.db"
        );
        assert_eq!(database_path(None, None, None), None);
    }

    #[test]
    fn session_ids_have_opencodes_shape() {
        assert!(is_session_id("ses_dc2c01004ffe1l3UCWH8WhiBxs"));
        assert!(!is_session_id("ses_dc2c01004ffe1l3UCWH8WhiBx"));
        assert!(!is_session_id("ses_dc2c01004ffe1l3UCWH8Whi;xs"));
        assert!(!is_session_id("abc_dc2c01004ffe1l3UCWH8WhiBxs"));
    }

    #[test]
    fn a_database_without_a_wal_is_read_without_creating_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().join("a?b#c%d")).unwrap();
        std::fs::create_dir(&root).unwrap();
        let db = root.join("opencode.db");
        let connection = rusqlite::Connection::open(&db).unwrap();
        connection
            .execute_batch(
                "PRAGMA journal_mode=WAL; CREATE TABLE session (id text PRIMARY KEY, \
                 parent_id text, directory text NOT NULL, time_archived integer); \
                 INSERT INTO session VALUES ('ses_a', NULL, '/', NULL);",
            )
            .unwrap();
        drop(connection);
        assert!(!root.join("opencode.db-wal").exists());
        let found = locate(&db, "ses_a");
        assert_eq!(found.reachability, Reachability::Reachable, "{found:?}");
        assert_eq!(found.row.unwrap().directory, "/");
        assert_eq!(locate(&db, "ses_b").reachability, Reachability::NoRow);
        assert!(!root.join("opencode.db-wal").exists());
        assert!(!root.join("opencode.db-shm").exists());
    }

    #[test]
    fn a_missing_database_is_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let db = Utf8PathBuf::from_path_buf(dir.path().join("opencode.db")).unwrap();
        let found = locate(&db, "ses_dc2c01004ffe1l3UCWH8WhiBxs");
        assert_eq!(found.reachability, Reachability::NoDatabase);
        assert!(!db.exists());
    }
}
