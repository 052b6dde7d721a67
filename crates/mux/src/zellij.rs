//! Zellij: its surface grammar, `zellij:<session>:<pane id>` (the session from
//! `ZELLIJ_SESSION_NAME`, the pane from `ZELLIJ_PANE_ID`). Capture only: there is no backend
//! yet, so `restore` gives each command but cannot apply it here.

use std::fmt;

/// A zellij pane, as the hook records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZellijPane {
    /// The session name (empty when the hook saw no `ZELLIJ_SESSION_NAME`).
    pub session: String,
    /// The pane id (`ZELLIJ_PANE_ID`).
    pub pane: String,
}

impl ZellijPane {
    /// The prefix of every zellij surface id.
    pub const PREFIX: &'static str = "zellij:";

    /// `<session>:<pane id>`: the pane is after the last `:` and not empty.
    pub(crate) fn parse_address(address: &str) -> Option<ZellijPane> {
        let (session, pane) = address.rsplit_once(':')?;
        (!pane.is_empty()).then(|| ZellijPane {
            session: session.to_string(),
            pane: pane.to_string(),
        })
    }
}

impl fmt::Display for ZellijPane {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}{}:{}", Self::PREFIX, self.session, self.pane)
    }
}
