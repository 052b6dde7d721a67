//! The one liveness rule: a conversation is live while a process holds it. `restore` (in every
//! multiplexer), `resume-cmd` and `prune` ask it here, over one reading of the process table
//! per command ([`proc_table::Snapshot`], kept in the preflight cache).
//!
//! Two kinds of evidence count:
//!
//! - the agent's own: a file naming a pid that holds a session (Claude Code's
//!   `<config dir>/sessions/<pid>.json`, Copilot's `inuse.<pid>.lock`), only while that pid
//!   runs the agent and started before the file was written
//!   ([`preflight::layout::Layout::live_holders`]), so a pid given to another process since (after
//!   a reboot it may name anything) holds nothing;
//! - the surface's: a process whose environment carries `CRASH_RESUME_SURFACE=<surface>` and
//!   that runs the entry's agent is that surface's live agent, whatever multiplexer it runs in
//!   (a restore sets the variable for every agent it starts).

use index_core::Entry;
use proc_table::Snapshot;

use crate::{Environment, input};

/// The running agents, read once.
#[derive(Debug, Default)]
pub struct LiveAgents {
    cache: preflight::Cache,
}

impl LiveAgents {
    /// The pid of a running agent that holds `entry`: one whose own evidence names the entry's
    /// session (with the entry's config dir, else its agent's default, as the preflight takes
    /// it), else the surface's live agent ([`surface_agent`]).
    pub fn entry_holder(&self, entry: &Entry, env: &Environment) -> Option<u32> {
        let input = input::entry_input(entry, env);
        let held = preflight::open_layout(&input, &self.cache).and_then(|layout| {
            layout
                .live_holders()
                .into_iter()
                .find(|(held, _)| held == entry.session.as_str())
                .map(|(_, pid)| pid)
        });
        held.or_else(|| surface_agent(self.cache.processes(), entry))
    }

    /// What it read of the agents' files, for the other questions of the same command (such as
    /// when each conversation last changed), so that nothing is read twice.
    pub fn cache(&self) -> &preflight::Cache {
        &self.cache
    }
}

/// The pid of the surface's live agent: a process that runs the entry's agent (its name, as
/// the launcher starts it) with `CRASH_RESUME_SURFACE` naming the entry's surface.
pub fn surface_agent(processes: &Snapshot, entry: &Entry) -> Option<u32> {
    let agent = input::agent_of(entry);
    processes.carrying(
        crate::apply::SURFACE_VARIABLE,
        entry.surface.as_str(),
        agent,
    )
}
