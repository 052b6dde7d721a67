//! kitty's entry in the registry.

use std::time::Instant;

use crate::Options;
use crate::backend::Backend;
use crate::evidence::SurfaceHint;
use crate::multiplexer::Multiplexer;
use crate::registry::{self, Vars};
use crate::surface::Surface;

/// kitty: `KITTY_WINDOW_ID` names the window, `KITTY_PID` its instance, and a window a restore
/// opened names its surface ([`super::TAG_VARIABLE`], when bound to that window).
pub(crate) struct Kitty;

impl registry::Entry for Kitty {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Kitty
    }

    fn captured(&self, var: Vars<'_>) -> Option<SurfaceHint> {
        let id = var(Multiplexer::Kitty.variable())?;
        let window = super::captured(id, var("KITTY_PID"), var(super::TAG_VARIABLE).as_deref());
        Some(SurfaceHint::Ready(Surface::Kitty(window).to_string()))
    }

    /// A kitty window whose kitty (`KITTY_PID`, which kitty sets in each window; else the
    /// surface's instance, which in a window a restore opened is an earlier kitty's) no longer
    /// runs.
    fn instance_gone(
        &self,
        surface: &Surface,
        get: Vars<'_>,
        _: u32,
        deadline: Instant,
    ) -> Option<String> {
        let Surface::Kitty(window) = surface else {
            return None;
        };
        let pid: u32 = get("KITTY_PID")
            .or_else(|| window.instance.clone())?
            .parse()
            .ok()?;
        let running = proc_table::table()
            .process(pid, deadline)
            .is_some_and(|process| crate::evidence::runs(&process, Multiplexer::Kitty));
        (!running).then(|| format!("kitty (pid {pid}) is not running any more"))
    }

    fn backend(&self, options: &Options) -> Option<Box<dyn Backend>> {
        Some(Box::new(super::Kitty::new(
            options.kitty_socket.clone(),
            crate::tmux::CALL_DEADLINE,
            options.shell.clone(),
        )))
    }
}
