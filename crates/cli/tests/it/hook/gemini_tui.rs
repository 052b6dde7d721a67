//! Capture with the real Gemini CLI 0.61.0 (installed by `cargo xtask gemini-cli install`): its
//! TUI in tmux panes, offline (`crate::hook::agent_tui::OfflineTmux`, the model API mock on
//! 127.0.0.1), with the hooks that `crash-resume hook install gemini` writes.
//!
//! - Start-up records the session before any prompt (its file exists from start-up).
//! - `/clear` moves the pane to a new session (SessionEnd `clear`, SessionStart `clear`): the new
//!   one is recorded, the old one kept in the chain, nothing ended.
//! - `/quit` sends SessionEnd `exit` from a pane that stays: the session is marked ended.
//! - `tmux kill-server` makes Gemini send SessionEnd `exit` too, but no pane is left to name:
//!   nothing is marked, and `restore` offers it, saying why for each.
//! - Two panes in one dir with the cleanup on: the second's start deletes the first's session
//!   file while it has no prompt yet.

use std::fs;
use std::path::{Path, PathBuf};

use test_support::gemini_offline;

use crate::Sandbox;
use crate::harness::{PanePlace, TmuxServer, make_dir, server_name};
use crate::hook::agent_tui::{
    OfflineTmux, enter, enter_until, entries, held, hooks_running, install_hooks, keys,
    kill_server_ends_nothing, recorded, restore_offers_one_not_the_ended, screen_shows, wait_for,
};

const PANE_A: &str = "gemini:0.0";
const PANE_B: &str = "gemini:0.1";

/// Gemini's settings for the mock in the sandbox's home (Gemini's home when `GEMINI_CLI_HOME`
/// is unset), and crash-resume's hooks installed by `hook install gemini`; returns what the
/// install said.
fn gemini_setup(env: &Sandbox, settings: serde_json::Value) -> String {
    let dir = make_dir(&env.home().join(".gemini"));
    fs::write(
        dir.join("settings.json"),
        gemini_offline::settings_json(settings),
    )
    .unwrap();
    install_hooks(env, "gemini")
}

/// Starts Gemini in the pane and waits for its prompt.
fn start_gemini(server: &TmuxServer, target: &str) {
    let cli = gemini_offline::installed_cli(env!("CARGO_TARGET_TMPDIR"));
    let line = format!(
        "GEMINI_API_KEY=dummy GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{} {}",
        gemini_offline::PORT,
        cli.display()
    );
    keys(server, target, &line);
    enter(server, target);
    screen_shows(server, target, "Type your message");
}

/// Sends a prompt and waits for the mock's answer (`crate::hook::agent_tui::prompt`).
fn prompt(env: &Sandbox, server: &TmuxServer, target: &str, text: &str) {
    crate::hook::agent_tui::prompt(env, server, target, text, "✦ ok");
}

/// A slash command: typed, its completion shown (`shown`), then run (the Enter repeated, as for
/// a prompt, until `done` holds).
fn slash(
    server: &TmuxServer,
    target: &str,
    command: &str,
    shown: &str,
    done: impl FnMut() -> bool,
) {
    keys(server, target, command);
    screen_shows(server, target, shown);
    enter_until(server, target, command, done, String::new);
}

/// The session ids of the session files in the project of `dir` (its slug is its name here).
fn sessions_in(env: &Sandbox, dir: &str) -> Vec<String> {
    let chats = env.home().join(".gemini/tmp").join(dir).join("chats");
    let Ok(listing) = fs::read_dir(&chats) else {
        return Vec::new();
    };
    listing
        .flatten()
        .filter_map(|file| {
            let text = fs::read_to_string(file.path()).ok()?;
            let header: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
            Some(header["sessionId"].as_str()?.to_string())
        })
        .collect()
}

fn place(pane: u32, dir: &Path) -> (PanePlace, PathBuf, &'static str) {
    crate::hook::agent_tui::place("gemini", pane, dir)
}

#[test]
fn start_up_clear_quit_and_kill_server_as_gemini_reports_them() {
    let env = Sandbox::default();
    let said = gemini_setup(&env, serde_json::json!({}));
    for words in [
        "untrusted",
        "GITHUB_SHA",
        "sessionRetention",
        "--retention off",
    ] {
        assert!(said.contains(words), "the install says {words}: {said}");
    }
    let alpha = make_dir(&env.root().join("alpha"));
    let beta = make_dir(&env.root().join("beta"));
    let tmux = OfflineTmux::start(
        &env,
        &server_name("gemini-tui"),
        &[place(0, &alpha), place(1, &beta)],
    );
    let server = tmux.server();

    // Start-up: recorded before any prompt, with the session whose file Gemini made.
    start_gemini(server, PANE_A);
    let first = wait_for("pane A's start to be recorded", || {
        held(&env, &recorded(&env, "gemini", 0, 0))
    });
    assert_eq!(sessions_in(&env, "alpha"), std::slice::from_ref(&first));
    let entry = env.entry(&recorded(&env, "gemini", 0, 0)).unwrap();
    assert_eq!(entry["provider"], "gemini");
    assert_eq!(entry["cwd"], alpha.to_str().unwrap());
    assert_eq!(entry["config_dir"], env.home().to_str().unwrap());
    prompt(&env, server, PANE_A, "hello from A");

    // `/clear`: a new session in the same pane, the old one in its chain, nothing ended.
    slash(server, PANE_A, "/clear", "Clear the screen", || {
        held(&env, &recorded(&env, "gemini", 0, 0)).is_some_and(|session| session != first)
    });
    let second = held(&env, &recorded(&env, "gemini", 0, 0)).unwrap();
    prompt(&env, server, PANE_A, "after the clear");
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let entry = env.entry(&recorded(&env, "gemini", 0, 0)).unwrap();
    assert_eq!(entry.get("ended_at"), None, "{entry}");
    assert!(
        entry["previous_sessions"]
            .as_array()
            .is_some_and(|chain| chain.iter().any(|id| *id == first.as_str())),
        "{entry}"
    );

    // `/quit` in pane B: SessionEnd `exit` from a pane that stays: the end.
    start_gemini(server, PANE_B);
    let session_b = wait_for("pane B's start to be recorded", || {
        held(&env, &recorded(&env, "gemini", 0, 1))
    });
    prompt(&env, server, PANE_B, "hello from B");
    slash(server, PANE_B, "/quit", "Exit the cli", || {
        env.entry(&recorded(&env, "gemini", 0, 1))
            .is_some_and(|entry| entry["ended_at"].is_u64())
    });
    assert_eq!(
        held(&env, &recorded(&env, "gemini", 0, 1)),
        Some(session_b.clone())
    );

    // kill-server: Gemini gets SIGHUP and sends SessionEnd `exit`, but no pane is left to name.
    kill_server_ends_nothing(
        &env,
        server,
        "Gemini",
        (PANE_A, &recorded(&env, "gemini", 0, 0)),
        &second,
    );

    // restore offers A's second session and leaves B out, saying why for each.
    let (a, b) = restore_offers_one_not_the_ended(
        &env,
        &recorded(&env, "gemini", 0, 0),
        &format!("gemini --resume {second}"),
        &recorded(&env, "gemini", 0, 1),
    );
    assert_eq!(b["session_id"], session_b.as_str(), "{b}");
    assert!(
        a["cleanup"]
            .as_str()
            .is_some_and(|cleanup| cleanup.contains("sessionRetention")),
        "{a}"
    );
    assert_eq!(entries(&env).len(), 2);
}

#[test]
fn a_second_pane_in_the_same_dir_deletes_the_first_ones_session_before_its_prompt() {
    let env = Sandbox::default();
    gemini_setup(&env, serde_json::json!({}));
    let work = make_dir(&env.root().join("work"));
    let tmux = OfflineTmux::start(
        &env,
        &server_name("gemini-two"),
        &[place(0, &work), place(1, &work)],
    );
    let server = tmux.server();
    start_gemini(server, PANE_A);
    let session_a = wait_for("pane A's start to be recorded", || {
        held(&env, &recorded(&env, "gemini", 0, 0))
    });
    assert_eq!(sessions_in(&env, "work"), std::slice::from_ref(&session_a));
    start_gemini(server, PANE_B);
    let session_b = wait_for("pane B's start to be recorded", || {
        held(&env, &recorded(&env, "gemini", 0, 1))
    });
    assert_eq!(
        sessions_in(&env, "work"),
        [session_b],
        "B's start deleted A's session file, which had no prompt yet"
    );
    assert!(!session_a.is_empty());
}
