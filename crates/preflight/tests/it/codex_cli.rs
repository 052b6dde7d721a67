//! Conformance of the Codex preflight with the real Codex CLI 0.171.0 (installed by
//! `cargo xtask codex-cli install`), one test per row of the table in `preflight::codex`.
//!
//! Every Codex run is offline: `unshare -n` gives it a network namespace with loopback alone,
//! and `codex_offline.py` (in the test-support crate) brings loopback up, serves a mock of the Responses API on
//! 127.0.0.1, runs Codex, then kills by pid every process left in the namespace. Codex reaches
//! the mock through a custom provider in `$CODEX_HOME/config.toml`:
//!
//! ```text
//! cd <case>/proj && env -i PATH=$PATH HOME=<case>/home CODEX_HOME=<case>/codex MOCK_API_KEY=dummy \
//!     unshare -n -- python3 codex_offline.py --port 18080 --log <case>/requests.log -- \
//!     codex exec --skip-git-repo-check resume <id> "<probe>" </dev/null
//! ```
//!
//! Each case first creates a session with `codex exec`, then puts its rollout and its
//! `state_5.sqlite` row in the row's state, asks the preflight, and runs
//! `codex exec resume <id>`. Resumed: exit 0 and the probe appended to the rollout. Refused:
//! exit 1 and Codex's reason on stderr. The preflight must say `resume` exactly when Codex
//! resumed. A machine where the namespace cannot be created fails the test with that reason.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use preflight::codex::{self, Reachability};
use preflight::{Input, Verdict, preflight};
use serde_json::Value;

// Shared with the CLI's capture test and reboot-sim; the tmux server is theirs alone.
#[allow(dead_code)]
use test_support::codex_offline;
use test_support::process::clean_command;
use test_support::transcript::CODEX_VERSION;

/// The prompt sent on resume: found in the rollout when Codex resumed.
const PROBE: &str = "crash-resume conformance probe";

/// A Codex run is killed after this long; against the mock it ends within seconds.
const DEADLINE: Duration = Duration::from_secs(90);

fn installed_cli() -> PathBuf {
    codex_offline::installed_cli(env!("CARGO_TARGET_TMPDIR"))
}

/// One case's dirs: a home, a Codex home configured for the mock, a project dir.
pub struct CodexCase {
    _temp: tempfile::TempDir,
    pub root: Utf8PathBuf,
    pub home: Utf8PathBuf,
    pub codex_home: Utf8PathBuf,
    pub project: Utf8PathBuf,
}

/// What one offline Codex run did.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stderr: String,
}

impl CodexCase {
    pub fn new(name: &str) -> CodexCase {
        // Codex refuses to put its helper links under /tmp; the build dir is not there.
        let temp = tempfile::Builder::new()
            .prefix(&format!("codex-{name}-"))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("create the case's temp dir");
        let root = Utf8PathBuf::from_path_buf(temp.path().canonicalize().unwrap()).unwrap();
        let case = CodexCase {
            home: root.join("home"),
            codex_home: root.join("codex"),
            project: root.join("proj"),
            root,
            _temp: temp,
        };
        for dir in [&case.home, &case.codex_home, &case.project] {
            fs::create_dir_all(dir).unwrap();
        }
        fs::write(
            case.codex_home.join("config.toml"),
            codex_offline::config_toml(&[case.project.as_std_path()]),
        )
        .unwrap();
        fs::write(case.root.join("codex_offline.py"), codex_offline::LAUNCHER).unwrap();
        case
    }

    /// The offline run of `codex <args>` in `dir`, with a clean environment.
    pub fn command(&self, cli: &Path, dir: &Utf8Path, args: &[&str]) -> Command {
        let mut command = clean_command("unshare");
        command
            .arg("-n")
            .arg("--")
            .arg("python3")
            .arg(self.root.join("codex_offline.py"))
            .args(["--port", &codex_offline::PORT.to_string(), "--log"])
            .arg(self.root.join("requests.log"))
            .arg("--")
            .arg(cli)
            .args(args)
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home)
            .env("MOCK_API_KEY", "dummy")
            .env("TMPDIR", &self.root)
            // Git, when Codex runs it, does not look past the case's dir into this checkout.
            .env("GIT_CEILING_DIRECTORIES", &self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }

    /// Runs `codex <args>` offline to its end (bounded by the deadline).
    pub fn run(&self, cli: &Path, args: &[&str]) -> Run {
        self.run_in(cli, &self.project, args)
    }

    /// [`Self::run`] in `dir`.
    pub fn run_in(&self, cli: &Path, dir: &Utf8Path, args: &[&str]) -> Run {
        let mut child = self
            .command(cli, dir, args)
            .spawn()
            .expect("cannot run unshare (util-linux), which isolates every Codex run");
        let mut stderr = child.stderr.take().unwrap();
        let (sender, receiver) = mpsc::channel();
        // The end of stderr is the end of the run: the event the deadline bounds.
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = sender.send(text);
        });
        let stderr = match receiver.recv_timeout(DEADLINE) {
            Ok(output) => output,
            Err(_) => {
                // The launcher ends Codex and reaps the namespace on SIGTERM.
                let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
                receiver.recv().unwrap_or_default()
            }
        };
        let status = child.wait().unwrap();
        let run = Run {
            code: status.code(),
            stderr,
        };
        assert_namespace_worked(&run);
        run
    }

    /// The requests the mock received, one `METHOD PATH` a line.
    pub fn requests(&self) -> Vec<String> {
        fs::read_to_string(self.root.join("requests.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Creates a session with `codex exec` and returns its id (from `session id: <id>`).
    pub fn new_session(&self, cli: &Path) -> String {
        let run = self.run(cli, &["exec", "--skip-git-repo-check", "hello"]);
        assert_eq!(run.code, Some(0), "codex exec failed: {run:?}");
        run.stderr
            .lines()
            .find_map(|line| line.strip_prefix("session id: "))
            .unwrap_or_else(|| panic!("codex exec printed no session id: {run:?}"))
            .trim()
            .to_string()
    }

    pub fn preflight(&self, session: &str) -> preflight::Outcome {
        preflight(&Input {
            provider: Some("codex".into()),
            session: Some(session.into()),
            cwd: Some(self.project.to_string()),
            config_dir: Some(self.codex_home.to_string()),
            home: Some(self.home.clone()),
            ..Input::default()
        })
    }
}

/// A run that could not get its namespace fails with that reason, never passes or skips.
fn assert_namespace_worked(run: &Run) {
    assert!(
        !run.stderr.contains("unshare failed") && !run.stderr.contains("unshare: "),
        "cannot create a network namespace for Codex (run as root, or allow unprivileged user \
         namespaces): {}",
        run.stderr
    );
    assert!(
        !matches!(run.code, Some(97 | 98)),
        "the offline launcher failed: {}",
        run.stderr
    );
}

/// The states of the table.
#[derive(Debug, Clone, Copy)]
enum State {
    Intact,
    RowMissing,
    RolloutDeleted,
    RolloutMoved,
    FirstLineCut,
    SessionMetaMissing,
    Empty,
    Archived,
    /// The working dir deleted; Codex runs from the home dir, where a restore starts it.
    CwdDeleted,
}

/// Puts the session in `state`; returns the rollout path the check looks at afterwards.
fn put_in_state(case: &CodexCase, cli: &Path, session: &str, state: State) -> Utf8PathBuf {
    let row = codex::thread_row(&case.codex_home, session)
        .unwrap()
        .expect("codex exec wrote a threads row");
    let rollout = row.rollout_path;
    let text = fs::read_to_string(&rollout).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    match state {
        State::Intact => {}
        State::RowMissing => {
            let db = rusqlite::Connection::open(case.codex_home.join(codex::STATE_DB)).unwrap();
            db.execute("DELETE FROM threads WHERE id = ?1", [session])
                .unwrap();
        }
        State::RolloutDeleted => fs::remove_file(&rollout).unwrap(),
        State::RolloutMoved => {
            let moved = case.codex_home.join("sessions/2025/01/02");
            fs::create_dir_all(&moved).unwrap();
            let target = moved.join(rollout.file_name().unwrap());
            fs::write(&target, &text).unwrap();
            fs::remove_file(&rollout).unwrap();
            return target;
        }
        State::FirstLineCut => {
            fs::write(&rollout, format!("{}\n{rest}", &first[..first.len() / 2])).unwrap()
        }
        State::SessionMetaMissing => fs::write(&rollout, rest).unwrap(),
        State::Empty => fs::write(&rollout, "").unwrap(),
        State::Archived => {
            let run = case.run(cli, &["archive", session]);
            assert_eq!(run.code, Some(0), "codex archive failed: {run:?}");
            let row = codex::thread_row(&case.codex_home, session)
                .unwrap()
                .unwrap();
            assert!(row.archived, "codex archive set `archived`");
            return row.rollout_path;
        }
        State::CwdDeleted => fs::remove_dir_all(&case.project).unwrap(),
    }
    rollout
}

fn lines(path: &Utf8Path) -> usize {
    fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// One row: the preflight's verdict, then what Codex does, which must agree; `refusal` is the
/// words Codex refuses with, or `None` when it resumes.
fn check(state: State, expected: Reachability, refusal: Option<&str>) {
    let cli = installed_cli();
    let case = CodexCase::new(&format!("{state:?}").to_lowercase());
    let session = case.new_session(&cli);
    let rollout = put_in_state(&case, &cli, &session, state);
    let located = codex::locate(&case.codex_home, &session);
    assert_eq!(
        located.reachability,
        expected,
        "{state:?}: {}",
        located.describe()
    );
    let outcome = case.preflight(&session);

    let before = lines(&rollout);
    let run_in = match state {
        State::CwdDeleted => &case.home,
        _ => &case.project,
    };
    let run = case.run_in(
        &cli,
        run_in,
        &["exec", "--skip-git-repo-check", "resume", &session, PROBE],
    );
    let appended = fs::read_to_string(&rollout).is_ok_and(|text| text.contains(PROBE));
    let resumed = run.code == Some(0) && appended;
    assert_eq!(
        outcome.verdict == Verdict::Resume,
        resumed,
        "{state:?}: preflight says {:?} ({:?}), Codex {}: {run:?}",
        outcome.verdict,
        outcome.steps.last().map(|step| &step.detail),
        if resumed { "resumed" } else { "did not resume" },
    );
    match refusal {
        None => {
            assert!(resumed, "{state:?}: Codex did not resume: {run:?}");
            assert!(
                lines(&rollout) > before,
                "{state:?}: appended to the same file"
            );
            let row = codex::thread_row(&case.codex_home, &session).unwrap();
            assert!(
                row.is_some(),
                "{state:?}: Codex keeps (or rebuilds) the row"
            );
        }
        Some(words) => {
            assert_eq!(run.code, Some(1), "{state:?}: {run:?}");
            assert!(
                run.stderr.contains(words),
                "{state:?}: expected {words:?} in {}",
                run.stderr
            );
        }
    }
    assert!(
        case.requests()
            .iter()
            .all(|line| line == "POST /v1/responses"),
        "Codex asked the mock for something else: {:?}",
        case.requests()
    );
}

#[test]
fn intact_resumes_and_appends_to_the_same_file() {
    check(State::Intact, Reachability::Reachable, None);
}

#[test]
fn row_missing_with_the_rollout_intact_resumes() {
    check(State::RowMissing, Reachability::Reachable, None);
}

#[test]
fn rollout_deleted_with_the_row_kept_is_not_found() {
    check(
        State::RolloutDeleted,
        Reachability::Missing,
        Some("no rollout found for thread id"),
    );
}

#[test]
fn rollout_moved_to_another_date_dir_follows_the_row_and_fails() {
    check(
        State::RolloutMoved,
        Reachability::Missing,
        Some("no rollout found for thread id"),
    );
}

#[test]
fn first_line_cut_is_refused() {
    check(
        State::FirstLineCut,
        Reachability::NoSessionMeta,
        Some("does not start with session metadata"),
    );
}

#[test]
fn session_meta_line_missing_is_refused() {
    check(
        State::SessionMetaMissing,
        Reachability::NoSessionMeta,
        Some("does not start with session metadata"),
    );
}

#[test]
fn empty_rollout_is_refused() {
    check(State::Empty, Reachability::Empty, Some("is empty"));
}

#[test]
fn archived_is_refused() {
    check(State::Archived, Reachability::Archived, Some("is archived"));
}

/// How Codex stores a session, as the preflight relies on it: the rollout's first line, the
/// `threads` row, the second database, and `session id:` on stderr.
#[test]
fn storage_is_as_measured() {
    let cli = installed_cli();
    let case = CodexCase::new("storage");
    let session = case.new_session(&cli);
    let row = codex::thread_row(&case.codex_home, &session)
        .unwrap()
        .expect("a threads row");
    assert_eq!(row.cwd, case.project.as_str());
    assert!(!row.archived);
    assert!(
        row.rollout_path
            .starts_with(case.codex_home.join("sessions"))
            && row
                .rollout_path
                .file_name()
                .is_some_and(|name| name.starts_with("rollout-")
                    && name.ends_with(&format!("-{session}.jsonl"))),
        "{}",
        row.rollout_path
    );
    let text = fs::read_to_string(&row.rollout_path).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "session_meta");
    assert_eq!(first["payload"]["session_id"], session.as_str());
    assert_eq!(first["payload"]["cwd"], case.project.as_str());
    assert_eq!(first["payload"]["cli_version"], CODEX_VERSION);
    assert!(case.codex_home.join("thread_history_1.sqlite").is_file());
    assert_eq!(case.requests(), vec!["POST /v1/responses".to_string()]);
}

#[test]
fn a_deleted_working_dir_resumes_from_the_home_dir() {
    check(State::CwdDeleted, Reachability::Reachable, None);
}
