//! Conformance of the opencode preflight (`preflight::opencode`) with the real opencode 1.18.33
//! (installed by `cargo xtask opencode-cli install`): one test per state of the table in
//! `src/opencode.rs`, the preflight's answer equal to the CLI's exit.
//!
//! Every opencode run is offline (`test_support::opencode_offline`: `unshare -n`, loopback
//! alone, a mock of the OpenAI chat-completions API on 127.0.0.1). Each case creates a session
//! with `opencode run <prompt>`, puts its database or its directory in the case's state, asks
//! the preflight (which must not change a byte of the database), then runs
//! `opencode run -s <id> <probe>` from the session's directory: exit 0 is a resume, exit 1
//! (`Session not found`, or a database that cannot be read) a miss. The preflight must say
//! reachable exactly when opencode exits 0.

use std::fs;
use std::path::{Path, PathBuf};

use camino::{Utf8Path, Utf8PathBuf};
use preflight::opencode::{self, Reachability};
use test_support::opencode_offline::{self, EXIT_NO_SESSION, Offline};

use crate::real_cli;

/// One case's dirs: the home and the project dir, and opencode set up there.
struct Case {
    _temp: tempfile::TempDir,
    project: Utf8PathBuf,
    opencode: Offline,
}

impl Case {
    fn new(name: &str) -> Case {
        let (temp, root, project) = real_cli::case_dirs("opencode", name);
        let opencode = Offline::new(
            opencode_offline::installed_cli(env!("CARGO_TARGET_TMPDIR")),
            root.as_std_path(),
            root.join("home").as_std_path(),
        );
        Case {
            _temp: temp,
            project,
            opencode,
        }
    }

    fn database(&self) -> Utf8PathBuf {
        Utf8PathBuf::from_path_buf(self.opencode.database()).unwrap()
    }

    /// Creates a session with `opencode run` in the project dir; returns its id.
    fn new_session(&self) -> String {
        let run = self
            .opencode
            .run(self.project.as_std_path(), &["run", "hello"]);
        assert_eq!(run.code, Some(0), "opencode run failed: {run:?}");
        let connection = rusqlite::Connection::open_with_flags(
            self.database(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open opencode's database");
        let ids: Vec<(String, String)> = connection
            .prepare("SELECT id, directory FROM session")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(ids.len(), 1, "one session after one run: {ids:?}");
        let (id, directory) = ids.into_iter().next().unwrap();
        assert!(
            opencode::is_session_id(&id),
            "an id of opencode's shape: {id}"
        );
        assert_eq!(directory, self.project.as_str(), "the session's directory");
        id
    }

    /// Changes the database with SQL, as another opencode would (the case's state).
    fn execute(&self, sql: &str) {
        let connection = rusqlite::Connection::open(self.database()).unwrap();
        connection.execute_batch(sql).unwrap();
    }

    /// The preflight's answer; the database's files are not changed by it.
    fn locate(&self, session: &str) -> opencode::Located {
        let before = database_files(&self.database());
        let found = opencode::locate(&self.database(), session);
        assert_eq!(
            database_files(&self.database()),
            before,
            "the preflight changed opencode's database"
        );
        found
    }

    /// The real resume from the session's directory: 0 or [`EXIT_NO_SESSION`].
    fn resume(&self, session: &str) -> Option<i32> {
        let run = self.opencode.run(
            self.project.as_std_path(),
            &["run", "-s", session, "say ok again"],
        );
        real_cli::resumed_or_missed("opencode", &run, EXIT_NO_SESSION)
    }

    /// Asserts the preflight and opencode agree on `session`, and the preflight's state.
    fn assert_agree(&self, session: &str, expected: fn(&Reachability) -> bool) {
        let found = self.locate(session);
        assert!(expected(&found.reachability), "preflight: {found:?}");
        let code = self.resume(session);
        assert_eq!(
            found.reachability.is_reachable(),
            code == Some(0),
            "the preflight said {found:?}, opencode exited {code:?}"
        );
    }
}

/// The database and its WAL, each with its length and a hash of its content (`None`: absent).
fn database_files(db: &Utf8Path) -> Vec<(PathBuf, Option<(usize, u64)>)> {
    use std::hash::{Hash as _, Hasher as _};
    ["", "-wal"]
        .iter()
        .map(|suffix| {
            let path = PathBuf::from(format!("{db}{suffix}"));
            let content = fs::read(&path).ok().map(|bytes| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                bytes.hash(&mut hasher);
                (bytes.len(), hasher.finish())
            });
            (path, content)
        })
        .collect()
}

fn remove_database(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let path = PathBuf::from(format!("{}{suffix}", db.display()));
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => panic!("remove {}: {error}", path.display()),
        }
    }
}

#[test]
fn an_intact_session_resumes() {
    let case = Case::new("intact");
    let session = case.new_session();
    let found = case.locate(&session);
    assert_eq!(
        found.row.as_ref().map(|row| row.directory.as_str()),
        Some(case.project.as_str())
    );
    case.assert_agree(&session, |state| *state == Reachability::Reachable);
}

#[test]
fn an_archived_session_resumes() {
    let case = Case::new("archived");
    let session = case.new_session();
    case.execute("UPDATE session SET time_archived = 1");
    assert!(case.locate(&session).row.unwrap().archived);
    case.assert_agree(&session, |state| *state == Reachability::Reachable);
}

#[test]
fn a_missing_row_is_not_found() {
    let case = Case::new("no-row");
    let session = case.new_session();
    case.execute(&format!("DELETE FROM session WHERE id = '{session}'"));
    case.assert_agree(&session, |state| *state == Reachability::NoRow);
}

#[test]
fn a_deleted_database_is_not_found() {
    let case = Case::new("no-db");
    let session = case.new_session();
    remove_database(case.database().as_std_path());
    case.assert_agree(&session, |state| *state == Reachability::NoDatabase);
}

#[test]
fn an_empty_database_is_not_found() {
    let case = Case::new("empty-db");
    let session = case.new_session();
    remove_database(case.database().as_std_path());
    fs::write(case.database(), b"").unwrap();
    case.assert_agree(&session, |state| *state == Reachability::NoRow);
}

#[test]
fn a_database_cut_short_fails() {
    let case = Case::new("cut-db");
    let session = case.new_session();
    // Everything into the main file (the last connection's close removes the WAL), then the
    // file cut to its first pages.
    case.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    let db = case.database();
    assert!(
        !Path::new(&format!("{db}-wal")).exists(),
        "the WAL is folded in"
    );
    let file = fs::OpenOptions::new().write(true).open(&db).unwrap();
    file.set_len(8192).unwrap();
    drop(file);
    case.assert_agree(&session, |state| {
        matches!(state, Reachability::Unreadable(_))
    });
}

#[test]
fn an_overwritten_database_fails() {
    let case = Case::new("overwritten-db");
    let session = case.new_session();
    remove_database(case.database().as_std_path());
    fs::write(case.database(), "not a database at all\n".repeat(400)).unwrap();
    case.assert_agree(&session, |state| {
        matches!(state, Reachability::Unreadable(_))
    });
}

/// opencode resumes only from the session's directory; with it gone the resume cannot start
/// there, though the row is intact.
#[test]
fn a_session_whose_directory_is_gone_is_not_resumed() {
    let case = Case::new("dir-gone");
    let session = case.new_session();
    fs::remove_dir_all(&case.project).unwrap();
    let found = case.locate(&session);
    assert_eq!(found.reachability, Reachability::DirectoryMissing);
    assert!(found.row.is_some(), "the row is kept: {found:?}");
    assert!(!found.reachability.is_reachable());
}
