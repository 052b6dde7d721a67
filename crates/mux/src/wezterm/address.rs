//! The wezterm surface grammar: `wezterm:<id>`.

use std::fmt;

/// A WezTerm pane, as the hook records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeztermPane {
    /// The pane id (`WEZTERM_PANE`).
    pub id: String,
}

impl WeztermPane {
    /// The prefix of every WezTerm surface id.
    pub const PREFIX: &'static str = "wezterm:";

    pub(crate) fn parse_address(address: &str) -> Option<WeztermPane> {
        crate::multiplexer::plain_id(address).map(|id| WeztermPane { id })
    }
}

impl fmt::Display for WeztermPane {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}{}", Self::PREFIX, self.id)
    }
}
