//! The tmux surface grammar: `tmux:<session>:<window>.<pane>`.

use std::fmt;

/// A tmux pane, by the names that survive a tmux restart: the session name and the window and
/// pane indexes (a `%N` pane id does not). Written `tmux:<session>:<window>.<pane>`, with the
/// indexes as tmux prints them (plain decimal, no sign, no leading zero); any other spelling
/// under the `tmux:` prefix is not canonical, and a restore re-opens exactly the pane it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxPane {
    /// The session name, exactly as tmux prints it.
    pub session: String,
    /// The window index (`#{window_index}`).
    pub window: u32,
    /// The pane index (`#{pane_index}`).
    pub pane: u32,
}

impl TmuxPane {
    /// The prefix of every tmux surface id.
    pub const PREFIX: &'static str = "tmux:";

    /// `<session>:<window>.<pane>` (the part after the prefix): `None` when spelled otherwise
    /// (`w:00.1`, `w:1`, `:0.0`).
    pub(crate) fn parse_address(address: &str) -> Option<TmuxPane> {
        let (session, position) = address.rsplit_once(':')?;
        let (window, pane) = position.split_once('.')?;
        if session.is_empty() {
            return None;
        }
        Some(TmuxPane {
            session: session.to_string(),
            window: plain_index(window)?,
            pane: plain_index(pane)?,
        })
    }

    /// The first character of the session name that tmux would not keep as it is when creating a
    /// session of that name: `.` and `:` become `_`, and `\`, `$` and control characters are
    /// escaped (tmux 3.3's `session_check_name`). A session of such a name cannot be created
    /// under the recorded name, so a restore refuses it before creating anything.
    pub fn rewritten_character(&self) -> Option<char> {
        self.session
            .chars()
            .find(|character| matches!(character, '.' | ':' | '\\' | '$') || character.is_control())
    }
}

impl fmt::Display for TmuxPane {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}{}:{}.{}",
            Self::PREFIX,
            self.session,
            self.window,
            self.pane
        )
    }
}

/// A window or pane index as tmux prints it: ASCII digits, no leading zero (but `0` itself).
fn plain_index(text: &str) -> Option<u32> {
    let plain = !text.is_empty()
        && text.bytes().all(|byte| byte.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    plain.then(|| text.parse().ok()).flatten()
}
