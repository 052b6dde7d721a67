//! `--real-gemini`: the crash-and-resume story with the real Gemini CLI 0.61.0 (`cargo xtask
//! gemini-cli install`) in tmux panes, offline.
//!
//! The tmux server runs in a network namespace with loopback alone (`offline::Namespace`), whose
//! launcher serves a mock of Gemini's model API on 127.0.0.1 (`GOOGLE_GEMINI_BASE_URL`, set by the
//! `gemini` wrapper with a dummy `GEMINI_API_KEY`). Gemini's home is the sandbox's `HOME`, its
//! settings those of `test_support::gemini_offline` (folder trust off, so the hooks run), the
//! hooks written by `crash-resume hook install gemini`, the start-up cleanup
//! (`general.sessionRetention`) left on, as Gemini ships it. The crash: the tmux server
//! SIGKILLed, then every process left in the namespace SIGKILLed by pid. The panes:
//!
//! - crashed: recorded by the hook; `restore --apply tmux` resumes it (`cd <dir> && gemini
//!   --resume <id>`), the TUI replays the conversation, and a prompt after the reboot is written
//!   into that session's file;
//! - `/quit`: Gemini's SessionEnd from a pane that stays marks it ended; not offered;
//! - session file deleted after the crash: offered fresh, `restore` saying why;
//! - two panes in one dir: both offered, and `restore` warns that the cleanup of one's start can
//!   delete the other's resumed conversation. What the cleanup then does depends on the minute
//!   each resume starts in; the story reports it and checks only the warning.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use test_support::gemini_offline;

use super::cases::{self, Slot};
use super::checks::Row;
use super::offline::{
    SCREEN_DEADLINE, case_slots, crash_and_reboot, crashed_cells, deleted_cells, end_in_pane,
    ended_cells, entry, find, list, press_enter_until, recorded_problem, requests_row,
    restore_plan, screen, screen_shows, session_of_case, short, start_story, wait_recorded,
};
use super::sandbox::{Sandbox, create_dir};
use super::wait_for;

/// How many panes the story runs.
pub const PANES: usize = Case::ALL.len();

/// Gemini's answer to a prompt, as its TUI shows the mock's `ok`.
const ANSWER: &str = "✦ ok";

/// What Gemini's prompt line shows once it takes input.
const READY: &str = "Type your message";

/// The words of `restore`'s warning about two Gemini panes of one dir.
const SHARED_DIR_WARNING: &str = "resumes 2 Gemini sessions in";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Crashed,
    Quit,
    FileDeleted,
    TwinA,
    TwinB,
}

impl Case {
    const ALL: [Case; 5] = [
        Case::Crashed,
        Case::Quit,
        Case::FileDeleted,
        Case::TwinA,
        Case::TwinB,
    ];

    fn name(self) -> &'static str {
        match self {
            Case::Crashed => "gemini, crashed",
            Case::Quit => "gemini, /quit",
            Case::FileDeleted => "gemini, session file deleted",
            Case::TwinA => "gemini, one dir, first pane",
            Case::TwinB => "gemini, one dir, second pane",
        }
    }

    /// One pane a window (Gemini's TUI wants the rows), the two of one dir side by side.
    fn slot(self, work: &Path) -> Slot {
        let (window, pane, dir) = match self {
            Case::Crashed => (0, 0, "gemini-crashed"),
            Case::Quit => (1, 0, "gemini-quit"),
            Case::FileDeleted => (2, 0, "gemini-deleted"),
            Case::TwinA => (3, 0, "gemini-twins"),
            Case::TwinB => (3, 1, "gemini-twins"),
        };
        Slot::new("gemini", window, pane, work.join(dir))
    }

    fn prompt(self) -> String {
        format!("reboot-sim {}", self.name())
    }
}

/// The whole Gemini story; one row per check.
pub fn simulate(sandbox: &Sandbox, cli: &Path) -> Result<Vec<Row>> {
    let gemini_dir = sandbox.home.join(".gemini");
    create_dir(&gemini_dir)?;
    let settings = gemini_dir.join("settings.json");
    fs::write(
        &settings,
        gemini_offline::settings_json(serde_json::json!({})),
    )
    .with_context(|| format!("cannot write {}", settings.display()))?;
    let slots = case_slots(&Case::ALL, |case| case.slot(&sandbox.work))?;
    let requests = sandbox.root.join("gemini-requests.log");
    let (namespace, layout) = start_story(
        sandbox,
        ("gemini", cli),
        &[
            ("GEMINI_API_KEY", "dummy".to_string()),
            (
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", gemini_offline::PORT),
            ),
        ],
        &slots,
        &requests,
    )?;
    let mut sessions: Vec<(Case, String)> = Vec::new();
    for (case, slot) in &slots {
        cases::type_line(sandbox, slot, "gemini")?;
        screen_shows(sandbox, slot, READY)?;
        prompt(sandbox, slot, &case.prompt())?;
        let session = session_of(&gemini_dir, &case.prompt())?;
        wait_recorded(sandbox, &slot.surface(), &session)?;
        if *case == Case::Quit {
            end_in_pane(sandbox, slot, "/quit", "Exit the cli")?;
        }
        sessions.push((*case, session));
    }
    let session = |case: Case| session_of_case(&sessions, case);
    let before_crash = list(sandbox)?;
    let crashed_file = session_files(&gemini_dir, &session(Case::Crashed))?;
    let crashed_size = crashed_file
        .first()
        .and_then(|file| fs::metadata(file).ok())
        .map_or(0, |metadata| metadata.len());

    eprintln!("reboot-sim: Gemini panes played their cases; crashing");
    let namespace = crash_and_reboot(sandbox, namespace, &requests, &layout, || {
        for file in session_files(&gemini_dir, &session(Case::FileDeleted))? {
            fs::remove_file(&file).with_context(|| format!("cannot delete {}", file.display()))?;
        }
        Ok(())
    })?;
    eprintln!("reboot-sim: rebooted; restoring");
    let said = sandbox.crash_resume(&["restore"])?;
    if !said.status.success() {
        bail!(
            "crash-resume restore failed ({}): {}",
            said.status,
            String::from_utf8_lossy(&said.stderr).trim()
        );
    }
    let restore_stderr = String::from_utf8_lossy(&said.stderr).into_owned();
    eprint!(
        "reboot-sim: crash-resume restore says:\n{}{restore_stderr}",
        String::from_utf8_lossy(&said.stdout)
    );
    let plan = restore_plan(sandbox, &["--json", "restore"])?;
    let plan_all = restore_plan(sandbox, &["--json", "restore", "--all"])?;
    let apply_args = test_support::restore_apply_args(&sandbox.socket);
    let applied_output = sandbox.crash_resume(&apply_args)?;
    let apply_stderr = String::from_utf8_lossy(&applied_output.stderr).into_owned();
    if !applied_output.status.success() {
        bail!(
            "crash-resume restore --apply tmux failed ({}): {}",
            applied_output.status,
            apply_stderr.trim()
        );
    }
    let applied: Vec<serde_json::Value> =
        serde_json::from_slice::<serde_json::Value>(&applied_output.stdout)
            .context("restore --apply tmux printed no plan")?["surfaces"]
            .as_array()
            .cloned()
            .unwrap_or_default();

    let mut rows = Vec::new();
    for (case, slot) in &slots {
        let surface = slot.surface();
        let held = session(*case);
        let item = find(&plan, &surface);
        let mut problems = Vec::new();
        let (expected, got) = match case {
            Case::Crashed => {
                let resumed = resumed_session(sandbox, slot, &gemini_dir, &held, crashed_size);
                let applied = find(&applied, &surface);
                crashed_cells(&held, &resumed, item, applied, &mut problems)
            }
            Case::Quit => ended_cells("/quit", item, find(&plan_all, &surface), &mut problems),
            Case::FileDeleted => deleted_cells(item, &mut problems),
            Case::TwinA | Case::TwinB => {
                let offered = item.is_some_and(|item| item["verdict"] == "resume");
                // The warning names the recorded surface, whose server comes before the
                // pane's place (`tmux:<socket path>:<session>:…`).
                let place = surface.trim_start_matches("tmux");
                let warned = restore_stderr.contains(SHARED_DIR_WARNING)
                    && apply_stderr.contains(SHARED_DIR_WARNING)
                    && restore_stderr.contains(place)
                    && apply_stderr.contains(place);
                if !offered {
                    problems.push(format!("not offered: {item:?}"));
                }
                if !warned {
                    problems.push(format!(
                        "restore does not warn about {surface}:\n{restore_stderr}\nrestore \
                         --apply tmux:\n{apply_stderr}"
                    ));
                }
                (
                    "offered, restore warns".to_string(),
                    format!(
                        "{}, {}",
                        if offered { "offered" } else { "not offered" },
                        if warned {
                            "restore warns"
                        } else {
                            "no warning"
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
    report_twins(sandbox, &gemini_dir, &slots, &session);
    rows.push(requests_row(
        &requests,
        "Gemini",
        "POST :generateContent, :streamGenerateContent only",
        |line| {
            line.starts_with("POST /v1beta/models/")
                && (line.ends_with(":generateContent")
                    || line.ends_with(":streamGenerateContent?alt=sse"))
        },
    ));
    drop(namespace);
    Ok(rows)
}

/// Types `text` into Gemini's prompt and submits it, then waits for the mock's answer. Gemini
/// takes keys that arrive in a burst as a paste, in which an Enter is a new line: the text is
/// typed, shown, then submitted, and submitted again for as long as no answer comes.
fn prompt(sandbox: &Sandbox, slot: &Slot, text: &str) -> Result<()> {
    let answers = || Ok::<_, anyhow::Error>(screen(sandbox, slot)?.matches(ANSWER).count());
    let before = answers()?;
    sandbox.tmux(&["send-keys", "-t", &slot.target(), "-l", text])?;
    screen_shows(sandbox, slot, text)?;
    press_enter_until(sandbox, slot, &format!("the answer to {text:?}"), || {
        Ok(answers()? > before)
    })
}

/// Every session file Gemini keeps under `gemini_dir` (`tmp/<project>/chats/session-*.jsonl`).
fn all_session_files(gemini_dir: &Path) -> Vec<PathBuf> {
    let projects = fs::read_dir(gemini_dir.join("tmp")).into_iter().flatten();
    projects
        .flatten()
        .flat_map(|project| {
            fs::read_dir(project.path().join("chats"))
                .into_iter()
                .flatten()
        })
        .flatten()
        .map(|file| file.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("session-") && name.ends_with(".jsonl"))
        })
        .collect()
}

/// The session id a session file's first line names.
fn session_id(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let header: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
    Some(header["sessionId"].as_str()?.to_string())
}

/// The session whose file holds `prompt`.
fn session_of(gemini_dir: &Path, prompt: &str) -> Result<String> {
    let holding: Vec<PathBuf> = all_session_files(gemini_dir)
        .into_iter()
        .filter(|path| fs::read_to_string(path).is_ok_and(|text| text.contains(prompt)))
        .collect();
    let [path] = &holding[..] else {
        bail!("{} session files hold {prompt:?}", holding.len());
    };
    session_id(path).with_context(|| format!("{} names no session", path.display()))
}

/// The files of `session` (a resume in a later minute adds a stub beside the first).
fn session_files(gemini_dir: &Path, session: &str) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = all_session_files(gemini_dir)
        .into_iter()
        .filter(|path| session_id(path).as_deref() == Some(session))
        .collect();
    if files.is_empty() {
        bail!("no session file of {session}");
    }
    files.sort();
    Ok(files)
}

/// After the restore typed its command: the TUI replays the conversation, a new prompt is
/// answered, and it lands in the file of the session it resumed, which grew from `size_before`;
/// the index holds that session for the pane again.
fn resumed_session(
    sandbox: &Sandbox,
    slot: &Slot,
    gemini_dir: &Path,
    held: &str,
    size_before: u64,
) -> Result<()> {
    screen_shows(sandbox, slot, &Case::Crashed.prompt())?;
    screen_shows(sandbox, slot, READY)?;
    let after = "reboot-sim: after the reboot";
    prompt(sandbox, slot, after)?;
    let holding = session_of(gemini_dir, after)?;
    if holding != held {
        bail!("the prompt after the reboot went to session {holding}, not {held}");
    }
    let grown = session_files(gemini_dir, held)?.into_iter().any(|file| {
        fs::read_to_string(&file).is_ok_and(|text| {
            text.contains(after)
                && text.contains(&Case::Crashed.prompt())
                && text.len() as u64 > size_before
        })
    });
    if !grown {
        bail!("no file of {held} holds the earlier prompt and the one after the reboot");
    }
    // The resumed Gemini's SessionStart (`resume`) recorded the same session for the pane.
    let surface = slot.surface();
    wait_for(
        SCREEN_DEADLINE,
        &format!("the resume to be recorded for {surface}"),
        || {
            Ok(entry(sandbox, &surface)?
                .filter(|entry| entry["sessionId"] == held && entry["ended_at"].is_null())
                .map(|_| ()))
        },
    )
}

/// What the start-up cleanup did to the two conversations of one dir, once both resumed panes
/// show Gemini's prompt (not a check: it depends on the minute each resume started in).
fn report_twins(
    sandbox: &Sandbox,
    gemini_dir: &Path,
    slots: &[(Case, Slot)],
    session: &dyn Fn(Case) -> String,
) {
    for (case, slot) in slots {
        if !matches!(case, Case::TwinA | Case::TwinB) {
            continue;
        }
        if let Err(error) = screen_shows(sandbox, slot, READY) {
            eprintln!("reboot-sim: {}: {error:#}", case.name());
        }
    }
    for case in [Case::TwinA, Case::TwinB] {
        let held = session(case);
        let files = session_files(gemini_dir, &held).unwrap_or_default();
        let conversation = files
            .iter()
            .any(|file| fs::read_to_string(file).is_ok_and(|text| text.contains(&case.prompt())));
        eprintln!(
            "reboot-sim: after both resumes, {} ({}) has {} file{}, {}",
            case.name(),
            short(&held),
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            if conversation {
                "its conversation kept"
            } else {
                "its conversation deleted by the start-up cleanup"
            }
        );
    }
}
