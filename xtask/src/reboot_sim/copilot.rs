//! `--real-copilot`: the crash-and-resume story with the real GitHub Copilot CLI 1.0.102
//! (`cargo xtask copilot-cli install`) in tmux panes, offline.
//!
//! The tmux server runs in a network namespace with loopback alone (`offline::Namespace`), whose
//! launcher serves a mock of the chat-completions API on 127.0.0.1; the `copilot` wrapper points
//! Copilot's bring-your-own-provider mode at it (`COPILOT_PROVIDER_*` and `COPILOT_OFFLINE`, as
//! `test_support::copilot_offline` sets them), with the runtime the install unpacked. Copilot's
//! home is the default, the sandbox's `~/.copilot`; its hooks are written by `crash-resume hook
//! install copilot`. Each pane's first Copilot asks whether to trust the folder: the story
//! answers "Yes, and remember this folder", so the resume after the reboot asks nothing. The
//! crash: the tmux server SIGKILLed, then every process left in the namespace SIGKILLed by pid.
//! The panes:
//!
//! - crashed: recorded by the hook at the first prompt; `restore --apply tmux` resumes it
//!   (`cd <dir> && copilot --resume=<id>`), the TUI replays the conversation, and a prompt after the
//!   reboot is written into that session's `events.jsonl`;
//! - `/exit`: Copilot's `sessionEnd` from a pane that stays marks it ended; not offered;
//! - `events.jsonl` deleted after the crash: offered fresh, `restore` saying why;
//! - held: after the reboot, before the restore, the user resumes the session in a terminal of
//!   their own (a tmux session outside the layout, its multiplexer variables unset, so the hook
//!   records nothing for it) and prompts it, which makes Copilot take its `inuse.<pid>.lock`;
//!   `restore` names that Copilot as the session's holder and leaves the pane alone.
//!
//! A resumed Copilot takes its `inuse.<pid>.lock` at its first prompt, not at start-up (a new
//! session takes it at start-up): until then nothing on disk says the session is open but
//! `open-sessions-state.json`, which names no process. So the holder is prompted first.
//!
//! A resume within seconds of the crash may first ask "Session in use" (the SIGKILLed Copilot's
//! lock is still there and only seconds old); the story answers "Resume anyway", as the user
//! who saw the crash would, and the crashed pane's row says it was asked.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use test_support::copilot_offline::screen::{
    ANSWER, IN_USE_QUESTION, READY, RELOADED, TRUST_AND_REMEMBER, TRUST_QUESTION, TRUSTED,
};
use test_support::copilot_offline::{self, Installed};

use super::cases::{self, Slot};
use super::checks::Row;
use super::offline::{
    Restored, SCREEN_DEADLINE, case_slots, crash_and_reboot, crashed_cells, deleted_cells,
    end_in_pane, ended_cells, entry, find, list, press_enter_until, recorded_problem, requests_row,
    restore_all_ways, screen, screen_shows, session_of_case, short, start_story, wait_recorded,
};
use super::sandbox::{Sandbox, create_dir};
use super::wait_for;

/// How many panes the story runs (one per case).
pub const PANES: usize = Case::ALL.len();

/// The tmux session of the user's own terminal after the reboot (not in the layout).
const ELSEWHERE: &str = "elsewhere";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Crashed,
    Exit,
    EventsDeleted,
    Held,
}

impl Case {
    const ALL: [Case; 4] = [Case::Crashed, Case::Exit, Case::EventsDeleted, Case::Held];

    fn name(self) -> &'static str {
        match self {
            Case::Crashed => "copilot, crashed",
            Case::Exit => "copilot, /exit",
            Case::EventsDeleted => "copilot, events.jsonl deleted",
            Case::Held => "copilot, resumed elsewhere first",
        }
    }

    /// One pane a window: Copilot's TUI wants the rows.
    fn slot(self, work: &Path) -> Slot {
        let (window, dir) = match self {
            Case::Crashed => (0, "copilot-crashed"),
            Case::Exit => (1, "copilot-exit"),
            Case::EventsDeleted => (2, "copilot-deleted"),
            Case::Held => (3, "copilot-held"),
        };
        Slot::new("copilot", window, 0, work.join(dir))
    }

    fn prompt(self) -> String {
        format!("reboot-sim {}", self.name())
    }
}

/// The whole Copilot story; one row per check.
pub fn simulate(sandbox: &Sandbox, cli: &Path) -> Result<Vec<Row>> {
    let copilot_home = sandbox.home.join(".copilot");
    create_dir(&copilot_home)?;
    let slots = case_slots(&Case::ALL, |case| case.slot(&sandbox.work))?;
    let requests = sandbox.root.join("copilot-requests.log");
    let (namespace, layout) = start_story(
        sandbox,
        ("copilot", cli),
        &wrapper_env(sandbox, cli)?,
        &slots,
        &requests,
    )?;
    let mut sessions: Vec<(Case, String)> = Vec::new();
    for (case, slot) in &slots {
        cases::type_line(sandbox, slot, "copilot")?;
        trust_folder(sandbox, slot)?;
        screen_shows(sandbox, slot, READY)?;
        prompt(sandbox, slot, &case.prompt())?;
        let session = session_of(&copilot_home, &case.prompt())?;
        // Copilot's `sessionStart` comes at the first prompt.
        wait_recorded(sandbox, &slot.surface(), &session)?;
        if *case == Case::Exit {
            end_in_pane(sandbox, slot, "/exit", "/exit print")?;
        }
        sessions.push((*case, session));
    }
    let session = |case: Case| session_of_case(&sessions, case);
    let before_crash = list(sandbox)?;

    eprintln!("reboot-sim: Copilot panes played their cases; crashing");
    // After the reboot the user has a terminal of their own besides the layout.
    let elsewhere = elsewhere(sandbox);
    let rebooted: Vec<Slot> = layout.iter().chain([&elsewhere]).cloned().collect();
    let namespace = crash_and_reboot(sandbox, namespace, &requests, &rebooted, || {
        let crashed_events = events_file(&copilot_home, &session(Case::Crashed));
        let shutdown_written = fs::read_to_string(&crashed_events)
            .is_ok_and(|text| text.contains("\"type\":\"session.shutdown\""));
        eprintln!(
            "reboot-sim: the crashed pane's Copilot {} session.shutdown as its pane was killed",
            if shutdown_written {
                "wrote"
            } else {
                "did not write"
            }
        );
        let deleted = events_file(&copilot_home, &session(Case::EventsDeleted));
        fs::remove_file(&deleted).with_context(|| format!("cannot delete {}", deleted.display()))
    })?;
    eprintln!("reboot-sim: rebooted; resuming one session by hand before the restore");
    let holder = hold_elsewhere(sandbox, &elsewhere, &copilot_home, &session(Case::Held))?;
    eprintln!(
        "reboot-sim: Copilot pid {holder} holds {}; restoring",
        short(&session(Case::Held))
    );
    let Restored {
        plan,
        plan_all,
        applied,
    } = restore_all_ways(sandbox)?;

    let mut rows = Vec::new();
    for (case, slot) in &slots {
        let surface = slot.surface();
        let held = session(*case);
        let item = find(&plan, &surface);
        let mut problems = Vec::new();
        let (expected, got) = match case {
            Case::Crashed => {
                let resumed = resumed_session(sandbox, slot, &copilot_home, &held);
                let applied = find(&applied, &surface);
                let asked = matches!(resumed, Ok(true));
                let (expected, got) =
                    crashed_cells(&held, &resumed.map(|_| ()), item, applied, &mut problems);
                // Copilot's own question is no failure of the restore, but the table says it.
                match asked {
                    true => (expected, format!("{got}, asked {IN_USE_QUESTION:?}")),
                    false => (expected, got),
                }
            }
            Case::Exit => ended_cells("/exit", item, find(&plan_all, &surface), &mut problems),
            Case::EventsDeleted => deleted_cells(item, &mut problems),
            Case::Held => {
                // Both the plan and the apply (which plans again) name the holder.
                let applied = find(&applied, &surface);
                let names = |item: Option<&serde_json::Value>| {
                    item.is_some_and(|item| {
                        item["held_by"]["kind"] == "agent" && item["held_by"]["pid"] == holder
                    })
                };
                let names_holder = names(item) && names(applied);
                if !names_holder {
                    problems.push(format!(
                        "restore does not name Copilot pid {holder} as the holder: {item:?}, \
                         restore --apply: {applied:?}"
                    ));
                }
                let left_alone = left_alone(sandbox, slot, &copilot_home, &held, holder);
                if let Err(error) = &left_alone {
                    problems.push(format!("{error:#}"));
                }
                (
                    "held by its Copilot, not resumed".to_string(),
                    format!(
                        "{}, {}",
                        if names_holder {
                            "held by its Copilot"
                        } else {
                            "holder not named"
                        },
                        if left_alone.is_ok() {
                            "not resumed"
                        } else {
                            "resumed again"
                        }
                    ),
                )
            }
        };
        problems.extend(recorded_problem(&before_crash, &surface, &held));
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
        "Copilot",
        "POST /v1/chat/completions only",
        |line| line == "POST /v1/chat/completions",
    ));
    drop(namespace);
    Ok(rows)
}

/// What the `copilot` wrapper exports: the offline provider settings and the install's
/// runtime, as `test_support::copilot_offline` gives them to every Copilot run, less the homes
/// (the sandbox's `HOME`, and so Copilot's default home, stand).
fn wrapper_env(sandbox: &Sandbox, cli: &Path) -> Result<Vec<(&'static str, String)>> {
    let install_dir = crate::workspace::target_dir()?.join(copilot_offline::INSTALL_DIR);
    let installed = Installed {
        cli: cli.to_path_buf(),
        cache: install_dir.join(copilot_offline::CACHE),
    };
    let offline = copilot_offline::Offline::new(installed, &sandbox.root, &sandbox.home);
    Ok(offline
        .environment()
        .into_iter()
        .filter(|(name, _)| name.starts_with("COPILOT_") && *name != "COPILOT_HOME")
        .collect())
}

/// Answers the folder-trust dialog of a Copilot's first start in the pane's dir, and waits
/// until Copilot is done with what the answer makes it do.
fn trust_folder(sandbox: &Sandbox, slot: &Slot) -> Result<()> {
    screen_shows(sandbox, slot, TRUST_QUESTION)?;
    sandbox.tmux(&["send-keys", "-t", &slot.target(), TRUST_AND_REMEMBER])?;
    screen_shows(sandbox, slot, TRUSTED)?;
    screen_shows(sandbox, slot, RELOADED)
}

/// How many answers the pane shows.
fn answers(sandbox: &Sandbox, slot: &Slot) -> Result<usize> {
    Ok(screen(sandbox, slot)?
        .lines()
        .filter(|line| line.trim() == ANSWER)
        .count())
}

/// Types `text` into Copilot's prompt and submits it, then waits for the mock's answer (an
/// Enter that came with the text in one burst may be taken as part of it: pressed again while
/// no answer comes).
fn prompt(sandbox: &Sandbox, slot: &Slot, text: &str) -> Result<()> {
    let before = answers(sandbox, slot)?;
    sandbox.tmux(&["send-keys", "-t", &slot.target(), "-l", text])?;
    screen_shows(sandbox, slot, text)?;
    press_enter_until(sandbox, slot, &format!("the answer to {text:?}"), || {
        Ok(answers(sandbox, slot)? > before)
    })
}

/// `session-state/<session>/events.jsonl`.
fn events_file(copilot_home: &Path, session: &str) -> PathBuf {
    copilot_home
        .join("session-state")
        .join(session)
        .join("events.jsonl")
}

/// The session whose `events.jsonl` holds `prompt` (its dir's name), once one does: Copilot
/// writes the file a moment after its screen shows the answer.
fn session_of(copilot_home: &Path, prompt: &str) -> Result<String> {
    wait_for(
        SCREEN_DEADLINE,
        &format!("a session to hold {prompt:?}"),
        || {
            let holding: Vec<String> = fs::read_dir(copilot_home.join("session-state"))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|dir| {
                    fs::read_to_string(dir.path().join("events.jsonl"))
                        .is_ok_and(|text| text.contains(prompt))
                })
                .map(|dir| dir.file_name().to_string_lossy().into_owned())
                .collect();
            match &holding[..] {
                [] => Ok(None),
                [session] => Ok(Some(session.clone())),
                _ => bail!("{} sessions hold {prompt:?}", holding.len()),
            }
        },
    )
}

/// The pids of `session`'s `inuse.<pid>.lock` files.
fn lock_pids(copilot_home: &Path, session: &str) -> Vec<u32> {
    fs::read_dir(copilot_home.join("session-state").join(session))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|file| {
            file.file_name()
                .to_str()?
                .strip_prefix("inuse.")?
                .strip_suffix(".lock")?
                .parse()
                .ok()
        })
        .collect()
}

/// The user's own terminal after the reboot: a tmux session outside the layout, in the held
/// pane's dir.
fn elsewhere(sandbox: &Sandbox) -> Slot {
    Slot::new(ELSEWHERE, 0, 0, Case::Held.slot(&sandbox.work).dir)
}

/// `copilot --resume=<session>` in the user's own terminal `slot`, without the multiplexer's
/// variables (so no hook ties it to a pane), prompted once so that it takes the session's lock.
/// Returns the pid that holds it.
fn hold_elsewhere(
    sandbox: &Sandbox,
    slot: &Slot,
    copilot_home: &Path,
    session: &str,
) -> Result<u32> {
    let stale = lock_pids(copilot_home, session);
    cases::type_line(
        sandbox,
        slot,
        &format!("env -u TMUX -u TMUX_PANE copilot --resume={session}"),
    )?;
    screen_shows(sandbox, slot, &Case::Held.prompt())?;
    if resume_anyway(sandbox, slot)? {
        eprintln!("reboot-sim: the hand-made resume was asked {IN_USE_QUESTION:?}; resumed anyway");
    }
    prompt(sandbox, slot, "reboot-sim: resumed by hand")?;
    wait_for(SCREEN_DEADLINE, "the resumed Copilot's inuse lock", || {
        Ok(lock_pids(copilot_home, session)
            .into_iter()
            .find(|pid| !stale.contains(pid)))
    })
}

/// After the restore typed its command: the TUI replays the conversation, a new prompt is
/// answered and lands in the `events.jsonl` of the session it resumed; the index holds that
/// session for the pane again.
fn resumed_session(
    sandbox: &Sandbox,
    slot: &Slot,
    copilot_home: &Path,
    held: &str,
) -> Result<bool> {
    screen_shows(sandbox, slot, &Case::Crashed.prompt())?;
    let asked = resume_anyway(sandbox, slot)?;
    let after = "reboot-sim: after the reboot";
    prompt(sandbox, slot, after)?;
    let holding = session_of(copilot_home, after)?;
    if holding != held {
        bail!("the prompt after the reboot went to session {holding}, not {held}");
    }
    let events = events_file(copilot_home, held);
    let text =
        fs::read_to_string(&events).with_context(|| format!("cannot read {}", events.display()))?;
    if !text.contains(&Case::Crashed.prompt()) || !text.contains("\"type\":\"session.resume\"") {
        bail!(
            "{} holds the prompt after the reboot, but not the earlier one and a session.resume",
            events.display()
        );
    }
    let surface = slot.surface();
    wait_for(
        SCREEN_DEADLINE,
        &format!("the resume to be recorded for {surface}"),
        || {
            Ok(entry(sandbox, &surface)?
                .filter(|entry| entry["sessionId"] == held && entry["ended_at"].is_null())
                .map(|_| ()))
        },
    )?;
    Ok(asked)
}

/// Waits until a resuming Copilot takes input; when it asks [`IN_USE_QUESTION`] first, answers
/// "Resume anyway" (until the question closes: keys that come while it draws can be lost).
/// Whether it asked.
fn resume_anyway(sandbox: &Sandbox, slot: &Slot) -> Result<bool> {
    let mut asked = false;
    wait_for(SCREEN_DEADLINE, "a resumed Copilot to take input", || {
        let shown = screen(sandbox, slot)?;
        if shown.contains(IN_USE_QUESTION) {
            asked = true;
            sandbox.tmux(&["send-keys", "-t", &slot.target(), "1"])?;
            let closed = wait_for(Duration::from_secs(2), "the question to close", || {
                Ok((!screen(sandbox, slot)?.contains(IN_USE_QUESTION)).then_some(()))
            });
            return Ok(closed.ok().and(None));
        }
        Ok(shown.contains(READY).then_some(()))
    })
    .with_context(|| {
        format!(
            "{} shows:\n{}",
            slot.surface(),
            screen(sandbox, slot).unwrap_or_default()
        )
    })?;
    Ok(asked)
}

/// The held session's pane after the restore: a line typed into it comes out of an idle shell
/// (nothing the restore typed before it started a Copilot), the session was resumed once (by
/// its holder), and the holder still holds it.
fn left_alone(
    sandbox: &Sandbox,
    slot: &Slot,
    copilot_home: &Path,
    held: &str,
    holder: u32,
) -> Result<()> {
    let barrier = "# reboot-sim barrier";
    cases::type_line(sandbox, slot, barrier)?;
    let surface = slot.surface();
    wait_for(
        SCREEN_DEADLINE,
        &format!("{surface} to show the barrier at an idle shell"),
        || {
            let idle = cases::list_panes(sandbox)?
                .iter()
                .any(|pane| pane.slot.surface() == surface && pane.command == "bash");
            Ok((idle && screen(sandbox, slot)?.contains(barrier)).then_some(()))
        },
    )
    .with_context(|| {
        format!(
            "{surface} shows:\n{}",
            screen(sandbox, slot).unwrap_or_default()
        )
    })?;
    let events = events_file(copilot_home, held);
    let resumes = fs::read_to_string(&events)
        .with_context(|| format!("cannot read {}", events.display()))?
        .matches("\"type\":\"session.resume\"")
        .count();
    if resumes != 1 {
        bail!(
            "{} says the session was resumed {resumes} times",
            events.display()
        );
    }
    if !lock_pids(copilot_home, held).contains(&holder) {
        bail!("Copilot pid {holder} no longer holds {held}");
    }
    Ok(())
}
