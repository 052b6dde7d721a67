//! The terminal multiplexers crash-resume knows, behind one seam: each multiplexer's surface
//! ids, parsed and displayed in one place ([`Surface`]), and for those a restore can start
//! commands in, a [`Backend`] (find a surface's place, tell whether it is busy, create what is
//! missing, start a command there as the place's own process, with a deadline on every call).
//!
//! Each multiplexer is one module holding its address type and, when it has one, its backend:
//! [`tmux`], [`zellij`], [`wezterm`], [`cmux`] and [`kitty`] have backends.
//! [`registry`] holds each one's rules behind one trait object ([`Multiplexer::entry`]):
//! capture, whether an instance is gone, its backend ([`backend()`], which `restore --apply`
//! picks from). What to do around a backend (claims
//! in the index, the restore lock, stopping at an unanswered multiplexer) is
//! `resume_plan::apply`'s, the same for every one.
//!
//! ```
//! use mux::{Multiplexer, Surface};
//!
//! let surface = Surface::parse("tmux:work:0.1")?;
//! assert_eq!(surface.multiplexer(), Some(Multiplexer::Tmux));
//! assert_eq!(surface.to_string(), "tmux:work:0.1");
//! assert!(Surface::parse("tmux:work:00.1").is_err());
//! assert_eq!(Surface::parse("my-pane")?, Surface::Named("my-pane".into()));
//! # Ok::<(), mux::NotCanonical>(())
//! ```

#![deny(missing_docs)]

pub mod backend;
pub mod capture;
mod client;
pub mod cmux;
mod entries;
mod evidence;
pub mod kitty;
mod multiplexer;
pub mod pane;
mod program;
pub mod registry;
pub mod script;
mod surface;
pub mod tmux;
pub mod wezterm;
pub mod zellij;

use std::path::PathBuf;

pub use backend::{Backend, Created, Elsewhere, InstanceRun, MuxError, Opened, Start};
pub use multiplexer::{Multiplexer, NotCanonical, variables};
pub use surface::Surface;

/// The multiplexers a restore can start commands in, in the order `--apply` lists them.
pub const APPLICABLE: [Multiplexer; 5] = [
    Multiplexer::Tmux,
    Multiplexer::Zellij,
    Multiplexer::Wezterm,
    Multiplexer::Cmux,
    Multiplexer::Kitty,
];

/// What picks the instance of a multiplexer a restore talks to (each backend reads the field
/// it needs), and what the caller read of the environment.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// tmux: the server's socket name (`tmux -L NAME`), or its socket path when it holds a `/`
    /// (`tmux -S PATH`); `None` for `$TMUX`'s server, else the default one.
    pub tmux_socket: Option<String>,
    /// cmux: its socket (`--cmux-socket`, else `CMUX_SOCKET_PATH`); `None` for
    /// [`cmux::DEFAULT_SOCKET`].
    pub cmux_socket: Option<PathBuf>,
    /// kitty: the address it listens on (`--kitty-socket`, else `KITTY_LISTEN_ON`), such as
    /// `unix:/tmp/kitty`.
    pub kitty_socket: Option<String>,
    /// The user's shell (`$SHELL`), which a place falls back to once the agent exits.
    pub shell: Option<String>,
}

/// The backend of `multiplexer`, talking to the instance `options` names; `None` for a
/// multiplexer that has none (capture only).
pub fn backend(multiplexer: Multiplexer, options: &Options) -> Option<Box<dyn Backend>> {
    multiplexer.entry().backend(options)
}

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
