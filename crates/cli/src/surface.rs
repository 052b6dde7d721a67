//! Which pane the hook's agent runs in: the evidence that `mux::capture::decide_surface`
//! weighs, gathered from this machine. The process tree above the hook (from `proc-table`:
//! `/proc` on Linux, one `ps` call elsewhere), the hook's controlling terminal, and the tty
//! and process of the tmux pane `TMUX_PANE` names (one `tmux display-message`, which also
//! gives the pane's place); in a zellij pane, the pane's name (given by the hook when it has
//! none of ours). Every program run here gets at most what is left until the caller's
//! deadline.

use std::process::Command as Process;
use std::time::Instant;

use anyhow::{anyhow, bail};
use mux::capture::{
    Ancestor, SURFACE_VARIABLES, SurfaceDecision, SurfaceEvidence, SurfaceHint, decide_surface,
    explicit_surface, multiplexers_in_env,
};
use proc_table::Dev;

/// How far up the process tree the hook looks for a multiplexer.
const MAX_ANCESTORS: usize = mux::capture::MAX_ANCESTORS;

/// A surface the hook named, with what it learnt of the surface's window on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The surface id.
    pub surface: String,
    /// The layout of the surface's window (tmux's `#{window_layout}`), when the multiplexer
    /// was asked and has one.
    pub window_layout: Option<String>,
    /// What went wrong on the way that the hook log should say, though a surface was named (a
    /// zellij pane that could not be given a name of ours).
    pub warning: Option<String>,
}

impl Named {
    fn bare(surface: String) -> Named {
        Named {
            surface,
            window_layout: None,
            warning: None,
        }
    }
}

/// The surface the hook's agent runs in, from this process's environment and the evidence;
/// an error saying why when none can be named, or when more than one could be and the evidence
/// does not say which, or when it does not bear out the one named (then nothing may be
/// recorded). The programs it runs are given up on at `deadline`.
pub fn name(session: &str, deadline: Instant) -> anyhow::Result<Named> {
    name_with(session, deadline, Naming::MayRename)
}

/// [`name`] for a command that only reads (`restore` without `--apply`): a zellij pane that
/// bears no name of ours is not given one, and is named by its bare id.
pub fn name_read_only(session: &str, deadline: Instant) -> anyhow::Result<Named> {
    name_with(session, deadline, Naming::ReadOnly)
}

/// Whether naming a zellij pane may give it a name of ours (`rename-pane`), as the hook does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Naming {
    MayRename,
    ReadOnly,
}

fn name_with(session: &str, deadline: Instant, naming: Naming) -> anyhow::Result<Named> {
    let get = |name: &str| std::env::var(name).ok();
    if let Some(surface) = explicit_surface(get) {
        // A multiplexer's surface in another spelling (`tmux:w:00.1`, `kitty:`) would name a
        // place that no restore re-opens under that id, as `record` refuses it.
        if let Err(error) = mux::Surface::parse(&surface) {
            bail!(
                "CRASH_RESUME_SURFACE: {error}; session {} not recorded",
                index_core::text::escape(session)
            );
        }
        return Ok(Named::bare(surface));
    }
    name_by_multiplexers(session, get, deadline, naming)
}

/// When `CRASH_RESUME_SURFACE` names the surface (a restore sets it for every agent it starts)
/// and a multiplexer's variable is set too: why the pane that variable names cannot be named
/// any more (its multiplexer is gone, after a crash), as [`name`] would say without
/// `CRASH_RESUME_SURFACE`, or did not answer for it. `None` when it can be, or when no
/// multiplexer's variable is set (nothing to ask).
pub fn explicit_pane_gone(session: &str, deadline: Instant) -> Option<anyhow::Error> {
    let get = |name: &str| match name {
        "CRASH_RESUME_SURFACE" => None,
        name => std::env::var(name).ok(),
    };
    explicit_surface(|name| std::env::var(name).ok())?;
    if multiplexers_in_env(get).is_empty() {
        return None;
    }
    match name_by_multiplexers(session, get, deadline, Naming::ReadOnly) {
        Err(error) => Some(error),
        // Named, but its multiplexer did not answer for it (zellij, after its server died).
        Ok(Named {
            surface,
            warning: Some(_),
            ..
        }) => Some(anyhow!(
            "its multiplexer did not answer for {}",
            index_core::text::escape(&surface)
        )),
        Ok(_) => None,
    }
}

/// Why the multiplexer `surface` names is not running it any more, when its entry can check
/// (`mux::capture::instance_gone`: its agent ends then, and would be taken for a quit), from
/// this process's environment and ancestors. `None` when it runs, or when nothing can be
/// checked (tmux is asked by [`name`]).
pub fn instance_gone(surface: &str, deadline: Instant) -> Option<String> {
    let surface = mux::Surface::parse(surface).ok()?;
    mux::capture::instance_gone(
        &surface,
        |name| std::env::var(name).ok(),
        std::process::id(),
        deadline,
    )
}

/// The id a surface was recorded under in an earlier form (a default tmux server's pane before
/// surfaces named their server): the entry a record of the same surface in the new form
/// replaces (`mux::capture::legacy_alias`). `None` for any other surface.
pub fn legacy_alias(surface: &str) -> Option<String> {
    let surface = mux::Surface::parse(surface).ok()?;
    mux::capture::legacy_alias(&surface).map(|alias| alias.to_string())
}

/// [`name`] from the multiplexers' variables that `get` reads, and the evidence.
fn name_by_multiplexers(
    session: &str,
    get: impl Fn(&str) -> Option<String> + Copy,
    deadline: Instant,
    naming: Naming,
) -> anyhow::Result<Named> {
    let unnamed = || {
        anyhow!(
            "no surface in the environment (none of {} is set); session {} not recorded",
            SURFACE_VARIABLES.join(", "),
            index_core::text::escape(session)
        )
    };
    let candidates = multiplexers_in_env(get);
    if candidates.is_empty() {
        return Err(unnamed());
    }
    let processes = Processes::read(deadline);
    let tmux = candidates.iter().find_map(|(_, hint)| match hint {
        SurfaceHint::TmuxPane(pane) => Some(ask_tmux(pane, deadline)),
        SurfaceHint::Ready(_) => None,
    });
    let terminal_is_tmux_pane = match (&tmux, processes.terminal) {
        (Some(answer), Some(terminal)) => answer.is_terminal(terminal),
        _ => None,
    };
    let evidence = SurfaceEvidence {
        has_terminal: processes
            .ancestors
            .is_some()
            .then_some(processes.terminal.is_some()),
        tmux_pane_process: tmux.as_ref().and_then(|answer| answer.pid),
        ancestors: processes.ancestors,
        terminal_is_tmux_pane,
    };
    match decide_surface(get, &evidence) {
        SurfaceDecision::Named(SurfaceHint::Ready(surface)) => {
            let surface = with_instance(surface, evidence.ancestors.as_deref(), deadline);
            Ok(stable_zellij(surface, deadline, naming))
        }
        SurfaceDecision::Named(SurfaceHint::TmuxPane(pane)) => match tmux {
            Some(answer) => answer.place.map(|surface| Named {
                surface,
                window_layout: answer.layout,
                warning: None,
            }),
            None => bail!("tmux pane {pane} was not asked about"),
        },
        SurfaceDecision::Unnamed => Err(unnamed()),
        SurfaceDecision::Ambiguous(why) => bail!(
            "{why}; session {session} not recorded, since a surface other panes share would be \
             overwritten by each of them (set CRASH_RESUME_SURFACE in the agent's environment to \
             name the pane)"
        ),
        // tmux's own failure (not running, not answering, no such pane) says more.
        SurfaceDecision::Unconfirmed(why) => match tmux {
            Some(TmuxAnswer {
                place: Err(error), ..
            }) => Err(error),
            _ => bail!(
                "{why}; session {session} not recorded (a hook started by the agent in its \
                 pane is confirmed by the process tree; set CRASH_RESUME_SURFACE in the agent's \
                 environment to name the pane)"
            ),
        },
    }
}

/// A surface named by a multiplexer's variables, with what the variable alone cannot say
/// (`mux::capture::with_instance`: a WezTerm pane's instance, from the agent's ancestors).
fn with_instance(surface: String, ancestors: Option<&[Ancestor]>, deadline: Instant) -> String {
    match mux::Surface::parse(&surface) {
        Ok(parsed) => mux::capture::with_instance(parsed, ancestors, deadline).to_string(),
        Err(_) => surface,
    }
}

/// A zellij pane named by its bare id (which zellij renumbers when it resurrects the session)
/// is given a name of ours, or keeps the one it bears, ours or the user's
/// (`mux::zellij::name_pane`; a name is what zellij's layout says, never a title the pane's
/// program set): the surface becomes `zellij:<session>:<name>`, which survives the restart.
/// When zellij cannot be asked by `deadline`, or the pane's name cannot be told or carried,
/// the bare id is recorded, with a warning for hook.log saying why (none when there is no
/// zellij program to ask). [`Naming::ReadOnly`]: the name the pane bears, else its bare id; no
/// pane is renamed.
fn stable_zellij(surface: String, deadline: Instant, naming: Naming) -> Named {
    let Ok(mux::Surface::Zellij(pane)) = mux::Surface::parse(&surface) else {
        return Named::bare(surface);
    };
    let mux::zellij::PaneHandle::Id(id) = pane.handle() else {
        return Named::bare(surface);
    };
    if pane.session.is_empty() {
        return Named::bare(surface);
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    let program = mux::zellij::program();
    let named = match naming {
        Naming::MayRename => mux::zellij::name_pane(&program, &pane.session, id, now_ms, deadline)
            .map(|named| named.to_string()),
        Naming::ReadOnly => {
            mux::zellij::pane_name(&program, &pane.session, id, deadline).map(|name| {
                name.map_or_else(
                    || surface.clone(),
                    |name| {
                        mux::zellij::ZellijPane {
                            session: pane.session.clone(),
                            pane: name,
                        }
                        .to_string()
                    },
                )
            })
        }
    };
    match named {
        Ok(named) => Named::bare(named),
        // No zellij program to ask (the variables came from elsewhere): the bare id is all
        // there is to record.
        Err(mux::MuxError::Run(bounded_run::RunError::Start { .. })) => Named::bare(surface),
        Err(error) => Named {
            warning: Some(format!(
                "zellij pane {id} of session {} could not be given a name that outlives a \
                 restart ({error}); recorded as {surface}, whose pane id zellij renumbers \
                 when it resurrects the session",
                index_core::text::escape(&pane.session),
            )),
            ..Named::bare(surface)
        },
    }
}

/// What tmux says of the pane `TMUX_PANE` names.
#[derive(Debug)]
struct TmuxAnswer {
    /// `tmux:<socket path>:<session>:<window>.<pane>` (the socket of the server that answered),
    /// or why the pane cannot be named.
    place: anyhow::Result<String>,
    /// The pane's `#{pane_tty}`; `Some("")` when tmux has no such pane, `None` when tmux could
    /// not be asked.
    tty: Option<String>,
    /// The pane's `#{pane_pid}`, the process tmux started in it; `None` when unknown.
    pid: Option<u32>,
    /// The pane's window's `#{window_layout}`; `None` when unknown.
    layout: Option<String>,
}

impl TmuxAnswer {
    /// Whether `terminal` is this pane's tty (a pane tmux does not have is no one's terminal).
    fn is_terminal(&self, terminal: Dev) -> Option<bool> {
        mux::tmux::is_pane_terminal(self.tty.as_deref()?, terminal)
    }
}

/// Asks the tmux server the pane runs in (tmux finds it through `$TMUX`) for the pane's place
/// (with the server's own `#{socket_path}`: the server that answered, not what a variable
/// says) and tty. tmux answers for a pane it does not have (a `TMUX_PANE` inherited by a process that
/// outlived its pane) with empty fields and success, so the answer must name the pane asked
/// about. A server that does not answer by `deadline` (stopped, hung) is given up on.
fn ask_tmux(pane: &str, deadline: Instant) -> TmuxAnswer {
    let unknown = |error: anyhow::Error| TmuxAnswer {
        place: Err(error),
        tty: None,
        pid: None,
        layout: None,
    };
    let output = match bounded_run::output_by(
        Process::new(mux::tmux::program()).args([
            "display-message",
            "-p",
            "-t",
            pane,
            "#{pane_id} #{pane_pid} #{pane_tty} #{window_index} #{window_layout} #{socket_path}\t#{session_name}\t#{pane_index}",
        ]),
        deadline,
    ) {
        Ok(output) => output,
        Err(error) if error.is_timeout() => {
            return unknown(anyhow!(
                "{error} when asked to name pane {pane}: is its server stopped or hung? \
                 nothing recorded"
            ));
        }
        Err(error) => return unknown(anyhow!(error).context("cannot name the pane")),
    };
    if !output.status.success() {
        return unknown(anyhow!(
            "tmux could not name pane {pane}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    // The socket path (absolute, so it does not begin with a space) and the session name (any
    // character but a newline) sit between the fields that cannot hold a space (a layout is
    // digits, letters, commas and brackets) and the pane index, so the trimmed ends of the
    // answer never cut them.
    let mut fields = text.splitn(6, ' ');
    let mut field = || fields.next();
    let answer = (field(), field(), field(), field(), field(), field());
    let place = |window: &str, rest: &str| {
        let (server, rest) = rest.split_once('\t')?;
        let (session, index) = rest.rsplit_once('\t')?;
        let place = mux::tmux::TmuxPane {
            server: Some(server.to_string()).filter(|server| server.starts_with('/')),
            session: session.to_string(),
            window: window.parse().ok()?,
            pane: index.parse().ok()?,
        };
        Some(place.to_string())
    };
    match answer {
        (Some(id), Some(pid), Some(tty), Some(window), Some(layout), Some(rest)) if id == pane => {
            TmuxAnswer {
                place: place(window, rest)
                    .ok_or_else(|| anyhow!("tmux named pane {pane} as {text:?}, not as its place")),
                tty: Some(tty.to_string()),
                pid: pid.parse().ok(),
                layout: (!layout.is_empty()).then(|| layout.to_string()),
            }
        }
        _ => TmuxAnswer {
            place: Err(anyhow!(
                "tmux has no pane {pane} (TMUX_PANE is stale: the pane is gone); nothing recorded"
            )),
            tty: Some(String::new()),
            pid: None,
            layout: None,
        },
    }
}

/// The hook's ancestors and its controlling terminal.
#[derive(Debug, Default)]
struct Processes {
    /// Nearest first; `None` when the process tree could not be read.
    ancestors: Option<Vec<Ancestor>>,
    /// The device of the controlling terminal; `None` without one.
    terminal: Option<Dev>,
}

impl Processes {
    /// This process and its ancestors up to pid 1, from the process table (`/proc`, else one
    /// `ps` listing given up on at `deadline`).
    fn read(deadline: Instant) -> Processes {
        let Some(ancestry) =
            proc_table::table().ancestry(std::process::id(), MAX_ANCESTORS, deadline)
        else {
            return Processes::default();
        };
        let ancestors = ancestry
            .ancestors
            .into_iter()
            .map(|process| Ancestor {
                pid: process.pid,
                name: process.name.to_string_lossy().into_owned(),
            })
            .collect();
        Processes {
            ancestors: Some(ancestors),
            terminal: ancestry.process.terminal,
        }
    }
}
