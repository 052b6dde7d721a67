//! What a capture weighs, shared by every multiplexer's entry and the decision (a leaf): the
//! surface a multiplexer's variables name, the agent's ancestors, and the process-tree checks.

use std::time::Instant;

use crate::multiplexer::Multiplexer;

/// A surface as the environment names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SurfaceHint {
    /// A complete surface id.
    Ready(String),
    /// A tmux pane id (`%N`), to be turned into `tmux:<socket path>:<session>:<window>.<pane>`
    /// by asking tmux (a `%N` id does not survive a tmux restart, so it is never recorded as
    /// is).
    TmuxPane(String),
}

/// A process above the agent in the process tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    /// The process id.
    pub pid: u32,
    /// The executable's base name.
    pub name: String,
}

/// How far up the process tree a capture looks for a multiplexer.
pub const MAX_ANCESTORS: usize = 64;

/// Whether `process` runs (has not ended) as `multiplexer`'s process, by its name.
pub(crate) fn runs(process: &proc_table::Process, multiplexer: Multiplexer) -> bool {
    !process.has_ended() && multiplexer.is_process_name(&process.name.to_string_lossy())
}

/// Whether no process of `multiplexer` runs among `pid`'s ancestors (`false` when the process
/// tree cannot be read by `deadline`: nothing can be said).
pub(crate) fn no_ancestor_runs(multiplexer: Multiplexer, pid: u32, deadline: Instant) -> bool {
    proc_table::table()
        .ancestry(pid, MAX_ANCESTORS, deadline)
        .is_some_and(|ancestry| {
            !ancestry
                .ancestors
                .iter()
                .any(|process| runs(process, multiplexer))
        })
}
