//! Surface ids, parsed and displayed in this one place: which multiplexer a surface belongs to
//! and its address there. Each multiplexer's module holds its own address type (the grammar);
//! this module dispatches on the id's prefix. A surface id with no multiplexer's prefix (one a
//! user gave in `CRASH_RESUME_SURFACE`, such as `cmux-pane-42`) is kept verbatim.

use std::fmt;

use crate::cmux::CmuxSurface;
use crate::kitty::KittyWindow;
use crate::tmux::TmuxPane;
use crate::wezterm::WeztermPane;
use crate::zellij::ZellijPane;

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

    /// The form of its surface ids, for people.
    fn form(self) -> &'static str {
        match self {
            Multiplexer::Cmux => "cmux:<surface id>",
            Multiplexer::Tmux => "tmux:<session>:<window>.<pane>",
            Multiplexer::Zellij => "zellij:<session>:<pane id>",
            Multiplexer::Wezterm => "wezterm:<pane id>",
            Multiplexer::Kitty => "kitty:<window id>",
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

/// A surface, by its multiplexer's address, or verbatim when no multiplexer's prefix begins it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Surface {
    /// `tmux:<session>:<window>.<pane>`.
    Tmux(TmuxPane),
    /// `zellij:<session>:<pane id>`.
    Zellij(ZellijPane),
    /// `wezterm:<pane id>`.
    Wezterm(WeztermPane),
    /// `kitty:<window id>`.
    Kitty(KittyWindow),
    /// `cmux:<surface id>`.
    Cmux(CmuxSurface),
    /// Any other id (`CRASH_RESUME_SURFACE` as the user set it), kept as it is.
    Named(String),
}

impl Surface {
    /// The surface an id names: a multiplexer's address when the id begins with its prefix
    /// (an error when it does but is spelled otherwise, such as `tmux:w:00.1` or `kitty:`),
    /// else [`Surface::Named`].
    pub fn parse(surface: &str) -> Result<Surface, NotCanonical> {
        let Some(multiplexer) = Multiplexer::ALL.into_iter().find(|multiplexer| {
            surface
                .strip_prefix(multiplexer.name())
                .is_some_and(|rest| rest.starts_with(':'))
        }) else {
            return Ok(Surface::Named(surface.to_string()));
        };
        let address = &surface[multiplexer.name().len() + 1..];
        let not_canonical = || NotCanonical::new(surface, multiplexer);
        let parsed = match multiplexer {
            Multiplexer::Tmux => TmuxPane::parse_address(address).map(Surface::Tmux),
            Multiplexer::Zellij => ZellijPane::parse_address(address).map(Surface::Zellij),
            Multiplexer::Wezterm => WeztermPane::parse_address(address).map(Surface::Wezterm),
            Multiplexer::Kitty => KittyWindow::parse_address(address).map(Surface::Kitty),
            Multiplexer::Cmux => CmuxSurface::parse_address(address).map(Surface::Cmux),
        };
        parsed.ok_or_else(not_canonical)
    }

    /// The multiplexer the surface belongs to; `None` for a verbatim id.
    pub fn multiplexer(&self) -> Option<Multiplexer> {
        match self {
            Surface::Tmux(_) => Some(Multiplexer::Tmux),
            Surface::Zellij(_) => Some(Multiplexer::Zellij),
            Surface::Wezterm(_) => Some(Multiplexer::Wezterm),
            Surface::Kitty(_) => Some(Multiplexer::Kitty),
            Surface::Cmux(_) => Some(Multiplexer::Cmux),
            Surface::Named(_) => None,
        }
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Surface::Tmux(pane) => pane.fmt(formatter),
            Surface::Zellij(pane) => pane.fmt(formatter),
            Surface::Wezterm(pane) => pane.fmt(formatter),
            Surface::Kitty(window) => window.fmt(formatter),
            Surface::Cmux(surface) => surface.fmt(formatter),
            Surface::Named(id) => formatter.write_str(id),
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
    fn every_surface_displays_as_it_parses() {
        for (surface, multiplexer) in [
            ("tmux:work:0.1", Some(Multiplexer::Tmux)),
            ("zellij:dev:3", Some(Multiplexer::Zellij)),
            ("zellij::3", Some(Multiplexer::Zellij)),
            ("zellij:a:b:terminal_3", Some(Multiplexer::Zellij)),
            ("wezterm:12", Some(Multiplexer::Wezterm)),
            ("kitty:7", Some(Multiplexer::Kitty)),
            (
                "cmux:5F0C7A4E-1D2B-4C3A-9E8F-0A1B2C3D4E5F",
                Some(Multiplexer::Cmux),
            ),
            ("cmux-pane-42", None),
            ("TMUX:w:0.0", None),
            ("tmuxish:w", None),
        ] {
            let parsed = Surface::parse(surface).unwrap();
            assert_eq!(parsed.multiplexer(), multiplexer, "{surface}");
            assert_eq!(parsed.to_string(), surface);
        }
    }

    #[test]
    fn an_empty_address_is_refused_with_the_form() {
        for (surface, form) in [
            ("kitty:", "kitty:<window id>"),
            ("wezterm:", "wezterm:<pane id>"),
            ("cmux:", "cmux:<surface id>"),
            ("zellij:s:", "zellij:<session>:<pane id>"),
            ("zellij:", "zellij:<session>:<pane id>"),
        ] {
            let refused = Surface::parse(surface).unwrap_err();
            assert_eq!(refused.surface, surface);
            assert!(refused.to_string().contains(form), "{refused}");
        }
    }
}
