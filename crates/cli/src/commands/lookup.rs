//! `crash-resume lookup`: one surface's entry.

use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;

pub fn run(cx: &Context, surface: &str) -> Outcome {
    let entry = context::load_entry(cx, surface)?;
    let entry = entry.as_ref();
    if cx.json {
        output::print_json(&output::Lookup::new(surface, entry))?;
    } else {
        output::print_json(&entry.map(output::EntryJson::from))?;
    }
    match entry {
        Some(_) => Ok(()),
        None => Err(Failure::NotFound(format!(
            "no entry for surface {surface}{}",
            context::surface_hint(cx, surface)
        ))),
    }
}
