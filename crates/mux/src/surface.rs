//! Surface ids, parsed and displayed in this one place: which multiplexer a surface belongs to
//! and its address there. Each multiplexer's module holds its own address type (the grammar);
//! this module dispatches on the id's prefix. A surface id with no multiplexer's prefix (one a
//! user gave in `CRASH_RESUME_SURFACE`, such as `cmux-pane-42`) is kept verbatim.

use std::fmt;

use crate::cmux::address::CmuxSurface;
use crate::kitty::address::KittyWindow;
use crate::multiplexer::{Multiplexer, NotCanonical};
use crate::tmux::address::TmuxPane;
use crate::wezterm::address::WeztermPane;
use crate::zellij::address::ZellijPane;

/// A surface, by its multiplexer's address, or verbatim when no multiplexer's prefix begins it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Surface {
    /// `tmux:<socket path>:<session>:<window>.<pane>` (or `tmux:<session>:<window>.<pane>`,
    /// recorded without the server: the default one).
    Tmux(TmuxPane),
    /// `zellij:<session>:<pane name or id>`.
    Zellij(ZellijPane),
    /// `wezterm:<instance>:<pane id>` (or `wezterm:<pane id>`, recorded without the instance).
    Wezterm(WeztermPane),
    /// `kitty:<kitty pid>:<window id>` (or `kitty:<window id>`, recorded without the instance).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_surface_displays_as_it_parses() {
        for (surface, multiplexer) in [
            ("tmux:work:0.1", Some(Multiplexer::Tmux)),
            ("tmux:/tmp/tmux-0/default:work:0.1", Some(Multiplexer::Tmux)),
            ("zellij:dev:3", Some(Multiplexer::Zellij)),
            ("zellij::3", Some(Multiplexer::Zellij)),
            ("zellij:a:b:terminal_3", Some(Multiplexer::Zellij)),
            ("wezterm:12", Some(Multiplexer::Wezterm)),
            ("wezterm:4242-1700000000000:12", Some(Multiplexer::Wezterm)),
            ("wezterm:a:12", Some(Multiplexer::Wezterm)),
            ("kitty:7", Some(Multiplexer::Kitty)),
            ("kitty:4242:7", Some(Multiplexer::Kitty)),
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
            ("kitty:", "kitty:<kitty pid>:<window id>"),
            ("kitty::3", "kitty:<kitty pid>:<window id>"),
            ("wezterm:", "wezterm:<instance>:<pane id>"),
            ("cmux:", "cmux:<surface id>"),
            ("zellij:s:", "zellij:<session>:<pane name or id>"),
            ("zellij:", "zellij:<session>:<pane name or id>"),
        ] {
            let refused = Surface::parse(surface).unwrap_err();
            assert_eq!(refused.surface, surface);
            assert!(refused.to_string().contains(form), "{refused}");
        }
    }
}
