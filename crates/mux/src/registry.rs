//! The registry: each multiplexer's whole axis behind one trait object ([`Entry`]), reached
//! from its typed handle by [`Multiplexer::entry`]. Each multiplexer's module holds its entry
//! (`<multiplexer>/entry.rs`, listed once in `entries`); the dispatch of capture, of whether an instance is gone and of
//! the restore backend goes through here, never through a case per multiplexer.

use std::time::Instant;

use crate::Options;
use crate::backend::Backend;
use crate::evidence::{Ancestor, SurfaceHint};
use crate::multiplexer::Multiplexer;
use crate::surface::Surface;

/// A lookup of the environment's variables (the caller's: this crate reads none itself).
pub type Vars<'a> = &'a dyn Fn(&str) -> Option<String>;

/// One multiplexer's rules, beyond its name, variables and grammar (which [`Multiplexer`]
/// answers): capture, whether an instance is gone, its restore backend.
pub trait Entry: Sync {
    /// The multiplexer this entry is.
    fn multiplexer(&self) -> Multiplexer;

    /// The surface its variables name for a process in one of its panes, when its pane
    /// variable ([`Multiplexer::variable`]) is set and not blank (`var` gives only such
    /// values).
    fn captured(&self, var: Vars<'_>) -> Option<SurfaceHint>;

    /// Whether `ancestor` is this multiplexer's process, the one whose panes its variable
    /// names (by default: by its name, [`Multiplexer::is_process_name`]).
    fn is_own_process(&self, ancestor: &Ancestor, get: Vars<'_>) -> bool {
        let _ = get;
        self.multiplexer().is_process_name(&ancestor.name)
    }

    /// Why the instance that runs `surface` is gone, when that can be checked (the agent in it
    /// ends then, and would be taken for a quit); `None` when it runs or nothing can be
    /// checked. `pid` is the process the check is made for (the hook), `get` its environment.
    fn instance_gone(
        &self,
        surface: &Surface,
        get: Vars<'_>,
        pid: u32,
        deadline: Instant,
    ) -> Option<String> {
        let _ = (surface, get, pid, deadline);
        None
    }

    /// `surface` (named by [`Entry::captured`]) with what its variable alone cannot say,
    /// from the agent's ancestors (nearest first, `None` when unknown); by default as it is.
    fn with_instance(
        &self,
        surface: Surface,
        ancestors: Option<&[Ancestor]>,
        deadline: Instant,
    ) -> Surface {
        let _ = (ancestors, deadline);
        surface
    }

    /// The id `surface` was recorded under in an earlier form, which a record of it in this
    /// form replaces; by default none.
    fn legacy_alias(&self, surface: &Surface) -> Option<Surface> {
        let _ = surface;
        None
    }

    /// Its restore backend, talking to the instance `options` names; `None` when it has none
    /// (capture only).
    fn backend(&self, options: &Options) -> Option<Box<dyn Backend>>;
}
