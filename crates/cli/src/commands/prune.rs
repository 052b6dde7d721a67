//! `crash-resume prune`: drops the entries inactive longer than a max age, and the unusable
//! ones whose own readable timestamps are older than that. An entry whose session a running
//! agent holds is kept, however quiet it has been (the agent may sit at its prompt for days),
//! and the command says which it kept.

use std::cell::RefCell;

use crate::context::{self, Context, Outcome};
use crate::output;
use index_core::text::escape;
use resume_plan::live::LiveAgents;

pub fn run(cx: &Context, max_age: &str) -> Outcome {
    let max_age = context::millis(context::parse_max_age(max_age, "max age")?);
    let now = context::now();
    let live = LiveAgents::default();
    // The entries kept only because an agent holds their session: (surface, session, pid).
    let kept = RefCell::new(Vec::new());
    let updated = context::open_store(cx)?.prune(max_age, now, |entry| {
        let active = context::conversation_active(cx, entry, live.cache());
        if !entry.is_inactive(max_age, active, now) {
            return active;
        }
        match live.entry_holder(entry, cx.env()) {
            Some(pid) => {
                kept.borrow_mut()
                    .push((entry.surface.to_string(), entry.session.to_string(), pid));
                Some(now)
            }
            None => active,
        }
    })?;
    context::report(&updated.warnings);
    let mut kept = kept.into_inner();
    kept.sort();
    for (surface, session, pid) in &kept {
        output::print_message(&format!(
            "kept {} → {}: a running agent (pid {pid}) holds its session",
            escape(surface),
            escape(session)
        ));
    }
    let pruned = updated.value;
    if cx.json {
        return output::print_json(&output::Pruned::new(&pruned, &kept));
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
