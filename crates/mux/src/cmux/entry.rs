//! cmux's entry in the registry.

use std::path::PathBuf;
use std::time::Instant;

use super::CmuxSurface;
use crate::Options;
use crate::backend::Backend;
use crate::evidence::SurfaceHint;
use crate::multiplexer::Multiplexer;
use crate::registry::{self, Vars};
use crate::surface::Surface;

/// cmux: `CMUX_SURFACE_ID` names the surface.
pub(crate) struct Cmux;

impl registry::Entry for Cmux {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Cmux
    }

    fn captured(&self, var: Vars<'_>) -> Option<SurfaceHint> {
        let id = var(Multiplexer::Cmux.variable())?;
        Some(SurfaceHint::Ready(
            Surface::Cmux(CmuxSurface { id }).to_string(),
        ))
    }

    /// cmux cannot be asked for the surface: a cmux process among the agent's ancestors says
    /// it still runs.
    fn instance_gone(
        &self,
        _: &Surface,
        _: Vars<'_>,
        pid: u32,
        deadline: Instant,
    ) -> Option<String> {
        crate::evidence::no_ancestor_runs(Multiplexer::Cmux, pid, deadline)
            .then(|| "no cmux process runs this agent any more".to_string())
    }

    fn backend(&self, options: &Options) -> Option<Box<dyn Backend>> {
        Some(Box::new(super::Cmux::new(
            options
                .cmux_socket
                .clone()
                .unwrap_or_else(|| PathBuf::from(super::DEFAULT_SOCKET)),
            crate::tmux::CALL_DEADLINE,
            options.shell.clone(),
        )))
    }
}
