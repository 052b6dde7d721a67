//! Capture with the real Codex CLI 0.171.0 (installed by `cargo xtask codex-cli install`): its
//! TUI in two tmux panes, offline, with the hooks that `crash-resume hook install codex` writes.
//!
//! - Daemon mode (Codex's default): the hooks run inside `codex app-server --managed-daemon`,
//!   whose environment is the first pane's; nothing may be recorded (in particular not pane B's
//!   session under pane A's surface), and `hook.log` says why once.
//! - `--no-daemon`: each pane's session is recorded under its own surface; `/quit` in one pane
//!   marks its session ended, killing the other pane does not, and `restore` offers the killed
//!   one only, saying why.
//!
//! Everything runs in a network namespace with loopback alone: the tmux server is started in
//! it by `codex_offline.py` (`crates/test-support/src`, which serves the Responses API mock on 127.0.0.1), so every pane,
//! every Codex process and the daemon are there too, and the launcher kills each of them by pid
//! when the test lets go of it. The test drives tmux through its socket from outside.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use test_support::codex_offline;

use crate::Sandbox;
use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, agent_command, codex_home, crash_resume_agent, hook_log,
    make_dir, plan_by_surface, restore, server_name, tmux_tmpdir, wait_within,
};

/// How long a Codex screen may take to appear (its start-up is seconds on a loaded machine).
const SCREEN_DEADLINE: Duration = Duration::from_secs(90);

fn installed_codex() -> PathBuf {
    codex_offline::installed_cli(env!("CARGO_TARGET_TMPDIR"))
}

/// A tmux server inside a network namespace of its own, and the launcher that holds it.
struct OfflineTmux {
    launcher: Child,
    server: Option<TmuxServer>,
}

impl OfflineTmux {
    fn start(env: &Sandbox, name: &str, project: &Path) -> OfflineTmux {
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
            .expect("cannot run unshare (util-linux), which isolates every Codex run");
        let socket = tmux_tmpdir(env)
            .join(format!("tmux-{}", rustix::process::getuid().as_raw()))
            .join(name);
        wait_for("the namespace's tmux server", || {
            if let Some(status) = launcher.try_wait().unwrap() {
                let mut stderr = String::new();
                let _ =
                    std::io::Read::read_to_string(launcher.stderr.as_mut().unwrap(), &mut stderr);
                panic!(
                    "cannot create a network namespace for Codex, or start tmux in it \
                     ({status}): {stderr}"
                );
            }
            socket.exists().then_some(())
        });
        let place = |pane| {
            (
                PanePlace::new("codex", 0, pane),
                project.to_path_buf(),
                PANE_SHELL,
            )
        };
        let server = TmuxServer::start(env, name, &[place(0), place(1)]);
        OfflineTmux {
            launcher,
            server: Some(server),
        }
    }

    fn server(&self) -> &TmuxServer {
        self.server.as_ref().unwrap()
    }
}

impl Drop for OfflineTmux {
    fn drop(&mut self) {
        drop(self.server.take());
        // The end of its stdin ends the launcher's command; it then kills, by pid, every process
        // left in the namespace (the Codex daemon included) and exits.
        drop(self.launcher.stdin.take());
        let _ = self.launcher.wait();
    }
}

fn wait_for<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    wait_within(SCREEN_DEADLINE, what, probe)
}

fn screen_shows(server: &TmuxServer, target: &str, text: &str) {
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

fn keys(server: &TmuxServer, target: &str, text: &str) {
    server.tmux(&["send-keys", "-t", target, "-l", text]);
}

fn enter(server: &TmuxServer, target: &str) {
    server.tmux(&["send-keys", "-t", target, "Enter"]);
}

/// A Codex home for the mock, and crash-resume's hooks installed by `hook install codex`.
fn codex_setup(env: &Sandbox, project: &Path) {
    let home = codex_home(env);
    fs::create_dir_all(&home).unwrap();
    fs::write(
        home.join("config.toml"),
        codex_offline::config_toml(&[project]),
    )
    .unwrap();
    let output = crash_resume_agent(env)
        .args(["hook", "install", "codex"])
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

/// The entries of the index, or none when nothing was ever recorded.
fn entries(env: &Sandbox) -> serde_json::Map<String, Value> {
    match env.index_bytes() {
        None => serde_json::Map::new(),
        Some(_) => env.entries(),
    }
}

/// Whether a `crash-resume hook` is still running (a hook of an event just seen may be).
fn hooks_running() -> bool {
    let Ok(listing) = fs::read_dir("/proc") else {
        return false;
    };
    listing.flatten().any(|entry| {
        fs::read(entry.path().join("cmdline")).is_ok_and(|bytes| {
            let words: Vec<&[u8]> = bytes.split(|byte| *byte == 0).collect();
            words
                .first()
                .is_some_and(|first| *first == crate::BIN.as_bytes())
                && words.iter().any(|word| *word == b"hook")
        })
    })
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
    codex_setup(env, &project);
    let tmux = OfflineTmux::start(env, &server_name(name), &project);
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
    assert_eq!(
        log.matches("Codex runs its hooks in its shared daemon")
            .count(),
        1,
        "said once: {log}"
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
    let surface_a = "tmux:codex:0.0";
    let surface_b = "tmux:codex:0.1";
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

/// Every process below `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        let children = fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        for child in children
            .split_whitespace()
            .filter_map(|pid| pid.parse().ok())
        {
            found.push(child);
            queue.push(child);
        }
    }
    found
}

/// Whether `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}
