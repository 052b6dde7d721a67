//! `crash-resume resume-cmd`: the command that resumes a surface's session.

use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;
use anyhow::anyhow;
use index_core::Entry;
use index_core::text::escape;
use launcher_map::RenderError;

pub fn run(cx: &Context, surface: &str, max_age: Option<&str>) -> Outcome {
    let max_age = max_age
        .map(|text| context::parse_duration(text, "max age"))
        .transpose()?;
    let (entry, unusable) = context::load_entry_checked(cx, surface)?;
    if let Some(reason) = unusable {
        return Err(Failure::Failed(anyhow!(
            "the entry of surface {} is refused: {reason}; record the surface again or drop it with `crash-resume forget`",
            escape(surface)
        )));
    }
    if let Some(message) = entry.as_ref().and_then(resume_plan::resume::refusal) {
        return Err(Failure::Failed(anyhow!(message)));
    }
    let now = context::now();
    let found = match (entry.as_ref(), max_age) {
        (None, _) => Err(format!(
            "no session recorded for surface {}",
            escape(surface)
        )),
        (Some(entry), Some(max_age)) => {
            let age = entry.activity_age(context::conversation_active(cx, entry), now);
            if age > context::millis(max_age) {
                Err(format!(
                    "the session of surface {} was last active {} ago, longer than the max age {}; nothing to resume",
                    escape(surface),
                    output::format_age_past(age, max_age),
                    humantime::format_duration(max_age),
                ))
            } else {
                Ok(entry)
            }
        }
        (Some(entry), None) => Ok(entry),
    };
    let command = found
        .as_ref()
        .ok()
        .map(|entry| render(cx, entry))
        .transpose()?;
    if cx.json {
        output::print_json(&output::ResumeCmd::new(
            surface,
            found.as_ref().ok().copied(),
            command.as_deref(),
        ))?;
    }
    match (found, command) {
        (Ok(_), Some(command)) if !cx.json => output::print_line(&command),
        (Ok(_), _) => Ok(()),
        (Err(message), _) => Err(Failure::NotFound(message)),
    }
}

/// The entry's resume command.
fn render(cx: &Context, entry: &Entry) -> Result<String, Failure> {
    let registry = context::registry(cx)?;
    resume_plan::resume::render(&registry, entry, entry.session.as_str(), cx.home()).map_err(
        |error| match error {
            RenderError::NoLauncher { .. } => Failure::NotFound(format!("{error}")),
            other => Failure::Failed(other.into()),
        },
    )
}
