//! tmux's entry in the registry.

use crate::Options;
use crate::backend::Backend;
use crate::evidence::{Ancestor, SurfaceHint};
use crate::multiplexer::Multiplexer;
use crate::registry::{self, Vars};
use crate::surface::Surface;

/// tmux: `TMUX_PANE` names a pane by its `%N` id, which tmux turns into its place; `$TMUX`
/// names the server.
pub(crate) struct Tmux;

impl registry::Entry for Tmux {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Tmux
    }

    fn captured(&self, var: Vars<'_>) -> Option<SurfaceHint> {
        var(Multiplexer::Tmux.variable()).map(SurfaceHint::TmuxPane)
    }

    /// The server whose pid `$TMUX` gives; without `$TMUX`, any tmux process.
    fn is_own_process(&self, ancestor: &Ancestor, get: Vars<'_>) -> bool {
        match get("TMUX").as_deref().and_then(server_pid) {
            Some(pid) => pid == ancestor.pid,
            None => Multiplexer::Tmux.is_process_name(&ancestor.name),
        }
    }

    /// A surface of the default server was recorded without it before surfaces named their
    /// server (`tmux:<session>:<window>.<pane>`, which means the default server).
    fn legacy_alias(&self, surface: &Surface) -> Option<Surface> {
        let Surface::Tmux(pane) = surface else {
            return None;
        };
        let server = pane.server.as_deref()?;
        super::same_socket(server, &super::default_socket_path())
            .then(|| Surface::Tmux(pane.without_server()))
    }

    fn backend(&self, options: &Options) -> Option<Box<dyn Backend>> {
        Some(Box::new(super::Server::new(options.tmux_socket.clone())))
    }
}

/// The pid of the tmux server in `$TMUX` (`<socket>,<server pid>,<session index>`).
pub fn server_pid(tmux: &str) -> Option<u32> {
    let mut fields = tmux.rsplitn(3, ',');
    let _session = fields.next()?;
    fields.next()?.parse().ok()
}
