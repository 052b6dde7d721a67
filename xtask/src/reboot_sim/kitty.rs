//! `--mux kitty`: the crash-and-resume story in a real kitty (0.26 under `xvfb-run`, its config
//! and XDG dirs in the sandbox, remote control on a socket in the sandbox's volatile dir).
//!
//! Agents (the stand-in, resuming a conversation already on disk, so nothing is ever typed
//! into a window) run in four kitty windows, each bound by the real hook; one of them works in
//! a dir named like a command (`it's $(touch fmt-ran)`). One window is closed (its agent dies
//! with it, its session not ended), then kitty is killed with SIGKILL and everything volatile
//! dropped, its socket file included. A new kitty numbers its windows from 1 again; a window
//! there running `sleep` gets the id an agent had. Two `restore --apply kitty` run at once,
//! then, once the agents are up, a third. The checks: each session loaded exactly once, in its
//! recorded dir, in a window that carries its surface; the busy window untouched; the crafted
//! dir ran nothing; the third restore started nothing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::checks::Row;
use super::sandbox::{Sandbox, create_dir, sh_quote};
use super::{wait_for, wait_until};
use crate::kitty::{Kitty, Window};
use test_support::stand_in::{Event, Kind, read_events};

/// How long the agents may take to come up in their windows.
const DEADLINE: Duration = Duration::from_secs(30);

/// The shell of kitty's own windows.
const SHELL: &str = "bash --norc --noprofile";

/// The agents' windows: the case, its dir under the sandbox's work dir, whether its window is
/// closed before the crash.
const CASES: [(&str, &str, bool); 4] = [
    ("plain", "kitty-plain", false),
    ("plain, same dir", "kitty-plain", false),
    ("window closed", "kitty-closed", true),
    (
        "crafted dir",
        "it's $(touch fmt-ran) `touch fmt-ran`; x",
        false,
    ),
];

/// How many windows the story runs agents in.
pub const WINDOWS: usize = CASES.len();

/// One agent before the crash.
#[derive(Debug)]
struct Agent {
    case: &'static str,
    dir: PathBuf,
    session: String,
    surface: String,
}

pub fn simulate(sandbox: &Sandbox) -> Result<Vec<Row>> {
    let installed = sandbox.crash_resume_ok(&["hook", "install", "claude"])?;
    eprintln!("reboot-sim: {}", installed.trim());
    let socket = sandbox.volatile.join("kitty.sock");
    let first = start_kitty(sandbox, &socket)?;
    let first_pid = first.pid()?;

    let mut agents = Vec::new();
    for (n, (case, dir, _)) in CASES.iter().enumerate() {
        let dir = sandbox.work.join(dir);
        create_dir(&dir)?;
        let dir = dir.canonicalize()?;
        let session = format!("{n:08x}-4b1d-4c1a-9d2b-00c0ffee0000");
        write_transcript(sandbox, &dir, &session)?;
        let script = format!("claude --resume {}; exec {SHELL}", sh_quote(&session));
        let id = first.launch(&dir, &["/bin/sh", "-c", &script])?;
        let surface = format!("kitty:{first_pid}:{id}");
        wait_until(DEADLINE, &format!("the hook to record {surface}"), || {
            Ok(list(sandbox)?
                .iter()
                .any(|entry| entry["surfaceId"] == surface.as_str()))
        })?;
        agents.push(Agent {
            case,
            dir,
            session,
            surface,
        });
    }
    eprintln!("reboot-sim: {} kitty windows bound; crashing", agents.len());
    for ((_, _, closed), agent) in CASES.iter().zip(&agents) {
        if *closed {
            let id = agent.surface.rsplit(':').next().unwrap_or_default();
            first.call("close-window", &json!({"match": format!("id:{id}")}))?;
        }
    }
    super::sandbox::kill(first_pid);
    wait_until(DEADLINE, "the killed kitty to be gone", || {
        Ok(!matches!(
            test_support::process::process_state(first_pid),
            Some(state) if state != 'Z'
        ))
    })?;
    drop(first);
    // The reboot: what is volatile is gone, the socket file with it.
    fs::remove_dir_all(&sandbox.volatile)
        .with_context(|| format!("cannot remove {}", sandbox.volatile.display()))?;
    create_dir(&sandbox.volatile)?;
    sandbox.create_volatile()?;

    let log_offset = fs::metadata(sandbox.log_path()).map_or(0, |meta| meta.len());
    let second = start_kitty(sandbox, &socket)?;
    let busy = second.launch(&sandbox.home, &["sleep", "600"])?;
    let busy_before = window(&second, busy)?;

    // Two restores at once, then a third once every agent is up.
    let applies: Vec<_> = (0..2)
        .map(|_| {
            sandbox
                .command(sandbox.bin.join("crash-resume"))
                .args(["--json", "restore", "--apply", "kitty", "--kitty-socket"])
                .arg(second.address())
                .current_dir(&sandbox.home)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        })
        .collect::<std::io::Result<_>>()?;
    let mut codes = Vec::new();
    for apply in applies {
        let output = apply.wait_with_output()?;
        codes.push(output.status.code());
    }
    let loaded = |events: &[Event], session: &str| {
        events
            .iter()
            .filter(|event| event.kind == Kind::Start && event.loaded.as_deref() == Some(session))
            .cloned()
            .collect::<Vec<_>>()
    };
    let events = wait_for(DEADLINE, "every agent to start again", || {
        let events = read_events(&sandbox.log_path(), log_offset)?;
        let up = agents
            .iter()
            .all(|agent| !loaded(&events, &agent.session).is_empty());
        Ok(up.then_some(events))
    })?;
    for agent in &agents {
        wait_until(
            DEADLINE,
            &format!("the agent of {} to run", agent.surface),
            || {
                Ok(second.windows()?.iter().any(|window| {
                    window.tag.as_deref() == Some(agent.surface.as_str())
                        && window
                            .foreground
                            .iter()
                            .any(|program| program == "stand-in-claude")
                }))
            },
        )?;
    }
    let windows = second.windows()?;
    let third = sandbox
        .command(sandbox.bin.join("crash-resume"))
        .args(["--json", "restore", "--apply", "kitty", "--kitty-socket"])
        .arg(second.address())
        .current_dir(&sandbox.home)
        .output()?;
    let third_plan: Value = serde_json::from_slice(&third.stdout).unwrap_or(Value::Null);
    let after_third = read_events(&sandbox.log_path(), log_offset)?;

    let mut rows = Vec::new();
    for agent in &agents {
        let starts = loaded(&events, &agent.session);
        let tagged: Vec<&Window> = windows
            .iter()
            .filter(|window| window.tag.as_deref() == Some(agent.surface.as_str()))
            .collect();
        let mut problems = Vec::new();
        if starts.len() != 1 {
            problems.push(format!("loaded {} times", starts.len()));
        }
        if let Some(start) = starts.first()
            && Path::new(&start.cwd) != agent.dir
        {
            problems.push(format!("ran in {}, not {}", start.cwd, agent.dir.display()));
        }
        if tagged.len() != 1 {
            problems.push(format!("{} windows carry the surface", tagged.len()));
        }
        rows.push(Row {
            surface: agent.surface.clone(),
            case: agent.case.to_string(),
            expected: format!("resume {} in a new window", short(&agent.session)),
            got: match starts.first() {
                Some(_) => format!(
                    "resume {} in {} window{}",
                    short(&agent.session),
                    tagged.len(),
                    if tagged.len() == 1 { "" } else { "s" }
                ),
                None => "not resumed".to_string(),
            },
            problems,
        });
    }
    let crafted = sandbox.work.join("fmt-ran").exists()
        || sandbox.home.join("fmt-ran").exists()
        || agents
            .iter()
            .any(|agent| agent.dir.join("fmt-ran").exists());
    rows.push(row(
        "kitty:(crafted dir)",
        "dir reaches kitty inert",
        "nothing ran",
        if crafted {
            "fmt-ran created"
        } else {
            "nothing ran"
        },
    ));
    // The same window with the same process in it.
    let busy_after = windows
        .iter()
        .find(|window| window.id == busy)
        .map(|window| (window.pid, window.tab));
    rows.push(row(
        &format!("kitty:{busy}"),
        "busy window, an agent's old id",
        "untouched",
        if busy_after == Some((busy_before.pid, busy_before.tab)) {
            "untouched"
        } else {
            "changed"
        },
    ));
    rows.push(row(
        "(restores at once)",
        "2 restores at once",
        "both exit 0",
        &if codes.iter().all(|code| *code == Some(0)) {
            "both exit 0".to_string()
        } else {
            format!("exit codes {codes:?}")
        },
    ));
    let started_again = after_third.len() != events.len()
        || second.windows()?.len() != windows.len()
        || third.status.code() != Some(0);
    let started_by_third = third_plan["surfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["outcome"]["outcome"] == "started")
        .count();
    rows.push(row(
        "(all windows)",
        "a third restore",
        "starts nothing",
        if started_again || started_by_third > 0 {
            "started something"
        } else {
            "starts nothing"
        },
    ));
    Ok(rows)
}

/// A row whose `got` must equal its `expected`.
fn row(surface: &str, case: &str, expected: &str, got: &str) -> Row {
    Row {
        surface: surface.to_string(),
        case: case.to_string(),
        expected: expected.to_string(),
        got: got.to_string(),
        problems: if got == expected {
            Vec::new()
        } else {
            vec![format!("expected {expected}, got {got}")]
        },
    }
}

fn short(session: &str) -> &str {
    session.get(..8).unwrap_or(session)
}

fn start_kitty(sandbox: &Sandbox, socket: &Path) -> Result<Kitty> {
    if socket.as_os_str().len() > 100 {
        bail!(
            "the kitty socket path {} is too long for a unix socket; use a shorter build dir (CARGO_TARGET_DIR)",
            socket.display()
        );
    }
    for dir in ["cache", "data", "kitty"] {
        create_dir(&sandbox.root.join(dir))?;
    }
    let mut xvfb_run = sandbox.command("xvfb-run");
    xvfb_run
        .env("XDG_CACHE_HOME", sandbox.root.join("cache"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_RUNTIME_DIR", sandbox.tmp_dir())
        .env("KITTY_CONFIG_DIRECTORY", sandbox.root.join("kitty"));
    Kitty::start(xvfb_run, socket, Some(SHELL))
}

fn window(kitty: &Kitty, id: u64) -> Result<Window> {
    kitty
        .windows()?
        .into_iter()
        .find(|window| window.id == id)
        .with_context(|| format!("kitty has no window {id}"))
}

/// `crash-resume --json list`'s entries.
fn list(sandbox: &Sandbox) -> Result<Vec<Value>> {
    let listed = sandbox.crash_resume(&["--json", "list"])?;
    let document: Value = serde_json::from_slice(&listed.stdout).unwrap_or(Value::Null);
    Ok(document["entries"].as_array().cloned().unwrap_or_default())
}

/// A conversation of `session` where Claude Code keeps it for `dir`, so that the stand-in's
/// `--resume` loads it.
fn write_transcript(sandbox: &Sandbox, dir: &Path, session: &str) -> Result<()> {
    let project = sandbox
        .claude_dir
        .join("projects")
        .join(preflight::claude::project_folder_name(
            &dir.to_string_lossy(),
        ));
    create_dir(&project)?;
    let user = test_support::transcript::ClaudeLine {
        session,
        cwd: dir,
        uuid: "5a1e0000-0000-4000-8000-000000000001",
        parent: None,
        timestamp: "2026-11-30T10:00:00.000Z",
    };
    let assistant = test_support::transcript::ClaudeLine {
        uuid: "5a1e0000-0000-4000-8000-000000000002",
        parent: Some("5a1e0000-0000-4000-8000-000000000001"),
        timestamp: "2026-11-30T10:00:02.000Z",
        ..user
    };
    let lines = [user.user("hi"), assistant.assistant("msg_1", "hello")];
    let path = project.join(format!("{session}.jsonl"));
    fs::write(&path, test_support::transcript::jsonl(&lines))
        .with_context(|| format!("cannot write {}", path.display()))
}
