//! One conformance suite, run for every entry of the registry: its grammar round-trips, its
//! entry is its own, the environment its panes carry names the surface it records (and a blank
//! value names none), and it has a restore backend. A new multiplexer must add its fixture
//! here (the match is exhaustive).

use mux::Multiplexer;
use mux::capture::{SurfaceDecision, SurfaceEvidence, SurfaceHint, decide_surface};

/// What each multiplexer's conformance is checked with.
struct Fixture {
    /// Surface ids of its grammar, each displayed back as given.
    surfaces: &'static [&'static str],
    /// Spellings under its prefix that are not its address.
    refused: &'static [&'static str],
    /// The environment of one of its panes (recorded from a real one), and what it names: a
    /// surface id, or a tmux pane id (`%N`) for tmux to turn into its place.
    environment: &'static [(&'static str, &'static str)],
    names: &'static str,
}

fn fixture(multiplexer: Multiplexer) -> Fixture {
    match multiplexer {
        Multiplexer::Tmux => Fixture {
            surfaces: &["tmux:work:0.1", "tmux:/tmp/tmux-0/default:work:0.1"],
            refused: &["tmux:work:00.1", "tmux:work"],
            environment: &[("TMUX_PANE", "%3"), ("TMUX", "/tmp/tmux-0/default,500,0")],
            names: "%3",
        },
        Multiplexer::Zellij => Fixture {
            surfaces: &["zellij:dev:3", "zellij::3", "zellij:a:b:terminal_3"],
            refused: &["zellij:", "zellij:s:"],
            environment: &[
                ("ZELLIJ_PANE_ID", "3"),
                ("ZELLIJ_SESSION_NAME", "dev"),
                ("ZELLIJ", "0"),
            ],
            names: "zellij:dev:3",
        },
        Multiplexer::Wezterm => Fixture {
            surfaces: &["wezterm:12", "wezterm:4242-1700000000000:12"],
            refused: &["wezterm:"],
            environment: &[("WEZTERM_PANE", "12")],
            names: "wezterm:12",
        },
        Multiplexer::Kitty => Fixture {
            surfaces: &["kitty:7", "kitty:4242:7"],
            refused: &["kitty:", "kitty::3"],
            environment: &[("KITTY_WINDOW_ID", "7"), ("KITTY_PID", "4242")],
            names: "kitty:4242:7",
        },
        Multiplexer::Cmux => Fixture {
            surfaces: &["cmux:5F0C7A4E-1D2B-4C3A-9E8F-0A1B2C3D4E5F"],
            refused: &["cmux:"],
            environment: &[("CMUX_SURFACE_ID", "5F0C7A4E-1D2B-4C3A-9E8F-0A1B2C3D4E5F")],
            names: "cmux:5F0C7A4E-1D2B-4C3A-9E8F-0A1B2C3D4E5F",
        },
    }
}

fn lookup(
    environment: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Option<String> + Copy {
    move |name: &str| {
        environment
            .iter()
            .find(|(variable, _)| *variable == name)
            .map(|(_, value)| value.to_string())
    }
}

#[test]
fn every_entry_is_its_own_multiplexer_and_lists_its_pane_variable_first() {
    for multiplexer in Multiplexer::ALL {
        assert_eq!(multiplexer.entry().multiplexer(), multiplexer);
        assert_eq!(multiplexer.variables()[0].0, multiplexer.variable());
    }
}

#[test]
fn every_grammar_round_trips_and_refuses_other_spellings() {
    for multiplexer in Multiplexer::ALL {
        let fixture = fixture(multiplexer);
        for surface in fixture.surfaces {
            let parsed = mux::Surface::parse(surface).unwrap();
            assert_eq!(parsed.multiplexer(), Some(multiplexer), "{surface}");
            assert_eq!(parsed.to_string(), *surface);
        }
        for surface in fixture.refused {
            let refused = mux::Surface::parse(surface).unwrap_err();
            assert_eq!(refused.multiplexer, multiplexer, "{surface}");
        }
    }
}

#[test]
fn every_recorded_environment_names_its_surface_and_a_blank_one_none() {
    for multiplexer in Multiplexer::ALL {
        let fixture = fixture(multiplexer);
        let get = lookup(fixture.environment);
        let decision = decide_surface(get, &SurfaceEvidence::default());
        match decision {
            SurfaceDecision::Named(SurfaceHint::TmuxPane(pane)) => {
                assert_eq!(multiplexer, Multiplexer::Tmux);
                assert_eq!(pane, fixture.names);
            }
            SurfaceDecision::Named(SurfaceHint::Ready(surface)) => {
                assert_eq!(surface, fixture.names, "{multiplexer}");
                let parsed = mux::Surface::parse(&surface).unwrap();
                assert_eq!(parsed.multiplexer(), Some(multiplexer));
            }
            other => panic!("{multiplexer}: {other:?}"),
        }
        // Its pane variable blank: nothing names the surface.
        let blank = |name: &str| match name == multiplexer.variable() {
            true => Some("  ".to_string()),
            false => get(name),
        };
        assert_eq!(
            decide_surface(blank, &SurfaceEvidence::default()),
            SurfaceDecision::Unnamed,
            "{multiplexer}"
        );
        assert!(
            multiplexer
                .entry()
                .captured(&|name: &str| get(name).filter(|value| !value.trim().is_empty()))
                .is_some()
        );
    }
}

#[test]
fn every_entry_has_a_restore_backend_for_apply() {
    for multiplexer in Multiplexer::ALL {
        assert!(mux::APPLICABLE.contains(&multiplexer), "{multiplexer}");
        let backend = mux::backend(multiplexer, &mux::Options::default())
            .unwrap_or_else(|| panic!("{multiplexer} has no backend"));
        assert!(!backend.check_command().is_empty(), "{multiplexer}");
    }
}
