//! Capture with the real Qwen Code 0.24.4 (installed by `cargo xtask qwen-cli install`): its TUI
//! in tmux panes, offline (`crate::hook::agent_tui::OfflineTmux`, the model API mock on
//! 127.0.0.1), with the hooks that `crash-resume hook install qwen` writes.
//!
//! - Start-up records the session before any prompt; Qwen Code writes its file only at the first
//!   prompt, so until then the plan says there is nothing to resume.
//! - `/quit` sends SessionEnd `prompt_input_exit` from a pane that stays: the session is marked
//!   ended.
//! - `tmux kill-server`: Qwen Code's end, if it reports one, names no pane left: nothing is
//!   marked, and `restore` offers it (`qwen --resume <id>`), saying why for each.
//! - A running Qwen Code holds its session (its `runtime.json` names its pid); the file left
//!   behind after a kill holds nothing.
//! - The hook prints nothing on stdout, which Qwen Code would read as the hook's answer.

use std::fs;
use std::path::{Path, PathBuf};

use test_support::qwen_offline;

use crate::Sandbox;
use crate::harness::{PanePlace, TmuxServer, make_dir, plan_by_surface, restore, server_name};
use crate::hook::agent_tui::{
    OfflineTmux, alive, descendants, enter, enter_until, entries, held, hooks_running,
    install_hooks, keys, recorded, restore_offers_one_not_the_ended, screen_shows, wait_for,
};

const PANE_A: &str = "qwen:0.0";
const PANE_B: &str = "qwen:0.1";

/// Qwen Code's settings for the mock in the sandbox's `~/.qwen`, and crash-resume's hooks
/// installed by `hook install qwen`; returns what the install said.
fn qwen_setup(env: &Sandbox) -> String {
    let dir = make_dir(&env.home().join(".qwen"));
    fs::write(
        dir.join("settings.json"),
        qwen_offline::settings_json(serde_json::json!({})),
    )
    .unwrap();
    install_hooks(env, "qwen")
}

/// Starts Qwen Code in the pane and waits for its prompt.
fn start_qwen(server: &TmuxServer, target: &str) {
    let cli = qwen_offline::installed_cli(env!("CARGO_TARGET_TMPDIR"));
    let line = format!("{} {}", qwen_offline::model_words(), cli.display());
    keys(server, target, &line);
    enter(server, target);
    screen_shows(server, target, "Type your message");
}

/// Sends a prompt and waits for the mock's answer (`crate::hook::agent_tui::prompt`).
fn prompt(env: &Sandbox, server: &TmuxServer, target: &str, text: &str) {
    crate::hook::agent_tui::prompt(env, server, target, text, "◆");
}

/// The session files of the project of `dir` (`~/.qwen/projects/<slug>/chats/<id>.jsonl`).
fn sessions_in(env: &Sandbox, dir: &Path) -> Vec<String> {
    let slug = preflight::qwen::slug(dir.to_str().unwrap());
    let chats = env.home().join(".qwen/projects").join(slug).join("chats");
    let Ok(listing) = fs::read_dir(&chats) else {
        return Vec::new();
    };
    let mut sessions: Vec<String> = listing
        .flatten()
        .filter_map(|file| {
            let name = file.file_name().into_string().ok()?;
            Some(name.strip_suffix(".jsonl")?.to_string())
        })
        .collect();
    sessions.sort();
    sessions
}

fn place(pane: u32, dir: &Path) -> (PanePlace, PathBuf, &'static str) {
    crate::hook::agent_tui::place("qwen", pane, dir)
}

#[test]
fn start_up_quit_and_kill_server_as_qwen_reports_them() {
    let env = Sandbox::default();
    let said = qwen_setup(&env);
    assert!(said.contains("first prompt"), "{said}");
    let settings: serde_json::Value =
        serde_json::from_slice(&fs::read(env.home().join(".qwen/settings.json")).unwrap()).unwrap();
    assert_eq!(
        settings["general"]["enableAutoUpdate"], false,
        "kept: {settings}"
    );
    let alpha = make_dir(&env.root().join("alpha"));
    let beta = make_dir(&env.root().join("beta"));
    let tmux = OfflineTmux::start(
        &env,
        &server_name("qwen-tui"),
        &[place(0, &alpha), place(1, &beta)],
    );
    let server = tmux.server();

    // Start-up: recorded before any prompt, with no session file yet: nothing to resume.
    start_qwen(server, PANE_A);
    let first = wait_for("pane A's start to be recorded", || {
        held(&env, &recorded(&env, "qwen", 0, 0))
    });
    let entry = env.entry(&recorded(&env, "qwen", 0, 0)).unwrap();
    assert_eq!(entry["provider"], "qwen");
    assert_eq!(entry["cwd"], alpha.to_str().unwrap());
    assert_eq!(
        entry["config_dir"],
        env.home().join(".qwen").to_str().unwrap()
    );
    assert_eq!(sessions_in(&env, &alpha), Vec::<String>::new());
    let plan = plan_by_surface(&restore(&env, true, &["--all"]).stdout);
    let before_prompt = &plan[&recorded(&env, "qwen", 0, 0)];
    assert_eq!(before_prompt["verdict"], "fresh", "{before_prompt}");
    assert_eq!(
        before_prompt["end_evidence"]["kind"], "cannot_resume",
        "{before_prompt}"
    );
    prompt(&env, server, PANE_A, "hello from A");
    assert_eq!(sessions_in(&env, &alpha), std::slice::from_ref(&first));

    // While it runs, its `runtime.json` names its Node process, still that Qwen Code: held.
    let runtime = env
        .home()
        .join(".qwen/projects")
        .join(preflight::qwen::slug(alpha.to_str().unwrap()))
        .join(format!("chats/{first}.runtime.json"));
    let status: serde_json::Value = serde_json::from_slice(&fs::read(&runtime).unwrap()).unwrap();
    let pid = status["pid"].as_u64().unwrap();
    let plan = plan_by_surface(&restore(&env, true, &["--all"]).stdout);
    let running = &plan[&recorded(&env, "qwen", 0, 0)];
    assert_eq!(
        running["held_elsewhere"],
        format!("a running agent (pid {pid})"),
        "{running}"
    );

    // `/quit` in pane B: SessionEnd from a pane that stays: the end.
    start_qwen(server, PANE_B);
    let session_b = wait_for("pane B's start to be recorded", || {
        held(&env, &recorded(&env, "qwen", 0, 1))
    });
    prompt(&env, server, PANE_B, "hello from B");
    keys(server, PANE_B, "/quit");
    screen_shows(server, PANE_B, "/quit");
    enter_until(
        server,
        PANE_B,
        "/quit",
        || {
            env.entry(&recorded(&env, "qwen", 0, 1))
                .is_some_and(|entry| entry["ended_at"].is_u64())
        },
        String::new,
    );
    assert_eq!(
        held(&env, &recorded(&env, "qwen", 0, 1)),
        Some(session_b.clone())
    );

    // kill-server: whatever Qwen Code reports then, no pane is left to name: nothing ends.
    let shell: u32 = server.display(PANE_A, "#{pane_pid}").parse().unwrap();
    let family = descendants(shell);
    assert!(!family.is_empty(), "Qwen Code runs under pane A's shell");
    server.tmux(&["kill-server"]);
    wait_for("pane A's processes to end", || {
        family.iter().all(|pid| !alive(*pid)).then_some(())
    });
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let entry = env.entry(&recorded(&env, "qwen", 0, 0)).unwrap();
    assert_eq!(entry["sessionId"], first.as_str());
    assert_eq!(
        entry.get("ended_at"),
        None,
        "a killed server is no end: {entry}"
    );

    // Its `runtime.json` is left behind, naming a pid that is gone: no evidence of a holder.
    assert!(runtime.exists());

    // restore offers A's session and leaves B out, saying why for each.
    let (_, b) = restore_offers_one_not_the_ended(
        &env,
        &recorded(&env, "qwen", 0, 0),
        &format!("qwen --resume {first}"),
        &recorded(&env, "qwen", 0, 1),
    );
    assert_eq!(b["session_id"], session_b.as_str(), "{b}");
    assert_eq!(entries(&env).len(), 2);
}
