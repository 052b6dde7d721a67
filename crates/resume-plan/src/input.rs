//! An index entry to a [`preflight::Input`]: its provider, working dir, config dir (else the
//! provider's default), held id and chain; the sessions of other surfaces are excluded from
//! recovery, so that one conversation is never offered to two panes.

use std::collections::BTreeSet;

use index_core::{Entry, Index, Provider, SessionId};

use crate::Environment;

/// The provider an entry was recorded with; an entry without one is Claude's (the JavaScript
/// tool knew only Claude).
pub fn provider_of(entry: &Entry) -> &str {
    entry
        .provider
        .as_ref()
        .map_or(agent_paths::DEFAULT_PROVIDER, Provider::as_str)
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
/// for all entries instead of once per entry). A provider config dir that cannot be told (its
/// variable is not UTF-8) counts as unknown.
pub fn preflight_input_excluding(
    entry: &Entry,
    excluded: BTreeSet<String>,
    env: &Environment,
) -> preflight::Input {
    let provider = provider_of(entry);
    preflight::Input {
        provider: provider.to_string(),
        session: Some(entry.session.to_string()),
        cwd: entry.cwd.clone().unwrap_or_default(),
        config_dir: entry
            .config_dir
            .clone()
            .or_else(|| env.config_dir(provider).ok().flatten()),
        history_session: None,
        chain: entry.chain().map(SessionId::to_string).collect(),
        excluded,
        home: env.home(),
    }
}
