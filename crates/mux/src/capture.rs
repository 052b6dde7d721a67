//! Capture: which surface the environment names, as a pure function of the variables (passed
//! in as a lookup function) and the evidence the caller gathered, so that it holds the same for
//! the CLI's hook and for an orchestrator that embeds this crate.

use std::time::Instant;

pub use crate::evidence::{Ancestor, MAX_ANCESTORS, SurfaceHint};
use crate::{Multiplexer, Surface};

/// What is known, beyond the variables, about the pane the agent runs in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurfaceEvidence {
    /// The agent's ancestors, nearest first; `None` when the process tree could not be read.
    pub ancestors: Option<Vec<Ancestor>>,
    /// Whether the agent's terminal is the tmux pane `TMUX_PANE` names (its `#{pane_tty}`);
    /// `None` when unknown (no tmux pane, tmux not reachable, or the agent has no terminal).
    pub terminal_is_tmux_pane: Option<bool>,
    /// Whether the agent has a controlling terminal; `None` when unknown.
    pub has_terminal: Option<bool>,
    /// The process tmux started in the pane `TMUX_PANE` names (its `#{pane_pid}`); `None` when
    /// tmux did not say (no tmux pane, tmux not reachable, or no such pane).
    pub tmux_pane_process: Option<u32>,
}

/// Which surface the agent runs in, or why none can be named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SurfaceDecision {
    /// A surface named from this hint.
    Named(SurfaceHint),
    /// No multiplexer variable is set.
    Unnamed,
    /// The variables name more than one pane and the evidence does not say which is the
    /// agent's; the text says why. Nothing may be recorded: the outer pane's id is shared by
    /// every pane of the inner multiplexer.
    Ambiguous(String),
    /// The variables point to a tmux pane, but the evidence does not bear it out: the agent has
    /// no terminal and the pane's process is not among its ancestors, so `TMUX_PANE` may have
    /// been inherited from elsewhere or set by hand. The text says why; nothing may be recorded.
    Unconfirmed(String),
}

/// The variables that name the surface explicitly, then by multiplexer.
pub const SURFACE_VARIABLES: [&str; 6] = [
    "CRASH_RESUME_SURFACE",
    "CMUX_SURFACE_ID",
    "TMUX_PANE",
    "ZELLIJ_PANE_ID",
    "WEZTERM_PANE",
    "KITTY_WINDOW_ID",
];

/// `CRASH_RESUME_SURFACE` when set (not blank): the surface the user named, used as is.
pub fn explicit_surface(get: impl Fn(&str) -> Option<String>) -> Option<String> {
    get("CRASH_RESUME_SURFACE").filter(|value| !value.trim().is_empty())
}

/// Every multiplexer whose variable is set (not blank), with the surface it names (each
/// entry's [`Entry::captured`](crate::registry::Entry::captured)).
pub fn multiplexers_in_env(
    get: impl Fn(&str) -> Option<String>,
) -> Vec<(Multiplexer, SurfaceHint)> {
    let var = |name: &str| get(name).filter(|value| !value.trim().is_empty());
    crate::entries::all()
        .filter_map(|entry| Some((entry.multiplexer(), entry.captured(&var)?)))
        .collect()
}

/// Why the multiplexer instance `surface` names is not running it any more, when its entry can
/// check ([`Entry::instance_gone`](crate::registry::Entry::instance_gone)); `None` when it
/// runs, when nothing can be checked, or for a surface of no multiplexer.
pub fn instance_gone(
    surface: &Surface,
    get: impl Fn(&str) -> Option<String>,
    pid: u32,
    deadline: Instant,
) -> Option<String> {
    surface
        .multiplexer()?
        .entry()
        .instance_gone(surface, &get, pid, deadline)
}

/// `surface` with what its multiplexer's variable alone cannot say, from the agent's ancestors
/// ([`Entry::with_instance`](crate::registry::Entry::with_instance): a WezTerm pane's instance).
pub fn with_instance(
    surface: Surface,
    ancestors: Option<&[Ancestor]>,
    deadline: Instant,
) -> Surface {
    match surface.multiplexer() {
        Some(multiplexer) => multiplexer
            .entry()
            .with_instance(surface, ancestors, deadline),
        None => surface,
    }
}

/// The id `surface` was recorded under in an earlier form, which a record of it in the new
/// form replaces ([`Entry::legacy_alias`](crate::registry::Entry::legacy_alias)).
pub fn legacy_alias(surface: &Surface) -> Option<Surface> {
    surface.multiplexer()?.entry().legacy_alias(surface)
}

/// The surface of the innermost multiplexer: the one whose pane the agent runs in.
///
/// A multiplexer's panes inherit the environment it was started with, so when one runs inside
/// another, every inner pane carries the outer pane's variable too (tmux started in a cmux
/// surface gives all its panes that surface's `CMUX_SURFACE_ID`; zellij started in a tmux pane
/// gives all its panes that `TMUX_PANE`). The order of the variables says nothing; evidence
/// does:
///
/// 1. `CRASH_RESUME_SURFACE`, set explicitly, wins.
/// 2. No multiplexer variable: [`SurfaceDecision::Unnamed`].
/// 3. Of the multiplexers whose variable is set, the one whose process is the agent's nearest
///    ancestor (for tmux, the server whose pid `$TMUX` gives). A tmux pane found so whose tty
///    is not the agent's terminal has something with panes of its own in between: ambiguous.
/// 4. None of them among the ancestors (or the tree unknown): a tmux pane whose tty is the
///    agent's terminal; else, leaving out a tmux pane whose tty is not, the one variable left.
/// 5. Anything else is ambiguous.
/// 6. A tmux pane named by 3 to 5 counts, when the agent has no terminal, only if the pane's
///    process is among the agent's ancestors: a process without a terminal (started with
///    `setsid`, or by a daemon) may carry a `TMUX_PANE` that is not its own, and nothing else
///    ties it to the pane. Otherwise [`SurfaceDecision::Unconfirmed`].
pub fn decide_surface(
    get: impl Fn(&str) -> Option<String>,
    evidence: &SurfaceEvidence,
) -> SurfaceDecision {
    let decision = decide_by_variables(get, evidence);
    match &decision {
        SurfaceDecision::Named(SurfaceHint::TmuxPane(pane))
            if evidence.has_terminal == Some(false) =>
        {
            confirm_without_terminal(pane, evidence).unwrap_or(decision)
        }
        _ => decision,
    }
}

/// Rule 6 of [`decide_surface`]: why a tmux pane named for an agent without a terminal does not
/// count, if it does not.
fn confirm_without_terminal(pane: &str, evidence: &SurfaceEvidence) -> Option<SurfaceDecision> {
    let is_ancestor = |pid: u32| {
        evidence
            .ancestors
            .iter()
            .flatten()
            .any(|ancestor| ancestor.pid == pid)
    };
    let why = match evidence.tmux_pane_process {
        Some(pid) if is_ancestor(pid) => return None,
        Some(pid) => format!(
            "the agent has no terminal and the process of tmux pane {pane} (pid {pid}) is not \
             among its ancestors"
        ),
        None => format!(
            "the agent has no terminal and tmux did not say which process runs in pane {pane}"
        ),
    };
    Some(SurfaceDecision::Unconfirmed(format!(
        "{why}, so TMUX_PANE (inherited from elsewhere or set by hand) is not trusted"
    )))
}

/// Rules 1 to 5 of [`decide_surface`].
fn decide_by_variables(
    get: impl Fn(&str) -> Option<String>,
    evidence: &SurfaceEvidence,
) -> SurfaceDecision {
    if let Some(surface) = explicit_surface(&get) {
        return SurfaceDecision::Named(SurfaceHint::Ready(surface));
    }
    let candidates = multiplexers_in_env(&get);
    if candidates.is_empty() {
        return SurfaceDecision::Unnamed;
    }
    let is_candidate_process = |multiplexer: Multiplexer, ancestor: &Ancestor| {
        multiplexer.entry().is_own_process(ancestor, &get)
    };
    let nearest = evidence.ancestors.iter().flatten().find_map(|ancestor| {
        candidates
            .iter()
            .find(|(multiplexer, _)| is_candidate_process(*multiplexer, ancestor))
    });
    let tmux_terminal = evidence.terminal_is_tmux_pane;
    if let Some((multiplexer, hint)) = nearest {
        if *multiplexer == Multiplexer::Tmux && tmux_terminal == Some(false) {
            return SurfaceDecision::Ambiguous(
                "the agent runs under the tmux server of TMUX_PANE, but its terminal is not \
                 that pane's: a program with panes of its own runs in between"
                    .to_string(),
            );
        }
        return SurfaceDecision::Named(hint.clone());
    }
    let tmux_pane = candidates
        .iter()
        .find(|(multiplexer, _)| *multiplexer == Multiplexer::Tmux);
    if let (Some((_, hint)), Some(true)) = (tmux_pane, tmux_terminal) {
        return SurfaceDecision::Named(hint.clone());
    }
    // A tmux pane that is not the agent's terminal is left out, unless it is all there is.
    let not_the_terminal =
        |multiplexer: Multiplexer| multiplexer == Multiplexer::Tmux && tmux_terminal == Some(false);
    let left: Vec<&(Multiplexer, SurfaceHint)> = candidates
        .iter()
        .filter(|(multiplexer, _)| candidates.len() == 1 || !not_the_terminal(*multiplexer))
        .collect();
    match left.as_slice() {
        [(_, hint)] => SurfaceDecision::Named(hint.clone()),
        _ => {
            let names: Vec<&str> = left
                .iter()
                .map(|(multiplexer, _)| multiplexer.variable())
                .collect();
            let why = match &evidence.ancestors {
                Some(_) => "none of their programs is among the agent's ancestors",
                None => "the agent's ancestors could not be read",
            };
            SurfaceDecision::Ambiguous(format!(
                "{} are all set and {why}, so which pane the agent runs in is unknown (an \
                 inner multiplexer's panes all carry the outer one's value)",
                names.join(", ")
            ))
        }
    }
}
