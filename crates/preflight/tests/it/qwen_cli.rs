//! Conformance of the Qwen Code preflight with the real Qwen Code 0.24.4 (installed by
//! `cargo xtask qwen-cli install`): one test per state of docs/preflight.md's Qwen Code table,
//! the preflight's verdict equal to the CLI's exit.
//!
//! Every Qwen Code run is offline (`test_support::qwen_offline`: `unshare -n`, loopback alone,
//! a mock of the OpenAI API on 127.0.0.1). Each case creates a session with `qwen -p`, puts its
//! file or working dir in the case's state, asks the preflight (with the config dir the hook
//! records: `QWEN_HOME` resolved, else from the `.env` files, else `~/.qwen`), then runs
//! `qwen --resume <id> -p <probe>`: exit 0 is a resume, exit 1 ("No saved session found with
//! ID …") a miss. The preflight must say `resume` exactly when Qwen Code exits 0.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};
use preflight::{Input, Verdict, preflight};
use test_support::qwen_offline::{self, EXIT_NO_SESSION, Offline};

use crate::real_cli;

/// One case's dirs: the home and the project dir, and Qwen Code set up there.
struct Case {
    _temp: tempfile::TempDir,
    root: Utf8PathBuf,
    project: Utf8PathBuf,
    qwen: Offline,
}

impl Case {
    fn new(name: &str, settings: serde_json::Value) -> Case {
        let (temp, root, project) = real_cli::case_dirs("qwen", name);
        let qwen = Offline::new(
            qwen_offline::installed_cli(env!("CARGO_TARGET_TMPDIR")),
            root.as_std_path(),
            root.join("home").as_std_path(),
            &qwen_offline::settings_json(settings),
        );
        Case {
            _temp: temp,
            root,
            project,
            qwen,
        }
    }

    fn home(&self) -> Utf8PathBuf {
        self.root.join("home")
    }

    /// Creates a session with `qwen -p` in `cwd`; returns its id and file.
    fn new_session(&self, cwd: &Utf8Path) -> (String, Utf8PathBuf) {
        let before = self.session_files();
        let run = self.qwen.run(cwd.as_std_path(), &["-p", "hello"]);
        assert_eq!(run.code, Some(0), "qwen -p failed: {run:?}");
        let file = self
            .session_files()
            .into_iter()
            .find(|file| !before.contains(file))
            .unwrap_or_else(|| panic!("qwen -p wrote no session file: {run:?}"));
        let session = file.file_stem().unwrap().to_string();
        (session, file)
    }

    /// Every active `chats/<id>.jsonl` under the case's root.
    fn session_files(&self) -> Vec<Utf8PathBuf> {
        let mut files = Vec::new();
        let mut dirs = vec![self.root.clone()];
        while let Some(dir) = dirs.pop() {
            let Ok(listing) = fs::read_dir(&dir) else {
                continue;
            };
            for item in listing.flatten() {
                let path = Utf8PathBuf::from_path_buf(item.path()).unwrap();
                let Ok(kind) = item.file_type() else { continue };
                if kind.is_dir() {
                    dirs.push(path);
                } else if path.parent().and_then(Utf8Path::file_name) == Some("chats")
                    && path.extension() == Some("jsonl")
                {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }

    /// The config dir the hook records for a Qwen Code started in `cwd` with this case's
    /// variables.
    fn config_dir(&self, cwd: &Utf8Path) -> Utf8PathBuf {
        let variable = self
            .qwen
            .extra
            .iter()
            .find(|(name, _)| *name == "QWEN_HOME")
            .map(|(_, value)| value.as_str());
        preflight::qwen::config_dir(variable, Some(cwd), Some(&self.home())).unwrap()
    }

    fn preflight(&self, session: &str, cwd: &Utf8Path, recorded_in: &Utf8Path) -> Verdict {
        preflight(&Input {
            agent: Some("qwen".into()),
            session: Some(session.into()),
            cwd: Some(cwd.to_string()),
            config_dir: Some(self.config_dir(recorded_in).to_string()),
            home: Some(self.home()),
            ..Input::default()
        })
        .verdict
    }

    /// `qwen --resume <session> -p <probe>` in `cwd`: its exit code.
    fn resume(&self, session: &str, cwd: &Path) -> Option<i32> {
        let run = self
            .qwen
            .run(cwd, &["--resume", session, "-p", "crash-resume probe"]);
        real_cli::resumed_or_missed("qwen", &run, EXIT_NO_SESSION)
    }
}

/// The states of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Intact,
    FirstPromptOnly,
    FirstLineTorn,
    LastLineTorn,
    MiddleLineTorn,
    CwdThroughSymlink,
    FortyDaysOld,
    UnknownId,
    EmptyFile,
    NotJson,
    Deleted,
    OnlyLineTorn,
    Archived,
    Subdir,
    AnotherProjectsId,
    SlugCollision,
    QwenHomeAbsolute,
    QwenHomeTilde,
    QwenHomeRelative,
    QwenHomeInHomeEnvFile,
    RuntimeDirSetting,
    RuntimeDirSettingRelative,
    RuntimeDirInEnvFileOverSetting,
    /// The working dir deleted; Qwen Code run from the home dir, where a restore starts it.
    CwdDeletedRunFromHome,
}

/// Puts the case in `state`, asks the preflight and Qwen Code, and holds them equal; returns
/// Qwen Code's exit code.
fn check(state: State) -> Option<i32> {
    let name = format!("{state:?}").to_lowercase();
    let mut case = match state {
        State::RuntimeDirSetting | State::RuntimeDirInEnvFileOverSetting => Case::new(
            &name,
            serde_json::json!({ "advanced": { "runtimeOutputDir": "~/runtime-set" } }),
        ),
        State::RuntimeDirSettingRelative => Case::new(
            &name,
            serde_json::json!({ "advanced": { "runtimeOutputDir": ".qwen-runtime" } }),
        ),
        _ => Case::new(&name, serde_json::json!({})),
    };
    let home = case.home();
    // A config dir elsewhere, with the same settings as `~/.qwen`.
    let moved_config = |dir: &Utf8Path| {
        fs::create_dir_all(dir).unwrap();
        fs::copy(home.join(".qwen/settings.json"), dir.join("settings.json")).unwrap();
    };
    match state {
        State::QwenHomeAbsolute => {
            moved_config(&case.root.join("qh"));
            case.qwen
                .extra
                .push(("QWEN_HOME", case.root.join("qh").to_string()));
        }
        State::QwenHomeTilde => {
            moved_config(&home.join("qh"));
            case.qwen.extra.push(("QWEN_HOME", "~/qh".to_string()));
        }
        State::QwenHomeRelative => {
            moved_config(&case.project.join("qh"));
            case.qwen.extra.push(("QWEN_HOME", "qh".to_string()));
        }
        State::QwenHomeInHomeEnvFile => {
            moved_config(&case.root.join("from-env"));
            let line = format!("QWEN_HOME={}\n", case.root.join("from-env"));
            fs::write(home.join(".env"), line).unwrap();
        }
        State::RuntimeDirInEnvFileOverSetting => {
            let line = format!("QWEN_RUNTIME_DIR={}\n", case.root.join("runtime-env"));
            fs::write(home.join(".qwen/.env"), line).unwrap();
        }
        _ => {}
    }
    let made_in = match state {
        State::SlugCollision => {
            let dashed = case.root.join("x-y");
            fs::create_dir_all(&dashed).unwrap();
            dashed
        }
        _ => case.project.clone(),
    };
    let (mut session, file) = case.new_session(&made_in);
    let expected_home = match state {
        State::QwenHomeAbsolute => Some(case.root.join("qh")),
        State::QwenHomeTilde => Some(home.join("qh")),
        State::QwenHomeRelative => Some(case.project.join("qh")),
        State::QwenHomeInHomeEnvFile => Some(case.root.join("from-env")),
        State::RuntimeDirSetting => Some(home.join("runtime-set")),
        State::RuntimeDirSettingRelative => Some(case.project.join(".qwen-runtime")),
        State::RuntimeDirInEnvFileOverSetting => Some(case.root.join("runtime-env")),
        _ => None,
    };
    if let Some(dir) = expected_home {
        assert!(file.starts_with(dir.join("projects")), "{state:?}: {file}");
    }
    let mut cwd = made_in.clone();
    let text = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "{text}");
    match state {
        State::FirstPromptOnly => fs::write(&file, format!("{}\n", lines[0])).unwrap(),
        State::FirstLineTorn => fs::write(&file, real_cli::first_line_torn(&lines)).unwrap(),
        State::LastLineTorn => fs::write(&file, real_cli::last_line_torn(&lines)).unwrap(),
        State::MiddleLineTorn => {
            let mut torn: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
            let middle = lines.len() / 2;
            torn[middle] = lines[middle][..lines[middle].len() / 2].to_string();
            fs::write(&file, torn.join("\n") + "\n").unwrap();
        }
        State::CwdThroughSymlink => {
            cwd = case.root.join("link");
            std::os::unix::fs::symlink(&case.project, &cwd).unwrap();
        }
        State::FortyDaysOld => {
            let old = SystemTime::now() - Duration::from_secs(40 * 24 * 3600);
            fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        State::UnknownId => session = "00000000-0000-4000-8000-000000000000".to_string(),
        State::EmptyFile => fs::write(&file, "").unwrap(),
        State::NotJson => fs::write(&file, "not json\nat all\n").unwrap(),
        State::Deleted => fs::remove_file(&file).unwrap(),
        State::OnlyLineTorn => {
            fs::write(&file, &lines[0][..lines[0].len() / 2]).unwrap();
        }
        State::Archived => {
            let archive = file.parent().unwrap().join("archive");
            fs::create_dir_all(&archive).unwrap();
            // A case's own file, not the index.
            #[allow(clippy::disallowed_methods)]
            fs::rename(&file, archive.join(file.file_name().unwrap())).unwrap();
        }
        State::Subdir => {
            cwd = case.project.join("sub");
            fs::create_dir_all(&cwd).unwrap();
        }
        State::AnotherProjectsId => {
            cwd = case.root.join("other");
            fs::create_dir_all(&cwd).unwrap();
        }
        State::SlugCollision => {
            cwd = case.root.join("x/y");
            fs::create_dir_all(&cwd).unwrap();
        }
        State::CwdDeletedRunFromHome => fs::remove_dir_all(&case.project).unwrap(),
        _ => {}
    }
    let verdict = case.preflight(&session, &cwd, &made_in);
    let run_in = match state {
        State::CwdDeletedRunFromHome => case.home(),
        _ => cwd,
    };
    let code = case.resume(&session, run_in.as_std_path());
    assert_eq!(
        verdict == Verdict::Resume,
        code == Some(0),
        "{state:?}: the preflight said {verdict:?}, Qwen Code exited {code:?}"
    );
    code
}

#[test]
fn intact_resumes() {
    assert_eq!(check(State::Intact), Some(0));
}

#[test]
fn only_the_first_prompts_line_resumes() {
    assert_eq!(check(State::FirstPromptOnly), Some(0));
}

#[test]
fn a_torn_first_line_resumes() {
    assert_eq!(check(State::FirstLineTorn), Some(0));
}

#[test]
fn a_torn_last_line_resumes() {
    assert_eq!(check(State::LastLineTorn), Some(0));
}

#[test]
fn a_torn_middle_line_resumes() {
    assert_eq!(check(State::MiddleLineTorn), Some(0));
}

#[test]
fn a_working_dir_through_a_symlink_is_the_physical_dir() {
    assert_eq!(check(State::CwdThroughSymlink), Some(0));
}

#[test]
fn a_forty_day_old_session_resumes() {
    assert_eq!(check(State::FortyDaysOld), Some(0));
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
fn a_file_that_is_not_json_is_refused() {
    assert_eq!(check(State::NotJson), Some(EXIT_NO_SESSION));
}

#[test]
fn a_deleted_file_is_refused() {
    assert_eq!(check(State::Deleted), Some(EXIT_NO_SESSION));
}

#[test]
fn a_file_whose_only_line_is_torn_is_refused() {
    assert_eq!(check(State::OnlyLineTorn), Some(EXIT_NO_SESSION));
}

#[test]
fn an_archived_session_is_refused() {
    assert_eq!(check(State::Archived), Some(EXIT_NO_SESSION));
}

#[test]
fn a_subdir_of_the_project_is_refused() {
    assert_eq!(check(State::Subdir), Some(EXIT_NO_SESSION));
}

#[test]
fn another_projects_id_is_refused() {
    assert_eq!(check(State::AnotherProjectsId), Some(EXIT_NO_SESSION));
}

#[test]
fn a_slug_shared_with_another_dir_is_told_apart_by_the_first_records_cwd() {
    assert_eq!(check(State::SlugCollision), Some(EXIT_NO_SESSION));
}

#[test]
fn qwen_home_absolute_is_the_config_dir() {
    assert_eq!(check(State::QwenHomeAbsolute), Some(0));
}

#[test]
fn qwen_home_with_a_tilde_is_under_the_home_dir() {
    assert_eq!(check(State::QwenHomeTilde), Some(0));
}

#[test]
fn a_relative_qwen_home_is_resolved_against_the_working_dir() {
    assert_eq!(check(State::QwenHomeRelative), Some(0));
}

#[test]
fn qwen_home_from_the_home_env_file_counts() {
    assert_eq!(check(State::QwenHomeInHomeEnvFile), Some(0));
}

#[test]
fn the_runtime_output_dir_setting_holds_the_sessions() {
    assert_eq!(check(State::RuntimeDirSetting), Some(0));
}

#[test]
fn a_relative_runtime_output_dir_is_resolved_against_the_working_dir() {
    assert_eq!(check(State::RuntimeDirSettingRelative), Some(0));
}

#[test]
fn qwen_runtime_dir_from_the_env_file_comes_before_the_setting() {
    assert_eq!(check(State::RuntimeDirInEnvFileOverSetting), Some(0));
}

#[test]
fn a_deleted_working_dir_run_from_the_home_dir_is_refused() {
    assert_eq!(check(State::CwdDeletedRunFromHome), Some(EXIT_NO_SESSION));
}
