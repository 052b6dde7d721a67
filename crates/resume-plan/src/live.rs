//! Which sessions running agents hold: a session a live agent process has open must not be
//! opened a second time (`restore`, `resume-cmd`), nor its surface forgotten while it runs
//! (`prune`). Claude Code names the session of each running process in
//! `<config dir>/sessions/<pid>.json` ([`preflight::claude::live_holders`]); that dir is read
//! once per config dir.

use std::collections::HashMap;

use camino::{Utf8Path, Utf8PathBuf};
use index_core::Entry;

use crate::{Environment, input};

/// The running agents' sessions, read once per config dir.
#[derive(Debug, Default)]
pub struct LiveAgents {
    holders: HashMap<Utf8PathBuf, Vec<(String, u32)>>,
}

impl LiveAgents {
    /// The pid of a running `provider` agent of `config_dir` (its `~` expanded) that holds
    /// `session`. Only Claude Code says which session each of its processes holds; for other
    /// providers this is always `None`.
    pub fn holder(&mut self, provider: &str, config_dir: &Utf8Path, session: &str) -> Option<u32> {
        if provider != "claude" {
            return None;
        }
        self.holders
            .entry(config_dir.to_owned())
            .or_insert_with(|| preflight::claude::live_holders(config_dir))
            .iter()
            .find(|(held, _)| held == session)
            .map(|(_, pid)| *pid)
    }

    /// The pid of a running agent that holds `entry`'s own session, with the entry's config
    /// dir (else its provider's default) as the preflight takes it.
    pub fn entry_holder(&mut self, entry: &Entry, env: &Environment) -> Option<u32> {
        let input = input::entry_input(entry, env);
        let config_dir = input.config_dir.as_deref()?;
        let config_dir = agent_paths::expand_home(config_dir, input.home.as_deref());
        let provider = input.provider.as_deref().unwrap_or_default();
        self.holder(provider, &config_dir, entry.session.as_str())
    }
}
