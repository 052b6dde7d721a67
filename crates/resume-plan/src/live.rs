//! Which sessions running agents hold: a session a live agent process has open must not be
//! opened a second time (`restore`, `resume-cmd`), nor its surface forgotten while it runs
//! (`prune`). Each agent's layout says which sessions its running processes hold
//! ([`preflight::layout::Layout::live_holders`]: Claude Code names them in
//! `<config dir>/sessions/<pid>.json`); what is read is kept in one preflight cache, so each
//! config dir is read once.

use index_core::Entry;

use crate::{Environment, input};

/// The running agents' sessions, read once per config dir.
#[derive(Debug, Default)]
pub struct LiveAgents {
    cache: preflight::Cache,
}

impl LiveAgents {
    /// The pid of a running agent that holds `entry`'s own session, with the entry's config
    /// dir (else its agent's default) as the preflight takes it. `None` too for an agent whose
    /// running processes do not say which session they hold.
    pub fn entry_holder(&mut self, entry: &Entry, env: &Environment) -> Option<u32> {
        let input = input::entry_input(entry, env);
        let layout = preflight::open_layout(&input, &self.cache)?;
        layout
            .live_holders()
            .into_iter()
            .find(|(held, _)| held == entry.session.as_str())
            .map(|(_, pid)| pid)
    }
}
