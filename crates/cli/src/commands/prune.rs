//! `crash-resume prune`: drops the entries inactive longer than a max age, and the unusable
//! ones whose own readable timestamps are older than that.

use crate::context::{self, Context, Outcome};
use crate::output;
use index_core::text::escape;

pub fn run(cx: &Context, max_age: &str) -> Outcome {
    let max_age = context::millis(context::parse_duration(max_age, "max age")?);
    let updated = context::open_store(cx)?.prune(max_age, context::now(), |entry| {
        context::conversation_active(cx, entry)
    })?;
    context::report(&updated.warnings);
    let pruned = updated.value;
    if cx.json {
        return output::print_json(&output::Pruned::new(&pruned));
    }
    let mut text = format!(
        "pruned {} entries",
        pruned.entries.len() + pruned.unusable.len()
    );
    for entry in &pruned.entries {
        text.push_str(&format!(
            "\n{}\t{}\t{}",
            escape(entry.surface.as_str()),
            escape(entry.session.as_str()),
            escape(entry.repo.as_str())
        ));
    }
    for surface in &pruned.unusable {
        text.push_str(&format!(
            "\n{}\t(an entry that could not be used)",
            escape(surface)
        ));
    }
    output::print_line(&text)
}
