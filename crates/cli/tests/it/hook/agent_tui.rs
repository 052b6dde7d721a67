//! What the tests of the real agents' TUIs share (`codex_tui`, `gemini_tui`, `copilot_tui`): a tmux server in a
//! network namespace with loopback alone, started by the offline launcher of
//! `test_support::codex_offline` (which serves the model API mocks on 127.0.0.1), so every pane
//! and every agent process is there too, and the launcher kills each of them by pid when the
//! test lets go of it; the test drives tmux through its socket from outside. And the screen,
//! key, process and index helpers those tests use, and the steps they take alike: the hooks'
//! install, a pane's place, a `kill-server` that ends nothing, and the restore plan after it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use test_support::codex_offline;

use crate::Sandbox;
use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, agent_command, crash_resume_agent, hook_log,
    plan_by_surface, restore, tmux_tmpdir, wait_within,
};

/// How long an agent's screen may take to appear (its start-up is seconds on a loaded machine).
pub const SCREEN_DEADLINE: Duration = Duration::from_secs(90);

/// A tmux server inside a network namespace of its own, and the launcher that holds it.
pub struct OfflineTmux {
    launcher: Child,
    server: Option<TmuxServer>,
}

impl OfflineTmux {
    /// Starts the server in its namespace, with a pane at each place of `layout`.
    pub fn start(env: &Sandbox, name: &str, layout: &[(PanePlace, PathBuf, &str)]) -> OfflineTmux {
        let script = env.root().join("codex_offline.py");
        fs::write(&script, codex_offline::LAUNCHER).unwrap();
        let mut launcher = agent_command(env, "unshare")
            .args(["-n", "--", "python3"])
            .arg(script)
            .args(["--port", &codex_offline::PORT.to_string(), "--log"])
            .arg(env.root().join("requests.log"))
            .args(["--", "sh", "-c", codex_offline::TMUX_SERVER, name])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot run unshare (util-linux), which isolates every agent run");
        let socket = tmux_tmpdir(env)
            .join(format!("tmux-{}", rustix::process::getuid().as_raw()))
            .join(name);
        wait_for("the namespace's tmux server", || {
            if let Some(status) = launcher.try_wait().unwrap() {
                let mut stderr = String::new();
                let _ =
                    std::io::Read::read_to_string(launcher.stderr.as_mut().unwrap(), &mut stderr);
                panic!(
                    "cannot create a network namespace for the agent, or start tmux in it \
                     ({status}): {stderr}"
                );
            }
            socket.exists().then_some(())
        });
        let server = TmuxServer::start(env, name, layout);
        OfflineTmux {
            launcher,
            server: Some(server),
        }
    }

    /// The server, driven from outside the namespace.
    pub fn server(&self) -> &TmuxServer {
        self.server.as_ref().unwrap()
    }
}

impl Drop for OfflineTmux {
    fn drop(&mut self) {
        drop(self.server.take());
        // The end of its stdin ends the launcher's command; it then kills, by pid, every process
        // left in the namespace (an agent's daemon included) and exits.
        drop(self.launcher.stdin.take());
        let _ = self.launcher.wait();
    }
}

/// Waits for `probe` up to [`SCREEN_DEADLINE`].
pub fn wait_for<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    wait_within(SCREEN_DEADLINE, what, probe)
}

/// Waits until the pane `target` shows `text`.
pub fn screen_shows(server: &TmuxServer, target: &str, text: &str) {
    let started = Instant::now();
    loop {
        let screen = server.capture(target);
        if screen.contains(text) {
            return;
        }
        assert!(
            started.elapsed() < SCREEN_DEADLINE,
            "gave up after {SCREEN_DEADLINE:?} waiting for {text:?} on {target}, which shows:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Types `text` into the pane's input and waits until it shows there, typing it again when it
/// has not shown after a while: keys an agent gets while it still redraws (Gemini CLI right
/// after a `/clear`, on a loaded machine) are dropped, and the input comes back empty.
pub fn typed(server: &TmuxServer, target: &str, text: &str) {
    const RETYPE_AFTER: Duration = Duration::from_secs(10);
    let started = Instant::now();
    let mut last_typed = Instant::now();
    keys(server, target, text);
    loop {
        let screen = server.capture(target);
        if screen.contains(text) {
            return;
        }
        assert!(
            started.elapsed() < SCREEN_DEADLINE,
            "gave up after {SCREEN_DEADLINE:?} waiting for the typed {text:?} on {target}, which shows:\n{screen}"
        );
        if last_typed.elapsed() > RETYPE_AFTER {
            keys(server, target, text);
            last_typed = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Types `text` into the pane.
pub fn keys(server: &TmuxServer, target: &str, text: &str) {
    server.tmux(&["send-keys", "-t", target, "-l", text]);
}

/// Presses Enter in the pane.
pub fn enter(server: &TmuxServer, target: &str) {
    server.tmux(&["send-keys", "-t", target, "Enter"]);
}

/// Presses Enter in the pane until `done` holds, again each 3 s (an agent may take keys that
/// arrive in a burst as a paste, in which an Enter is a new line), up to [`SCREEN_DEADLINE`];
/// past it, fails with `what` and what `report` says.
pub fn enter_until(
    server: &TmuxServer,
    target: &str,
    what: &str,
    mut done: impl FnMut() -> bool,
    report: impl Fn() -> String,
) {
    let started = Instant::now();
    loop {
        enter(server, target);
        let submitted = Instant::now();
        while submitted.elapsed() < Duration::from_secs(3) {
            if done() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            started.elapsed() < SCREEN_DEADLINE,
            "{what} on {target} not done within {SCREEN_DEADLINE:?}; it shows:\n{}\n{}",
            server.capture(target),
            report()
        );
    }
}

/// Types a prompt, waits for it on the screen and submits it until the pane shows one more
/// `answer` than before; on failure also shows what the mock received and the hook log.
pub fn prompt(env: &Sandbox, server: &TmuxServer, target: &str, text: &str, answer: &str) {
    let answers = || server.capture(target).matches(answer).count();
    let before = answers();
    typed(server, target, text);
    enter_until(
        server,
        target,
        &format!("the answer to {text:?}"),
        || answers() > before,
        || {
            format!(
                "the mock received:\n{}\nhook.log:\n{}",
                fs::read_to_string(env.root().join("requests.log")).unwrap_or_default(),
                hook_log(env)
            )
        },
    );
}

/// The entries of the index, or none when nothing was ever recorded.
pub fn entries(env: &Sandbox) -> serde_json::Map<String, Value> {
    match env.index_bytes() {
        None => serde_json::Map::new(),
        Some(_) => env.entries(),
    }
}

/// The session the index holds for `surface`, once there is an index.
pub fn held(env: &Sandbox, surface: &str) -> Option<String> {
    env.index_bytes()?;
    Some(env.entry(surface)?["sessionId"].as_str()?.to_string())
}

/// Whether a `crash-resume hook` is still running (a hook of an event just seen may be).
pub fn hooks_running() -> bool {
    test_support::process::all_pids().into_iter().any(|pid| {
        test_support::process::command_line(pid).is_some_and(|words| {
            words.first().is_some_and(|first| first == crate::BIN)
                && words.iter().any(|word| word == "hook")
        })
    })
}

/// Every process below `pid`.
pub fn descendants(pid: u32) -> Vec<u32> {
    test_support::process::descendants(pid)
}

/// Whether `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    test_support::process::is_alive(pid)
}

/// crash-resume's hooks installed by `hook install <agent>`; returns what the install said.
pub fn install_hooks(env: &Sandbox, agent: &str) -> String {
    let output = crash_resume_agent(env)
        .args(["hook", "install", agent])
        .output()
        .unwrap();
    assert!(output.status.success(), "hook install {agent}: {output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Pane `pane` of window 0 of tmux session `session`, with its shell in `dir`.
pub fn place(session: &str, pane: u32, dir: &Path) -> (PanePlace, PathBuf, &'static str) {
    (
        PanePlace::new(session, 0, pane),
        dir.to_path_buf(),
        PANE_SHELL,
    )
}

/// `tmux kill-server` with `agent` running in pane `target`: waits for the pane's processes
/// and the hooks to end, then holds that the index still has `session` for `surface`, not
/// ended (no pane is left to name), and that the agent's end hook ran after the server died.
pub fn kill_server_ends_nothing(
    env: &Sandbox,
    server: &TmuxServer,
    agent: &str,
    (target, surface): (&str, &str),
    session: &str,
) {
    let shell: u32 = server.display(target, "#{pane_pid}").parse().unwrap();
    let family = descendants(shell);
    assert!(!family.is_empty(), "{agent} runs under {target}'s shell");
    server.tmux(&["kill-server"]);
    wait_for(&format!("{target}'s processes to end"), || {
        family.iter().all(|pid| !alive(*pid)).then_some(())
    });
    wait_for("the hooks to finish", || (!hooks_running()).then_some(()));
    let entry = env.entry(surface).unwrap();
    assert_eq!(entry["sessionId"], session);
    assert_eq!(
        entry.get("ended_at"),
        None,
        "a killed server is no end: {entry}"
    );
    let log = hook_log(env);
    assert!(
        log.contains(&format!(
            "session {session} ended where no surface can be named any more"
        )),
        "{agent}'s session end ran after the server died: {log}"
    );
}

/// `restore --all`'s plan: `offered` resumes with a command that `cd`s and ends with
/// `command_end`; `ended` ended cleanly and is not offered. Returns their plan rows.
pub fn restore_offers_one_not_the_ended(
    env: &Sandbox,
    offered: &str,
    command_end: &str,
    ended: &str,
) -> (Value, Value) {
    let plan = plan_by_surface(&restore(env, true, &["--all"]).stdout);
    let a = plan[offered].clone();
    assert_eq!(a["verdict"], "resume", "{a}");
    assert!(a["why"].as_str().unwrap().starts_with("offered"), "{a}");
    let command = a["command"].as_str().unwrap();
    assert!(
        command.starts_with("cd ") && command.ends_with(command_end),
        "{a}"
    );
    let b = plan[ended].clone();
    assert_eq!(b["ended_cleanly"], true, "{b}");
    assert!(b["why"].as_str().unwrap().starts_with("not offered"), "{b}");
    (a, b)
}

/// The surface capture records for the pane `<session>:<window>.<pane>` of the sandbox's
/// default tmux server (the one these tests start): `tmux:<socket path>:<session>:<window>.<pane>`.
pub fn recorded(env: &Sandbox, session: &str, window: u32, pane: u32) -> String {
    test_support::world::server_surface(
        env,
        &crate::harness::server_name(session),
        &PanePlace::new(session, window, pane),
    )
}
