//! Capture with the real GitHub Copilot CLI 1.0.102 (installed by `cargo xtask copilot-cli
//! install`): its TUI in tmux panes, offline (`crate::hook::agent_tui::OfflineTmux`, the
//! chat-completions mock on 127.0.0.1), with the hooks that `crash-resume hook install copilot`
//! writes, its folder-trust dialog answered.
//!
//! - Start-up records nothing: Copilot runs `sessionStart` at the first prompt, which records.
//! - A running Copilot holds its session (`inuse.<pid>.lock`): `restore` does not offer it.
//! - `/exit` sends `sessionEnd` (`user_exit`) from a pane that stays: the session is ended.
//! - `tmux kill-server` makes Copilot send `sessionEnd` with `user_exit` too and write
//!   `session.shutdown`, but no pane is left to name: nothing is marked, and `restore` offers it,
//!   saying why for each.

use std::fs;
use std::path::{Path, PathBuf};

use test_support::copilot_offline;
use test_support::copilot_offline::screen::{ANSWER, READY, RELOADED, TRUST_QUESTION};

use crate::Sandbox;
use crate::harness::{PanePlace, TmuxServer, make_dir, plan_by_surface, restore, server_name};
use crate::hook::agent_tui::{
    OfflineTmux, enter, enter_until, entries, held, install_hooks, keys, kill_server_ends_nothing,
    recorded, restore_offers_one_not_the_ended, screen_shows, wait_for,
};

const PANE_A: &str = "copilot:0.0";
const PANE_B: &str = "copilot:0.1";

/// crash-resume's hooks installed by `hook install copilot` into Copilot's default home,
/// `~/.copilot`; returns what the install said.
fn copilot_setup(env: &Sandbox) -> String {
    install_hooks(env, "copilot")
}

/// Starts Copilot in the pane, trusts its folder for the session, and waits for its prompt and
/// for the MCP reload that trusting a folder starts (a first prompt typed before it may leave a
/// later `/exit` queued for good).
fn start_copilot(env: &Sandbox, server: &TmuxServer, target: &str) {
    let installed = copilot_offline::installed_cli(env!("CARGO_TARGET_TMPDIR"));
    let offline = copilot_offline::Offline {
        installed: installed.clone(),
        root: env.root().to_path_buf(),
        home: env.home(),
        copilot_home: env.home().join(".copilot"),
    };
    // Its variables for the mock, but not `HOME`, `COPILOT_HOME` (the default, under the
    // sandbox's home) or `TMPDIR`: the pane has those.
    let variables: Vec<String> = offline
        .environment()
        .into_iter()
        .filter(|(name, _)| name.starts_with("COPILOT_") && *name != "COPILOT_HOME")
        .map(|(name, value)| format!("{name}={}", shlex::try_quote(&value).unwrap()))
        .collect();
    let line = format!(
        "{} {}",
        variables.join(" "),
        shlex::try_quote(installed.cli.to_str().unwrap()).unwrap()
    );
    keys(server, target, &line);
    enter(server, target);
    screen_shows(server, target, TRUST_QUESTION);
    enter(server, target);
    screen_shows(server, target, READY);
    screen_shows(server, target, RELOADED);
}

/// Sends a prompt and waits for the mock's answer (`crate::hook::agent_tui::prompt`).
fn prompt(env: &Sandbox, server: &TmuxServer, target: &str, text: &str) {
    crate::hook::agent_tui::prompt(env, server, target, text, ANSWER);
}

/// The ids of the session dirs Copilot made for working dir `dir`.
fn sessions_in(env: &Sandbox, dir: &Path) -> Vec<String> {
    let state = env.home().join(".copilot/session-state");
    let Ok(listing) = fs::read_dir(&state) else {
        return Vec::new();
    };
    let cwd = format!("cwd: {}\n", dir.display());
    listing
        .flatten()
        .filter(|session| {
            fs::read_to_string(session.path().join("workspace.yaml"))
                .is_ok_and(|yaml| yaml.contains(&cwd))
        })
        .map(|session| session.file_name().to_string_lossy().into_owned())
        .collect()
}

fn place(pane: u32, dir: &Path) -> (PanePlace, PathBuf, &'static str) {
    crate::hook::agent_tui::place("copilot", pane, dir)
}

#[test]
fn first_prompt_records_exit_ends_and_kill_server_does_not() {
    let env = Sandbox::default();
    let said = copilot_setup(&env);
    assert!(said.contains("at the first prompt"), "{said}");
    let alpha = make_dir(&env.root().join("alpha"));
    let beta = make_dir(&env.root().join("beta"));
    let tmux = OfflineTmux::start(
        &env,
        &server_name("copilot-tui"),
        &[place(0, &alpha), place(1, &beta)],
    );
    let server = tmux.server();

    // Start-up: a session dir, but no hook has run yet. The first prompt records it.
    start_copilot(&env, server, PANE_A);
    let started = wait_for("pane A's session dir", || {
        let sessions = sessions_in(&env, &alpha);
        (sessions.len() == 1).then(|| sessions[0].clone())
    });
    assert_eq!(
        held(&env, &recorded(&env, "copilot", 0, 0)),
        None,
        "nothing recorded before a prompt"
    );
    prompt(&env, server, PANE_A, "hello from A");
    let session_a = wait_for("pane A's first prompt to be recorded", || {
        held(&env, &recorded(&env, "copilot", 0, 0))
    });
    assert_eq!(session_a, started);
    let entry = env.entry(&recorded(&env, "copilot", 0, 0)).unwrap();
    assert_eq!(entry["provider"], "copilot");
    assert_eq!(entry["cwd"], alpha.to_str().unwrap());
    assert_eq!(
        entry["config_dir"],
        env.home().join(".copilot").to_str().unwrap()
    );

    // While Copilot runs, its lock holds the session: restore does not start it again.
    let plan = plan_by_surface(&restore(&env, true, &[]).stdout);
    let a = &plan[&recorded(&env, "copilot", 0, 0)];
    assert!(
        a["held_elsewhere"]
            .as_str()
            .is_some_and(|holder| holder.starts_with("a running agent (pid ")),
        "{a}"
    );

    // `/exit` in pane B: sessionEnd from a pane that stays: the end.
    start_copilot(&env, server, PANE_B);
    prompt(&env, server, PANE_B, "hello from B");
    let session_b = wait_for("pane B's first prompt to be recorded", || {
        held(&env, &recorded(&env, "copilot", 0, 1))
    });
    keys(server, PANE_B, "/exit");
    screen_shows(server, PANE_B, "/exit");
    enter_until(
        server,
        PANE_B,
        "/exit ending pane B's session",
        || {
            env.entry(&recorded(&env, "copilot", 0, 1))
                .is_some_and(|entry| entry["ended_at"].is_u64())
        },
        String::new,
    );
    assert_eq!(
        held(&env, &recorded(&env, "copilot", 0, 1)),
        Some(session_b)
    );

    // kill-server: Copilot gets SIGHUP, writes session.shutdown and sends sessionEnd
    // `user_exit`, as after /exit, but no pane is left to name.
    kill_server_ends_nothing(
        &env,
        server,
        "Copilot",
        (PANE_A, &recorded(&env, "copilot", 0, 0)),
        &session_a,
    );
    let events = fs::read_to_string(
        env.home()
            .join(".copilot/session-state")
            .join(&session_a)
            .join("events.jsonl"),
    )
    .unwrap();
    assert!(
        events.contains("\"session.shutdown\""),
        "a killed pane's Copilot writes session.shutdown as a clean exit does"
    );

    // restore offers A's session and leaves B out, saying why for each.
    let (a, _) = restore_offers_one_not_the_ended(
        &env,
        &recorded(&env, "copilot", 0, 0),
        &format!("copilot '--resume={session_a}'"),
        &recorded(&env, "copilot", 0, 1),
    );
    assert_eq!(a["held_elsewhere"], serde_json::Value::Null, "{a}");
    assert_eq!(entries(&env).len(), 2);
}
