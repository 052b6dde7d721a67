//! Conformance of the Copilot preflight with the real GitHub Copilot CLI 1.0.102 (installed by
//! `cargo xtask copilot-cli install`).
//!
//! Every Copilot run is offline (`test_support::copilot_offline`: `unshare -n`, loopback alone,
//! a mock of a chat-completions provider on 127.0.0.1, `COPILOT_OFFLINE=true`).

use std::fs;

use camino::Utf8PathBuf;
use test_support::copilot_offline::{self, Offline};

/// One case's dirs: the home (`COPILOT_HOME` is its `.copilot`) and the project dir.
struct Case {
    _temp: tempfile::TempDir,
    project: Utf8PathBuf,
    copilot: Offline,
}

impl Case {
    fn new(name: &str) -> Case {
        let temp = tempfile::Builder::new()
            .prefix(&format!("copilot-{name}-"))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("create the case's temp dir");
        let root = Utf8PathBuf::from_path_buf(temp.path().canonicalize().unwrap()).unwrap();
        let project = root.join("proj");
        fs::create_dir_all(&project).unwrap();
        let copilot = Offline::new(
            copilot_offline::installed_cli(env!("CARGO_TARGET_TMPDIR")),
            root.as_std_path(),
            root.join("home").as_std_path(),
        );
        Case {
            _temp: temp,
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
}

#[test]
fn print_mode_runs_offline_against_the_mock_and_writes_its_session() {
    let case = Case::new("print");
    let session = case.new_session();
    let dir = case
        .copilot
        .copilot_home
        .join("session-state")
        .join(&session);
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
