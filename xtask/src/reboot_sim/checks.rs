//! The checks: every pane against the ground truth the simulation knows (verdict, session
//! loaded, the agent started in the right pane, once, and nothing typed into it), the
//! invariants across panes (no conversation resumed twice, nothing recorded before the crash
//! lost), and the table.

use std::collections::HashMap;

use serde_json::Value;

use super::cases::{Expect, Truth};
use super::crash::Writer;
use test_support::stand_in::{Event, Kind};

/// One surface of `crash-resume --json restore`, as the library that makes the plan defines it.
pub use resume_plan::PlanItem;

/// What the simulation saw, from the crash on.
#[derive(Debug)]
pub struct Observed {
    /// `crash-resume --json list`, right before the crash.
    pub before_crash: Value,
    /// The same after the reboot, before any restore; and its stderr (warnings).
    pub after_reboot: Value,
    pub after_reboot_stderr: String,
    /// `restore --json`, `restore --all --json`.
    pub plan: Vec<PlanItem>,
    pub plan_all: Vec<PlanItem>,
    /// The two `restore --apply tmux` run at once: their plans, or why one failed.
    pub applies: Vec<Result<Vec<PlanItem>, String>>,
    /// The stand-in's events since the reboot.
    pub events: Vec<Event>,
    /// What each pane's screen showed after the barrier, and problems waiting for it.
    pub screens: HashMap<String, String>,
    pub barrier_problems: HashMap<String, String>,
    pub writers: Vec<Writer>,
    /// With `--real-claude`: the real CLI's answer to `--resume <held>` for each fresh pane.
    pub real_fresh: Option<HashMap<String, String>>,
    pub claude_dir: String,
}

/// One line of the table.
#[derive(Debug)]
pub struct Row {
    pub surface: String,
    pub case: String,
    pub expected: String,
    pub got: String,
    pub problems: Vec<String>,
}

/// The first 8 characters of a session id, for the table.
fn short(session: &str) -> &str {
    session.get(..8).unwrap_or(session)
}

fn entry<'a>(list: &'a Value, surface: &str) -> Option<&'a Value> {
    list["entries"]
        .as_array()?
        .iter()
        .find(|entry| super::cases::value_names_place(&entry["surfaceId"], surface))
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The session an event says was loaded: the stand-in's `--resume` that it accepted, or the
/// transcript the real CLI appended its probe to.
fn loaded(event: &Event) -> Option<&str> {
    event.loaded.as_deref()
}

pub fn rows(truths: &[Truth], seen: &Observed, real: bool) -> Vec<Row> {
    let mut rows: Vec<Row> = truths
        .iter()
        .map(|truth| pane_row(truth, seen, real))
        .collect();
    rows.push(resumed_once(seen, real));
    rows.push(two_restores(truths, seen));
    rows.push(writers_row(seen));
    rows
}

fn pane_row(truth: &Truth, seen: &Observed, real: bool) -> Row {
    let surface = truth.pane.slot.surface();
    let mut problems = Vec::new();
    for (when, list) in [
        ("before the crash", &seen.before_crash),
        ("after the reboot", &seen.after_reboot),
    ] {
        let Some(entry) = entry(list, &surface) else {
            problems.push(format!("{when}: no index entry for the surface"));
            continue;
        };
        if entry["sessionId"] != truth.held.as_str() {
            problems.push(format!(
                "{when}: the index holds {}, the pane's agent held {}",
                entry["sessionId"], truth.held
            ));
        }
        let chain = strings(&entry["previous_sessions"]);
        for earlier in &truth.earlier {
            if !chain.contains(&earlier.as_str()) {
                problems.push(format!(
                    "{when}: {earlier} is missing from the chain {chain:?}"
                ));
            }
        }
        let ended = !entry["ended_at"].is_null();
        if ended != (truth.expect == Expect::NotRestored) {
            problems.push(format!("{when}: ended_at is {}", entry["ended_at"]));
        }
    }
    if let Some(problem) = seen.barrier_problems.get(&surface) {
        problems.push(problem.clone());
    }

    let planned = seen
        .plan
        .iter()
        .find(|item| super::cases::names_place(&item.surface, &surface));
    let starts: Vec<&Event> = seen
        .events
        .iter()
        .filter(|event| {
            event.kind == Kind::Start && event.surface.as_deref() == Some(surface.as_str())
        })
        .collect();
    let typed: Vec<&str> = seen
        .applies
        .iter()
        .flatten()
        .filter_map(|plan| {
            plan.iter()
                .find(|item| super::cases::names_place(&item.surface, &surface))
        })
        .filter_map(|item| item.applied.as_deref())
        .filter(|applied| !applied.starts_with("skipped"))
        .collect();
    let screen = seen.screens.get(&surface).map_or("", String::as_str);
    let typed_on_screen = screen.matches("claude --resume").count();
    let verdict = planned.map_or("-", |item| item.verdict.as_str());
    if let Some(item) = planned
        && item.held_session != truth.held
    {
        problems.push(format!(
            "the plan holds {}, the pane's agent held {}",
            item.held_session, truth.held
        ));
    }

    let (expected, got) = match &truth.expect {
        Expect::NotRestored => {
            if let Some(item) = planned {
                problems.push(format!(
                    "in the restore plan ({}) although it ended cleanly",
                    item.verdict
                ));
            }
            match seen
                .plan_all
                .iter()
                .find(|item| super::cases::names_place(&item.surface, &surface))
            {
                Some(item) if item.ended_cleanly => {}
                Some(_) => problems.push("restore --all does not say it ended cleanly".into()),
                None => problems.push("restore --all does not list it".into()),
            }
            expect_untouched(&mut problems, &starts, &typed, typed_on_screen);
            let got = if planned.is_some() {
                verdict.to_string()
            } else {
                "not restored".to_string()
            };
            ("not restored".to_string(), got)
        }
        Expect::Fresh => {
            match planned {
                None => problems.push("not in the restore plan".into()),
                Some(item) => {
                    if item.verdict.as_str() != "fresh"
                        || item.session_id.is_some()
                        || item.command.is_some()
                    {
                        problems.push(format!(
                            "planned {} {:?} with command {:?}",
                            item.verdict, item.session_id, item.command
                        ));
                    }
                }
            }
            expect_untouched(&mut problems, &starts, &typed, typed_on_screen);
            let mut got = verdict.to_string();
            if let Some(answers) = &seen.real_fresh {
                let answer = answers.get(&surface).map_or("(not asked)", String::as_str);
                let refusal = format!("No conversation found with session ID: {}", truth.held);
                if answer.contains(&refusal) {
                    got.push_str(", real CLI: not found");
                } else {
                    problems.push(format!("the real CLI did not refuse the held id: {answer}"));
                    got.push_str(", real CLI: resumed?");
                }
            }
            let expected = if real {
                "fresh, real CLI: not found"
            } else {
                "fresh"
            };
            (expected.to_string(), got)
        }
        Expect::Resume(session) | Expect::Recover(session) => {
            let want = match truth.expect {
                Expect::Recover(_) => "recover",
                _ => "resume",
            };
            match planned {
                None => problems.push("not in the restore plan".into()),
                Some(item) => {
                    if item.verdict.as_str() != want || item.session_id.as_deref() != Some(session)
                    {
                        problems.push(format!(
                            "planned {} {:?}, not {want} {session}",
                            item.verdict, item.session_id
                        ));
                    }
                    let resumes = format!("claude --resume {session}");
                    if !item
                        .command
                        .as_deref()
                        .is_some_and(|command| command.ends_with(&resumes))
                    {
                        problems.push(format!("the planned command is {:?}", item.command));
                    }
                    if let Some(holder) = &item.held_elsewhere {
                        problems.push(format!("the plan says it is held by {holder}"));
                    }
                }
            }
            match typed[..] {
                ["started in the existing pane"] => {}
                _ => problems.push(format!("the two restores did {typed:?}, not one start")),
            }
            // The agent is the pane's process: a restore never types the command.
            if typed_on_screen != 0 {
                problems.push(format!(
                    "`claude --resume` was typed {typed_on_screen} times into the pane"
                ));
            }
            let loaded_by = check_start(&mut problems, &starts, session, truth, seen, real);
            let got = format!("{verdict} {}", loaded_by.map_or("-", short));
            (format!("{want} {}", short(session)), got)
        }
    };
    Row {
        surface,
        case: truth.pane.case.name().to_string(),
        expected,
        got,
        problems,
    }
}

/// Nothing may have been typed into or started in a pane that is not restored.
fn expect_untouched(
    problems: &mut Vec<String>,
    starts: &[&Event],
    typed: &[&str],
    typed_on_screen: usize,
) {
    if !starts.is_empty() {
        problems.push(format!("{} agents started in it", starts.len()));
    }
    if !typed.is_empty() {
        problems.push(format!("a restore acted on it: {typed:?}"));
    }
    if typed_on_screen > 0 {
        problems.push("`claude --resume` was typed into it".into());
    }
}

/// The one agent started in the pane: its arguments, dir, config dir, and the session it
/// loaded. Returns the session loaded.
fn check_start<'a>(
    problems: &mut Vec<String>,
    starts: &[&'a Event],
    session: &str,
    truth: &Truth,
    seen: &'a Observed,
    real: bool,
) -> Option<&'a str> {
    let [start] = starts[..] else {
        problems.push(format!(
            "{} agents started in the pane, not one",
            starts.len()
        ));
        return None;
    };
    if start.argv != ["--resume", session] {
        problems.push(format!("the agent was started with {:?}", start.argv));
    }
    if start.cwd != truth.cwd {
        problems.push(format!(
            "the agent runs in {}, not {}",
            start.cwd, truth.cwd
        ));
    }
    if start.config_dir != seen.claude_dir {
        problems.push(format!("the agent's config dir is {}", start.config_dir));
    }
    let answer = if real {
        let answer = seen
            .events
            .iter()
            .find(|event| event.pid == start.pid && event.kind == Kind::Real);
        if answer.is_none() {
            problems.push("the real CLI never answered".into());
        }
        answer
    } else {
        Some(start)
    };
    let loaded = answer.and_then(loaded);
    if let Some(answer) = answer
        && loaded != Some(session)
    {
        problems.push(format!(
            "loaded {loaded:?}, not {session}{}",
            answer
                .text
                .as_deref()
                .map(|text| format!(" ({text})"))
                .unwrap_or_default()
        ));
    }
    if seen.events.iter().any(|event| {
        event.pid == start.pid
            && event.kind == Kind::Prompt
            && event
                .text
                .as_deref()
                .is_some_and(|text| text.contains("--resume"))
    }) {
        problems.push("a resume command was typed into the running agent".into());
    }
    loaded
}

/// No session is loaded by more than one pane.
fn resumed_once(seen: &Observed, real: bool) -> Row {
    let kind = if real { Kind::Real } else { Kind::Start };
    let mut by_session: HashMap<&str, Vec<&str>> = HashMap::new();
    for event in seen.events.iter().filter(|event| event.kind == kind) {
        if let Some(session) = loaded(event) {
            by_session
                .entry(session)
                .or_default()
                .push(event.surface.as_deref().unwrap_or("(no pane)"));
        }
    }
    let twice: Vec<String> = by_session
        .iter()
        .filter(|(_, surfaces)| surfaces.len() > 1)
        .map(|(session, surfaces)| format!("{session} loaded in {surfaces:?}"))
        .collect();
    Row {
        surface: "(all panes)".into(),
        case: "resumed once".into(),
        expected: "each session in ≤ 1 pane".into(),
        got: format!("{} loaded, {} twice", by_session.len(), twice.len()),
        problems: twice,
    }
}

/// The two restores run at once both finished, and between them started each resumable pane
/// once.
fn two_restores(truths: &[Truth], seen: &Observed) -> Row {
    let mut problems: Vec<String> = seen
        .applies
        .iter()
        .filter_map(|apply| apply.as_ref().err().cloned())
        .collect();
    let typed: usize = seen
        .applies
        .iter()
        .flatten()
        .flatten()
        .filter(|item| {
            item.applied
                .as_deref()
                .is_some_and(|applied| !applied.starts_with("skipped"))
        })
        .count();
    let resumable = truths
        .iter()
        .filter(|truth| matches!(truth.expect, Expect::Resume(_) | Expect::Recover(_)))
        .count();
    if typed != resumable {
        problems.push(format!(
            "{typed} panes started, {resumable} resumable panes"
        ));
    }
    Row {
        surface: "(all panes)".into(),
        case: "2 restores at once".into(),
        expected: format!("{resumable} started once"),
        got: format!("{typed} started"),
        problems,
    }
}

/// Every record acknowledged before the crash is in the index after it, and the index loaded
/// without warnings (no corrupt generation, nothing lost to a torn write).
fn writers_row(seen: &Observed) -> Row {
    let acknowledged: Vec<&Writer> = seen
        .writers
        .iter()
        .filter(|writer| writer.acknowledged)
        .collect();
    let killed = seen.writers.iter().filter(|writer| writer.killed).count();
    let mut problems: Vec<String> = acknowledged
        .iter()
        .filter(|writer| {
            entry(&seen.after_reboot, &writer.surface)
                .is_none_or(|entry| entry["sessionId"] != writer.session.as_str())
        })
        .map(|writer| {
            format!(
                "{} → {} was acknowledged and is lost",
                writer.surface, writer.session
            )
        })
        .collect();
    let kept = acknowledged.len() - problems.len();
    if !seen.after_reboot_stderr.trim().is_empty() {
        problems.push(format!(
            "loading the index after the crash: {}",
            seen.after_reboot_stderr.trim()
        ));
    }
    Row {
        surface: "sim:writer-*".into(),
        case: format!("record, {killed}/{} killed", seen.writers.len()),
        expected: format!("{} acked kept", acknowledged.len()),
        got: format!("{kept} kept"),
        problems,
    }
}

/// The table, then each failure's reasons, then `N passed, M failed` alone on a line.
pub fn render(rows: &[Row]) -> String {
    let header = ["surface", "case", "expected", "got", "ok"];
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|row| {
            [
                row.surface.clone(),
                row.case.clone(),
                row.expected.clone(),
                row.got.clone(),
                if row.problems.is_empty() {
                    "ok"
                } else {
                    "FAIL"
                }
                .to_string(),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|column| {
            cells
                .iter()
                .map(|cell| cell[column].chars().count())
                .chain([header[column].len()])
                .max()
                .unwrap_or_default()
        })
        .collect();
    let line = |values: &[&str]| {
        values
            .iter()
            .zip(&widths)
            .map(|(value, width)| format!("{value:<width$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut text = line(&header);
    text.push('\n');
    for cell in &cells {
        text.push_str(&line(&cell.each_ref().map(String::as_str)));
        text.push('\n');
    }
    for row in rows.iter().filter(|row| !row.problems.is_empty()) {
        text.push_str(&format!("\n{} ({}):\n", row.surface, row.case));
        for problem in &row.problems {
            text.push_str(&format!("  - {problem}\n"));
        }
    }
    let failed = rows.iter().filter(|row| !row.problems.is_empty()).count();
    text.push_str(&format!(
        "\n{} passed, {failed} failed\n",
        rows.len() - failed
    ));
    text
}
