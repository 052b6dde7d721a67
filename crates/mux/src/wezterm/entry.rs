//! WezTerm's entry in the registry.

use std::time::Instant;

use super::WeztermPane;
use crate::Options;
use crate::backend::Backend;
use crate::evidence::{Ancestor, SurfaceHint};
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

    /// A pane named by its id alone (which WezTerm numbers from 0 again after its server
    /// restarts) is given its instance: the nearest WezTerm process among the agent's
    /// ancestors, by pid and start (`proc_table::Table::start_mark`), so that a pane of a later
    /// WezTerm with the same id is another surface. Without one among the ancestors (the tree
    /// unknown, or the variable inherited from elsewhere) the id alone is kept.
    fn with_instance(
        &self,
        surface: Surface,
        ancestors: Option<&[Ancestor]>,
        deadline: Instant,
    ) -> Surface {
        let Surface::Wezterm(pane) = surface else {
            return surface;
        };
        if pane.instance.is_some() {
            return Surface::Wezterm(pane);
        }
        let instance = ancestors
            .into_iter()
            .flatten()
            .find(|ancestor| Multiplexer::Wezterm.is_process_name(&ancestor.name))
            .and_then(|ancestor| {
                let mark = proc_table::table().start_mark(ancestor.pid, deadline)?;
                Some(WeztermPane::instance_of(ancestor.pid, mark))
            });
        Surface::Wezterm(WeztermPane {
            instance,
            id: pane.id,
        })
    }

    fn backend(&self, options: &Options) -> Option<Box<dyn Backend>> {
        Some(Box::new(super::Wezterm::new(
            None,
            crate::tmux::CALL_DEADLINE,
            options.shell.clone(),
        )))
    }
}
