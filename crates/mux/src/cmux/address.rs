//! The cmux surface grammar: `cmux:<id>`.

use std::fmt;

/// A cmux surface, as the hook records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmuxSurface {
    /// The surface id (`CMUX_SURFACE_ID`, a UUID that stays when the surface moves).
    pub id: String,
}

impl CmuxSurface {
    /// The prefix of every cmux surface id.
    pub const PREFIX: &'static str = "cmux:";

    pub(crate) fn parse_address(address: &str) -> Option<CmuxSurface> {
        crate::multiplexer::plain_id(address).map(|id| CmuxSurface { id })
    }
}

impl fmt::Display for CmuxSurface {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}{}", Self::PREFIX, self.id)
    }
}
