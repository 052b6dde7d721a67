//! `crash-resume prune`: drops the entries inactive longer than a max age.

use crate::context::{self, Context, Outcome};
use crate::output;
use index_core::text::escape;

pub fn run(cx: &Context, max_age: &str) -> Outcome {
    let max_age = context::millis(context::parse_duration(max_age, "max age")?);
    let updated = context::open_store(cx)?.update(|index| {
        index.prune_inactive(max_age, context::now(), |entry| {
            context::conversation_active(cx, entry)
        })
    })?;
    context::report(&updated.warnings);
    if cx.json {
        return output::print_json(&output::Pruned::new(&updated.value));
    }
    let mut text = format!("pruned {} entries", updated.value.len());
    for entry in &updated.value {
        text.push_str(&format!(
            "\n{}\t{}\t{}",
            escape(entry.surface.as_str()),
            escape(entry.session.as_str()),
            escape(entry.repo.as_str())
        ));
    }
    output::print_line(&text)
}
