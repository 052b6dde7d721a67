//! A zellij surface id: `zellij:<session>:<pane>`, where the pane is a name the hook gave it
//! (`cr-<pane id>-<time>`, which survives zellij's restart) or, in an entry recorded before the
//! hook named panes, the bare pane id of `ZELLIJ_PANE_ID` (which zellij renumbers when it
//! resurrects a session).

use std::fmt;

/// A zellij pane, as the hook records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZellijPane {
    /// The session name (empty when the hook saw no `ZELLIJ_SESSION_NAME`).
    pub session: String,
    /// The pane's name, or its bare id (`ZELLIJ_PANE_ID`).
    pub pane: String,
}

/// What the pane part of a zellij surface names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneHandle<'a> {
    /// A terminal pane id (`ZELLIJ_PANE_ID`): it names the pane only until zellij restarts.
    Id(u32),
    /// A pane name: it survives zellij's restart.
    Name(&'a str),
}

impl ZellijPane {
    /// The prefix of every zellij surface id.
    pub const PREFIX: &'static str = "zellij:";

    /// `<session>:<pane>`: the pane is after the last `:` and not empty.
    pub(crate) fn parse_address(address: &str) -> Option<ZellijPane> {
        let (session, pane) = address.rsplit_once(':')?;
        (!pane.is_empty()).then(|| ZellijPane {
            session: session.to_string(),
            pane: pane.to_string(),
        })
    }

    /// Whether the pane is named by its id (plain decimal digits) or by a name.
    pub fn handle(&self) -> PaneHandle<'_> {
        let digits = !self.pane.is_empty() && self.pane.bytes().all(|byte| byte.is_ascii_digit());
        match self.pane.parse() {
            Ok(id) if digits => PaneHandle::Id(id),
            _ => PaneHandle::Name(&self.pane),
        }
    }
}

impl fmt::Display for ZellijPane {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}{}:{}", Self::PREFIX, self.session, self.pane)
    }
}
