//! Capture with the real Codex CLI 0.171.0 (installed by `cargo xtask codex-cli install`): its
//! TUI in two tmux panes, offline, with the hooks that `crash-resume hook install codex` writes.
//!
//! - Daemon mode (Codex's default): the hooks run inside `codex app-server --managed-daemon`,
//!   whose environment is the first pane's; without the title setting nothing may be recorded
//!   (in particular not pane B's session under pane A's surface), and `hook.log` says why once.
//! - Daemon mode with `"thread-id"` among `[tui] terminal_title` (which `hook install codex
//!   --codex-title` adds): each TUI writes its thread id into its pane's title, and the hook in
//!   the daemon records each session under the pane whose title shows it, also for a pane
//!   started after the pane that started the daemon was killed; a SessionEnd from the daemon
//!   marks nothing ended.
//! - `--no-daemon`: each pane's session is recorded under its own surface; `/quit` in one pane
//!   marks its session ended, killing the other pane does not, and `restore` offers the killed
//!   one only, saying why.
//!
//! Everything runs in a network namespace with loopback alone
//! (`crate::hook::agent_tui::OfflineTmux`): the tmux server is started in it by
//! `codex_offline.py` (`crates/test-support/src`, which
//! serves the Responses API mock on 127.0.0.1), so every pane, every Codex process and the daemon
//! are there too, and the launcher kills each of them by pid when the test lets go of it. The
//! test drives tmux through its socket from outside.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use test_support::codex_offline;

use crate::Sandbox;
use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, codex_home, crash_resume_agent, hook_log, make_dir,
    plan_by_surface, restore, server_name,
};
use crate::hook::agent_tui::{
    OfflineTmux, alive, descendants, enter, entries, hooks_running, keys, recorded, screen_shows,
    wait_for,
};

fn installed_codex() -> PathBuf {
    codex_offline::installed_cli(env!("CARGO_TARGET_TMPDIR"))
}

/// A Codex home for the mock, and crash-resume's hooks installed by `hook install codex` (with
/// `install_args`).
fn codex_setup(env: &Sandbox, project: &Path, install_args: &[&str]) {
    let home = codex_home(env);
    fs::create_dir_all(&home).unwrap();
    fs::write(
        home.join("config.toml"),
        codex_offline::config_toml(&[project]),
    )
    .unwrap();
    let output = crash_resume_agent(env)
        .args(["hook", "install", "codex"])
        .args(install_args)
        .output()
        .unwrap();
    assert!(output.status.success(), "hook install codex: {output:?}");
}

/// Starts Codex in the pane. The first Codex to see the hooks asks to review them ("Hooks need
/// review", a moment after its composer shows): it is answered "Trust all and continue", which
/// Codex saves in config.toml, so later ones do not ask.
fn start_codex(server: &TmuxServer, target: &str, cli: &Path, no_daemon: bool, first: bool) {
    let line = format!(
        "MOCK_API_KEY=dummy {}{}",
        cli.display(),
        if no_daemon { " --no-daemon" } else { "" }
    );
    keys(server, target, &line);
    enter(server, target);
    if first {
        screen_shows(server, target, "Hooks need review");
        // Keys that reach the TUI while it draws the dialog can be dropped: answer again for as
        // long as the dialog shows.
        wait_for(
            &format!("the hook review on {target} to be answered"),
            || {
                let screen = server.capture(target);
                if !screen.contains("Hooks need review") {
                    return Some(());
                }
                keys(server, target, "2");
                enter(server, target);
                let answered = Instant::now();
                while answered.elapsed() < Duration::from_secs(2) {
                    if !server.capture(target).contains("Hooks need review") {
                        return Some(());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                None
            },
        );
    }
    screen_shows(server, target, "Ask Codex");
}

/// Sends a prompt and waits for the mock's answer ("ok"); SessionStart has fired by then.
fn prompt(server: &TmuxServer, target: &str, text: &str) {
    keys(server, target, text);
    enter(server, target);
    screen_shows(server, target, "• ok");
}

/// The session whose rollout holds `prompt`.
fn session_of(env: &Sandbox, prompt: &str) -> String {
    let sessions = codex_home(env).join("sessions");
    let mut found = Vec::new();
    for year in fs::read_dir(&sessions).unwrap().flatten() {
        for month in fs::read_dir(year.path()).unwrap().flatten() {
            for day in fs::read_dir(month.path()).unwrap().flatten() {
                for file in fs::read_dir(day.path()).unwrap().flatten() {
                    let name = file.file_name().into_string().unwrap();
                    if fs::read_to_string(file.path()).unwrap().contains(prompt) {
                        let id = &name[name.len() - ".jsonl".len() - 36..name.len() - 6];
                        found.push(id.to_string());
                    }
                }
            }
        }
    }
    assert_eq!(found.len(), 1, "one rollout holds {prompt:?}: {found:?}");
    found.remove(0)
}

/// Two panes of one tmux server in the namespace, each running Codex (with `--no-daemon` or
/// not) with one prompt answered; returns the server, the project dir and each pane's session.
fn two_codex_panes(
    env: &Sandbox,
    name: &str,
    no_daemon: bool,
) -> (OfflineTmux, PathBuf, [String; 2]) {
    let cli = installed_codex();
    let project = make_dir(&env.root().join("proj"));
    codex_setup(env, &project, &[]);
    let place = |pane| {
        (
            PanePlace::new("codex", 0, pane),
            project.clone(),
            PANE_SHELL,
        )
    };
    let tmux = OfflineTmux::start(env, &server_name(name), &[place(0), place(1)]);
    for (pane, first) in [(PANE_A, true), (PANE_B, false)] {
        start_codex(tmux.server(), pane, &cli, no_daemon, first);
        prompt(tmux.server(), pane, &format!("hello from {pane}"));
    }
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let sessions = [PANE_A, PANE_B].map(|pane| session_of(env, &format!("hello from {pane}")));
    assert_ne!(sessions[0], sessions[1]);
    (tmux, project, sessions)
}

const PANE_A: &str = "codex:0.0";
const PANE_B: &str = "codex:0.1";

#[test]
fn daemon_mode_records_nothing_and_never_misattributes() {
    let env = Sandbox::default();
    let (_tmux, _, [session_a, session_b]) = two_codex_panes(&env, "codex-daemon", false);
    // Both sessions exist, and ran under the daemon.
    let entries = entries(&env);
    assert!(
        entries.is_empty(),
        "nothing is recorded under the daemon (A {session_a}, B {session_b}): {entries:?}"
    );
    let log = hook_log(&env);
    assert_eq!(log.lines().count(), 1, "one line: {log}");
    assert!(
        log.contains("Codex runs its hooks in its shared daemon") && log.contains("\"thread-id\""),
        "says why, and what to set: {log}"
    );
    let requests = fs::read_to_string(env.root().join("requests.log")).unwrap();
    assert!(
        requests.lines().all(|line| line == "POST /v1/responses"),
        "{requests}"
    );
}

#[test]
fn no_daemon_records_each_pane_and_quit_is_an_end_a_killed_pane_is_not() {
    let env = Sandbox::default();
    let (tmux, project, [session_a, session_b]) = two_codex_panes(&env, "codex-nodaemon", true);
    let server = tmux.server();
    let (pane_a, pane_b) = (PANE_A, PANE_B);
    let entries = entries(&env);
    let surface_a = &recorded(&env, "codex", 0, 0);
    let surface_b = &recorded(&env, "codex", 0, 1);
    assert_eq!(
        entries[surface_a]["sessionId"],
        session_a.as_str(),
        "{entries:?}"
    );
    assert_eq!(
        entries[surface_b]["sessionId"],
        session_b.as_str(),
        "{entries:?}"
    );
    for surface in [surface_a, surface_b] {
        assert_eq!(entries[surface]["provider"], "codex");
        assert_eq!(entries[surface]["cwd"], project.to_str().unwrap());
        assert_eq!(entries[surface].get("ended_at"), None);
    }

    // `/quit` in pane A: Codex sends SessionEnd (reason `other`) and the pane stays.
    keys(server, pane_a, "/quit");
    enter(server, pane_a);
    screen_shows(server, pane_a, "To continue this session");
    wait_for("pane A's session to be marked ended", || {
        env.entry(surface_a)
            .filter(|entry| entry["ended_at"].is_u64())
    });

    // Pane B is killed: Codex sends nothing, and the session stays resumable.
    let shell_b: u32 = server.display(pane_b, "#{pane_pid}").parse().unwrap();
    let family = descendants(shell_b);
    assert!(!family.is_empty(), "Codex runs under pane B's shell");
    server.tmux(&["kill-pane", "-t", pane_b]);
    wait_for("pane B's processes to end", || {
        family.iter().all(|pid| !alive(*pid)).then_some(())
    });
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let entry_b = env.entry(surface_b).expect("kept");
    assert_eq!(
        entry_b.get("ended_at"),
        None,
        "a killed pane is no end: {entry_b}"
    );

    // restore offers B (its rollout resumes) and leaves A out, saying why for each.
    let plan = plan_by_surface(&restore(&env, true, &["--all"]).stdout);
    let item = |surface: &str| {
        plan.get(surface)
            .cloned()
            .unwrap_or_else(|| panic!("{surface} in {plan:?}"))
    };
    let b = item(surface_b);
    assert_eq!(b["verdict"], "resume", "{b}");
    assert!(b["why"].as_str().unwrap().starts_with("offered"), "{b}");
    assert!(b["command"].as_str().unwrap().contains(&session_b), "{b}");
    let a = item(surface_a);
    assert_eq!(a["ended_cleanly"], true, "{a}");
    assert!(a["why"].as_str().unwrap().starts_with("not offered"), "{a}");
}

#[test]
fn daemon_mode_with_the_title_records_each_pane_also_after_the_first_is_killed() {
    let env = Sandbox::default();
    let cli = installed_codex();
    let project = make_dir(&env.root().join("proj"));
    codex_setup(&env, &project, &["--codex-title"]);
    let config = fs::read_to_string(codex_home(&env).join("config.toml")).unwrap();
    assert!(config.contains("\"thread-id\""), "{config}");
    // One pane per window: a killed window leaves the others' places as they were.
    let place = |window| {
        (
            PanePlace::new("codex", window, 0),
            project.clone(),
            PANE_SHELL,
        )
    };
    let tmux = OfflineTmux::start(
        &env,
        &server_name("codex-title"),
        &[place(0), place(1), place(2)],
    );
    let server = tmux.server();
    let [pane_a, pane_b, pane_c] = ["codex:0.0", "codex:1.0", "codex:2.0"];
    for (pane, first) in [(pane_a, true), (pane_b, false)] {
        start_codex(server, pane, &cli, false, first);
        prompt(server, pane, &format!("hello from {pane}"));
    }
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let session_a = session_of(&env, &format!("hello from {pane_a}"));
    let session_b = session_of(&env, &format!("hello from {pane_b}"));
    for (pane, session) in [(pane_a, &session_a), (pane_b, &session_b)] {
        let title = server.display(pane, "#{pane_title}");
        assert!(
            title.contains(&session[..24]),
            "{pane}'s title {title:?} shows {session}"
        );
    }
    let entries = entries(&env);
    assert_eq!(
        entries[&recorded(&env, "codex", 0, 0)]["sessionId"],
        session_a.as_str(),
        "{entries:?}"
    );
    assert_eq!(
        entries[&recorded(&env, "codex", 1, 0)]["sessionId"],
        session_b.as_str(),
        "{entries:?}"
    );
    assert_eq!(entries.len(), 2, "{entries:?}");

    // The pane that started the daemon is killed; the daemon lives on with its environment, and
    // a Codex started in another pane afterwards is still recorded under its own pane.
    let shell_a: u32 = server.display(pane_a, "#{pane_pid}").parse().unwrap();
    // The daemon may be pane A's descendant still (a thread of Codex's spawned it); it is
    // meant to outlive the pane, so only the rest of the family is waited for.
    let family: Vec<u32> = descendants(shell_a)
        .into_iter()
        .filter(|pid| {
            test_support::process::command_line(*pid)
                .is_none_or(|words| !words.iter().any(|word| word == "app-server"))
        })
        .collect();
    server.tmux(&["kill-pane", "-t", pane_a]);
    wait_for("pane A's processes to end", || {
        family.iter().all(|pid| !alive(*pid)).then_some(())
    });
    start_codex(server, pane_c, &cli, false, false);
    prompt(server, pane_c, &format!("hello from {pane_c}"));
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let session_c = session_of(&env, &format!("hello from {pane_c}"));
    let entries = crate::hook::agent_tui::entries(&env);
    assert_eq!(
        entries[&recorded(&env, "codex", 2, 0)]["sessionId"],
        session_c.as_str(),
        "{entries:?}"
    );
    assert_eq!(
        entries[&recorded(&env, "codex", 1, 0)]["sessionId"],
        session_b.as_str(),
        "{entries:?}"
    );
    assert_eq!(
        entries[&recorded(&env, "codex", 0, 0)]["sessionId"],
        session_a.as_str(),
        "{entries:?}"
    );
    for surface in [
        &recorded(&env, "codex", 0, 0),
        &recorded(&env, "codex", 1, 0),
        &recorded(&env, "codex", 2, 0),
    ] {
        assert_eq!(entries[surface]["provider"], "codex");
        assert_eq!(entries[surface].get("ended_at"), None, "{entries:?}");
    }
    let log = hook_log(&env);
    assert!(!log.contains("error"), "{log}");
}

/// The real Codex started through a wrapper of the user's (which passes its arguments on), with
/// session-shaping flags and a prompt on its command line: its SessionStart hook runs inside
/// Codex (`--no-daemon`), whose process the hook finds among its ancestors, and the entry keeps
/// the wrapper and exactly the allowed flags (no prompt). After the pane is killed, `restore
/// --apply` runs the wrapper again in it, and the Codex it starts has exactly those flags after
/// `resume <id>`; its hook records the same launch again.
#[test]
fn the_flags_codex_was_started_with_are_kept_and_passed_again_by_restore() {
    let env = Sandbox::default();
    let cli = installed_codex();
    let project = make_dir(&env.root().join("proj"));
    codex_setup(&env, &project, &[]);
    // A wrapper of the user's that passes its arguments on (not by exec: it stays an ancestor),
    // and `codex` on the pane's PATH for the resume command.
    let bin = crate::harness::bin_dir(&env);
    fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("my-codex");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n{} \"$@\"\n",
            crate::harness::shell_word(cli.to_str().unwrap())
        ),
    )
    .unwrap();
    fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink(&cli, bin.join("codex")).unwrap();
    let place = (PanePlace::new("codex", 0, 0), project, PANE_SHELL);
    let tmux = OfflineTmux::start(&env, &server_name("codex-launch"), &[place]);
    let server = tmux.server();
    server.tmux(&["set-environment", "-g", "MOCK_API_KEY", "dummy"]);
    let pane = PANE_A;
    keys(
        server,
        pane,
        "MOCK_API_KEY=dummy my-codex --no-daemon -s read-only 'hello from launch'",
    );
    enter(server, pane);
    screen_shows(server, pane, "Hooks need review");
    wait_for("the hook review to be answered", || {
        if !server.capture(pane).contains("Hooks need review") {
            return Some(());
        }
        keys(server, pane, "2");
        enter(server, pane);
        std::thread::sleep(Duration::from_secs(2));
        None
    });
    screen_shows(server, pane, "• ok");
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let session = session_of(&env, "hello from launch");
    let surface = recorded(&env, "codex", 0, 0);
    let kept = serde_json::json!(["--no-daemon", "-s", "read-only"]);
    let entry = wait_for("the session to be recorded", || {
        env.entry(&surface)
            .filter(|entry| entry["sessionId"] == session.as_str())
    });
    assert_eq!(entry["launch"]["args"], kept, "{entry}");
    assert_eq!(
        entry["launch"]["wrapper"],
        serde_json::json!({"path": wrapper.to_str().unwrap(), "passes_args": true}),
        "{entry}"
    );
    assert!(!entry.to_string().contains("hello from launch"), "{entry}");

    // A crash of the pane; restore starts Codex in it again.
    let shell: u32 = server.display(pane, "#{pane_pid}").parse().unwrap();
    let family = descendants(shell);
    server.tmux(&["kill-pane", "-t", pane]);
    wait_for("the pane's processes to end", || {
        family.iter().all(|pid| !alive(*pid)).then_some(())
    });
    let plan = plan_by_surface(&restore(&env, true, &[]).stdout);
    let command = plan[&surface]["command"].as_str().unwrap().to_string();
    assert!(
        command.ends_with(&format!(
            "{} resume {session} --no-daemon -s read-only",
            wrapper.display()
        )),
        "{command}"
    );
    let socket = server_name("codex-launch");
    let applied = restore(&env, true, &["--apply", "tmux", "--tmux-socket", &socket]);
    assert!(applied.status.success(), "{applied:?}");
    let shell: u32 = wait_for("the restored pane", || {
        server
            .try_tmux(&["display-message", "-p", "-t", pane, "#{pane_pid}"])
            .ok()
            .and_then(|pid| pid.parse().ok())
    });
    let expected: Vec<String> = ["resume", session.as_str(), "--no-daemon", "-s", "read-only"]
        .map(String::from)
        .to_vec();
    let codex_args = wait_for("Codex to run in the restored pane", || {
        let runs: Vec<Vec<String>> = descendants(shell)
            .into_iter()
            .filter_map(test_support::process::command_line)
            .filter_map(|words| {
                let words: Vec<std::ffi::OsString> = words.iter().map(Into::into).collect();
                proc_table::arguments_of(&words, "codex").map(|args| {
                    args.iter()
                        .map(|word| word.to_string_lossy().into_owned())
                        .collect()
                })
            })
            .collect();
        (!runs.is_empty()).then_some(runs)
    });
    for args in codex_args {
        assert_eq!(args, expected, "the restored Codex's argv");
    }
    screen_shows(server, pane, "Ask Codex");
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let entry = env.entry(&surface).unwrap();
    assert_eq!(entry["sessionId"], session.as_str(), "{entry}");
    assert_eq!(entry["launch"]["args"], kept, "{entry}");
}
