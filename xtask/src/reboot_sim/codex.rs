//! `--real-codex`: the crash-and-resume story with the real Codex CLI 0.171.0 (`cargo xtask
//! codex-cli install`) in tmux panes, offline.
//!
//! The tmux server runs in a network namespace with loopback alone (`offline::Namespace`), whose
//! launcher serves a mock of the Responses API on 127.0.0.1 and, when the simulation lets go of
//! it, SIGKILLs every process left in the namespace by pid: the panes, every Codex TUI and the
//! Codex daemon. That is the crash. The panes, one per case:
//!
//! - `--no-daemon`, crashed: recorded by the hook in its own pane; `restore` resumes it
//!   (`cd <dir> && codex resume <id>`), and the TUI loads that very session;
//! - `--no-daemon`, `/quit`: Codex's SessionEnd marks it ended; not restored;
//! - `--no-daemon`, rollout deleted after the crash: `restore` says why it starts fresh;
//! - daemon mode (Codex's default): the hook runs in the daemon, which hides the pane, so nothing
//!   is recorded (and nothing misattributed); `hook.log` says why.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::cases::{self, Slot};
use super::checks::Row;
use super::offline::{
    Namespace, Restored, SCREEN_DEADLINE, case_slots, end_kind, entry, find, list, requests_row,
    restore_all_ways, screen, screen_shows, session_of_case, short, start_story,
};
use super::sandbox::{Sandbox, create_dir};
use super::wait_for;

/// The offline setup the Codex conformance tests use too (they alone look up the CLI there).
#[allow(dead_code)]
use test_support::codex_offline;

/// How many panes the story runs (one per case).
pub const PANES: usize = Case::ALL.len();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Crashed,
    Quit,
    RolloutDeleted,
    Daemon,
}

impl Case {
    const ALL: [Case; 4] = [
        Case::Crashed,
        Case::Quit,
        Case::RolloutDeleted,
        Case::Daemon,
    ];

    fn name(self) -> &'static str {
        match self {
            Case::Crashed => "codex --no-daemon, crashed",
            Case::Quit => "codex --no-daemon, /quit",
            Case::RolloutDeleted => "codex --no-daemon, rollout deleted",
            Case::Daemon => "codex (daemon mode)",
        }
    }

    fn slot(self, work: &Path) -> Slot {
        let (window, pane, dir) = match self {
            Case::Crashed => (0, 0, "codex-crashed"),
            Case::Quit => (0, 1, "codex-quit"),
            Case::RolloutDeleted => (0, 2, "codex-deleted"),
            Case::Daemon => (1, 0, "codex-daemon"),
        };
        Slot::new("codex", window, pane, work.join(dir))
    }

    fn prompt(self) -> String {
        format!("reboot-sim {}", self.name())
    }
}

/// The whole Codex story; one row per check.
pub fn simulate(sandbox: &Sandbox, cli: &Path) -> Result<Vec<Row>> {
    let codex_home = sandbox.home.join(".codex");
    create_dir(&codex_home)?;
    let slots = case_slots(&Case::ALL, |case| case.slot(&sandbox.work))?;
    write_config(&codex_home, &slots)?;
    let requests = sandbox.root.join("codex-requests.log");
    let (namespace, layout) = start_story(
        sandbox,
        ("codex", cli),
        &[("MOCK_API_KEY", "dummy".to_string())],
        &slots,
        &requests,
    )?;
    let mut first = true;
    for (case, slot) in &slots {
        let flag = if *case == Case::Daemon {
            ""
        } else {
            " --no-daemon"
        };
        cases::type_line(sandbox, slot, &format!("codex{flag}"))?;
        if first {
            answer_hook_review(sandbox, slot)?;
            first = false;
        }
        screen_shows(sandbox, slot, "Ask Codex")?;
        cases::type_line(sandbox, slot, &case.prompt())?;
        screen_shows(sandbox, slot, "• ok")?;
        if *case == Case::Quit {
            cases::type_line(sandbox, slot, "/quit")?;
            screen_shows(sandbox, slot, "To continue this session")?;
        }
    }
    let sessions: Vec<(Case, String)> = slots
        .iter()
        .map(|(case, _)| Ok((*case, session_of(&codex_home, &case.prompt())?)))
        .collect::<Result<_>>()?;
    let session = |case: Case| session_of_case(&sessions, case);
    wait_for(SCREEN_DEADLINE, "pane /quit's end to be recorded", || {
        Ok(entry(sandbox, &Case::Quit.slot(&sandbox.work).surface())?
            .filter(|entry| entry["ended_at"].is_u64()))
    })?;
    let before_crash = list(sandbox)?;

    eprintln!("reboot-sim: Codex panes played their cases; crashing");
    namespace.crash()?;
    fs::remove_file(rollout_of(&codex_home, &session(Case::RolloutDeleted))?)
        .context("cannot delete a rollout")?;
    fs::remove_dir_all(&sandbox.volatile)
        .with_context(|| format!("cannot remove {}", sandbox.volatile.display()))?;
    sandbox.create_volatile()?;
    let namespace = Namespace::start(sandbox, &requests)?;
    cases::start_server(sandbox, &layout)?;
    eprintln!("reboot-sim: rebooted; restoring");
    let Restored {
        plan,
        plan_all,
        applied,
    } = restore_all_ways(sandbox)?;

    let mut rows = Vec::new();
    for (case, slot) in &slots {
        let surface = slot.surface();
        let held = session(*case);
        let recorded = before_crash
            .iter()
            .find(|item| cases::value_names_place(&item["surfaceId"], &surface));
        let item = find(&plan, &surface);
        let item_all = find(&plan_all, &surface);
        let mut problems = Vec::new();
        let (expected, got) = match case {
            Case::Crashed => {
                let resumed = resumed_session(sandbox, slot, &codex_home, &held);
                if let Err(error) = &resumed {
                    problems.push(format!("{error:#}"));
                }
                if find(&applied, &surface)
                    .and_then(|item| item["applied"].as_str())
                    .is_none()
                {
                    problems.push("restore --apply tmux did not act on the pane".into());
                }
                let why = item.map(|item| item["why"].as_str().unwrap_or_default().to_string());
                if end_kind(item) != "offered" {
                    problems.push(format!("restore's reason: {why:?}"));
                }
                (
                    format!("resume {}", short(&held)),
                    match &resumed {
                        Ok(session) => format!("resume {}", short(session)),
                        Err(_) => "not resumed".to_string(),
                    },
                )
            }
            Case::Quit => {
                if item.is_some() {
                    problems.push("restore offers a session that ended with /quit".into());
                }
                let why = item_all
                    .and_then(|item| item["why"].as_str())
                    .unwrap_or_default();
                let ended = end_kind(item_all) == "ended";
                if !ended {
                    problems.push(format!("restore --all's reason: {why:?}"));
                }
                (
                    "ended, not offered".to_string(),
                    match item {
                        None if ended => "ended, not offered".to_string(),
                        None => "not offered".to_string(),
                        Some(_) => "offered".to_string(),
                    },
                )
            }
            Case::RolloutDeleted => {
                let verdict = item
                    .and_then(|item| item["verdict"].as_str())
                    .unwrap_or("-");
                let why = item
                    .and_then(|item| item["why"].as_str())
                    .unwrap_or_default();
                if verdict != "fresh"
                    || end_kind(item) != "cannot_resume"
                    || !why.contains("no rollout")
                {
                    problems.push(format!("verdict {verdict}, reason {why:?}"));
                }
                (
                    "fresh (no rollout)".to_string(),
                    format!(
                        "{verdict}{}",
                        if why.contains("no rollout") {
                            " (no rollout)"
                        } else {
                            ""
                        }
                    ),
                )
            }
            Case::Daemon => {
                if recorded.is_some() || item_all.is_some() {
                    problems.push(format!("recorded under the daemon: {recorded:?}"));
                }
                // Once per daemon: the one before the crash, and the one the resumed pane's
                // `codex resume` starts after the reboot.
                let log = fs::read_to_string(sandbox.state_dir().join("crash-resume/hook.log"))
                    .unwrap_or_default();
                let daemons: Vec<&str> = log
                    .lines()
                    .filter(|line| line.contains("Codex runs its hooks in its shared daemon"))
                    .filter_map(|line| line.split("(pid ").nth(1)?.split(',').next())
                    .collect();
                let mut distinct = daemons.clone();
                distinct.sort_unstable();
                distinct.dedup();
                if daemons.is_empty() || distinct.len() != daemons.len() {
                    problems.push(format!("hook.log should say why once per daemon: {log}"));
                }
                let said = daemons.len();
                (
                    "not recorded, logged per daemon".to_string(),
                    format!(
                        "{}, logged for {said} daemons",
                        if recorded.is_some() {
                            "recorded"
                        } else {
                            "not recorded"
                        }
                    ),
                )
            }
        };
        if *case != Case::Daemon
            && recorded.and_then(|entry| entry["sessionId"].as_str()) != Some(held.as_str())
        {
            problems.push(format!(
                "the index held {recorded:?} before the crash, not {held}"
            ));
        }
        rows.push(Row {
            surface,
            case: case.name().to_string(),
            expected,
            got,
            problems,
        });
    }
    rows.push(requests_row(
        &requests,
        "Codex",
        "POST /v1/responses only",
        |line| line == "POST /v1/responses",
    ));
    drop(namespace);
    Ok(rows)
}

/// `config.toml` for the mock, with each pane's dir trusted.
fn write_config(codex_home: &Path, slots: &[(Case, Slot)]) -> Result<()> {
    let dirs: Vec<&Path> = slots.iter().map(|(_, slot)| slot.dir.as_path()).collect();
    let path = codex_home.join("config.toml");
    fs::write(&path, codex_offline::config_toml(&dirs))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The first Codex to see the hooks asks to review them; "Trust all and continue" is saved in
/// config.toml. Keys that reach it while it draws can be dropped: answered while it shows.
fn answer_hook_review(sandbox: &Sandbox, slot: &Slot) -> Result<()> {
    screen_shows(sandbox, slot, "Hooks need review")?;
    wait_for(SCREEN_DEADLINE, "the hook review to be answered", || {
        if !screen(sandbox, slot)?.contains("Hooks need review") {
            return Ok(Some(()));
        }
        sandbox.tmux(&["send-keys", "-t", &slot.target(), "2"])?;
        sandbox.tmux(&["send-keys", "-t", &slot.target(), "Enter"])?;
        let answered = wait_for(Duration::from_secs(2), "the dialog to close", || {
            Ok((!screen(sandbox, slot)?.contains("Hooks need review")).then_some(()))
        });
        Ok(answered.ok())
    })
}

/// The rollouts under `codex_home/sessions`.
fn rollouts(codex_home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![codex_home.join("sessions")];
    while let Some(dir) = dirs.pop() {
        for item in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = item.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                found.push(path);
            }
        }
    }
    found
}

/// The session whose rollout holds `prompt` (its id ends the file name).
fn session_of(codex_home: &Path, prompt: &str) -> Result<String> {
    let holding: Vec<PathBuf> = rollouts(codex_home)
        .into_iter()
        .filter(|path| fs::read_to_string(path).is_ok_and(|text| text.contains(prompt)))
        .collect();
    let [path] = &holding[..] else {
        bail!("{} rollouts hold {prompt:?}", holding.len());
    };
    let name = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or_default();
    Ok(name
        .get(name.len().saturating_sub(36)..)
        .unwrap_or_default()
        .to_string())
}

fn rollout_of(codex_home: &Path, session: &str) -> Result<PathBuf> {
    rollouts(codex_home)
        .into_iter()
        .find(|path| {
            path.to_string_lossy()
                .ends_with(&format!("-{session}.jsonl"))
        })
        .with_context(|| format!("no rollout of {session}"))
}

/// After the restore typed its command: the TUI shows the conversation, a new prompt is
/// answered, and it lands in the rollout of the session it resumed. Returns that session.
fn resumed_session(
    sandbox: &Sandbox,
    slot: &Slot,
    codex_home: &Path,
    held: &str,
) -> Result<String> {
    screen_shows(sandbox, slot, &Case::Crashed.prompt())?;
    screen_shows(sandbox, slot, "Ask Codex")?;
    let after = "reboot-sim: after the reboot";
    cases::type_line(sandbox, slot, after)?;
    wait_for(SCREEN_DEADLINE, "the answer after the reboot", || {
        Ok((screen(sandbox, slot)?.matches("• ok").count() >= 2).then_some(()))
    })?;
    let session = session_of(codex_home, after)?;
    let rollout = rollout_of(codex_home, held)?;
    if !fs::read_to_string(&rollout)?.contains(after) {
        bail!(
            "the prompt after the reboot is not in {}",
            rollout.display()
        );
    }
    Ok(session)
}
