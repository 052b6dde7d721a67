//! `crash-resume forget`: drops a surface's entry.

use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;
use index_core::text::escape;

pub fn run(cx: &Context, surface: &str) -> Outcome {
    let updated = context::open_store(cx)?.update(|index| index.forget(surface))?;
    context::report(&updated.warnings);
    if cx.json {
        output::print_json(&output::Forgotten::new(surface, updated.value.as_ref()))?;
    }
    let Some(entry) = updated.value else {
        return Err(Failure::NotFound(format!(
            "no entry for surface {surface}; nothing forgotten"
        )));
    };
    if !cx.json {
        output::print_line(&format!(
            "forgot {} → {} ({})",
            escape(entry.surface.as_str()),
            escape(entry.session.as_str()),
            escape(entry.repo.as_str())
        ))?;
    }
    Ok(())
}
