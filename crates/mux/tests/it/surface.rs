//! Surface ids through the public grammar: the tmux spelling that capture records and a
//! restore re-opens, and the names tmux would rewrite.

use mux::Surface;
use mux::tmux::TmuxPane;

fn parse(surface: &str) -> Option<TmuxPane> {
    match Surface::parse(surface).unwrap() {
        Surface::Tmux(pane) => Some(pane),
        _ => None,
    }
}

fn pane(session: &str, window: u32, pane: u32) -> Option<TmuxPane> {
    Some(TmuxPane {
        server: None,
        session: session.to_string(),
        window,
        pane,
    })
}

fn served(server: &str, session: &str, window: u32, index: u32) -> Option<TmuxPane> {
    pane(session, window, index).map(|pane| TmuxPane {
        server: Some(server.to_string()),
        ..pane
    })
}

#[test]
fn canonical_addresses_parse_and_display_as_given() {
    for (surface, expected) in [
        ("tmux:work:0.1", pane("work", 0, 1)),
        ("tmux:a:b:10.20", pane("a:b", 10, 20)),
        ("tmux:#(touch x):3.0", pane("#(touch x)", 3, 0)),
        ("tmux:   :0.0", pane("   ", 0, 0)),
        (
            "tmux:/tmp/tmux-1000/default:0:0.0",
            served("/tmp/tmux-1000/default", "0", 0, 0),
        ),
        (
            "tmux:/run/a:b/work:my work:2.1",
            served("/run/a:b/work", "my work", 2, 1),
        ),
        // A rest that does not begin with `/` is a session recorded without its server.
        ("tmux:run/x:y:0.0", pane("run/x:y", 0, 0)),
    ] {
        let parsed = parse(surface);
        assert_eq!(parsed, expected, "{surface}");
        assert_eq!(parsed.unwrap().to_string(), surface);
    }
}

#[test]
fn other_surfaces_are_not_tmux_panes() {
    for surface in ["cmux-pane-42", "zellij:s:1", "TMUX:w:0.0", "kitty:3"] {
        assert!(
            !matches!(Surface::parse(surface), Ok(Surface::Tmux(_))),
            "{surface}"
        );
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
        "tmux:/tmp/tmux-0/default::0.0",
        "tmux:w:.0",
        "tmux:w:0.",
        "tmux:w:-1.0",
        "tmux:w:4294967296.0",
        "tmux:w: 1.0",
        "tmux:",
    ] {
        let refused = Surface::parse(surface).unwrap_err();
        assert_eq!(refused.surface, surface);
        assert!(
            refused
                .to_string()
                .contains("tmux:<socket path>:<session>:<window>.<pane>")
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
