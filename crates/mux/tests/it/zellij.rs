//! The zellij backend and the hook's pane naming against a fake `zellij` program that records
//! each call's argv (one file per call, arguments NUL-separated) and answers `list-sessions`
//! and `list-panes` from files. The real zellij is run by the CLI's live tests.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mux::pane::Busy;
use mux::zellij::{Zellij, is_pane_name, name_pane};
use mux::{Backend, Created, MuxError, Opened, Start, Surface};

/// A fake `zellij` in a temp dir: records argv, answers `list-sessions` with `sessions`,
/// `list-panes` with `panes`, `dump-layout` with a layout that names each of the panes whose
/// title is a name of ours (others as [`Fake::name_in_layout`] says), `new-pane` with a pane
/// id; `hang` makes every call wait past any deadline.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(sessions: &str, panes: &str, hang: bool) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sessions"), sessions).unwrap();
        std::fs::write(dir.path().join("panes.json"), panes).unwrap();
        let listed: Vec<serde_json::Value> = serde_json::from_str(panes).unwrap_or_default();
        let names: Vec<String> = listed
            .iter()
            .filter_map(|pane| pane["title"].as_str())
            .filter(|title| is_pane_name(title))
            .map(str::to_string)
            .collect();
        let fake = Fake { dir };
        fake.name_in_layout(&names.iter().map(String::as_str).collect::<Vec<_>>());
        let dir = fake.dir;
        let script = format!(
            "#!/bin/sh\n\
             dir='{dir}'\n\
             i=0; while [ -e \"$dir/call$i\" ]; do i=$((i+1)); done\n\
             printf '%s\\0' \"$@\" > \"$dir/call$i\"\n\
             {hang}\
             for arg in \"$@\"; do case \"$arg\" in\n\
               list-sessions) cat \"$dir/sessions\"; exit 0;;\n\
               list-panes) cat \"$dir/panes.json\"; exit 0;;\n\
               dump-layout) cat \"$dir/layout.kdl\"; exit 0;;\n\
               new-pane) echo terminal_9; exit 0;;\n\
             esac; done\n",
            dir = dir.path().display(),
            hang = if hang { "exec sleep 30\n" } else { "" },
        );
        let program = dir.path().join("zellij");
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        Fake { dir }
    }

    /// The layout names exactly these panes' names (`pane name="..."` in one tab).
    fn name_in_layout(&self, names: &[&str]) {
        let panes: String = names
            .iter()
            .map(|name| format!("        pane name={}\n", serde_json::Value::from(*name)))
            .collect();
        let layout = format!("layout {{\n    tab name=\"Tab #1\" {{\n{panes}    }}\n}}\n");
        std::fs::write(self.dir.path().join("layout.kdl"), layout).unwrap();
    }

    fn program(&self) -> PathBuf {
        self.dir.path().join("zellij")
    }

    fn backend(&self, deadline: Duration) -> Zellij {
        Zellij::new(Some(self.program()), deadline, Some("/bin/true".into()))
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

    /// The calls that changed something (neither listing).
    fn changes(&self) -> Vec<Vec<String>> {
        self.calls()
            .into_iter()
            .filter(|call| {
                !call.iter().any(|arg| {
                    arg == "list-sessions" || arg == "list-panes" || arg == "dump-layout"
                })
            })
            .collect()
    }
}

fn pane(id: u32, title: &str, command: &str, held: bool) -> String {
    serde_json::json!({
        "id": id, "is_plugin": false, "title": title, "exited": false, "is_held": held,
        "tab_id": 0, "pane_command": command,
    })
    .to_string()
}

fn panes(list: &[String]) -> String {
    format!("[{}]", list.join(","))
}

const SURFACE_ENV: &str = "CRASH_RESUME_SURFACE";

fn open(backend: &Zellij, surface: &str, dir: Option<&str>) -> Result<Opened, MuxError> {
    let surface = Surface::parse(surface).unwrap();
    let shown = surface.to_string();
    backend.open(&Start {
        surface: &surface,
        dir,
        command: "claude --resume s-1",
        env: &[(SURFACE_ENV, &shown)],
    })
}

fn script(surface: &str, dir: &str) -> String {
    mux::script::start_script(
        &[(SURFACE_ENV, surface)],
        Some(dir),
        "claude --resume s-1",
        "/bin/true",
    )
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

#[test]
fn a_named_idle_pane_is_replaced_in_place_a_busy_one_skipped_a_missing_one_created() {
    let fake = Fake::new(
        "work [Created 3s ago] \n",
        &panes(&[
            pane(2, "cr-2-abc", "/bin/bash", false),
            pane(3, "cr-3-abc", "vim notes", false),
        ]),
        false,
    );
    let backend = fake.backend(Duration::from_secs(5));
    let idle = Surface::parse("zellij:work:cr-2-abc").unwrap();
    let busy = Surface::parse("zellij:work:cr-3-abc").unwrap();
    assert_eq!(backend.busy(&idle), None);
    assert_eq!(backend.busy(&busy), Some(Busy::Program("vim".into())));
    assert_eq!(
        open(&backend, "zellij:work:cr-3-abc", Some("/w")).unwrap(),
        Opened::Skipped(Busy::Program("vim".into()))
    );
    assert_eq!(
        open(&backend, "zellij:work:cr-2-abc", Some("/w")).unwrap(),
        Opened::Started { created: vec![] }
    );
    assert_eq!(
        open(&backend, "zellij:work:cr-7-gone", Some("/w")).unwrap(),
        Opened::Started {
            created: vec![Created::Pane]
        }
    );
    let in_place = script("zellij:work:cr-2-abc", "/w");
    let new_pane = script("zellij:work:cr-7-gone", "/w");
    assert_eq!(
        fake.changes(),
        vec![
            argv(&[
                "--session",
                "work",
                "action",
                "new-pane",
                "--in-place",
                "--close-replaced-pane",
                "--pane-id",
                "terminal_2",
                "--name",
                "cr-2-abc",
                "--cwd",
                "/w",
                "--",
                "/bin/sh",
                "-c",
                &in_place,
            ]),
            argv(&[
                "--session",
                "work",
                "action",
                "new-pane",
                "--name",
                "cr-7-gone",
                "--cwd",
                "/w",
                "--",
                "/bin/sh",
                "-c",
                &new_pane,
            ]),
        ]
    );
}

#[test]
fn an_exited_session_is_resurrected_a_gone_one_created_and_a_bare_id_gets_a_new_pane() {
    let fake = Fake::new(
        "old [Created 1h ago] (EXITED - attach to resurrect)\n",
        &panes(&[
            pane(0, "cr-4-abc", "/bin/sh -c claude", true),
            pane(1, "bash", "bash", false),
        ]),
        false,
    );
    let backend = fake.backend(Duration::from_secs(5));
    // The held pane of the recorded name is replaced, and the session said resurrected.
    assert_eq!(
        open(&backend, "zellij:old:cr-4-abc", None).unwrap(),
        Opened::Started {
            created: vec![Created::Resurrected]
        }
    );
    // A bare id in a session this restore resurrected names no pane any more: a new one.
    assert_eq!(
        open(&backend, "zellij:old:1", None).unwrap(),
        Opened::Started {
            created: vec![Created::Pane]
        }
    );
    let changes = fake.changes();
    assert_eq!(changes[0], argv(&["attach", "--create-background", "old"]));
    assert!(
        changes[1].contains(&"terminal_0".to_string()),
        "{changes:?}"
    );
    assert!(
        !changes[2].contains(&"--in-place".to_string()),
        "{changes:?}"
    );
    assert_eq!(changes.len(), 3, "{changes:?}");

    // A session zellij does not list is created; its first shell pane is used.
    let fake = Fake::new("", &panes(&[pane(0, "bash", "bash", false)]), false);
    let backend = fake.backend(Duration::from_secs(5));
    assert_eq!(
        open(&backend, "zellij:new:cr-1-abc", None).unwrap(),
        Opened::Started {
            created: vec![Created::Session]
        }
    );
    let changes = fake.changes();
    assert_eq!(changes[0], argv(&["attach", "--create-background", "new"]));
    assert!(
        changes[1].contains(&"terminal_0".to_string()),
        "{changes:?}"
    );
}

/// A session name, a pane name and a dir that a shell or zellij's own parsing would act on
/// reach zellij as argv elements, and the script as one quoted word each.
#[test]
fn recorded_values_reach_zellij_as_inert_text() {
    let session = "$(touch ran) ;x";
    let fake = Fake::new(
        &format!("{session} [Created 3s ago] \n"),
        &panes(&[]),
        false,
    );
    let backend = fake.backend(Duration::from_secs(5));
    let surface = format!("zellij:{session}:it's --name");
    let dir = "/w/$(touch ran)/`id`";
    assert_eq!(
        open(&backend, &surface, Some(dir)).unwrap(),
        Opened::Started {
            created: vec![Created::Pane]
        }
    );
    let changes = fake.changes();
    let call = changes.last().unwrap();
    assert_eq!(call[1], session);
    let name = call.iter().position(|arg| arg == "--name").unwrap();
    assert_eq!(call[name + 1], "it's --name");
    assert_eq!(call.last().unwrap(), &script(&surface, dir));
    assert!(!fake.dir.path().join("ran").exists());
}

/// A session or pane name beginning with `-` would reach zellij as an option (`attach
/// --create-background --force-run-commands` attaches to no session): it fails, and zellij is
/// not asked to make anything.
#[test]
fn an_option_like_session_or_pane_name_is_refused_before_zellij_is_asked() {
    for surface in [
        "zellij:--force-run-commands:cr-1-2",
        "zellij:-s:cr-1-2",
        "zellij:work:--help",
    ] {
        let fake = Fake::new("", &panes(&[]), false);
        let backend = fake.backend(Duration::from_secs(5));
        let error = open(&backend, surface, Some("/w")).unwrap_err();
        assert!(
            error.to_string().contains("as an option"),
            "{surface}: {error}"
        );
        assert_eq!(fake.calls(), Vec::<Vec<String>>::new(), "{surface}");
    }
}

#[test]
fn the_hook_names_its_pane_once() {
    let fake = Fake::new("", &panes(&[pane(3, "bash", "bash", false)]), false);
    let deadline = Instant::now() + Duration::from_secs(5);
    let named = name_pane(&fake.program(), "work", 3, 1_700_000_000_000, deadline).unwrap();
    assert!(is_pane_name(&named.pane), "{named}");
    assert_eq!(named.session, "work");
    assert_eq!(
        fake.changes(),
        vec![argv(&[
            "--session",
            "work",
            "action",
            "rename-pane",
            "--pane-id",
            "terminal_3",
            &named.pane,
        ])]
    );

    // A pane that bears a name of ours keeps it.
    let fake = Fake::new("", &panes(&[pane(3, "cr-3-kept", "bash", false)]), false);
    let named = name_pane(&fake.program(), "work", 3, 1, deadline).unwrap();
    assert_eq!(named.to_string(), "zellij:work:cr-3-kept");
    assert_eq!(fake.changes(), Vec::<Vec<String>>::new());

    // A pane zellij does not list is asked for again until the deadline, then not named.
    let fake = Fake::new("", &panes(&[]), false);
    let short = Instant::now() + Duration::from_millis(400);
    assert!(name_pane(&fake.program(), "work", 3, 1, short).is_err());
    assert!(Instant::now() < short + Duration::from_secs(2));
}

/// A title is what the pane's program last set (an OSC escape in any output): a pane whose
/// title shows another pane's name is not that pane, for the hook and for a restore alike.
#[test]
fn a_title_a_program_set_is_no_name() {
    let deadline = Instant::now() + Duration::from_secs(5);
    // Pane 4's program set its title to pane 2's name: the hook gives pane 4 a name of its own
    // only when no other pane shows that name; here one does, so nothing is renamed.
    let both = panes(&[
        pane(2, "cr-2-abc", "/bin/bash", false),
        pane(4, "cr-2-abc", "/bin/bash", false),
    ]);
    let fake = Fake::new("work [Created 3s ago] \n", &both, false);
    assert!(name_pane(&fake.program(), "work", 4, 1, deadline).is_err());
    assert_eq!(fake.changes(), Vec::<Vec<String>>::new());
    // Neither is taken for the name by a restore: nothing is started.
    let backend = fake.backend(Duration::from_secs(5));
    let error = open(&backend, "zellij:work:cr-2-abc", Some("/w")).unwrap_err();
    assert!(error.to_string().contains("cannot be told"), "{error}");
    assert_eq!(fake.changes(), Vec::<Vec<String>>::new());

    // The named pane is gone; an idle shell shows its name as a title. The layout names no
    // pane so: the shell is a title, not the pane, and is left alone for a new named pane.
    let fake = Fake::new(
        "work [Created 3s ago] \n",
        &panes(&[pane(4, "cr-2-abc", "/bin/bash", false)]),
        false,
    );
    fake.name_in_layout(&[]);
    let named = name_pane(&fake.program(), "work", 4, 1, deadline).unwrap();
    assert_ne!(named.pane, "cr-2-abc", "a name of its own");
    let fake = Fake::new(
        "work [Created 3s ago] \n",
        &panes(&[pane(4, "cr-2-abc", "/bin/bash", false)]),
        false,
    );
    fake.name_in_layout(&[]);
    let backend = fake.backend(Duration::from_secs(5));
    assert_eq!(
        open(&backend, "zellij:work:cr-2-abc", Some("/w")).unwrap(),
        Opened::Started {
            created: vec![Created::Pane]
        }
    );
    let changes = fake.changes();
    assert!(
        !changes[0].contains(&"--in-place".to_string()),
        "{changes:?}"
    );
}

/// A pane the user named keeps its name, which its surface carries; a command pane's own name
/// (its command line, which zellij gives it) is no user's, and is replaced by one of ours.
#[test]
fn a_pane_the_user_named_keeps_its_name() {
    let deadline = Instant::now() + Duration::from_secs(5);
    let fake = Fake::new("", &panes(&[pane(3, "editor", "bash", false)]), false);
    fake.name_in_layout(&["editor"]);
    let named = name_pane(&fake.program(), "work", 3, 1, deadline).unwrap();
    assert_eq!(named.to_string(), "zellij:work:editor");
    assert_eq!(fake.changes(), Vec::<Vec<String>>::new());
    // A name a surface cannot carry is kept too: the caller records the bare id.
    let fake = Fake::new("", &panes(&[pane(3, "a:b", "bash", false)]), false);
    fake.name_in_layout(&["a:b"]);
    assert!(name_pane(&fake.program(), "work", 3, 1, deadline).is_err());
    assert_eq!(fake.changes(), Vec::<Vec<String>>::new());

    let command = serde_json::json!({
        "id": 3, "is_plugin": false, "title": "sh -c x", "tab_id": 0,
        "pane_command": "sh -c x", "terminal_command": "sh -c x",
    });
    let fake = Fake::new("", &format!("[{command}]"), false);
    fake.name_in_layout(&["sh -c x"]);
    let named = name_pane(&fake.program(), "work", 3, 1, deadline).unwrap();
    assert!(is_pane_name(&named.pane), "{named}");
    assert_eq!(fake.changes().len(), 1, "renamed");
}

#[test]
fn a_zellij_that_does_not_answer_is_asked_once() {
    let fake = Fake::new("", "[]", true);
    let backend = fake.backend(Duration::from_millis(300));
    let first = open(&backend, "zellij:work:cr-1-abc", None).unwrap_err();
    assert!(
        matches!(first, MuxError::Unanswered { again: false, .. }),
        "{first}"
    );
    assert!(backend.unanswered().is_some());
    let second = open(&backend, "zellij:work:cr-2-abc", None).unwrap_err();
    assert!(
        matches!(second, MuxError::Unanswered { again: true, .. }),
        "{second}"
    );
    assert_eq!(fake.calls().len(), 1);
}
