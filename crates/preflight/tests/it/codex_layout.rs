//! Codex reachability as the real Codex CLI 0.171 decides it (`preflight::codex`): one case per
//! row of the measured table, built on disk the way Codex leaves it (a rollout under
//! `sessions/Y/M/D`, a `threads` row in `state_5.sqlite` kept in WAL mode), and the read-only
//! use of Codex's database.

use camino::{Utf8Path, Utf8PathBuf};
use preflight::codex::{self, Reachability, Source};
use preflight::{Input, Verdict, preflight};
use rusqlite::Connection;

use crate::verdicts::Sandbox;

const SESSION: &str = "01a2308c-1131-7652-8765-e022bf1f7a57";
const META: &str = r#"{"timestamp":"2026-12-01T07:40:15.000Z","type":"session_meta","payload":{"session_id":"01a2308c-1131-7652-8765-e022bf1f7a57","id":"01a2308c-1131-7652-8765-e022bf1f7a57","cwd":"/w","cli_version":"0.171.0"}}"#;
const MESSAGE: &str = r#"{"timestamp":"2026-12-01T07:40:16.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#;

/// A Codex home with its state database, as Codex creates it (WAL mode).
struct CodexHome {
    _sandbox: Sandbox,
    home: Utf8PathBuf,
    db: Connection,
}

impl CodexHome {
    fn new() -> CodexHome {
        let sandbox = Sandbox::new();
        let home = sandbox.root.join("codex");
        std::fs::create_dir_all(&home).unwrap();
        let db = Connection::open(home.join(codex::STATE_DB)).unwrap();
        db.pragma_update(None, "journal_mode", "wal").unwrap();
        db.execute_batch(
            "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, \
             cwd TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0)",
        )
        .unwrap();
        CodexHome {
            _sandbox: sandbox,
            home,
            db,
        }
    }

    /// Writes the rollout of `SESSION` in the date folder `day` and returns its path.
    fn rollout(&self, day: &str, text: &str) -> Utf8PathBuf {
        let dir = self.home.join("sessions").join(day);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("rollout-2026-12-01T07-40-15-{SESSION}.jsonl"));
        std::fs::write(&path, text).unwrap();
        path
    }

    fn row(&self, rollout: &Utf8Path, archived: bool) {
        self.db
            .execute(
                "INSERT INTO threads (id, rollout_path, cwd, archived) VALUES (?1, ?2, '/w', ?3)",
                rusqlite::params![SESSION, rollout.as_str(), i64::from(archived)],
            )
            .unwrap();
    }

    fn locate(&self) -> codex::Located {
        codex::locate(&self.home, SESSION)
    }
}

fn intact() -> String {
    format!("{META}\n{MESSAGE}\n")
}

fn check(name: &str, build: impl FnOnce(&CodexHome), expected: Reachability, source: Source) {
    let codex_home = CodexHome::new();
    build(&codex_home);
    let located = codex_home.locate();
    assert_eq!(
        (located.reachability, located.source),
        (expected, source),
        "{name}: {}",
        located.path
    );
}

#[test]
fn each_row_of_the_measured_table() {
    use Reachability::*;
    use Source::{Search, StateRow};
    check(
        "intact",
        |c| c.row(&c.rollout("2026/12/01", &intact()), false),
        Reachable,
        StateRow,
    );
    check(
        "row missing, rollout intact",
        |c| {
            c.rollout("2026/12/01", &intact());
        },
        Reachable,
        Search,
    );
    check(
        "rollout deleted, row kept",
        |c| {
            let path = c.rollout("2026/12/01", &intact());
            c.row(&path, false);
            std::fs::remove_file(path).unwrap();
        },
        Missing,
        StateRow,
    );
    check(
        "rollout moved to another date dir, row kept",
        |c| {
            let path = c.rollout("2026/12/01", &intact());
            c.row(&path, false);
            let moved = c.home.join("sessions/2025/01/02");
            std::fs::create_dir_all(&moved).unwrap();
            // Moved as a copy and a removal (renaming is index-store's alone).
            std::fs::copy(&path, moved.join(path.file_name().unwrap())).unwrap();
            std::fs::remove_file(&path).unwrap();
        },
        Missing,
        StateRow,
    );
    check(
        "first line cut",
        |c| {
            c.row(
                &c.rollout(
                    "2026/12/01",
                    &format!("{}\n{MESSAGE}\n", &META[..META.len() / 2]),
                ),
                false,
            );
        },
        NoSessionMeta,
        StateRow,
    );
    check(
        "session_meta line missing",
        |c| {
            c.row(&c.rollout("2026/12/01", &format!("{MESSAGE}\n")), false);
        },
        NoSessionMeta,
        StateRow,
    );
    check(
        "empty file",
        |c| c.row(&c.rollout("2026/12/01", ""), false),
        Empty,
        StateRow,
    );
    check(
        "archived",
        |c| {
            let dir = c.home.join(codex::ARCHIVED_DIR);
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("rollout-2026-12-01T07-40-15-{SESSION}.jsonl"));
            std::fs::write(&path, intact()).unwrap();
            c.row(&path, true);
        },
        Archived,
        StateRow,
    );
}

#[test]
fn without_a_row_the_search_judges_the_file_it_finds() {
    use Reachability::*;
    check(
        "no row, empty",
        |c| {
            c.rollout("2026/12/01", "");
        },
        Empty,
        Source::Search,
    );
    check(
        "no row, no meta",
        |c| {
            c.rollout("2026/12/01", &format!("{MESSAGE}\n"));
        },
        NoSessionMeta,
        Source::Search,
    );
    check(
        "no row, only archived",
        |c| {
            let dir = c.home.join(codex::ARCHIVED_DIR);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("rollout-x-{SESSION}.jsonl")), intact()).unwrap();
        },
        Archived,
        Source::Search,
    );
    check("nothing at all", |_| {}, Missing, Source::Search);
    check(
        "a directory named like the rollout",
        |c| {
            let dir = c.home.join("sessions/2026/12/01");
            std::fs::create_dir_all(dir.join(format!("rollout-x-{SESSION}.jsonl"))).unwrap();
        },
        NotAFile,
        Source::Search,
    );
}

#[test]
fn a_complete_meta_line_without_newline_counts() {
    check(
        "meta only, no newline",
        |c| c.row(&c.rollout("2026/12/01", META), false),
        Reachability::Reachable,
        Source::StateRow,
    );
}

#[test]
fn a_relative_rollout_path_is_taken_from_codex_home() {
    check(
        "relative path",
        |c| {
            c.rollout("2026/12/01", &intact());
            let relative =
                format!("sessions/2026/12/01/rollout-2026-12-01T07-40-15-{SESSION}.jsonl");
            c.row(Utf8Path::new(&relative), false);
        },
        Reachability::Reachable,
        Source::StateRow,
    );
}

#[test]
fn a_state_database_that_cannot_be_read_falls_back_to_the_search_and_says_why() {
    let sandbox = Sandbox::new();
    let home = sandbox.root.join("codex");
    let dir = home.join("sessions/2026/12/01");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("rollout-x-{SESSION}.jsonl")), intact()).unwrap();
    std::fs::write(
        home.join(codex::STATE_DB),
        "this is not a database, just text",
    )
    .unwrap();
    let located = codex::locate(&home, SESSION);
    assert_eq!(located.reachability, Reachability::Reachable);
    let Source::SearchAfterStateError(reason) = &located.source else {
        panic!(
            "expected the search after a state error, got {:?}",
            located.source
        );
    };
    assert!(reason.contains("not a database"), "{reason}");
    assert!(
        located.describe().contains("could not be read"),
        "{}",
        located.describe()
    );
}

#[test]
fn a_row_still_in_the_write_ahead_log_is_read_and_codex_can_keep_writing() {
    let codex_home = CodexHome::new();
    // Codex holds its connection open; the row is in the WAL, not yet in the main file.
    codex_home
        .db
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    codex_home.row(&codex_home.rollout("2026/12/01", &intact()), false);
    let wal = codex_home.home.join(format!("{}-wal", codex::STATE_DB));
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    let located = codex_home.locate();
    assert_eq!(
        (located.reachability, located.source),
        (Reachability::Reachable, Source::StateRow)
    );
    // The preflight's read held no lock: Codex writes on, and a write transaction starts at once.
    codex_home
        .db
        .execute("UPDATE threads SET archived = 1 WHERE id = ?1", [SESSION])
        .unwrap();
    assert_eq!(codex_home.locate().reachability, Reachability::Archived);
}

#[test]
fn the_state_database_is_never_written() {
    let codex_home = CodexHome::new();
    codex_home.row(&codex_home.rollout("2026/12/01", &intact()), false);
    // A checkpoint folds the WAL into the main file, as a closed Codex leaves it.
    codex_home
        .db
        .pragma_update(None, "wal_checkpoint", "TRUNCATE")
        .unwrap();
    let db = codex_home.home.join(codex::STATE_DB);
    let before = std::fs::read(&db).unwrap();
    let modified = std::fs::metadata(&db).unwrap().modified().unwrap();
    for _ in 0..3 {
        assert!(codex_home.locate().reachability.is_reachable());
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(
        std::fs::metadata(&db).unwrap().modified().unwrap(),
        modified
    );
}

#[test]
fn the_preflight_gives_codex_verdicts_with_the_reason() {
    let codex_home = CodexHome::new();
    let path = codex_home.rollout("2026/12/01", &format!("{MESSAGE}\n"));
    codex_home.row(&path, false);
    let outcome = preflight(&Input {
        agent: Some("codex".into()),
        session: Some(SESSION.into()),
        cwd: Some("/w".into()),
        config_dir: Some(codex_home.home.to_string()),
        ..Input::default()
    });
    assert_eq!(outcome.verdict, Verdict::Fresh);
    let transcript = outcome
        .steps
        .iter()
        .find(|step| step.id == preflight::StepId::Transcript)
        .unwrap();
    assert!(!transcript.ok);
    assert!(
        transcript.detail.contains(path.as_str()),
        "{}",
        transcript.detail
    );
    assert!(
        transcript
            .detail
            .contains("does not start with session metadata"),
        "{}",
        transcript.detail
    );
    assert!(
        transcript.detail.contains("state_5.sqlite row"),
        "{}",
        transcript.detail
    );
}

/// A state database Codex holds locked past the busy timeout is waited for once per batch: a
/// batch's cache answers every later session from what the first read found (the search, with
/// the same reason), without opening the database again: even once the lock is gone, that
/// batch still says locked, while a new batch reads the row.
#[test]
fn a_locked_state_database_is_waited_for_once_per_batch() {
    let sandbox = Sandbox::new();
    let home = sandbox.root.join("codex");
    let dir = home.join("sessions/2026/12/01");
    std::fs::create_dir_all(&dir).unwrap();
    let rollout = dir.join(format!("rollout-x-{SESSION}.jsonl"));
    std::fs::write(&rollout, intact()).unwrap();
    // Rollback-journal mode (the default): an exclusive transaction keeps readers out.
    let db = Connection::open(home.join(codex::STATE_DB)).unwrap();
    db.execute_batch(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, \
         cwd TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0)",
    )
    .unwrap();
    db.execute(
        "INSERT INTO threads (id, rollout_path, cwd) VALUES (?1, ?2, '/w')",
        [SESSION, rollout.as_str()],
    )
    .unwrap();
    db.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let locked = Source::SearchAfterStateError("database is locked".to_string());
    let batch = codex::Cache::default();
    for _ in 0..20 {
        let located = batch.locate(&home, SESSION);
        assert_eq!(located.source, locked);
        assert_eq!(located.reachability, Reachability::Reachable);
    }
    db.execute_batch("COMMIT").unwrap();
    assert_eq!(batch.locate(&home, SESSION).source, locked, "remembered");
    assert_eq!(
        codex::Cache::default().locate(&home, SESSION).source,
        Source::StateRow,
        "a new batch reads the row"
    );
}
