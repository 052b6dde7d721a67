//! The WezTerm backend against a fake `wezterm` program that records each call's argv (one file
//! per call, arguments NUL-separated) and answers `list` from a file.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mux::wezterm::Wezterm;
use mux::{Backend, Created, MuxError, Opened, Start, Surface};

/// A fake `wezterm` in a temp dir: records argv, answers `list` with `panes`, `spawn` with a
/// pane id; `hang` makes every call wait past any deadline.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(panes: &str, hang: bool) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("list.json"), panes).unwrap();
        let script = format!(
            "#!/bin/sh\n\
             dir='{dir}'\n\
             i=0; while [ -e \"$dir/call$i\" ]; do i=$((i+1)); done\n\
             printf '%s\\0' \"$@\" > \"$dir/call$i\"\n\
             {hang}\
             case \"$3\" in list) cat \"$dir/list.json\";; spawn) echo 9;; esac\n",
            dir = dir.path().display(),
            hang = if hang { "exec sleep 30\n" } else { "" },
        );
        let program = dir.path().join("wezterm");
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        Fake { dir }
    }

    fn program(&self) -> PathBuf {
        self.dir.path().join("wezterm")
    }

    fn backend(&self, deadline: Duration) -> Wezterm {
        Wezterm::new(Some(self.program()), deadline, Some("/bin/true".into()))
    }

    /// Every call's argv, in order.
    fn calls(&self) -> Vec<Vec<String>> {
        (0..)
            .map(|n| self.dir.path().join(format!("call{n}")))
            .take_while(|path| path.exists())
            .map(|path| {
                std::fs::read_to_string(path)
                    .unwrap()
                    .split_terminator('\0')
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    }
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

const SURFACE_ENV: &str = "CRASH_RESUME_SURFACE";

fn open(backend: &Wezterm, surface: &str, dir: Option<&str>) -> Result<Opened, MuxError> {
    let surface = Surface::parse(surface).unwrap();
    let shown = surface.to_string();
    backend.open(&Start {
        surface: &surface,
        dir,
        command: "claude --resume s-1",
        env: &[(SURFACE_ENV, &shown)],
    })
}

#[test]
fn an_existing_pane_gets_a_tab_beside_it_and_a_gone_one_a_new_window() {
    let fake = Fake::new(
        r#"[{"window_id":0,"tab_id":0,"pane_id":3,"cwd":"file:///w"}]"#,
        false,
    );
    let backend = fake.backend(Duration::from_secs(5));
    assert_eq!(backend.busy(&Surface::parse("wezterm:3").unwrap()), None);
    let opened = open(&backend, "wezterm:3", Some("/w")).unwrap();
    assert_eq!(
        opened,
        Opened::Started {
            created: vec![Created::Tab]
        }
    );
    let opened = open(&backend, "wezterm:8", None).unwrap();
    assert_eq!(
        opened,
        Opened::Started {
            created: vec![Created::Window]
        }
    );
    let script = |surface: &str, dir: Option<&str>| {
        mux::script::start_script(
            &[(SURFACE_ENV, surface)],
            dir,
            "claude --resume s-1",
            "/bin/true",
        )
    };
    let list = argv(&["cli", "--no-auto-start", "list", "--format", "json"]);
    let beside = script("wezterm:3", Some("/w"));
    let window = script("wezterm:8", None);
    assert_eq!(
        fake.calls(),
        [
            list.clone(),
            argv(&[
                "cli",
                "--no-auto-start",
                "spawn",
                "--pane-id",
                "3",
                "--",
                "/bin/sh",
                "-c",
                &beside
            ]),
            list,
            argv(&[
                "cli",
                "--no-auto-start",
                "spawn",
                "--new-window",
                "--",
                "/bin/sh",
                "-c",
                &window
            ]),
        ]
    );
}

#[test]
fn recorded_values_reach_the_started_program_as_inert_text() {
    let fake = Fake::new("[]", false);
    let backend = fake.backend(Duration::from_secs(5));
    let work = tempfile::tempdir().unwrap();
    let dir = work
        .path()
        .join("$(touch pwned); `touch pwned2` \u{1b}]0;x\u{7}");
    std::fs::create_dir(&dir).unwrap();
    let surface = "wezterm:1;touch pwned3";
    open(&backend, surface, Some(dir.to_str().unwrap())).unwrap();
    // Run what WezTerm would run (the argv after `--`), with a command that says where it is
    // and what it was given.
    let calls = fake.calls();
    let spawn = calls.last().unwrap();
    let program = &spawn[spawn.iter().position(|word| word == "--").unwrap() + 1..];
    let script = program[2].replace(
        "claude --resume s-1",
        "pwd > \"$HOME/where\"; printf %s \"$CRASH_RESUME_SURFACE\" > \"$HOME/surface\"",
    );
    let status = std::process::Command::new(&program[0])
        .args([&program[1], &script])
        .env("HOME", work.path())
        .current_dir(work.path())
        .status()
        .unwrap();
    assert!(status.success());
    let read = |name: &str| std::fs::read_to_string(work.path().join(name)).unwrap();
    assert_eq!(read("where").trim_end(), dir.to_str().unwrap());
    assert_eq!(read("surface"), surface);
    for name in ["pwned", "pwned2", "pwned3"] {
        assert!(
            !exists(&work.path().join(name)) && !exists(&dir.join(name)),
            "{name}"
        );
    }
}

fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn a_wezterm_that_does_not_answer_is_asked_once() {
    let fake = Fake::new("[]", true);
    let backend = fake.backend(Duration::from_millis(300));
    let error = open(&backend, "wezterm:3", None).unwrap_err();
    assert!(
        matches!(&error, MuxError::Unanswered { again: false, said } if said.contains("`wezterm cli list`")),
        "{error}"
    );
    let error = open(&backend, "wezterm:4", None).unwrap_err();
    assert!(
        matches!(error, MuxError::Unanswered { again: true, .. }),
        "{error}"
    );
    assert_eq!(fake.calls().len(), 1, "not asked again");
    assert!(backend.unanswered().is_some());
}

/// A pane id recorded under a WezTerm that is gone names whichever pane the running one
/// numbered so: the new tab is no longer placed beside it, but in a new window. A surface of
/// the running instance (here, this test's own process stands for it) still gets its tab.
#[test]
fn a_pane_of_a_wezterm_that_is_gone_gets_a_new_window() {
    let fake = Fake::new(
        r#"[{"window_id":0,"tab_id":0,"pane_id":3,"cwd":"file:///w"}]"#,
        false,
    );
    let backend = fake.backend(Duration::from_secs(5));
    let own = std::process::id();
    let mark = proc_table::table()
        .start_mark(own, std::time::Instant::now() + Duration::from_secs(5))
        .unwrap();
    let running = format!("wezterm:{own}-{mark}:3");
    let gone = format!("wezterm:{own}-{}:3", mark + 1);
    for (surface, created) in [(&gone, Created::Window), (&running, Created::Tab)] {
        assert_eq!(
            open(&backend, surface, Some("/w")).unwrap(),
            Opened::Started {
                created: vec![created]
            },
            "{surface}"
        );
    }
}
