//! The one list of entries: each multiplexer's typed handle to its module's entry.

use crate::multiplexer::Multiplexer;
use crate::registry::Entry;

impl Multiplexer {
    /// Its entry in the registry: its module's rules.
    pub fn entry(self) -> &'static dyn Entry {
        match self {
            Multiplexer::Cmux => &crate::cmux::entry::Cmux,
            Multiplexer::Tmux => &crate::tmux::entry::Tmux,
            Multiplexer::Zellij => &crate::zellij::entry::Zellij,
            Multiplexer::Wezterm => &crate::wezterm::entry::Wezterm,
            Multiplexer::Kitty => &crate::kitty::entry::Kitty,
        }
    }
}

/// Every entry of the registry, in [`Multiplexer::ALL`]'s order.
pub fn all() -> impl Iterator<Item = &'static dyn Entry> {
    Multiplexer::ALL.into_iter().map(Multiplexer::entry)
}
