//! The kitty surface grammar: `kitty:<kitty pid>:<window id>` (the instance and the window in
//! it), or `kitty:<window id>` as the hook recorded it before it named the instance.

use std::fmt;

/// A kitty window, as the hook records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KittyWindow {
    /// The kitty instance the window was in: its pid (`KITTY_PID`). `None` for an id recorded
    /// without it, which cannot tell one kitty from the next.
    pub instance: Option<String>,
    /// The window id (`KITTY_WINDOW_ID`), which kitty numbers from 1 again after a restart.
    pub id: String,
}

impl KittyWindow {
    /// The prefix of every kitty surface id.
    pub const PREFIX: &'static str = "kitty:";

    pub(crate) fn parse_address(address: &str) -> Option<KittyWindow> {
        match address.split_once(':') {
            Some((instance, id)) => (!instance.is_empty() && !id.is_empty()).then(|| KittyWindow {
                instance: Some(instance.to_string()),
                id: id.to_string(),
            }),
            None => {
                crate::multiplexer::plain_id(address).map(|id| KittyWindow { instance: None, id })
            }
        }
    }
}

impl fmt::Display for KittyWindow {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instance {
            Some(instance) => write!(formatter, "{}{instance}:{}", Self::PREFIX, self.id),
            None => write!(formatter, "{}{}", Self::PREFIX, self.id),
        }
    }
}
