//! kitty: its surface grammar, `kitty:<window id>` (from `KITTY_WINDOW_ID`). Capture only:
//! there is no backend yet, so `restore` gives each command but cannot apply it here.

use std::fmt;

/// A kitty window, as the hook records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KittyWindow {
    /// The window id (`KITTY_WINDOW_ID`).
    pub id: String,
}

impl KittyWindow {
    /// The prefix of every kitty surface id.
    pub const PREFIX: &'static str = "kitty:";

    pub(crate) fn parse_address(address: &str) -> Option<KittyWindow> {
        crate::multiplexer::plain_id(address).map(|id| KittyWindow { id })
    }
}

impl fmt::Display for KittyWindow {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}{}", Self::PREFIX, self.id)
    }
}
