//! The surface decision: which multiplexer's pane the agent runs in, from its variables, its
//! ancestors and its terminal, one case per line.

use mux::Multiplexer;
use mux::capture::{Ancestor, SurfaceDecision, SurfaceEvidence, SurfaceHint, decide_surface};
use mux::tmux::server_pid as tmux_server_pid;

type Vars = &'static [(&'static str, &'static str)];

/// The agent's ancestors, nearest first, as `(pid, name)`.
type Tree = Option<&'static [(u32, &'static str)]>;

/// What a case expects: a surface (`%N` stands for a tmux pane to name), or ambiguity with a
/// piece of its reason, or no variable at all.
#[derive(Debug)]
enum Expect {
    Surface(&'static str),
    Ambiguous(&'static str),
    Unnamed,
    Unconfirmed(&'static str),
}
use Expect::{Ambiguous, Surface, Unconfirmed, Unnamed};

/// `$TMUX` of a pane of the tmux server with pid 500.
const TMUX: (&str, &str) = ("TMUX", "/tmp/tmux-0/default,500,0");

/// A shell in a pane of tmux server 500, under the agent (`node`) and the hook's `sh`.
const IN_TMUX: Tree = Some(&[
    (40, "sh"),
    (30, "node"),
    (20, "bash"),
    (500, "tmux: server"),
]);
/// The same under a zellij inside that tmux pane.
const IN_ZELLIJ_IN_TMUX: Tree = Some(&[
    (40, "sh"),
    (30, "node"),
    (20, "zsh"),
    (70, "zellij"),
    (60, "bash"),
    (500, "tmux: server"),
]);
/// A shell in a cmux surface, kitty window or wezterm pane (the app is the shell's parent).
const IN_CMUX: Tree = Some(&[(30, "node"), (20, "zsh"), (10, "cmux")]);
const IN_KITTY: Tree = Some(&[(30, "node"), (20, "zsh"), (10, "kitty")]);
const IN_WEZTERM: Tree = Some(&[(30, "node"), (20, "zsh"), (10, "wezterm-gui")]);
/// Under another tmux server (the one the test runner sits in), not the one `$TMUX` names.
const IN_OTHER_TMUX: Tree = Some(&[(30, "cargo"), (20, "bash"), (900, "tmux: server")]);
/// No multiplexer among the ancestors (a daemon, a detached process).
const DETACHED: Tree = Some(&[(30, "node"), (1, "systemd")]);

#[rustfmt::skip]
const CASES: &[(Vars, Tree, Option<bool>, Expect)] = &[
    // The explicit surface wins over everything, unread evidence included.
    (&[("CRASH_RESUME_SURFACE", "mine"), ("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1"), TMUX], IN_TMUX,      Some(true),  Surface("mine")),
    (&[("CRASH_RESUME_SURFACE", "mine"), ("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1")],       None,         None,        Surface("mine")),
    (&[("CRASH_RESUME_SURFACE", "  "), ("KITTY_WINDOW_ID", "2")],                                None,         None,        Surface("kitty:2")),
    (&[],                                                                                       IN_TMUX,      None,        Unnamed),
    (&[("CMUX_SURFACE_ID", " "), ("ZELLIJ_SESSION_NAME", "s")],                                 None,         None,        Unnamed),
    // One variable, nothing against it.
    (&[("CMUX_SURFACE_ID", "a")],                                                               IN_CMUX,      None,        Surface("cmux:a")),
    (&[("CMUX_SURFACE_ID", "a")],                                                               None,         None,        Surface("cmux:a")),
    (&[("ZELLIJ_PANE_ID", "3"), ("ZELLIJ_SESSION_NAME", "s")],                                   DETACHED,     None,        Surface("zellij:s:3")),
    (&[("WEZTERM_PANE", "7")],                                                                  IN_WEZTERM,   None,        Surface("wezterm:7")),
    (&[("KITTY_WINDOW_ID", "2")],                                                               IN_KITTY,     None,        Surface("kitty:2")),
    // kitty: the instance (its pid) with the window; a window a restore opened names its surface.
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4242")],                                         IN_KITTY,     None,        Surface("kitty:4242:2")),
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4242"), ("CRASH_RESUME_KITTY_WINDOW", "4242:2:kitty:17:5")], IN_KITTY, None, Surface("kitty:17:5")),
    // A tag inherited from the window it was made for (a kitty started there, a copied window).
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4243"), ("CRASH_RESUME_KITTY_WINDOW", "4242:2:kitty:17:5")], IN_KITTY, None, Surface("kitty:4243:2")),
    (&[("KITTY_WINDOW_ID", "3"), ("KITTY_PID", "4242"), ("CRASH_RESUME_KITTY_WINDOW", "4242:2:kitty:17:5")], IN_KITTY, None, Surface("kitty:4242:3")),
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4242"), ("CRASH_RESUME_KITTY_WINDOW", "kitty:17:5")], IN_KITTY, None,       Surface("kitty:4242:2")),
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4242"), ("CRASH_RESUME_KITTY_WINDOW", "tmux:w:0.0")], IN_KITTY, None,       Surface("kitty:4242:2")),
    (&[("TMUX_PANE", "%1"), TMUX],                                                              IN_TMUX,      Some(true),  Surface("%1")),
    // A tmux pane named from outside it (no tmux ancestor): the one variable there is.
    (&[("TMUX_PANE", "%1"), TMUX],                                                              IN_OTHER_TMUX, Some(false), Surface("%1")),
    (&[("TMUX_PANE", "%1"), TMUX],                                                              None,         Some(false), Surface("%1")),
    // tmux inside cmux, kitty or wezterm: every tmux pane inherits the outer id; tmux is nearer.
    (&[("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1"), TMUX],                                    IN_TMUX,      Some(true),  Surface("%1")),
    (&[("KITTY_WINDOW_ID", "2"), ("TMUX_PANE", "%1"), TMUX],                                    IN_TMUX,      Some(true),  Surface("%1")),
    (&[("WEZTERM_PANE", "7"), ("TMUX_PANE", "%1"), TMUX],                                       IN_TMUX,      None,        Surface("%1")),
    // The tree unknown: the tmux pane's tty settles it either way.
    (&[("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1"), TMUX],                                    None,         Some(true),  Surface("%1")),
    (&[("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1"), TMUX],                                    None,         Some(false), Surface("cmux:a")),
    (&[("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1"), TMUX],                                    None,         None,        Ambiguous("CMUX_SURFACE_ID, TMUX_PANE are all set and the agent's ancestors could not be read")),
    // zellij inside tmux: every zellij pane inherits one TMUX_PANE; zellij is nearer.
    (&[("TMUX_PANE", "%1"), TMUX, ("ZELLIJ_PANE_ID", "3"), ("ZELLIJ_SESSION_NAME", "s")],       IN_ZELLIJ_IN_TMUX, Some(false), Surface("zellij:s:3")),
    (&[("TMUX_PANE", "%1"), TMUX, ("ZELLIJ_PANE_ID", "3"), ("ZELLIJ_SESSION_NAME", "s")],       IN_ZELLIJ_IN_TMUX, None,        Surface("zellij:s:3")),
    // Something with panes that is not known (screen) inside the tmux pane: the tmux server is
    // an ancestor but the terminal is not its pane.
    (&[("TMUX_PANE", "%1"), TMUX],                                                              IN_TMUX,      Some(false), Ambiguous("its terminal is not that pane's")),
    // Without `$TMUX`, any tmux process counts as the server.
    (&[("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1")],                                          IN_OTHER_TMUX, None,       Surface("%1")),
    // Two variables and no multiplexer among the ancestors: nothing to go by.
    (&[("CMUX_SURFACE_ID", "a"), ("KITTY_WINDOW_ID", "2")],                                     DETACHED,     None,        Ambiguous("CMUX_SURFACE_ID, KITTY_WINDOW_ID are all set and none of their programs is among the agent's ancestors")),
    (&[("CMUX_SURFACE_ID", "a"), ("TMUX_PANE", "%1"), TMUX],                                    IN_OTHER_TMUX, None,       Ambiguous("CMUX_SURFACE_ID, TMUX_PANE are all set")),
    // kitty inside a cmux surface: kitty is the nearer.
    (&[("CMUX_SURFACE_ID", "a"), ("KITTY_WINDOW_ID", "2")],                                     Some(&[(30, "node"), (20, "zsh"), (15, "kitty"), (12, "zsh"), (10, "cmux")]), None, Surface("kitty:2")),
];

#[test]
fn the_innermost_multiplexer_names_the_surface() {
    for (vars, tree, terminal, expected) in CASES {
        let evidence = SurfaceEvidence {
            ancestors: tree.map(|tree| {
                tree.iter()
                    .map(|(pid, name)| Ancestor {
                        pid: *pid,
                        name: name.to_string(),
                    })
                    .collect()
            }),
            terminal_is_tmux_pane: *terminal,
            ..SurfaceEvidence::default()
        };
        let get = |name: &str| {
            vars.iter()
                .find(|(variable, _)| *variable == name)
                .map(|(_, value)| value.to_string())
        };
        let decision = decide_surface(get, &evidence);
        let case = format!("{vars:?} {tree:?} {terminal:?}");
        match (expected, &decision) {
            (Surface(pane), SurfaceDecision::Named(SurfaceHint::TmuxPane(got)))
                if pane.starts_with('%') =>
            {
                assert_eq!(got, pane, "{case}");
            }
            (Surface(surface), SurfaceDecision::Named(SurfaceHint::Ready(got))) => {
                assert_eq!(got, surface, "{case}");
            }
            (Ambiguous(reason), SurfaceDecision::Ambiguous(got)) => {
                assert!(got.contains(reason), "{case}: {got}");
            }
            (Unnamed, SurfaceDecision::Unnamed) => {}
            _ => panic!("{case}: expected {expected:?}, got {decision:?}"),
        }
    }
}

/// An agent without a terminal: whether its tmux pane counts (the pane's process among its
/// ancestors), by `TMUX_PANE`'s pane process and the tree.
#[rustfmt::skip]
const WITHOUT_TERMINAL: &[(Vars, Tree, Option<u32>, Expect)] = &[
    // The pane's shell (20) is an ancestor: its own pane.
    (&[("TMUX_PANE", "%1"), TMUX],                        IN_TMUX,       Some(20),  Surface("%1")),
    // Another pane's process: `TMUX_PANE` was set by hand or inherited (`setsid` in pane %0).
    (&[("TMUX_PANE", "%1"), TMUX],                        IN_TMUX,       Some(777), Unconfirmed("the process of tmux pane %1 (pid 777) is not among its ancestors")),
    // tmux did not say: nothing ties the agent to the pane.
    (&[("TMUX_PANE", "%1"), TMUX],                        IN_TMUX,       None,      Unconfirmed("tmux did not say which process runs in pane %1")),
    (&[("TMUX_PANE", "%1")],                              DETACHED,      Some(20),  Unconfirmed("(pid 20) is not among its ancestors")),
    (&[("TMUX_PANE", "%1")],                              None,          Some(20),  Unconfirmed("(pid 20) is not among its ancestors")),
    // Other surfaces are not tmux panes: the rule is tmux's.
    (&[("CMUX_SURFACE_ID", "a")],                         DETACHED,      None,      Surface("cmux:a")),
    (&[("TMUX_PANE", "%1"), TMUX, ("ZELLIJ_PANE_ID", "3"), ("ZELLIJ_SESSION_NAME", "s")], IN_ZELLIJ_IN_TMUX, Some(777), Surface("zellij:s:3")),
    // An explicit surface is the user's word.
    (&[("CRASH_RESUME_SURFACE", "mine"), ("TMUX_PANE", "%1"), TMUX], IN_TMUX, Some(777), Surface("mine")),
];

#[test]
fn without_a_terminal_a_tmux_pane_counts_only_with_its_process_among_the_ancestors() {
    for (vars, tree, pane_process, expected) in WITHOUT_TERMINAL {
        let evidence = SurfaceEvidence {
            ancestors: tree.map(|tree| {
                tree.iter()
                    .map(|(pid, name)| Ancestor {
                        pid: *pid,
                        name: name.to_string(),
                    })
                    .collect()
            }),
            has_terminal: Some(false),
            tmux_pane_process: *pane_process,
            ..SurfaceEvidence::default()
        };
        let get = |name: &str| {
            vars.iter()
                .find(|(variable, _)| *variable == name)
                .map(|(_, value)| value.to_string())
        };
        let decision = decide_surface(get, &evidence);
        let case = format!("{vars:?} {tree:?} {pane_process:?}");
        match (expected, &decision) {
            (Surface(pane), SurfaceDecision::Named(SurfaceHint::TmuxPane(got)))
                if pane.starts_with('%') =>
            {
                assert_eq!(got, pane, "{case}");
            }
            (Surface(surface), SurfaceDecision::Named(SurfaceHint::Ready(got))) => {
                assert_eq!(got, surface, "{case}");
            }
            (Unconfirmed(reason), SurfaceDecision::Unconfirmed(got)) => {
                assert!(got.contains(reason), "{case}: {got}");
                assert!(
                    got.contains("no terminal") && got.contains("not trusted"),
                    "{case}: {got}"
                );
            }
            _ => panic!("{case}: expected {expected:?}, got {decision:?}"),
        }
        // With a terminal the same evidence is weighed as before.
        let with_terminal = SurfaceEvidence {
            has_terminal: Some(true),
            ..evidence
        };
        assert!(
            !matches!(
                decide_surface(get, &with_terminal),
                SurfaceDecision::Unconfirmed(_)
            ),
            "{case}"
        );
    }
}

#[test]
fn multiplexer_processes_by_name() {
    #[rustfmt::skip]
    let cases = [
        ("tmux: server", Multiplexer::Tmux, true),
        ("tmux", Multiplexer::Tmux, true),
        ("zellij", Multiplexer::Zellij, true),
        ("wezterm-mux-ser", Multiplexer::Wezterm, true),
        ("wezterm-gui", Multiplexer::Wezterm, true),
        ("kitty", Multiplexer::Kitty, true),
        ("cmux", Multiplexer::Cmux, true),
        ("tmu", Multiplexer::Tmux, false),
        ("bash", Multiplexer::Kitty, false),
        ("é", Multiplexer::Cmux, false),
    ];
    for (name, multiplexer, expected) in cases {
        assert_eq!(
            multiplexer.is_process_name(name),
            expected,
            "{name} {multiplexer:?}"
        );
    }
}

#[test]
fn the_tmux_server_pid_from_the_tmux_variable() {
    for (tmux, expected) in [
        ("/tmp/tmux-0/default,500,0", Some(500)),
        ("/tmp/a,b/sock,42,3", Some(42)),
        ("/tmp/tmux-0/default", None),
        ("/tmp/x,notapid,0", None),
        ("", None),
    ] {
        assert_eq!(tmux_server_pid(tmux), expected, "{tmux}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    #[test]
    fn any_environment_names_a_non_blank_surface_or_none(
        values in proptest::collection::btree_map(
            proptest::sample::select(vec![
                "CRASH_RESUME_SURFACE", "CMUX_SURFACE_ID", "TMUX_PANE", "ZELLIJ_PANE_ID",
                "ZELLIJ_SESSION_NAME", "WEZTERM_PANE", "KITTY_WINDOW_ID",
            ]),
            "\\PC{0,6}",
            0..7,
        )
    ) {
        let decision = decide_surface(|name| values.get(name).cloned(), &SurfaceEvidence::default());
        match decision {
            SurfaceDecision::Named(SurfaceHint::Ready(surface)) => proptest::prop_assert!(!surface.trim().is_empty()),
            SurfaceDecision::Named(SurfaceHint::TmuxPane(pane)) => proptest::prop_assert!(!pane.trim().is_empty()),
            SurfaceDecision::Ambiguous(_) => proptest::prop_assert!(values
                .iter()
                .filter(|(name, value)| **name != "ZELLIJ_SESSION_NAME" && **name != "CRASH_RESUME_SURFACE" && !value.trim().is_empty())
                .count() > 1),
            SurfaceDecision::Unnamed => proptest::prop_assert!(values
                .iter()
                .filter(|(name, _)| **name != "ZELLIJ_SESSION_NAME")
                .all(|(_, value)| value.trim().is_empty())),
            // Only an agent known to have no terminal can be unconfirmed.
            SurfaceDecision::Unconfirmed(why) => proptest::prop_assert!(false, "unconfirmed without evidence: {}", why),
        }
    }
}
