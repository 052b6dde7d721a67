//! zellij's entry in the registry.

use crate::Options;
use crate::backend::Backend;
use crate::evidence::SurfaceHint;
use crate::multiplexer::Multiplexer;
use crate::registry::{self, Vars};
use crate::surface::Surface;

/// zellij: `ZELLIJ_PANE_ID` names the pane, `ZELLIJ_SESSION_NAME` its session.
pub(crate) struct Zellij;

impl registry::Entry for Zellij {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Zellij
    }

    fn captured(&self, var: Vars<'_>) -> Option<SurfaceHint> {
        let pane = var(Multiplexer::Zellij.variable())?;
        let session = var("ZELLIJ_SESSION_NAME").unwrap_or_default();
        let surface = Surface::Zellij(super::ZellijPane { session, pane });
        Some(SurfaceHint::Ready(surface.to_string()))
    }

    fn backend(&self, options: &Options) -> Option<Box<dyn Backend>> {
        Some(Box::new(super::Zellij::new(
            None,
            crate::tmux::CALL_DEADLINE,
            options.shell.clone(),
        )))
    }
}
