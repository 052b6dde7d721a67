//! The tmux surface grammar: `tmux:<socket path>:<session>:<window>.<pane>`, and the form
//! recorded before surfaces named their server, `tmux:<session>:<window>.<pane>` (the default
//! server's).

use std::fmt;

/// A tmux pane, by the names that survive a tmux restart: the server's socket path, the session
/// name and the window and pane indexes (a `%N` pane id does not). Written
/// `tmux:<socket path>:<session>:<window>.<pane>`, with the indexes as tmux prints them (plain
/// decimal, no sign, no leading zero); any other spelling under the `tmux:` prefix is not
/// canonical, and a restore re-opens exactly the pane it names.
///
/// tmux never keeps a `:` in a session name (it makes it `_`) and a socket path is absolute,
/// so once `:<window>.<pane>` is cut off the end, a rest that begins with `/` and holds a `:`
/// splits at its last `:` into the socket path and the session. Anything else is the form
/// recorded before surfaces named their server: [`TmuxPane::server`] is `None`, which means
/// the default server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxPane {
    /// The server's socket path (`#{socket_path}`), `None` for a surface recorded without it
    /// (which means the default server).
    pub server: Option<String>,
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

    /// `[<socket path>:]<session>:<window>.<pane>` (the part after the prefix): `None` when
    /// spelled otherwise (`w:00.1`, `w:1`, `:0.0`, `/s::0.0`).
    pub(crate) fn parse_address(address: &str) -> Option<TmuxPane> {
        let (rest, position) = address.rsplit_once(':')?;
        let (window, pane) = position.split_once('.')?;
        let (server, session) = match rest.rsplit_once(':') {
            Some((server, session)) if server.starts_with('/') => {
                (Some(server.to_string()), session)
            }
            _ => (None, rest),
        };
        if session.is_empty() {
            return None;
        }
        Some(TmuxPane {
            server,
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

    /// The same pane with its server named: `server` when it was recorded without one.
    pub fn with_server(&self, server: &str) -> TmuxPane {
        TmuxPane {
            server: Some(self.server.clone().unwrap_or_else(|| server.to_string())),
            ..self.clone()
        }
    }

    /// The form recorded before surfaces named their server (`tmux:<session>:<window>.<pane>`),
    /// which means the default server: what a surface of the default server was recorded as
    /// then.
    pub fn without_server(&self) -> TmuxPane {
        TmuxPane {
            server: None,
            ..self.clone()
        }
    }
}

impl fmt::Display for TmuxPane {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(Self::PREFIX)?;
        if let Some(server) = &self.server {
            write!(formatter, "{server}:")?;
        }
        write!(formatter, "{}:{}.{}", self.session, self.window, self.pane)
    }
}

/// A window or pane index as tmux prints it: ASCII digits, no leading zero (but `0` itself).
fn plain_index(text: &str) -> Option<u32> {
    let plain = !text.is_empty()
        && text.bytes().all(|byte| byte.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    plain.then(|| text.parse().ok()).flatten()
}
