//! Which multiplexers there are, and what a surface id under one's prefix must be (a leaf: every
//! multiplexer's module and the surface dispatch build on it).

use std::fmt;

/// The variable a kitty window a restore opened carries (its backend reads it as
/// `kitty::TAG_VARIABLE`), kept in this leaf so that the table of variables needs no backend.
pub(crate) const KITTY_TAG_VARIABLE: &str = "CRASH_RESUME_KITTY_WINDOW";

/// A program with panes whose pane id the environment carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Multiplexer {
    /// cmux (`CMUX_SURFACE_ID`).
    Cmux,
    /// tmux (`TMUX_PANE`).
    Tmux,
    /// Zellij (`ZELLIJ_PANE_ID`).
    Zellij,
    /// WezTerm (`WEZTERM_PANE`).
    Wezterm,
    /// kitty (`KITTY_WINDOW_ID`).
    Kitty,
}

impl Multiplexer {
    /// Every multiplexer, in the order an ambiguity lists them.
    pub const ALL: [Multiplexer; 5] = [
        Multiplexer::Cmux,
        Multiplexer::Tmux,
        Multiplexer::Zellij,
        Multiplexer::Wezterm,
        Multiplexer::Kitty,
    ];

    /// Its name, as `--apply` takes it and as it begins its surface ids (before the `:`).
    pub fn name(self) -> &'static str {
        match self {
            Multiplexer::Cmux => "cmux",
            Multiplexer::Tmux => "tmux",
            Multiplexer::Zellij => "zellij",
            Multiplexer::Wezterm => "wezterm",
            Multiplexer::Kitty => "kitty",
        }
    }

    /// The variable that names the pane a process runs in.
    pub fn variable(self) -> &'static str {
        match self {
            Multiplexer::Cmux => "CMUX_SURFACE_ID",
            Multiplexer::Tmux => "TMUX_PANE",
            Multiplexer::Zellij => "ZELLIJ_PANE_ID",
            Multiplexer::Wezterm => "WEZTERM_PANE",
            Multiplexer::Kitty => "KITTY_WINDOW_ID",
        }
    }

    /// Every environment variable of its own that crash-resume reads, with what it says, in a
    /// line; the first is [`Multiplexer::variable`].
    pub fn variables(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Multiplexer::Cmux => &[
                ("CMUX_SURFACE_ID", "the cmux surface a process runs in"),
                (
                    "CMUX_SOCKET_PATH",
                    "cmux's socket (as restore --cmux-socket)",
                ),
            ],
            Multiplexer::Tmux => &[
                ("TMUX_PANE", "the tmux pane a process runs in"),
                (
                    "TMUX",
                    "the tmux server a process runs under (its socket path first)",
                ),
                ("TMUX_TMPDIR", "the dir of tmux's sockets (else /tmp)"),
            ],
            Multiplexer::Zellij => &[
                ("ZELLIJ_PANE_ID", "the zellij pane a process runs in"),
                (
                    "ZELLIJ_SESSION_NAME",
                    "the zellij session a process runs in",
                ),
                (
                    "ZELLIJ",
                    "set inside a zellij session; removed, with the two above, from every zellij call",
                ),
                (
                    "ZELLIJ_SOCKET_DIR",
                    "where zellij keeps its sessions' sockets",
                ),
            ],
            Multiplexer::Wezterm => &[("WEZTERM_PANE", "the WezTerm pane a process runs in")],
            Multiplexer::Kitty => &[
                ("KITTY_WINDOW_ID", "the kitty window a process runs in"),
                ("KITTY_PID", "the kitty that window belongs to"),
                (
                    "KITTY_LISTEN_ON",
                    "kitty's remote-control address (as restore --kitty-socket)",
                ),
                (
                    KITTY_TAG_VARIABLE,
                    "<kitty pid>:<window id>:<surface>: the surface a restore opened a kitty window for, bound to that window; anywhere else (inherited) it counts for nothing",
                ),
            ],
        }
    }

    /// The form of its surface ids, for people.
    fn form(self) -> &'static str {
        match self {
            Multiplexer::Cmux => "cmux:<surface id>",
            Multiplexer::Tmux => "tmux:<socket path>:<session>:<window>.<pane>",
            Multiplexer::Zellij => "zellij:<session>:<pane name or id>",
            Multiplexer::Wezterm => "wezterm:<instance>:<pane id>",
            Multiplexer::Kitty => "kitty:<kitty pid>:<window id>",
        }
    }

    /// Whether a process of this name (the executable's base name, as `/proc/<pid>/comm` or
    /// `ps -o comm=` shows it; Linux cuts it at 15 bytes) is this multiplexer's: the process
    /// whose children are its panes' programs (the tmux server shows as `tmux: server`, the
    /// wezterm one as `wezterm-gui` or `wezterm-mux-server`).
    pub fn is_process_name(self, name: &str) -> bool {
        let prefix = self.name();
        name.get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    }
}

/// Every multiplexer's variables ([`Multiplexer::variables`]), in [`Multiplexer::ALL`]'s order.
pub fn variables() -> impl Iterator<Item = (Multiplexer, &'static str, &'static str)> {
    Multiplexer::ALL.into_iter().flat_map(|multiplexer| {
        multiplexer
            .variables()
            .iter()
            .map(move |(name, meaning)| (multiplexer, *name, *meaning))
    })
}

impl fmt::Display for Multiplexer {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Why a surface id under a multiplexer's prefix is not that multiplexer's address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "surface {surface:?} is not a {multiplexer} {what}'s address: a `{multiplexer}:` surface is {form}{example}, as the hook records it; give it in that form",
    what = if *.multiplexer == Multiplexer::Tmux { "pane" } else { "surface" },
    form = .multiplexer.form(),
    example = if *.multiplexer == Multiplexer::Tmux { " with plain decimal indexes (such as tmux:work:0.1)" } else { "" },
)]
pub struct NotCanonical {
    /// The surface id as given.
    pub surface: String,
    /// The multiplexer its prefix names.
    pub multiplexer: Multiplexer,
}

impl NotCanonical {
    pub(crate) fn new(surface: &str, multiplexer: Multiplexer) -> NotCanonical {
        NotCanonical {
            surface: surface.to_string(),
            multiplexer,
        }
    }
}

/// An address that is one opaque id (`wezterm:3`, `kitty:7`, `cmux:<uuid>`): not empty, as the
/// multiplexer's variable gave it.
pub(crate) fn plain_id(address: &str) -> Option<String> {
    (!address.is_empty()).then(|| address.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_multiplexer_lists_its_pane_variable_first_and_no_name_twice() {
        for multiplexer in Multiplexer::ALL {
            assert_eq!(multiplexer.variables()[0].0, multiplexer.variable());
        }
        let names: Vec<&str> = variables().map(|(_, name, _)| name).collect();
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(names.len(), unique.len(), "{names:?}");
        assert!(names.contains(&"KITTY_LISTEN_ON") && names.contains(&"CMUX_SOCKET_PATH"));
    }
}
