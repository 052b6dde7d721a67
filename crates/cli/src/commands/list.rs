//! `crash-resume list`: every surface and its session.

use crate::context::{self, Context, Outcome};
use crate::output;
use index_core::Role;
use index_core::text::escape;

use crate::table::Clip;

/// What gives way, in this order, when the table is wider than the terminal: the session id
/// (to a short id), the repo, then the surface (its start).
const SHRINK: &[(&str, usize, Clip)] = &[
    ("SESSION", 8, Clip::End),
    ("REPO", 12, Clip::End),
    ("SURFACE", 16, Clip::Start),
];

pub fn run(cx: &Context) -> Outcome {
    let index = context::load(cx)?;
    let entries = index.entries();
    if cx.json {
        return output::print_json(&output::List::new(&entries));
    }
    let now = context::now();
    let cache = preflight::Cache::default();
    let cells: Vec<[String; 6]> = entries
        .iter()
        .map(|entry| {
            let age = output::format_age(
                entry.activity_age(context::conversation_active(cx, entry, &cache), now),
            );
            let role = escape(entry.role.as_ref().map_or("-", Role::as_str));
            let ended = if entry.ended_at.is_some() {
                "ended"
            } else {
                ""
            };
            [
                escape(entry.surface.as_str()).into_owned(),
                escape(entry.session.as_str()).into_owned(),
                escape(entry.repo.as_str()).into_owned(),
                role.into_owned(),
                format!("{age} ago"),
                ended.to_string(),
            ]
        })
        .collect();
    if cells.is_empty() {
        super::hints::empty_list(cx);
        return Ok(());
    }
    let rows: Vec<Vec<&str>> = cells
        .iter()
        .map(|row| row.iter().map(String::as_str).collect())
        .collect();
    let layout = crate::table::for_terminal(SHRINK, None);
    output::print_line(&crate::table::render_with(
        &["SURFACE", "SESSION", "REPO", "ROLE", "ACTIVE", "ENDED"],
        &rows,
        &layout,
    ))
}
