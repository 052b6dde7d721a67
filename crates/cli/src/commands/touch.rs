//! `crash-resume touch`: marks a surface's session active.

use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;
use index_core::text::escape;

pub fn run(cx: &Context, surface: &str) -> Outcome {
    let updated = context::open_store(cx)?.update(|index| index.touch(surface, context::now()))?;
    context::report(&updated.warnings);
    if cx.json {
        output::print_json(&output::Touched::new(surface, updated.value))?;
    }
    if !updated.value {
        return Err(Failure::NotFound(format!(
            "no entry for surface {surface}; nothing touched{}",
            context::surface_hint(cx, surface)
        )));
    }
    if !cx.json {
        output::print_line(&format!("touched {}", escape(surface)))?;
    }
    Ok(())
}
