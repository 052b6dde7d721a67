//! Multiplexer addresses inside surface ids, parsed and displayed in this one place: a tmux pane
//! is `tmux:<session>:<window>.<pane>`, with the window and pane indexes as tmux prints them
//! (plain decimal, no sign, no leading zero). Capture records that spelling, `record` refuses
//! any other under the `tmux:` prefix, and a restore re-opens exactly the pane it names.

use std::fmt;

/// Why a surface id under the `tmux:` prefix is not a tmux pane's address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "surface {surface:?} is not a tmux pane's address: a `tmux:` surface is tmux:<session>:<window>.<pane> \
     with plain decimal indexes (such as tmux:work:0.1), as the hook records it; give it in that form"
)]
pub struct NotCanonical {
    /// The surface id as given.
    pub surface: String,
}

/// A tmux pane, by the names that survive a tmux restart: the session name and the window and
/// pane indexes (a `%N` pane id does not).
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

    /// The pane a surface id names: `Ok(None)` when it is not a `tmux:` surface, an error when it
    /// is one in another spelling (`tmux:w:00.1`, `tmux:w:1`, `tmux::0.0`).
    pub fn parse(surface: &str) -> Result<Option<TmuxPane>, NotCanonical> {
        let Some(rest) = surface.strip_prefix(Self::PREFIX) else {
            return Ok(None);
        };
        let not_canonical = || NotCanonical {
            surface: surface.to_string(),
        };
        let (session, position) = rest.rsplit_once(':').ok_or_else(not_canonical)?;
        let (window, pane) = position.split_once('.').ok_or_else(not_canonical)?;
        if session.is_empty() {
            return Err(not_canonical());
        }
        Ok(Some(TmuxPane {
            session: session.to_string(),
            window: plain_index(window).ok_or_else(not_canonical)?,
            pane: plain_index(pane).ok_or_else(not_canonical)?,
        }))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(session: &str, window: u32, pane: u32) -> Option<TmuxPane> {
        Some(TmuxPane {
            session: session.to_string(),
            window,
            pane,
        })
    }

    #[test]
    fn canonical_addresses_parse_and_display_as_given() {
        for (surface, expected) in [
            ("tmux:work:0.1", pane("work", 0, 1)),
            ("tmux:a:b:10.20", pane("a:b", 10, 20)),
            ("tmux:#(touch x):3.0", pane("#(touch x)", 3, 0)),
            ("tmux:   :0.0", pane("   ", 0, 0)),
        ] {
            let parsed = TmuxPane::parse(surface).unwrap();
            assert_eq!(parsed, expected, "{surface}");
            assert_eq!(parsed.unwrap().to_string(), surface);
        }
    }

    #[test]
    fn other_surfaces_are_not_tmux_panes() {
        for surface in ["cmux-pane-42", "zellij:s:1", "TMUX:w:0.0", "kitty:3"] {
            assert_eq!(TmuxPane::parse(surface), Ok(None), "{surface}");
        }
    }

    #[test]
    fn other_spellings_of_a_tmux_pane_are_refused() {
        for surface in [
            "tmux:canon:00.01",
            "tmux:w:0.01",
            "tmux:w:+1.0",
            "tmux:w:1",
            "tmux:w:0.0.0",
            "tmux::0.0",
            "tmux:w:.0",
            "tmux:w:0.",
            "tmux:w:-1.0",
            "tmux:w:4294967296.0",
            "tmux:w: 1.0",
            "tmux:",
        ] {
            let refused = TmuxPane::parse(surface).unwrap_err();
            assert_eq!(refused.surface, surface);
            assert!(
                refused
                    .to_string()
                    .contains("tmux:<session>:<window>.<pane>")
            );
        }
    }

    #[test]
    fn names_tmux_rewrites_are_found() {
        for (session, rewritten) in [
            ("work", None),
            ("#(touch x)", None),
            ("a b", None),
            ("é✓", None),
            ("a.b", Some('.')),
            ("a$b", Some('$')),
            ("a\\b", Some('\\')),
            ("a\u{7f}", Some('\u{7f}')),
        ] {
            let target = pane(session, 0, 0).unwrap();
            assert_eq!(target.rewritten_character(), rewritten, "{session}");
        }
    }
}
