//! Dropping entries from a whole document: the usable ones the index holds, and the ones kept
//! verbatim because they could not be used (which the tool refuses and tells the user to
//! `forget`).
//!
//! An unusable entry is pruned only by what can be read of it: the latest of its `captured_at`
//! and `last_active` that is a non-negative integer. One with neither is never pruned (its age
//! is unknown), only forgotten by name; no transcript is consulted for it.

use index_core::{Entry, Millis, Value};

use crate::format::{self, Document};

/// What [`crate::Store::forget`] dropped.
#[derive(Debug, Clone, PartialEq)]
pub enum Forgotten {
    /// A usable entry.
    Entry(Box<Entry>),
    /// An entry kept verbatim because it could not be used: its stored JSON.
    Unusable(Value),
}

/// What [`crate::Store::prune`] dropped, each list sorted by surface.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pruned {
    /// Usable entries not active within the age.
    pub entries: Vec<Entry>,
    /// Surfaces of unusable entries whose readable timestamps were all older than the age.
    pub unusable: Vec<String>,
}

/// Drops the entry of `surface`, usable or kept verbatim. A verbatim one under the same name
/// as a usable one (recorded over it) goes too, or it would come back in the file.
pub(crate) fn forget(document: &mut Document, surface: &str) -> Option<Forgotten> {
    let unusable = document.unusable.remove(surface);
    match document.index.forget(surface) {
        Some(entry) => Some(Forgotten::Entry(Box::new(entry))),
        None => unusable.map(Forgotten::Unusable),
    }
}

/// Drops every usable entry not active within `max_age` (as [`index_core::Index::prune_inactive`])
/// and every unusable one whose readable timestamps are all older than that.
pub(crate) fn prune(
    document: &mut Document,
    max_age: Millis,
    now: Millis,
    conversation_active: impl Fn(&Entry) -> Option<Millis>,
) -> Pruned {
    let entries = document
        .index
        .prune_inactive(max_age, now, conversation_active);
    for entry in &entries {
        document.unusable.remove(entry.surface.as_str());
    }
    let mut stale: Vec<String> = document
        .unusable
        .iter()
        .filter(|(surface, raw)| {
            document.index.lookup(surface).is_none()
                && format::readable_last_seen(raw)
                    .is_some_and(|seen| now.saturating_sub(seen) > max_age)
        })
        .map(|(surface, _)| surface.clone())
        .collect();
    for surface in &stale {
        document.unusable.remove(surface);
    }
    stale.sort();
    Pruned {
        entries,
        unusable: stale,
    }
}
