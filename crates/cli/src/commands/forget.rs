//! `crash-resume forget`: drops a surface's entry, a usable one or one kept verbatim because it
//! could not be used.

use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;
use index_core::text::escape;
use index_store::Forgotten;

pub fn run(cx: &Context, surface: &str) -> Outcome {
    let updated = context::open_store(cx)?.forget(surface)?;
    context::report(&updated.warnings);
    if cx.json {
        output::print_json(&output::Forgotten::new(surface, updated.value.as_ref()))?;
    }
    let text = match updated.value {
        None => {
            return Err(Failure::NotFound(format!(
                "no entry for surface {surface}; nothing forgotten{}",
                context::surface_hint(cx, surface)
            )));
        }
        Some(Forgotten::Entry(entry)) => format!(
            "forgot {} → {} ({})",
            escape(entry.surface.as_str()),
            escape(entry.session.as_str()),
            escape(entry.repo.as_str())
        ),
        Some(Forgotten::Unusable(_)) => format!(
            "forgot {}, an entry that could not be used (kept as it was in the file until now)",
            escape(surface)
        ),
    };
    if !cx.json {
        output::print_line(&text)?;
    }
    Ok(())
}
