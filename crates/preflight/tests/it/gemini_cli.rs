//! Conformance of the Gemini preflight with the real Gemini CLI 0.61.0 (installed by
//! `cargo xtask gemini-cli install`): one test per resume case of docs/preflight.md's Gemini
//! table, the preflight's verdict equal to the CLI's exit.
//!
//! Every Gemini run is offline (`test_support::gemini_offline`: `unshare -n`, loopback alone, a
//! mock of the model API on 127.0.0.1). Each case creates a session with `gemini -p`, puts its
//! file, project registry or working dir in the case's state, asks the preflight, then runs
//! `gemini --resume <id> -p <probe>`: exit 0 is a resume, exit 42 ("Invalid session identifier",
//! "No previous sessions found for this project") a miss. The preflight must say `resume`
//! exactly when Gemini exits 0.

use std::fs;
use std::path::Path;

use camino::Utf8PathBuf;
use preflight::{Input, StepId, Verdict, preflight};
use test_support::gemini_offline::{self, EXIT_NO_SESSION, Offline};

use crate::real_cli;

/// One case's dirs: Gemini's home and the project dir.
struct Case {
    _temp: tempfile::TempDir,
    root: Utf8PathBuf,
    project: Utf8PathBuf,
    gemini: Offline,
}

impl Case {
    fn new(name: &str, settings: serde_json::Value) -> Case {
        Case::with_settings_text(name, &gemini_offline::settings_json(settings))
    }

    /// A case whose `settings.json` is `settings` as written (comments and all).
    fn with_settings_text(name: &str, settings: &str) -> Case {
        let (temp, root, project) = real_cli::case_dirs("gemini", name);
        let gemini = Offline::new(
            gemini_offline::installed_cli(env!("CARGO_TARGET_TMPDIR")),
            root.as_std_path(),
            root.join("home").as_std_path(),
            settings,
        );
        Case {
            _temp: temp,
            root,
            project,
            gemini,
        }
    }

    fn home(&self) -> Utf8PathBuf {
        self.root.join("home")
    }

    /// Creates a session with `gemini -p` in `cwd`; returns its id and file.
    fn new_session(&self, cwd: &Path) -> (String, Utf8PathBuf) {
        let before = self.session_files();
        let run = self.gemini.run(cwd, &["-p", "hello"]);
        assert_eq!(run.code, Some(0), "gemini -p failed: {run:?}");
        let file = self
            .session_files()
            .into_iter()
            .find(|file| !before.contains(file))
            .unwrap_or_else(|| panic!("gemini -p wrote no session file: {run:?}"));
        let header: serde_json::Value =
            serde_json::from_str(fs::read_to_string(&file).unwrap().lines().next().unwrap())
                .unwrap();
        (header["sessionId"].as_str().unwrap().to_string(), file)
    }

    /// Every `session-*` file under Gemini's `tmp`.
    fn session_files(&self) -> Vec<Utf8PathBuf> {
        let mut files = Vec::new();
        let Ok(projects) = fs::read_dir(self.home().join(".gemini/tmp")) else {
            return files;
        };
        for project in projects.flatten() {
            let Ok(chats) = fs::read_dir(project.path().join("chats")) else {
                continue;
            };
            for file in chats.flatten() {
                if file.file_name().to_string_lossy().starts_with("session-") {
                    files.push(Utf8PathBuf::from_path_buf(file.path()).unwrap());
                }
            }
        }
        files.sort();
        files
    }

    fn preflight(&self, session: &str, cwd: &str) -> preflight::Outcome {
        preflight(&Input {
            agent: Some("gemini".into()),
            session: Some(session.into()),
            cwd: Some(cwd.into()),
            config_dir: Some(self.home().to_string()),
            home: Some(self.home()),
            ..Input::default()
        })
    }

    /// `gemini --resume <session> -p <probe>` in `cwd`: its exit code.
    fn resume(&self, session: &str, cwd: &Path) -> Option<i32> {
        let run = self
            .gemini
            .run(cwd, &["--resume", session, "-p", "crash-resume probe"]);
        real_cli::resumed_or_missed("gemini", &run, EXIT_NO_SESSION)
    }
}

/// The states of the table.
#[derive(Debug, Clone, Copy)]
enum State {
    Intact,
    UnknownId,
    EmptyFile,
    HeaderOnly,
    FirstLineTorn,
    LastLineTorn,
    Renamed,
    RewoundToStart,
    AnotherCwd,
    DirRecreated,
    RegistryLost,
    RegistryAndMarkersLost,
    NameTakenRegistryAndMarkersLost,
    CwdThroughSymlink,
    /// The working dir deleted; Gemini run from the home dir, where a restore starts it.
    CwdDeletedRunFromHome,
}

/// Puts the case in `state`, asks the preflight and Gemini, and holds them equal; returns
/// Gemini's exit code.
fn check(state: State) -> Option<i32> {
    let case = Case::new(&format!("{state:?}").to_lowercase(), serde_json::json!({}));
    if matches!(state, State::NameTakenRegistryAndMarkersLost) {
        // Another dir of the same name claims the slug `proj` first: this one gets `proj-1`.
        let elsewhere = case.root.join("elsewhere/proj");
        fs::create_dir_all(&elsewhere).unwrap();
        case.new_session(elsewhere.as_std_path());
    }
    let (mut session, file) = case.new_session(case.project.as_std_path());
    let mut cwd = case.project.clone();
    let text = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    match state {
        State::Intact => {}
        State::UnknownId => session = "00000000-0000-4000-8000-000000000000".to_string(),
        State::EmptyFile => fs::write(&file, "").unwrap(),
        State::HeaderOnly => fs::write(&file, format!("{}\n", lines[0])).unwrap(),
        State::FirstLineTorn => fs::write(&file, real_cli::first_line_torn(&lines)).unwrap(),
        State::LastLineTorn => fs::write(&file, real_cli::last_line_torn(&lines)).unwrap(),
        State::Renamed => {
            // A case's own file, not the index.
            #[allow(clippy::disallowed_methods)]
            fs::rename(&file, file.with_file_name("session-renamed.jsonl")).unwrap();
        }
        State::RewoundToStart => {
            let first_message = lines
                .iter()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .find_map(|record| Some(record.get("id")?.as_str()?.to_string()))
                .expect("a message record");
            fs::write(
                &file,
                format!("{text}{{\"$rewindTo\":\"{first_message}\"}}\n"),
            )
            .unwrap();
        }
        State::AnotherCwd => {
            cwd = case.root.join("other");
            fs::create_dir_all(&cwd).unwrap();
        }
        State::DirRecreated => {
            fs::remove_dir_all(&case.project).unwrap();
            fs::create_dir_all(&case.project).unwrap();
        }
        State::RegistryLost => fs::remove_file(case.home().join(".gemini/projects.json")).unwrap(),
        State::RegistryAndMarkersLost => {
            fs::remove_file(case.home().join(".gemini/projects.json")).unwrap();
            for base in ["tmp", "history"] {
                let marker = case
                    .home()
                    .join(".gemini")
                    .join(base)
                    .join("proj/.project_root");
                let _ = fs::remove_file(marker);
            }
        }
        State::NameTakenRegistryAndMarkersLost => {
            assert!(file.as_str().contains("/tmp/proj-1/chats/"), "{file}");
            fs::remove_file(case.home().join(".gemini/projects.json")).unwrap();
            for base in ["tmp", "history"] {
                let marker = case
                    .home()
                    .join(".gemini")
                    .join(base)
                    .join("proj-1/.project_root");
                let _ = fs::remove_file(marker);
            }
        }
        State::CwdThroughSymlink => {
            cwd = case.root.join("link");
            std::os::unix::fs::symlink(&case.project, &cwd).unwrap();
        }
        State::CwdDeletedRunFromHome => fs::remove_dir_all(&case.project).unwrap(),
    }
    let outcome = case.preflight(&session, cwd.as_str());
    let run_in = match state {
        State::CwdDeletedRunFromHome => case.home(),
        _ => cwd,
    };
    let code = case.resume(&session, run_in.as_std_path());
    real_cli::assert_verdict_is_exit("Gemini", state, &outcome, code);
    code
}

#[test]
fn intact_resumes() {
    assert_eq!(check(State::Intact), Some(0));
}

#[test]
fn an_unknown_id_is_refused() {
    assert_eq!(check(State::UnknownId), Some(EXIT_NO_SESSION));
}

#[test]
fn an_empty_file_is_refused() {
    assert_eq!(check(State::EmptyFile), Some(EXIT_NO_SESSION));
}

#[test]
fn a_header_alone_is_refused() {
    assert_eq!(check(State::HeaderOnly), Some(EXIT_NO_SESSION));
}

#[test]
fn a_torn_first_line_is_refused() {
    assert_eq!(check(State::FirstLineTorn), Some(EXIT_NO_SESSION));
}

#[test]
fn a_torn_last_line_resumes() {
    assert_eq!(check(State::LastLineTorn), Some(0));
}

#[test]
fn a_renamed_session_file_resumes() {
    assert_eq!(check(State::Renamed), Some(0));
}

#[test]
fn a_conversation_rewound_to_its_start_is_refused() {
    assert_eq!(check(State::RewoundToStart), Some(EXIT_NO_SESSION));
}

#[test]
fn another_working_dir_is_refused() {
    assert_eq!(check(State::AnotherCwd), Some(EXIT_NO_SESSION));
}

#[test]
fn a_deleted_and_recreated_dir_resumes() {
    assert_eq!(check(State::DirRecreated), Some(0));
}

#[test]
fn a_lost_registry_is_found_again_by_the_markers() {
    assert_eq!(check(State::RegistryLost), Some(0));
}

#[test]
fn a_lost_registry_and_markers_claim_the_same_slug_again() {
    assert_eq!(check(State::RegistryAndMarkersLost), Some(0));
}

#[test]
fn a_slug_taken_by_another_dir_is_claimed_again_with_its_suffix() {
    assert_eq!(check(State::NameTakenRegistryAndMarkersLost), Some(0));
}

#[test]
fn a_working_dir_through_a_symlink_is_the_physical_dir() {
    assert_eq!(check(State::CwdThroughSymlink), Some(0));
}

/// The cleanup hazard, measured: a resume in a later minute than the session's file was named
/// for (the file renamed to an earlier minute stands for a session begun earlier) leaves a stub
/// `session-<now>-<id8>.jsonl` with no conversation, even when a prompt is sent (it goes to the
/// old file); the next Gemini start in the dir deletes the stub and the conversation with it.
/// The preflight's cleanup step says so before the resume and names the stub after it, and is
/// silent with `general.sessionRetention.enabled = false`, which keeps both, also when the
/// settings hold comments (Gemini strips `//` and `/* */` before it parses them).
#[test]
fn the_start_up_cleanup_deletes_a_resumed_conversation_and_the_preflight_says_so() {
    let cleanup = |outcome: &preflight::Outcome| {
        outcome
            .steps
            .iter()
            .find(|step| step.id == StepId::Cleanup)
            .map(|step| step.detail.clone())
    };
    // A session whose file is named for an earlier minute, resumed now: the stub appears.
    let resumed_later = |case: &Case| -> (String, Utf8PathBuf, Utf8PathBuf) {
        let (session, file) = case.new_session(case.project.as_std_path());
        let earlier =
            file.with_file_name(format!("session-2020-01-01T00-00-{}.jsonl", &session[..8]));
        // A case's own file, not the index.
        #[allow(clippy::disallowed_methods)]
        fs::rename(&file, &earlier).unwrap();
        assert_eq!(case.resume(&session, case.project.as_std_path()), Some(0));
        let stubs: Vec<Utf8PathBuf> = case
            .session_files()
            .into_iter()
            .filter(|path| {
                *path != earlier
                    && path
                        .as_str()
                        .ends_with(&format!("-{}.jsonl", &session[..8]))
            })
            .collect();
        assert_eq!(stubs.len(), 1, "the resume left one stub: {stubs:?}");
        let stub = stubs[0].clone();
        let text = fs::read_to_string(&stub).unwrap();
        assert!(
            !text.contains("crash-resume probe"),
            "the prompt went to the old file: {text}"
        );
        assert!(
            fs::read_to_string(&earlier)
                .unwrap()
                .contains("crash-resume probe")
        );
        (session, earlier, stub)
    };

    let case = Case::new("cleanup", serde_json::json!({}));
    let (session, file, stub) = resumed_later(&case);
    let at_risk = case.preflight(&session, case.project.as_str());
    assert_eq!(at_risk.verdict, Verdict::Resume);
    let named = cleanup(&at_risk).expect("the cleanup step is there while the cleanup is on");
    assert!(named.contains(stub.file_name().unwrap()), "{named}");
    // The next start of any Gemini in the dir deletes the stub and the conversation.
    let other = case
        .gemini
        .run(case.project.as_std_path(), &["-p", "another"]);
    assert_eq!(other.code, Some(0), "{other:?}");
    assert!(!stub.exists() && !file.exists(), "the cleanup kept them");
    assert_eq!(
        case.resume(&session, case.project.as_std_path()),
        Some(EXIT_NO_SESSION)
    );
    assert_eq!(
        case.preflight(&session, case.project.as_str()).verdict,
        Verdict::Fresh
    );

    // With the cleanup off, the same stub takes nothing with it, and the step is not there.
    // The settings hold comments, which Gemini strips before it parses them.
    let settings = gemini_offline::settings_json(
        serde_json::json!({ "general": { "sessionRetention": { "enabled": false } } }),
    );
    let commented = format!(
        "// the user's own notes\n{}",
        settings.replacen('{', "{ /* \"enabled\": true was the default */", 1)
    );
    assert!(serde_json::from_str::<serde_json::Value>(&commented).is_err());
    let off = Case::with_settings_text("cleanup-off", &commented);
    let (session, file, stub) = resumed_later(&off);
    let outcome = off.preflight(&session, off.project.as_str());
    assert_eq!(cleanup(&outcome), None);
    let other = off
        .gemini
        .run(off.project.as_std_path(), &["-p", "another"]);
    assert_eq!(other.code, Some(0), "{other:?}");
    assert!(file.exists() && stub.exists());
    assert_eq!(off.resume(&session, off.project.as_std_path()), Some(0));
}

#[test]
fn a_deleted_working_dir_run_from_the_home_dir_is_refused() {
    assert_eq!(check(State::CwdDeletedRunFromHome), Some(EXIT_NO_SESSION));
}
