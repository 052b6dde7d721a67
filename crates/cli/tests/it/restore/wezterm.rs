//! `restore --apply wezterm|cmux` through the fakes that behave as the real ones were measured to
//! (`test_support::fake_terminal`), each starting the stand-in agent as a real process. Neither
//! backend can tell a busy place (they never take one over), so what keeps a conversation from
//! opening twice is the liveness rule (a process runs the agent with `CRASH_RESUME_SURFACE`
//! naming the surface) and the restore's claim, which the resumed agent's own SessionStart does
//! not clear. A claim of a killed restore holds nothing; a cmux whose listen backlog is full
//! costs the restore its deadline, not its life.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use test_support::fake_terminal::{CmuxMode, FakeCmux, FakeWezterm, full_socket};
use test_support::world::{agent_command, bin_dir};

use super::{HOUR, bind};
use crate::BIN;
use crate::Sandbox;
use crate::harness::{
    claude_dir, claude_runs, crash_resume_agent, git_work_dir, uuid, wait_until, write_transcript,
};

/// A sandbox whose stand-in `claude` fires the real SessionStart hook and stays, with
/// `surface` bound to a resumable Claude session.
fn world(surface: &str) -> Sandbox {
    let env = Sandbox::default();
    test_support::world::install_claude_stand_in_that_stays_as_claude(&env, Path::new(BIN));
    let config = claude_dir(&env);
    let cwd = git_work_dir(&env, "proj", "");
    let session = uuid(1);
    write_transcript(&config, &cwd, &session, HOUR);
    bind(&env, surface, &session, &cwd);
    env
}

/// `crash-resume --json restore --apply ARGS` in the agent's environment; its output.
fn apply(env: &Sandbox, args: &[&str]) -> Output {
    crash_resume_agent(env)
        .args(["--json", "restore", "--apply"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What the restore did with `surface` (its `outcome`).
fn outcome(output: &Output, surface: &str) -> Value {
    item(output, surface)["outcome"].clone()
}

/// Left alone since the agent `pid` runs the surface: held by it in the plan, or, when it
/// showed only once the plan was made, skipped as running.
fn assert_left_to(output: &Output, surface: &str, pid: u32) {
    let item = item(output, surface);
    let held = item["held_by"] == serde_json::json!({"kind": "agent", "pid": pid})
        && item["outcome"].is_null();
    let skipped = item["outcome"]
        == serde_json::json!({"outcome": "skipped", "reason": {"kind": "running", "pid": pid}});
    assert!(held || skipped, "{item}");
}

/// The plan item of `surface`.
fn item(output: &Output, surface: &str) -> Value {
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{error}: {}",
            String::from_utf8_lossy(&output.stderr).into_owned()
        )
    });
    plan["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["surface"] == surface)
        .unwrap_or_else(|| panic!("{surface} in {plan}"))
        .clone()
}

/// Waits until the stand-in agent the restore started runs as `claude` (it has fired its
/// SessionStart hook and stays) below `pid`; its pid.
fn agent_below(pid: u32) -> u32 {
    wait_until("the resumed agent to run", || {
        test_support::process::descendants(pid)
            .into_iter()
            .chain([pid])
            .find(|below| {
                test_support::process::command_line(*below)
                    .is_some_and(|words| words.first().is_some_and(|first| first == "claude"))
            })
    })
}

fn claim_of(env: &Sandbox, surface: &str) -> Option<Value> {
    env.entries()[surface].get("restore_claimed_at").cloned()
}

#[test]
fn two_wezterm_restores_in_a_row_open_the_conversation_once() {
    let surface = "wezterm:3";
    let env = world(surface);
    let wezterm = FakeWezterm::install(&bin_dir(&env));

    let first = apply(&env, &["wezterm"]);
    assert_eq!(outcome(&first, surface)["outcome"], "started", "{first:?}");
    let panes = wezterm.panes();
    assert_eq!(panes.len(), 1, "{panes:?}");
    let agent = agent_below(panes[0].1);
    // The agent's own SessionStart recorded it, and its claim stays.
    assert_eq!(claude_runs(&env).len(), 1);
    assert!(
        claim_of(&env, surface).is_some(),
        "{:?}",
        env.entry(surface)
    );

    let second = apply(&env, &["wezterm"]);
    assert_left_to(&second, surface, agent);
    assert_eq!(wezterm.panes().len(), 1);
    assert_eq!(claude_runs(&env).len(), 1);

    // WezTerm restarts (its agent killed): pane ids count from 0 again, and the user's new
    // panes take ids the index recorded. Pane 3 is now a shell of the user's: it is not the
    // surface's, and nothing is started in it; the agent gone, the conversation opens again.
    wezterm.restart();
    for _ in 0..4 {
        let output = Command::new(bin_dir(&env).join("wezterm"))
            .args(["cli", "spawn", "--new-window", "--", "sleep", "600"])
            .env("HOME", env.home())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    let users = wezterm.panes();
    assert_eq!(
        users.iter().map(|pane| pane.0).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let third = apply(&env, &["wezterm"]);
    assert_eq!(outcome(&third, surface)["outcome"], "started", "{third:?}");
    let panes = wezterm.panes();
    assert_eq!(panes.len(), 5, "{panes:?}");
    agent_below(panes[4].1);
    assert_eq!(claude_runs(&env).len(), 2);
    for (_, pid, _) in users {
        assert!(
            test_support::process::is_alive(pid),
            "the user's pane {pid}"
        );
    }
}

#[test]
fn the_fake_wezterm_starts_a_pane_without_a_dir_in_home_and_needs_a_window_outside_a_pane() {
    let env = Sandbox::default();
    std::fs::create_dir_all(bin_dir(&env)).unwrap();
    let wezterm = FakeWezterm::install(&bin_dir(&env));
    let program = bin_dir(&env).join("wezterm");
    let spawn = |args: &[&str]| {
        Command::new(&program)
            .args(["cli", "spawn"])
            .args(args)
            .args(["--", "sleep", "600"])
            .env("HOME", env.home())
            .env_remove("WEZTERM_PANE")
            .output()
            .unwrap()
    };
    assert!(!spawn(&[]).status.success(), "outside a pane");
    let made = spawn(&["--new-window", "--cwd", "/no/such/dir"]);
    assert_eq!(String::from_utf8_lossy(&made.stdout), "0\n");
    assert_eq!(wezterm.panes()[0].2, env.home().to_str().unwrap());
    let listing = Command::new(&program)
        .args(["cli", "list", "--format", "json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listing.stdout).unwrap();
    for key in [
        "pane_id",
        "window_id",
        "tab_id",
        "workspace",
        "cwd",
        "title",
        "tty_name",
    ] {
        assert!(listed[0].get(key).is_some(), "{key} in {listed}");
    }
    assert!(listed[0]["cwd"].as_str().unwrap().starts_with("file://"));
}

/// A fake cmux on a socket in the sandbox, starting commands with the agent's environment.
fn fake_cmux(env: &Sandbox) -> FakeCmux {
    let socket = env.root().join("cmux.sock");
    // The agent's environment, as cmux would give its terminals.
    let template = agent_command(env, "/bin/sh");
    let vars: Vec<(OsString, Option<OsString>)> = template
        .get_envs()
        .map(|(name, value)| (name.to_os_string(), value.map(OsStr::to_os_string)))
        .collect();
    FakeCmux::serve(&socket, &env.home(), move || {
        let mut command = Command::new("/bin/sh");
        for (name, value) in &vars {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        command
    })
}

fn cmux_args(cmux: &FakeCmux) -> Vec<String> {
    vec![
        "cmux".to_string(),
        "--cmux-socket".to_string(),
        cmux.socket().to_string_lossy().into_owned(),
    ]
}

fn args(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

#[test]
fn two_cmux_restores_in_a_row_open_the_conversation_once() {
    let surface = "cmux:5F0C7A4E";
    let env = world(surface);
    let cmux = fake_cmux(&env);
    let words = cmux_args(&cmux);

    let first = apply(&env, &args(&words));
    assert_eq!(outcome(&first, surface)["outcome"], "started", "{first:?}");
    cmux.next_request();
    let agent = agent_below(cmux.started()[0]);
    assert!(
        claim_of(&env, surface).is_some(),
        "{:?}",
        env.entry(surface)
    );

    let second = apply(&env, &args(&words));
    assert_left_to(&second, surface, agent);
    assert_eq!(cmux.started().len(), 1);
    assert_eq!(claude_runs(&env).len(), 1);
}

/// A restore killed while cmux holds its request leaves a claim that names it; the next restore
/// finds that process gone and opens the surface at once (a claim used to hold 10 minutes).
#[test]
fn a_killed_restores_claim_does_not_keep_the_next_restore_away() {
    let surface = "cmux:5F0C7A4E";
    let env = world(surface);
    let cmux = fake_cmux(&env);
    cmux.set_mode(CmuxMode::Hold);
    let words = cmux_args(&cmux);
    let mut killed = crash_resume_agent(&env)
        .args(["--json", "restore", "--apply"])
        .args(args(&words))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    cmux.next_request();
    assert!(claim_of(&env, surface).is_some(), "claimed while it opens");
    killed.kill().unwrap();
    killed.wait().unwrap();

    cmux.set_mode(CmuxMode::Answer);
    let next = apply(&env, &args(&words));
    assert_eq!(outcome(&next, surface)["outcome"], "started", "{next:?}");
    cmux.next_request();
    agent_below(cmux.started()[0]);
}

/// A cmux that accepts no connection (its listen backlog full) fails the surface at the
/// restore's deadline; the restore ends, exit 1, saying so.
#[test]
fn a_cmux_whose_backlog_is_full_gives_up_at_the_deadline() {
    let surface = "cmux:5F0C7A4E";
    let env = world(surface);
    let socket = env.root().join("full.sock");
    let full = full_socket(&socket);
    let started = Instant::now();
    let mut restore = crash_resume_agent(&env)
        .args(["--json", "restore", "--apply", "cmux", "--cmux-socket"])
        .arg(&socket)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_until("the restore to give up", || restore.try_wait().unwrap());
    let output = restore.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cmux did not answer within 5s"), "{stderr}");
    assert_eq!(claim_of(&env, surface), None, "the claim was taken back");
    drop(full);
}
