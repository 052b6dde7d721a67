//! An index entry to a [`preflight::Input`]: its agent, working dir, config dir (else the
//! agent's default), held id and chain; the sessions of other surfaces are excluded from
//! recovery, so that one conversation is never offered to two panes.

use std::collections::BTreeSet;
use std::time::UNIX_EPOCH;

use index_core::{AgentName, Entry, Index, Millis, SessionId};

use crate::Environment;

/// The agent an entry was recorded with; an entry without one is Claude's (the JavaScript
/// tool knew only Claude).
pub fn agent_of(entry: &Entry) -> &str {
    entry
        .agent
        .as_ref()
        .map_or(agent_paths::DEFAULT_AGENT, AgentName::as_str)
}

/// Every session bound in the index, but `own`.
pub fn excluded_ids(index: &Index, own: Option<&str>) -> BTreeSet<String> {
    index
        .entries()
        .into_iter()
        .map(|entry| entry.session.to_string())
        .filter(|session| Some(session.as_str()) != own)
        .collect()
}

/// The preflight's input for an index entry.
pub fn preflight_input(index: &Index, entry: &Entry, env: &Environment) -> preflight::Input {
    preflight_input_excluding(
        entry,
        excluded_ids(index, Some(entry.session.as_str())),
        env,
    )
}

/// The preflight's input for an entry with the set of excluded ids given (a plan builds it once
/// for all entries instead of once per entry).
pub fn preflight_input_excluding(
    entry: &Entry,
    excluded: BTreeSet<String>,
    env: &Environment,
) -> preflight::Input {
    preflight::Input {
        chain: entry.chain().map(SessionId::to_string).collect(),
        excluded,
        ..entry_input(entry, env)
    }
}

/// An entry's own part of the preflight's input: agent, held id, working dir, config dir
/// (else the agent's default; one that cannot be told, its variable not UTF-8, counts as
/// unknown) and home; no chain, nothing excluded.
pub fn entry_input(entry: &Entry, env: &Environment) -> preflight::Input {
    let agent_name = agent_of(entry);
    preflight::Input {
        agent: Some(agent_name.to_string()),
        session: Some(entry.session.to_string()),
        cwd: entry.cwd.clone(),
        config_dir: entry
            .config_dir
            .clone()
            .or_else(|| env.config_dir(agent_name).ok().flatten()),
        home: env.home(),
        launch_env: crate::resume::relaunch(entry)
            .map(|relaunch| relaunch.env)
            .unwrap_or_default(),
        ..preflight::Input::default()
    }
}

/// When the entry's conversation last changed on disk (its transcript's modification time, as
/// the preflight finds the transcript), in epoch milliseconds; `None` when no transcript is
/// known. A max age is measured from the latest of this and the entry's `last_active`
/// ([`Entry::last_activity`]): typing prompts runs no hook that records.
pub fn conversation_active(entry: &Entry, env: &Environment) -> Option<Millis> {
    conversation_active_with(entry, env, &preflight::Cache::default())
}

/// [`conversation_active`] for one of many entries (`list`, `prune`, a restore plan): what is
/// read of the agents' files is kept in `cache` and read once for all of them, so an entry
/// costs the same however many project folders its config dir holds.
pub fn conversation_active_with(
    entry: &Entry,
    env: &Environment,
    cache: &preflight::Cache,
) -> Option<Millis> {
    preflight::transcript_modified_with(&entry_input(entry, env), cache)
        .and_then(millis_since_epoch)
}

/// A file time in epoch milliseconds; `None` before the epoch.
pub fn millis_since_epoch(time: std::time::SystemTime) -> Option<Millis> {
    let elapsed = time.duration_since(UNIX_EPOCH).ok()?;
    Some(Millis::try_from(elapsed.as_millis()).unwrap_or(Millis::MAX))
}
