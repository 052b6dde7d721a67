//! The wezterm surface grammar: `wezterm:<instance>:<pane id>`, or `wezterm:<pane id>` as
//! recorded before surfaces named their instance (or where the instance could not be told).

use std::fmt;

/// A WezTerm pane, as the hook records it. WezTerm numbers panes from 0 again when its server
/// restarts, so a pane id alone names a pane of whichever WezTerm runs: the instance (the
/// WezTerm process the agent ran under, by pid and start) tells them apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeztermPane {
    /// The WezTerm process the pane belonged to, `<pid>-<start mark>` (the process table's
    /// `start_mark`, [`WeztermPane::instance_of`]); `None` in the older form.
    pub instance: Option<String>,
    /// The pane id (`WEZTERM_PANE`).
    pub id: String,
}

impl WeztermPane {
    /// The prefix of every WezTerm surface id.
    pub const PREFIX: &'static str = "wezterm:";

    /// The instance of the WezTerm process `pid` whose start is `mark`.
    pub fn instance_of(pid: u32, mark: u64) -> String {
        format!("{pid}-{mark}")
    }

    /// The pid and start mark the instance names, if it names one.
    pub fn instance_process(&self) -> Option<(u32, u64)> {
        let (pid, started) = self.instance.as_deref()?.split_once('-')?;
        Some((pid.parse().ok()?, started.parse().ok()?))
    }

    pub(crate) fn parse_address(address: &str) -> Option<WeztermPane> {
        let with_instance = address.rsplit_once(':').and_then(|(instance, id)| {
            let pane = WeztermPane {
                instance: Some(instance.to_string()),
                id: crate::multiplexer::plain_id(id)?,
            };
            pane.instance_process()
                .is_some_and(|(pid, started)| WeztermPane::instance_of(pid, started) == instance)
                .then_some(pane)
        });
        with_instance.or_else(|| {
            crate::multiplexer::plain_id(address).map(|id| WeztermPane { instance: None, id })
        })
    }
}

impl fmt::Display for WeztermPane {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instance {
            Some(instance) => write!(formatter, "{}{instance}:{}", Self::PREFIX, self.id),
            None => write!(formatter, "{}{}", Self::PREFIX, self.id),
        }
    }
}
