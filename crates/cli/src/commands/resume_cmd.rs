//! `crash-resume resume-cmd`: the command that resumes a surface's session, agreeing with the
//! preflight and with `restore`: the plan item `restore` would make for the surface decides.
//!
//! - `resume` and `unknown`: the command, exit 0.
//! - `recover` (the recorded transcript is gone, another conversation of the dir is on disk):
//!   the command that resumes that conversation, as `restore` gives it, exit 0, with a note on
//!   stderr that it is not the recorded session.
//! - `fresh`: nothing on stdout, exit 4, stderr says why.
//! - a working dir that is gone: the command without its `cd`, as `restore` gives it, with a
//!   note on stderr that it is meant to run from the home dir.
//! - a session another surface or a running agent holds: nothing on stdout, exit 4, naming the
//!   holder (eval'ing the command would open one conversation twice).
//!
//! The surface's entry is read alone (fast on a large index); the whole index is read only when
//! the answer can depend on the other surfaces (a conversation other than the recorded one).

use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;
use anyhow::anyhow;
use index_core::text::escape;
use index_core::{Entry, Index};
use launcher_map::RenderError;
use preflight::Verdict;
use resume_plan::PlanItem;
use resume_plan::plan::{PlanError, Planner};

pub fn run(cx: &Context, surface: &str, max_age: Option<&str>) -> Outcome {
    let max_age = max_age
        .map(|text| context::parse_max_age(text, "max age"))
        .transpose()?;
    let (entry, unusable) = context::load_entry_checked(cx, surface)?;
    if let Some(reason) = unusable {
        return Err(Failure::Failed(anyhow!(
            "the entry of surface {} is refused: {reason}; record the surface again or drop it with `crash-resume forget`",
            escape(surface)
        )));
    }
    if let Some(refusal) = entry.as_ref().and_then(resume_plan::resume::refusal) {
        return Err(Failure::Failed(anyhow!(refusal.to_string())));
    }
    let Some(entry) = entry else {
        let message = format!(
            "no session recorded for surface {}{}",
            escape(surface),
            context::surface_hint(cx, surface)
        );
        return answer(cx, surface, None, Err(message));
    };
    if let Some(max_age) = max_age {
        let age = entry.activity_age(
            context::conversation_active(cx, &entry, &preflight::Cache::default()),
            context::now(),
        );
        if age > context::millis(max_age) {
            let message = format!(
                "the session of surface {} was last active {} ago, longer than the max age {}; nothing to resume",
                escape(surface),
                output::format_age_past(age, max_age),
                humantime::format_duration(max_age),
            );
            return answer(cx, surface, None, Err(message));
        }
    }
    let item = plan_item(cx, &entry)?;
    let decided = decide(&item);
    if let Ok(Some(note)) = &decided {
        output::print_message(note);
    }
    if decided.is_ok() {
        for note in item
            .launch
            .iter()
            .flat_map(|launch| launch.notes(surface, &item.agent))
        {
            output::print_message(&note);
        }
    }
    if let (Ok(_), Some(cwd), Some(starts_in)) = (&decided, &item.cwd, &item.starts_in) {
        output::print_message(&format!(
            "note: the working dir {} of surface {} is gone; the command has no `cd`: run it \
             from the home dir {}, where `crash-resume restore --apply` starts it",
            escape(cwd),
            escape(surface),
            escape(starts_in),
        ));
    }
    let found = match decided {
        Ok(_) => match &item.command {
            Some(command) => Ok(command.clone()),
            // An agent with no launcher: the registry says so.
            None => Err(no_command(cx, &entry, &item)?),
        },
        Err(message) => Err(message),
    };
    answer(cx, surface, Some(&item), found)
}

/// Prints the answer (`--json`: the document, whatever it is), and maps it to the outcome.
fn answer(
    cx: &Context,
    surface: &str,
    item: Option<&PlanItem>,
    found: Result<String, String>,
) -> Outcome {
    if cx.json {
        output::print_json(&output::ResumeCmd::new(
            surface,
            item,
            found.as_ref().ok().map(String::as_str),
        ))?;
    }
    match found {
        Ok(command) if !cx.json => output::print_line(&command),
        Ok(_) => Ok(()),
        Err(message) => Err(Failure::NotFound(message)),
    }
}

/// What `restore` plans for the entry. The entry alone decides when the preflight resumes its
/// own session; otherwise the other surfaces count (their sessions are never recovered into
/// this one), and the plan is made again over the whole index.
fn plan_item(cx: &Context, entry: &Entry) -> Result<PlanItem, Failure> {
    let registry = context::registry(cx)?;
    let (alone, _) = Index::from_entries([entry.clone()]);
    let item = Planner::new(&alone, &registry, cx.env())
        .item(entry)
        .map_err(plan_failure)?;
    let own = item.verdict == Verdict::Resume
        && item.session_id.as_deref() == Some(entry.session.as_str());
    if own {
        return Ok(item);
    }
    // The entry's read reported the index's warnings already.
    let index = context::open_store(cx)?.load()?.index;
    let entry = index.lookup(entry.surface.as_str()).unwrap_or(entry);
    Planner::new(&index, &registry, cx.env())
        .item(entry)
        .map_err(plan_failure)
}

fn plan_failure(error: PlanError) -> Failure {
    match error {
        PlanError::InvalidId(error) => error.into(),
        PlanError::Render(error) => Failure::Failed(error.into()),
    }
}

/// Whether the item's command may be handed out: `Ok` with a note for stderr when it resumes
/// another conversation than the recorded one, `Err` with why not.
fn decide(item: &PlanItem) -> Result<Option<String>, String> {
    let surface = escape(&item.surface);
    if let Some(holder) = &item.held_elsewhere {
        return Err(format!(
            "the session {} of surface {surface} is held by {}: it is open already, and resuming it here would open it twice; nothing to resume",
            escape(item.session_id.as_deref().unwrap_or(&item.held_session)),
            escape(&holder.to_string()),
        ));
    }
    match (item.verdict, item.session_id.as_deref()) {
        (Verdict::Fresh, _) | (_, None) => Err(format!(
            "the session {} of surface {surface} cannot be resumed: the preflight says fresh (its conversation is not on disk{}, or its working dir is gone); `crash-resume preflight {surface}` shows each step",
            escape(&item.held_session),
            match &item.recoverable_session_id {
                Some(evidence) => format!(", and {} cannot be used instead", escape(evidence)),
                None => String::new(),
            },
        )),
        (Verdict::Recover, Some(session)) if session != item.held_session => Ok(Some(format!(
            "note: the recorded session {} of surface {surface} is not on disk; this resumes {}, the conversation of the same dir that `crash-resume restore` would resume",
            escape(&item.held_session),
            escape(session),
        ))),
        _ => Ok(None),
    }
}

/// Why a resumable item has no command: the registry has no launcher for its agent.
fn no_command(cx: &Context, entry: &Entry, item: &PlanItem) -> Result<String, Failure> {
    let registry = context::registry(cx)?;
    let session = item.session_id.as_deref().unwrap_or(entry.session.as_str());
    match resume_plan::resume::render(&registry, entry, session, cx.home()) {
        Err(error @ RenderError::NoLauncher { .. }) => Ok(error.to_string()),
        Err(other) => Err(Failure::Failed(other.into())),
        Ok(_) => Err(Failure::Failed(anyhow!(
            "no command was made for surface {}",
            escape(&item.surface)
        ))),
    }
}
