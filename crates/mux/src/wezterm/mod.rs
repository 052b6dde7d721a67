//! WezTerm: its surface grammar (`wezterm:<pane id>`, from `WEZTERM_PANE`) and its backend,
//! written against the documented `wezterm cli` (WezTerm is not run by the tests; a fake
//! `wezterm` program records the argv it gets).
//!
//! WezTerm cannot replace the process of an existing pane (it has no `respawn`), and typing
//! into one (`send-text`) is what a restore never does. So a restore never takes over a pane:
//! it starts the command in a new tab beside the recorded pane when that pane still exists (in
//! its window), else in a new window. Pane ids restart after WezTerm restarts, so an existing
//! pane of the recorded id may be another one; it is never touched, only used to find a window.
//! Every call runs `wezterm cli --no-auto-start` (a restore never starts a WezTerm) with
//! [`crate::tmux::CALL_DEADLINE`]; once one has not answered, no further call is made.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::Duration;

use crate::backend::{Backend, Created, MuxError, Opened, Start};
use crate::multiplexer::Multiplexer;
use crate::pane::Busy;
use crate::surface::Surface;

pub(crate) mod address;
pub(crate) mod entry;

pub use address::WeztermPane;

/// Where the WezTerm app keeps its program on macOS, besides Homebrew's dirs.
const MACOS_APP_DIR: &str = "/Applications/WezTerm.app/Contents/MacOS";

/// One pane of `wezterm cli list --format json` (the fields used; WezTerm documents the output
/// as stable).
#[derive(Debug, serde::Deserialize)]
struct ListedPane {
    pane_id: u64,
}

/// The running WezTerm (its mux server), reached through `wezterm cli`.
#[derive(Debug)]
pub struct Wezterm {
    program: PathBuf,
    deadline: Duration,
    /// The shell the new tab falls back to once the agent exits.
    shell: String,
    /// Set when a call did not answer within the deadline: what it said.
    unanswered: OnceCell<String>,
}

impl Wezterm {
    /// The `wezterm` on `PATH` (else Homebrew's, else the macOS app's), each call given
    /// `deadline`; the tab falls back to `shell` (the user's `$SHELL`) after the agent.
    pub fn new(program: Option<PathBuf>, deadline: Duration, shell: Option<String>) -> Wezterm {
        let program = program.unwrap_or_else(|| {
            let mut dirs = crate::program::HOMEBREW_DIRS.to_vec();
            dirs.push(MACOS_APP_DIR);
            crate::program::find_program("wezterm", std::env::var_os("PATH"), &dirs)
                .unwrap_or_else(|| PathBuf::from("wezterm"))
        });
        Wezterm {
            program,
            deadline,
            shell: crate::script::login_shell(shell),
            unanswered: OnceCell::new(),
        }
    }

    /// The program this backend runs.
    pub fn program(&self) -> &Path {
        &self.program
    }

    fn cli(&self, args: &[&str]) -> Result<String, MuxError> {
        let mut command = Process::new(&self.program);
        command.args(["cli", "--no-auto-start"]).args(args);
        crate::client::run(
            &mut command,
            self.deadline,
            &self.unanswered,
            "wezterm cli",
            args,
            || format!("wezterm cli {}", args.first().copied().unwrap_or_default()),
        )
    }

    /// Whether WezTerm has a pane of this id now.
    fn has_pane(&self, id: &str) -> Result<bool, MuxError> {
        let listing = self.cli(&["list", "--format", "json"])?;
        let panes: Vec<ListedPane> = serde_json::from_str(&listing).map_err(|error| {
            MuxError::Answer(format!(
                "wezterm cli list answered what is not its JSON: {error}"
            ))
        })?;
        Ok(panes.iter().any(|pane| pane.pane_id.to_string() == id))
    }
}

/// Whether the WezTerm process `pane` was recorded under still runs (the same pid, the same
/// start: [`proc_table::Table::start_mark`]); `true` for a surface recorded without its
/// instance, which cannot be told. The process table is given up on after `deadline`.
fn instance_runs(pane: &WeztermPane, deadline: Duration) -> bool {
    let Some((pid, mark)) = pane.instance_process() else {
        return pane.instance.is_none();
    };
    proc_table::table().start_mark(pid, std::time::Instant::now() + deadline) == Some(mark)
}

impl Backend for Wezterm {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Wezterm
    }

    /// Never busy: a restore never takes over an existing WezTerm pane.
    fn busy(&self, _surface: &Surface) -> Option<Busy> {
        None
    }

    /// `wezterm cli spawn --pane-id <recorded> -- /bin/sh -c SCRIPT` when the recorded pane
    /// exists (a new tab in its window), else `spawn --new-window -- /bin/sh -c SCRIPT`. The
    /// script ([`crate::script::start_script`]) holds every recorded value quoted; WezTerm
    /// runs the argv as given, with no shell of its own.
    fn open(&self, start: &Start<'_>) -> Result<Opened, MuxError> {
        let Surface::Wezterm(pane) = start.surface else {
            return Err(MuxError::OtherMultiplexer {
                surface: start.surface.to_string(),
                multiplexer: Multiplexer::Wezterm,
            });
        };
        let script = crate::script::start_script(start.env, start.dir, start.command, &self.shell);
        // A pane id of a WezTerm that is gone names whichever pane the running one numbered
        // so: only a pane of the recorded instance (or of a surface recorded without one)
        // places the new tab.
        let beside = instance_runs(pane, self.deadline) && self.has_pane(&pane.id)?;
        let mut args = vec!["spawn"];
        let created = if beside {
            args.extend(["--pane-id", pane.id.as_str()]);
            vec![Created::Tab]
        } else {
            args.push("--new-window");
            vec![Created::Window]
        };
        args.extend(["--", "/bin/sh", "-c", &script]);
        self.cli(&args)?;
        Ok(Opened::Started { created })
    }

    fn unanswered(&self) -> Option<&str> {
        self.unanswered.get().map(String::as_str)
    }

    fn check_command(&self) -> String {
        "wezterm cli list".to_string()
    }

    fn location(&self) -> String {
        format!("the instance {} reaches", self.program.display())
    }
}
