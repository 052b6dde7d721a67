//! Conformance of the Copilot preflight with the real GitHub Copilot CLI 1.0.102 (installed by
//! `cargo xtask copilot-cli install`): one test per resume case of docs/preflight.md's Copilot
//! table, the preflight's verdict equal to the CLI's exit.
//!
//! Every Copilot run is offline (`test_support::copilot_offline`: `unshare -n`, loopback alone,
//! a mock of a chat-completions provider on 127.0.0.1, `COPILOT_OFFLINE=true`). Each case
//! creates a session with `copilot -p`, puts its dir in the case's state, asks the preflight,
//! then runs `copilot --resume=<id> -p <probe>`: exit 0 is a resume, exit 1 ("No session, task,
//! or name matched", "was found but could not be loaded") a miss. The preflight must say
//! `resume` exactly when Copilot exits 0.

use std::fs;

use camino::{Utf8Path, Utf8PathBuf};
use preflight::{Input, preflight};
use test_support::copilot_offline::{self, Offline};

use crate::real_cli;

/// Copilot's exit code when `--resume` finds no session it can load.
const EXIT_NOT_RESUMED: i32 = 1;

/// One case's dirs: the home (`COPILOT_HOME` is its `.copilot`) and the project dir.
struct Case {
    _temp: tempfile::TempDir,
    root: Utf8PathBuf,
    project: Utf8PathBuf,
    copilot: Offline,
}

impl Case {
    fn new(name: &str) -> Case {
        let (temp, root, project) = real_cli::case_dirs("copilot", name);
        let copilot = Offline::new(
            copilot_offline::installed_cli(env!("CARGO_TARGET_TMPDIR")),
            root.as_std_path(),
            root.join("home").as_std_path(),
        );
        Case {
            _temp: temp,
            root,
            project,
            copilot,
        }
    }

    /// Creates a session with `copilot -p` in the project; returns its id.
    fn new_session(&self) -> String {
        let before = self.copilot.sessions();
        let run = self.copilot.run(
            self.project.as_std_path(),
            &["-p", "hello", "--allow-all-tools"],
        );
        assert_eq!(run.code, Some(0), "copilot -p failed: {run:?}");
        self.copilot
            .sessions()
            .into_iter()
            .find(|session| !before.contains(session))
            .unwrap_or_else(|| panic!("copilot -p made no session dir: {run:?}"))
    }

    fn session_dir(&self, session: &str) -> Utf8PathBuf {
        Utf8PathBuf::from_path_buf(
            self.copilot
                .copilot_home
                .join("session-state")
                .join(session),
        )
        .unwrap()
    }

    fn preflight(&self, session: &str) -> preflight::Outcome {
        preflight(&Input {
            agent: Some("copilot".into()),
            session: Some(session.into()),
            cwd: Some(self.project.to_string()),
            config_dir: Some(self.copilot.copilot_home.display().to_string()),
            home: Some(self.home()),
            ..Input::default()
        })
    }

    /// The home dir its runs are given.
    fn home(&self) -> Utf8PathBuf {
        self.root.join("home")
    }

    /// `copilot --resume=<session> -p <probe>`, run from `dir`: its exit code.
    fn resume(&self, session: &str, dir: &Utf8Path) -> Option<i32> {
        let run = self.copilot.run(
            dir.as_std_path(),
            &[
                &format!("--resume={session}"),
                "-p",
                "crash-resume probe",
                "--allow-all-tools",
            ],
        );
        real_cli::resumed_or_missed("copilot", &run, EXIT_NOT_RESUMED)
    }
}

/// The states of the table.
#[derive(Debug, Clone, Copy)]
enum State {
    Intact,
    UnknownId,
    LastLineTorn,
    GarbageMiddleLine,
    NoShutdown,
    WorkspaceYamlDeleted,
    StaleLockOfAKilledProcess,
    CwdDeleted,
    EmptyEvents,
    EventsDeleted,
    FirstLineTorn,
}

/// Puts the case in `state`, asks the preflight and Copilot, and holds them equal; returns
/// Copilot's exit code.
fn check(state: State) -> Option<i32> {
    let case = Case::new(&format!("{state:?}").to_lowercase());
    let mut session = case.new_session();
    let dir = case.session_dir(&session);
    let events = dir.join("events.jsonl");
    let text = fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.last().unwrap().contains("\"session.shutdown\""),
        "a -p run ends with session.shutdown: {text}"
    );
    match state {
        State::Intact => {}
        State::UnknownId => session = "00000000-0000-4000-8000-000000000000".to_string(),
        State::LastLineTorn => fs::write(&events, real_cli::last_line_torn(&lines)).unwrap(),
        State::GarbageMiddleLine => {
            let (head, tail) = lines.split_at(lines.len() / 2);
            let text = format!("{}\nnot json {{\n{}\n", head.join("\n"), tail.join("\n"));
            fs::write(&events, text).unwrap();
        }
        State::NoShutdown => {
            fs::write(
                &events,
                format!("{}\n", lines[..lines.len() - 1].join("\n")),
            )
            .unwrap();
        }
        State::WorkspaceYamlDeleted => fs::remove_file(dir.join("workspace.yaml")).unwrap(),
        State::StaleLockOfAKilledProcess => {
            // What a SIGKILLed Copilot leaves: its lock and hold files, and no shutdown event.
            fs::write(
                &events,
                format!("{}\n", lines[..lines.len() - 1].join("\n")),
            )
            .unwrap();
            fs::write(dir.join("inuse.999999999.lock"), "").unwrap();
            fs::write(dir.join("inuse.999999999.hold"), "").unwrap();
        }
        State::CwdDeleted => fs::remove_dir_all(&case.project).unwrap(),
        State::EmptyEvents => fs::write(&events, "").unwrap(),
        State::EventsDeleted => fs::remove_file(&events).unwrap(),
        State::FirstLineTorn => fs::write(&events, real_cli::first_line_torn(&lines)).unwrap(),
    }
    let outcome = case.preflight(&session);
    // From the case's root; with the working dir gone, from the home dir, where a restore
    // starts it.
    let run_in = match state {
        State::CwdDeleted => case.home(),
        _ => case.root.clone(),
    };
    let code = case.resume(&session, &run_in);
    real_cli::assert_verdict_is_exit("Copilot", state, &outcome, code);
    code
}

#[test]
fn intact_resumes() {
    assert_eq!(check(State::Intact), Some(0));
}

#[test]
fn an_unknown_id_is_refused() {
    assert_eq!(check(State::UnknownId), Some(EXIT_NOT_RESUMED));
}

#[test]
fn a_torn_last_line_resumes() {
    assert_eq!(check(State::LastLineTorn), Some(0));
}

#[test]
fn a_garbage_middle_line_resumes() {
    assert_eq!(check(State::GarbageMiddleLine), Some(0));
}

#[test]
fn no_shutdown_event_resumes() {
    assert_eq!(check(State::NoShutdown), Some(0));
}

#[test]
fn a_deleted_workspace_yaml_resumes() {
    assert_eq!(check(State::WorkspaceYamlDeleted), Some(0));
}

#[test]
fn a_killed_processs_stale_lock_resumes() {
    assert_eq!(check(State::StaleLockOfAKilledProcess), Some(0));
}

#[test]
fn a_deleted_working_dir_resumes_from_the_home_dir() {
    assert_eq!(check(State::CwdDeleted), Some(0));
}

#[test]
fn an_empty_events_file_is_refused() {
    assert_eq!(check(State::EmptyEvents), Some(EXIT_NOT_RESUMED));
}

#[test]
fn a_deleted_events_file_is_refused() {
    assert_eq!(check(State::EventsDeleted), Some(EXIT_NOT_RESUMED));
}

#[test]
fn a_torn_first_line_is_refused() {
    assert_eq!(check(State::FirstLineTorn), Some(EXIT_NOT_RESUMED));
}

#[test]
fn print_mode_runs_offline_against_the_mock_and_writes_its_session() {
    let case = Case::new("print");
    let session = case.new_session();
    let dir = case.session_dir(&session);
    let events = fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "session.start");
    assert_eq!(first["data"]["sessionId"], session.as_str());
    assert_eq!(first["data"]["context"]["cwd"], case.project.as_str());
    assert!(dir.join("workspace.yaml").is_file());
    let requests = fs::read_to_string(case.copilot.root.join("requests.log")).unwrap();
    assert!(
        requests.contains("POST /v1/chat/completions"),
        "Copilot did not call the mock: {requests}"
    );
}
