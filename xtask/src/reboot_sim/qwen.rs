//! `--real-qwen`: the crash-and-resume story with the real Qwen Code 0.24.4 (`cargo xtask
//! qwen-cli install`) in tmux panes, offline.
//!
//! The tmux server runs in a network namespace with loopback alone (`offline::Namespace`), whose
//! launcher serves a mock of the OpenAI chat-completions API on 127.0.0.1 (`OPENAI_BASE_URL`,
//! set by the `qwen` wrapper with a dummy `OPENAI_API_KEY` and `OPENAI_MODEL`). Qwen Code's
//! config dir is the sandbox's `~/.qwen`, its settings those of `test_support::qwen_offline`,
//! the hooks written by `crash-resume hook install qwen`. The crash: the tmux server SIGKILLed,
//! then every process left in the namespace SIGKILLed by pid. The panes:
//!
//! - crashed (two, in dirs of their own): recorded by the hook; `restore --apply tmux` resumes
//!   each in its own pane (`cd <dir> && qwen --resume <id>`), once, the TUI replays the
//!   conversation, and a prompt after the reboot is written into that session's file;
//! - `/quit`: Qwen Code's SessionEnd from a pane that stays marks it ended; not offered;
//! - session file deleted after the crash: offered fresh, `restore` saying why.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use test_support::qwen_offline;

use super::cases::{self, Slot};
use super::checks::Row;
use super::offline::{
    SCREEN_DEADLINE, case_slots, crash_and_reboot, crashed_cells, deleted_cells, end_in_pane,
    ended_cells, entry, find, list, press_enter_until, recorded_problem, requests_row,
    restore_all_ways, screen, screen_shows, session_of_case, start_story, wait_recorded,
};
use super::sandbox::{Sandbox, create_dir};
use super::wait_for;

/// How many panes the story runs.
pub const PANES: usize = Case::ALL.len();

/// Qwen Code's answer to a prompt, as its TUI marks the mock's `ok`.
const ANSWER: &str = "◆";

/// What Qwen Code's prompt line shows once it takes input.
const READY: &str = "Type your message";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Crashed,
    CrashedToo,
    Quit,
    FileDeleted,
}

impl Case {
    const ALL: [Case; 4] = [
        Case::Crashed,
        Case::CrashedToo,
        Case::Quit,
        Case::FileDeleted,
    ];

    fn name(self) -> &'static str {
        match self {
            Case::Crashed => "qwen, crashed",
            Case::CrashedToo => "qwen, second crash, another dir",
            Case::Quit => "qwen, /quit",
            Case::FileDeleted => "qwen, session file deleted",
        }
    }

    /// One pane a window (Qwen Code's TUI wants the rows).
    fn slot(self, work: &Path) -> Slot {
        let (window, dir) = match self {
            Case::Crashed => (0, "qwen-crashed"),
            Case::CrashedToo => (1, "qwen-crashed-too"),
            Case::Quit => (2, "qwen-quit"),
            Case::FileDeleted => (3, "qwen-deleted"),
        };
        Slot::new("qwen", window, 0, work.join(dir))
    }

    fn prompt(self) -> String {
        format!("reboot-sim {}", self.name())
    }
}

/// The whole Qwen Code story; one row per check.
pub fn simulate(sandbox: &Sandbox, cli: &Path) -> Result<Vec<Row>> {
    let qwen_dir = sandbox.home.join(".qwen");
    create_dir(&qwen_dir)?;
    let settings = qwen_dir.join("settings.json");
    fs::write(
        &settings,
        qwen_offline::settings_json(serde_json::json!({})),
    )
    .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", settings.display()))?;
    let slots = case_slots(&Case::ALL, |case| case.slot(&sandbox.work))?;
    let requests = sandbox.root.join("qwen-requests.log");
    let (namespace, layout) = start_story(
        sandbox,
        ("qwen", cli),
        &[
            ("OPENAI_API_KEY", "dummy".to_string()),
            ("OPENAI_MODEL", qwen_offline::MODEL.to_string()),
            (
                "OPENAI_BASE_URL",
                format!("http://127.0.0.1:{}/v1", qwen_offline::PORT),
            ),
        ],
        &slots,
        &requests,
    )?;
    let mut sessions: Vec<(Case, String)> = Vec::new();
    for (case, slot) in &slots {
        cases::type_line(sandbox, slot, "qwen")?;
        screen_shows(sandbox, slot, READY)?;
        prompt(sandbox, slot, &case.prompt())?;
        let session = session_of(&qwen_dir, &case.prompt())?;
        wait_recorded(sandbox, &slot.surface(), &session)?;
        if *case == Case::Quit {
            end_in_pane(sandbox, slot, "/quit", "/quit")?;
        }
        sessions.push((*case, session));
    }
    let session = |case: Case| session_of_case(&sessions, case);
    let before_crash = list(sandbox)?;
    let size_of = |case: Case| {
        session_file(&qwen_dir, &session(case))
            .and_then(|file| fs::metadata(file).ok())
            .map_or(0, |metadata| metadata.len())
    };
    let sizes = [
        (Case::Crashed, size_of(Case::Crashed)),
        (Case::CrashedToo, size_of(Case::CrashedToo)),
    ];

    eprintln!("reboot-sim: Qwen Code panes played their cases; crashing");
    let namespace = crash_and_reboot(sandbox, namespace, &requests, &layout, || {
        if let Some(file) = session_file(&qwen_dir, &session(Case::FileDeleted)) {
            fs::remove_file(&file)
                .map_err(|error| anyhow::anyhow!("cannot delete {}: {error}", file.display()))?;
        }
        Ok(())
    })?;
    eprintln!("reboot-sim: rebooted; restoring");
    let restored = restore_all_ways(sandbox)?;

    let mut rows = Vec::new();
    for (case, slot) in &slots {
        let surface = slot.surface();
        let held = session(*case);
        let item = find(&restored.plan, &surface);
        let mut problems = Vec::new();
        let (expected, got) = match case {
            Case::Crashed | Case::CrashedToo => {
                let size = sizes
                    .iter()
                    .find(|(each, _)| each == case)
                    .map_or(0, |(_, size)| *size);
                let resumed = resumed_session(sandbox, slot, *case, &qwen_dir, &held, size);
                let applied = find(&restored.applied, &surface);
                crashed_cells(&held, &resumed, item, applied, &mut problems)
            }
            Case::Quit => ended_cells(
                "/quit",
                item,
                find(&restored.plan_all, &surface),
                &mut problems,
            ),
            Case::FileDeleted => deleted_cells(item, &mut problems),
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
    rows.push(once_each_row(sandbox, &slots, &session)?);
    rows.push(requests_row(
        &requests,
        "Qwen Code",
        "POST /v1/chat/completions only",
        |line| line == "POST /v1/chat/completions",
    ));
    drop(namespace);
    Ok(rows)
}

/// Types `text` into Qwen Code's prompt and submits it, then waits for the mock's answer; the
/// Enter is pressed again for as long as no answer comes (keys that arrive in a burst may be
/// taken as a paste, in which an Enter is a new line).
fn prompt(sandbox: &Sandbox, slot: &Slot, text: &str) -> Result<()> {
    let answers = || Ok::<_, anyhow::Error>(screen(sandbox, slot)?.matches(ANSWER).count());
    let before = answers()?;
    sandbox.tmux(&["send-keys", "-t", &slot.target(), "-l", text])?;
    screen_shows(sandbox, slot, text)?;
    press_enter_until(sandbox, slot, &format!("the answer to {text:?}"), || {
        Ok(answers()? > before)
    })
}

/// Every active session file under `qwen_dir` (`projects/<slug>/chats/<id>.jsonl`).
fn all_session_files(qwen_dir: &Path) -> Vec<PathBuf> {
    let projects = fs::read_dir(qwen_dir.join("projects"))
        .into_iter()
        .flatten();
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
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
        })
        .collect()
}

/// The session whose file holds `prompt` (its file is named by its id).
fn session_of(qwen_dir: &Path, prompt: &str) -> Result<String> {
    let holding: Vec<PathBuf> = all_session_files(qwen_dir)
        .into_iter()
        .filter(|path| fs::read_to_string(path).is_ok_and(|text| text.contains(prompt)))
        .collect();
    let [path] = &holding[..] else {
        bail!("{} session files hold {prompt:?}", holding.len());
    };
    match path.file_stem().and_then(|stem| stem.to_str()) {
        Some(session) => Ok(session.to_string()),
        None => bail!("{} names no session", path.display()),
    }
}

/// The file of `session`.
fn session_file(qwen_dir: &Path, session: &str) -> Option<PathBuf> {
    all_session_files(qwen_dir)
        .into_iter()
        .find(|path| path.file_stem().and_then(|stem| stem.to_str()) == Some(session))
}

/// After the restore typed its command: the TUI replays the conversation, a new prompt is
/// answered, and it lands in the file of the session it resumed, which grew from `size_before`;
/// the index holds that session for the pane again.
fn resumed_session(
    sandbox: &Sandbox,
    slot: &Slot,
    case: Case,
    qwen_dir: &Path,
    held: &str,
    size_before: u64,
) -> Result<()> {
    screen_shows(sandbox, slot, &case.prompt())?;
    screen_shows(sandbox, slot, READY)?;
    let after = format!("reboot-sim: after the reboot, {}", case.name());
    prompt(sandbox, slot, &after)?;
    let holding = session_of(qwen_dir, &after)?;
    if holding != held {
        bail!("the prompt after the reboot went to session {holding}, not {held}");
    }
    let grown = session_file(qwen_dir, held).is_some_and(|file| {
        fs::read_to_string(&file).is_ok_and(|text| {
            text.contains(&after)
                && text.contains(&case.prompt())
                && text.len() as u64 > size_before
        })
    });
    if !grown {
        bail!("the file of {held} does not hold the earlier prompt and the one after the reboot");
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
    )
}

/// Each crashed session back in its own pane, once: the index holds each for its pane alone,
/// and no other pane shows its prompt.
fn once_each_row(
    sandbox: &Sandbox,
    slots: &[(Case, Slot)],
    session: &dyn Fn(Case) -> String,
) -> Result<Row> {
    let entries = list(sandbox)?;
    let mut problems = Vec::new();
    for case in [Case::Crashed, Case::CrashedToo] {
        let held = session(case);
        let holders = entries
            .iter()
            .filter(|entry| entry["sessionId"] == held.as_str())
            .count();
        if holders != 1 {
            problems.push(format!("{} is held by {holders} panes", case.name()));
        }
        for (other, slot) in slots {
            if *other != case && screen(sandbox, slot)?.contains(&case.prompt()) {
                problems.push(format!(
                    "{} shows {}'s conversation",
                    other.name(),
                    case.name()
                ));
            }
        }
    }
    Ok(Row {
        surface: "(all)".to_string(),
        case: "qwen, each resumed once".to_string(),
        expected: "each in its own pane, once".to_string(),
        got: match problems.is_empty() {
            true => "each in its own pane, once".to_string(),
            false => "not so".to_string(),
        },
        problems,
    })
}
