//! The interface every multiplexer's backend implements, and what it answers: a restore asks
//! whether a surface's place is busy, then has the backend create what is missing and start the
//! resume command as that place's own process. The protocol around it (claims in the index,
//! the restore lock) is `resume_plan::apply`'s, written once for every backend.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::multiplexer::Multiplexer;
use crate::pane::Busy;
use crate::surface::Surface;

/// What to start, and where.
#[derive(Debug, Clone, Copy)]
pub struct Start<'a> {
    /// The recorded surface: where to start it.
    pub surface: &'a Surface,
    /// The working dir to start in; the caller passes only one that exists.
    pub dir: Option<&'a str>,
    /// The shell command line to run (already quoted by its maker).
    pub command: &'a str,
    /// Variables to set for the command (`CRASH_RESUME_SURFACE`, so the agent's hook binds to
    /// the recorded surface).
    pub env: &'a [(&'a str, &'a str)],
}

/// What a backend created on the way to a surface's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum Created {
    /// A session (tmux: with its first window and pane; zellij: with its first tab).
    Session,
    /// A zellij session that zellij listed as exited, brought back with its layout.
    Resurrected,
    /// A tmux window at the recorded index.
    Window,
    /// Panes split off to reach the recorded pane index.
    Panes {
        /// How many.
        count: u32,
    },
    /// A WezTerm tab (beside the recorded pane, or in a new window).
    Tab,
    /// A cmux workspace, whose first surface runs the command.
    Workspace,
    /// A zellij pane under the recorded name (or, for a bare pane id, none).
    Pane,
}

impl fmt::Display for Created {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Created::Session => formatter.write_str("the session"),
            Created::Resurrected => formatter.write_str("the session from its saved layout"),
            Created::Window => formatter.write_str("the window"),
            Created::Panes { count: 1 } => formatter.write_str("the pane"),
            Created::Panes { count } => write!(formatter, "{count} panes"),
            Created::Tab => formatter.write_str("a tab"),
            Created::Workspace => formatter.write_str("a workspace"),
            Created::Pane => formatter.write_str("a pane"),
        }
    }
}

/// What a backend did with one surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// The command runs as the place's process; what was created to get there (nothing: the
    /// existing place was re-used).
    Started {
        /// What was created, in order.
        created: Vec<Created>,
    },
    /// The place was left alone; why.
    Skipped(Busy),
}

/// Why a backend could not open a surface. Facts only: the caller says them to people.
#[derive(Debug, thiserror::Error)]
pub enum MuxError {
    /// A call did not answer within its deadline, now or earlier (then `again`): the
    /// multiplexer may be stopped or hung, and is not asked again.
    #[error("{said}{}", if *again { "; not asked again" } else { "" })]
    Unanswered {
        /// What the timeout said (`tmux did not answer within 5s (`tmux -L x list-panes`)`).
        said: String,
        /// Whether this call was refused because an earlier one did not answer.
        again: bool,
    },
    /// The program could not be run.
    #[error(transparent)]
    Run(#[from] bounded_run::RunError),
    /// The program answered with a failure.
    #[error("{program} {args}: {stderr}")]
    Failed {
        /// The program's name.
        program: &'static str,
        /// Its arguments, joined by spaces.
        args: String,
        /// What it said on stderr, trimmed.
        stderr: String,
    },
    /// tmux would rewrite a character of the session name (`.`, `:`, `\`, `$`, a control
    /// character), so the session cannot be made under the recorded name; nothing was created.
    #[error(
        "tmux cannot name a session {session:?} (it rewrites {character:?}); nothing was created"
    )]
    Unnameable {
        /// The recorded session name.
        session: String,
        /// The first character tmux rewrites.
        character: char,
    },
    /// tmux made the session under another name than the recorded one.
    #[error("tmux named the session {made:?} instead of {wanted:?}")]
    Renamed {
        /// The name tmux made.
        made: String,
        /// The recorded name.
        wanted: String,
    },
    /// The multiplexer cannot make the recorded place, or did not; the text says which and why.
    #[error("{0}")]
    NotMade(String),
    /// The multiplexer answered something this backend cannot read.
    #[error("{0}")]
    Answer(String),
    /// The surface is not this backend's multiplexer's.
    #[error("surface {surface} is not a {multiplexer} surface")]
    OtherMultiplexer {
        /// The surface.
        surface: String,
        /// This backend's multiplexer.
        multiplexer: Multiplexer,
    },
}

/// A multiplexer a restore can start commands in.
///
/// Every call a backend makes has a deadline; once one has not answered, [`Backend::unanswered`]
/// says so and every later call fails at once with [`MuxError::Unanswered`]. No recorded value
/// reaches the multiplexer where it would interpret it (a format, a shell word, an escape
/// sequence), and nothing is ever typed into a place: the command is started as the place's own
/// process, or in a place the backend creates for it.
pub trait Backend: fmt::Debug {
    /// The multiplexer this backend drives.
    fn multiplexer(&self) -> Multiplexer;

    /// Why the surface's place must be left alone: it exists and is not an idle shell at its
    /// prompt ([`crate::pane::judge`]). `None` when it may be used (or does not exist yet).
    fn busy(&self, surface: &Surface) -> Option<Busy>;

    /// Finds the surface's place, creates what is missing, and starts the command there as the
    /// place's process (a place that turned busy meanwhile is skipped). What it created for a
    /// surface that then fails is removed again. Call it holding the restore lock: creating is
    /// find-then-create.
    fn open(&self, start: &Start<'_>) -> Result<Opened, MuxError>;

    /// What the call that did not answer said, once one has not.
    fn unanswered(&self) -> Option<&str>;

    /// A command a user runs to check on this multiplexer instance (`tmux -L NAME
    /// list-sessions`), when it did not answer.
    fn check_command(&self) -> String;

    /// The command a user runs to see a session this backend created for `surface` (`tmux -L
    /// NAME attach -t SESSION`), for multiplexers whose sessions run with no client attached;
    /// `None` for the others.
    fn attach_command(&self, _surface: &Surface) -> Option<String> {
        None
    }

    /// Which instance of the multiplexer this backend opens surfaces in, for people and for the
    /// `--json` plan: the tmux server's socket path, cmux's socket, the WezTerm program.
    fn location(&self) -> String;

    /// Which run of the instance answers now, to tell an instance started again (a tmux
    /// server after a crash, at the same socket path) from the one an earlier restore opened
    /// surfaces in. [`InstanceRun::Untold`] for a multiplexer this backend does not tell runs
    /// of apart.
    fn instance_run(&self) -> InstanceRun {
        InstanceRun::Untold
    }

    /// Makes the surface's place when it is missing, with the user's shell in `dir` (the caller
    /// passes only one that exists): a recorded place with nothing to resume, so that its window
    /// comes back whole. What was created; `Ok(None)` when the place exists (it is left alone)
    /// or this backend does not make places for shells. What it created for a surface that then
    /// fails is removed again. Call it holding the restore lock.
    fn open_shell(
        &self,
        _surface: &Surface,
        _dir: Option<&str>,
    ) -> Result<Option<Vec<Created>>, MuxError> {
        Ok(None)
    }

    /// Lays out the window of `surface` as `layout` records it (the index entry's
    /// `window_layout`), when this backend created places in that window during this restore and
    /// has not laid it out yet; first adds shells for the panes the layout has and the window
    /// lacks. Whether it laid the window out; a window it did not touch is left as it is.
    fn lay_out(&self, _surface: &Surface, _layout: &str) -> Result<bool, MuxError> {
        Ok(false)
    }

    /// The surface this process runs in, when it runs inside this instance of the multiplexer
    /// (a restore run from a pane it should open starts that pane's agent as its own process,
    /// after the others).
    fn caller_surface(&self) -> Option<Surface> {
        None
    }

    /// Whether a surface of this multiplexer is this instance's: `Ok` with the surface in the
    /// full form this instance records it in (a tmux surface recorded without its server, in
    /// the default server: with that server's socket path), or the instance it belongs to.
    /// The surface itself, for a multiplexer that does not tell its instances apart here.
    fn own(&self, surface: &Surface) -> Result<Surface, Elsewhere> {
        Ok(surface.clone())
    }
}

/// Which run of an instance answers ([`Backend::instance_run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstanceRun {
    /// It runs; this names the run (tmux: the server's pid and start time).
    Running(String),
    /// Nothing runs there now.
    NotRunning,
    /// This backend does not tell runs apart.
    Untold,
}

/// The instance a surface belongs to when it is not the one a backend opens surfaces in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Elsewhere {
    /// The instance, as [`Backend::location`] names one (a tmux server's socket path).
    pub instance: String,
    /// The surface was recorded without its instance, and so is taken for the default one's.
    pub unqualified: bool,
    /// What `restore --apply` is given to open surfaces there (`--tmux-socket PATH`).
    pub restore_with: String,
}
