//! `crash-resume restore [--all] [--apply tmux]`: after a reboot, every surface whose session
//! did not end cleanly, with its preflight verdict, the session that would load and the command
//! that resumes it; with `--apply tmux`, re-open each resumable `tmux:` surface.
//!
//! One conversation is never resumed twice: a session bound to another surface or held by a
//! live agent process is reported as held elsewhere and not resumed, and each surface is
//! claimed in the index (under its lock) before anything is started. Applying holds the
//! restore lock (`<index>.restore.lock`) from the first pane to the last, so two restores at
//! once never create the same session, window or pane: the second finds what the first made,
//! and the surfaces it claimed.
//!
//! An entry whose working dir or config dir holds a control character (an index another tool
//! wrote) is refused: it gets no command, and its values are never typed or printed raw.
//!
//! Each tmux command has a deadline (`tmux::CALL_DEADLINE`): once the server has not answered
//! one (stopped or hung), no further surface is tried on it, the surface being opened gets its
//! claim back, and the restore says which server did not answer and exits 1.
//!
//! The plan is made by `resume_plan::plan::build_plan` (linear in the number of entries); this
//! module prints it and applies it.

use std::time::Duration;

use anyhow::anyhow;
use index_core::Index;
use index_core::address::TmuxPane;
use index_core::text::escape;
use resume_plan::plan::{PlanError, PlanOptions};
use resume_plan::{Plan, PlanItem};

use crate::args::RestoreArgs;
use crate::context::{self, Context};
use crate::error::Failure;
use crate::output::{self, OUTPUT_VERSION};
use crate::tmux;

/// How long a restore's claim on a surface keeps a second restore away (unless the resumed
/// agent records itself first).
const CLAIM_TTL_MS: u64 = 10 * 60 * 1000;

/// How long a restore waits for another one that is applying (tmux commands only: it never
/// waits for an agent, so a long wait means something is stuck).
const RESTORE_LOCK_TIMEOUT: Duration = Duration::from_secs(60);

pub fn run(cx: &Context, args: &RestoreArgs) -> Result<(), Failure> {
    let max_age = args
        .max_age
        .as_deref()
        .map(|text| context::parse_duration(text, "max age").map(context::millis))
        .transpose()?;
    let index = context::load(cx)?;
    let mut plan = build_plan(cx, &index, args.all, max_age)?;
    for (cwd, surfaces) in resume_plan::plan::shared_cleanup_dirs(&plan) {
        output::print_message(&format!(
            "warning: {} resumes {} Gemini sessions in {} ({}) while Gemini's start-up cleanup \
             (general.sessionRetention) is on: each start deletes, in its dir, the session files \
             that hold no prompt yet, so one pane's start can delete another's resumed \
             conversation; turn the cleanup off first with `crash-resume hook install gemini \
             --retention off`",
            if args.apply.is_some() {
                "restore"
            } else {
                "applying this plan"
            },
            surfaces.len(),
            escape(&cwd),
            surfaces
                .iter()
                .map(|surface| escape(surface))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut failed = 0;
    let mut unanswered = None;
    if let Some(tmux::Apply::Tmux) = args.apply {
        let server = tmux::Server::new(args.tmux_socket.clone());
        let store = context::open_store(cx)?;
        failed = store
            .exclusive("restore", RESTORE_LOCK_TIMEOUT, || {
                let mut failed = 0;
                for item in plan.iter_mut().filter(|item| item.resumable()) {
                    let applied = match server.unanswered() {
                        Some(unanswered) => format!("not tried: {unanswered}"),
                        None => apply_one(&store, &server, item),
                    };
                    failed += usize::from(applied.starts_with("failed"));
                    item.applied = Some(applied);
                }
                failed
            })
            .map_err(|error| match error {
                index_store::StoreError::LockTimeout { path, holder, waited } => {
                    Failure::Failed(anyhow!(
                        "another restore is applying ({holder}, lock {path}); gave up after {waited:.1?}. Nothing was opened; try again once it finishes"
                    ))
                }
                other => other.into(),
            })?;
        unanswered = server
            .unanswered()
            .map(|unanswered| (unanswered.to_string(), server.command_line()));
    }
    let not_tried = plan
        .iter()
        .filter(|item| {
            item.applied
                .as_deref()
                .is_some_and(|applied| applied.starts_with("not tried"))
        })
        .count();
    let outcome = match (failed, &unanswered) {
        (_, Some((unanswered, command_line))) => Err(Failure::Failed(anyhow!(
            "{unanswered}: the server may be stopped or hung; {failed} surface(s) failed and {not_tried} \
             were not tried, and none of them is claimed. Check the server (`{command_line} \
             list-sessions`; a stopped one resumes with `kill -CONT` on its pid, a hung one \
             must be killed), then run restore again"
        ))),
        (0, None) => Ok(()),
        (failed, None) => Err(Failure::Failed(anyhow!(
            "{failed} of the surfaces tried could not be opened (marked `failed` above)"
        ))),
    };
    if cx.json {
        output::print_json(&Plan {
            version: OUTPUT_VERSION,
            surfaces: plan,
        })?;
        return outcome;
    }
    if plan.is_empty() {
        output::print_message(&format!(
            "nothing to restore: no surface in the index{}{}",
            if args.all {
                ""
            } else {
                " whose session did not end cleanly"
            },
            match &args.max_age {
                Some(max_age) => format!(" and was active within {max_age}"),
                None => String::new(),
            }
        ));
        return Ok(());
    }
    output::print_line(&plan_text(&plan))?;
    outcome
}

/// The plan for every surface (or only those that did not end cleanly), sorted by surface;
/// with `max_age`, only surfaces active within it (by [`index_core::Entry::last_activity`]).
fn build_plan(
    cx: &Context,
    index: &Index,
    all: bool,
    max_age: Option<u64>,
) -> Result<Vec<PlanItem>, Failure> {
    let registry = context::registry(cx)?;
    let options = PlanOptions {
        all,
        max_age,
        now: context::now(),
    };
    resume_plan::plan::build_plan(index, &registry, cx.env(), options).map_err(
        |error| match error {
            PlanError::InvalidId(error) => error.into(),
            PlanError::Render(error) => Failure::Failed(error.into()),
        },
    )
}

/// Claims the surface in the index, then re-opens it in tmux. Returns what was done.
fn apply_one(store: &index_store::Store, server: &tmux::Server, item: &PlanItem) -> String {
    let target = match TmuxPane::parse(&item.surface) {
        Ok(Some(target)) => target,
        Ok(None) => return "skipped: not a tmux surface".to_string(),
        Err(error) => return format!("failed: {error}"),
    };
    let Some(command) = &item.command else {
        return "skipped: nothing to resume".to_string();
    };
    // A busy pane is left alone before it is claimed: once the user has freed it, the next
    // restore re-opens it. (`open` checks again, for a pane that gets busy in between.)
    if let Some(busy) = server.busy(&target) {
        return format!("skipped: {busy}");
    }
    // A server that did not answer is not written to: nothing is claimed for it.
    if let Some(unanswered) = server.unanswered() {
        return format!("failed: {unanswered}");
    }
    let now = context::now();
    let claimed = store
        .update(|index| index.claim_restore(&item.surface, &item.held_session, CLAIM_TTL_MS, now));
    let mut doubt = String::new();
    match claimed {
        Ok(updated) if updated.value => {}
        Ok(_) => return "skipped: another restore claimed it".to_string(),
        // The claim is in place, only its durability is in doubt: skipping now would leave the
        // surface to nobody, since a second restore sees the claim and leaves it alone.
        Err(error @ index_store::StoreError::NotDurable { .. })
            if claimed_at(store, item) == Some(now) =>
        {
            doubt = format!(" (the claim may not survive a power cut: {error})");
        }
        // Not claimed, so not opened: a failure of this restore, which says why.
        Err(error) => return format!("failed: cannot claim it in the index: {error}"),
    }
    let (outcome, opened) = match server.open(&target, item.cwd.as_deref(), command) {
        Ok(tmux::Opened::Started(done)) => (done, true),
        Ok(tmux::Opened::Skipped(busy)) => (format!("skipped: {busy}"), false),
        Err(error) => (format!("failed: {error:#}"), false),
    };
    if !opened {
        // Nothing was started: the claim is taken back, so the next restore may try at once
        // (best effort: a claim left behind only delays that for its time to live).
        let _ = store.update(|index| index.release_restore(&item.surface, &item.held_session, now));
    }
    outcome + &doubt
}

/// When the surface was last claimed for a restore, as the index on disk says now.
fn claimed_at(store: &index_store::Store, item: &PlanItem) -> Option<u64> {
    let index = store.load().ok()?.index;
    let entry = index.lookup(&item.surface)?;
    (entry.session.as_str() == item.held_session)
        .then_some(entry.restore_claimed_at)
        .flatten()
}

/// The plan for people: on a terminal a table whose last column gathers the notes; piped, one
/// tab-separated line per surface (surface, verdict, session, command or what happens, then
/// each note as a field of its own).
fn plan_text(plan: &[PlanItem]) -> String {
    let cells: Vec<(Vec<String>, Vec<String>)> = plan
        .iter()
        .map(|item| {
            let session = escape(item.session_id.as_deref().unwrap_or("-")).into_owned();
            let verdict = item.verdict.as_str().to_string();
            let what = match (&item.refused, &item.held_elsewhere, &item.command) {
                (Some(refused), _, _) => format!("not resumed: {refused}"),
                (None, Some(holder), _) => format!("not resumed: held by {}", escape(holder)),
                (None, None, Some(command)) => escape(command).into_owned(),
                (None, None, None) => match &item.recoverable_session_id {
                    Some(evidence) => format!("starts fresh ({} is on disk)", escape(evidence)),
                    None => "starts fresh".to_string(),
                },
            };
            let mut notes = Vec::new();
            if let Some(risk) = &item.retention {
                let deleter = match agent_paths::Agent::from_name(&item.provider) {
                    Some(agent_paths::Agent::Gemini) => "Gemini deletes sessions",
                    _ => "Claude Code deletes transcripts",
                };
                notes.push(format!(
                    "(transcript {} days old; {deleter} after {} days)",
                    risk.age_days, risk.cleanup_period_days
                ));
            }
            if item.cleanup.is_some() {
                notes.push(
                    "(Gemini's start-up cleanup is on: the next Gemini start in this dir may \
                     delete the resumed conversation; see `crash-resume preflight`)"
                        .to_string(),
                );
            }
            if let Some(why) = &item.why {
                notes.push(format!("({why})"));
            } else if item.ended_cleanly {
                notes.push("(ended cleanly)".to_string());
            }
            if let Some(applied) = &item.applied {
                notes.push(format!("[{}]", escape(applied)));
            }
            let fields = vec![escape(&item.surface).into_owned(), verdict, session, what];
            (fields, notes)
        })
        .collect();
    if crate::table::stdout_is_terminal() {
        let joined: Vec<String> = cells.iter().map(|(_, notes)| notes.join(" ")).collect();
        let rows: Vec<Vec<&str>> = cells
            .iter()
            .zip(&joined)
            .map(|((fields, _), notes)| {
                let mut row: Vec<&str> = fields.iter().map(String::as_str).collect();
                row.push(notes);
                row
            })
            .collect();
        crate::table::aligned(
            &["SURFACE", "VERDICT", "SESSION", "COMMAND", "NOTES"],
            &rows,
        )
    } else {
        let rows: Vec<Vec<&str>> = cells
            .iter()
            .map(|(fields, notes)| fields.iter().chain(notes).map(String::as_str).collect())
            .collect();
        crate::table::tsv(&rows)
    }
}
