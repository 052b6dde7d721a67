//! `crash-resume path`: the index file in use, and whether it survives a reboot.

use crate::context::{self, Context, Outcome};
use crate::output;
use index_store::Durability;

pub fn run(cx: &Context) -> Outcome {
    let path = context::index_path(cx)?;
    let resolved = index_store::resolve_path(&path)?;
    let durability = index_store::durability(&path);
    if cx.json {
        return output::print_json(&output::PathInfo::new(
            &resolved,
            &durability,
            cx.allow_volatile,
        ));
    }
    let note = match &durability {
        Durability::Durable => "durable".to_string(),
        Durability::Volatile(reason) if cx.allow_volatile => {
            format!("volatile: {reason}; a reboot wipes it (allowed by --allow-volatile)")
        }
        Durability::Volatile(reason) => {
            format!(
                "volatile: {reason}; a reboot wipes it, so every command that reads or writes the index refuses it without --allow-volatile"
            )
        }
    };
    output::print_line(&format!(
        "{}\n{}",
        index_core::text::escape(resolved.as_str()),
        index_core::text::escape_message(&note)
    ))
}
