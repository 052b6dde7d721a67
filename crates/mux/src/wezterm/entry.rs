//! WezTerm's entry in the registry.

use std::time::Instant;

use super::WeztermPane;
use crate::Options;
use crate::backend::Backend;
use crate::evidence::SurfaceHint;
use crate::multiplexer::Multiplexer;
use crate::registry::{self, Vars};
use crate::surface::Surface;

/// WezTerm: `WEZTERM_PANE` names the pane (its instance is added from the process tree).
pub(crate) struct Wezterm;

impl registry::Entry for Wezterm {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Wezterm
    }

    fn captured(&self, var: Vars<'_>) -> Option<SurfaceHint> {
        let id = var(Multiplexer::Wezterm.variable())?;
        let pane = WeztermPane { instance: None, id };
        Some(SurfaceHint::Ready(Surface::Wezterm(pane).to_string()))
    }

    /// WezTerm cannot be asked for the pane: a WezTerm process among the agent's ancestors
    /// says it still runs.
    fn instance_gone(
        &self,
        _: &Surface,
        _: Vars<'_>,
        pid: u32,
        deadline: Instant,
    ) -> Option<String> {
        crate::evidence::no_ancestor_runs(Multiplexer::Wezterm, pid, deadline)
            .then(|| "no WezTerm process runs this agent any more".to_string())
    }

    fn backend(&self, options: &Options) -> Option<Box<dyn Backend>> {
        Some(Box::new(super::Wezterm::new(
            None,
            crate::tmux::CALL_DEADLINE,
            options.shell.clone(),
        )))
    }
}
