//! The offline setup for the real GitHub Copilot CLI, shared by every place that runs it: the
//! preflight's conformance test, the CLI's capture test and the reboot simulation.
//!
//! Copilot runs in a network namespace with loopback alone (`unshare -n`), under the launcher
//! script of [`crate::codex_offline`] (which serves the chat-completions API Copilot's
//! bring-your-own-provider mode calls), with `COPILOT_OFFLINE=true` (no login, no GitHub call)
//! and its provider pointed at the mock (`COPILOT_PROVIDER_*`). The executable is a loader that
//! unpacks its runtime (about 235 MB) into `COPILOT_CACHE_HOME` on its first run: that cache is
//! the install's own (`cargo xtask copilot-cli install` fills it), so a test never pays it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub use crate::codex_offline::Run;

/// The mock's port inside the namespace (each namespace has its own loopback): the one mock
/// serves every agent's API.
pub const PORT: u16 = crate::codex_offline::PORT;

/// A Copilot run is killed after this long; against the mock it ends within seconds.
pub const DEADLINE: Duration = Duration::from_secs(90);

/// The model id Copilot is told its provider serves (the mock answers any).
pub const MODEL: &str = "mock-model";

/// The install dir inside the build dir, as `cargo xtask copilot-cli install` makes it.
pub const INSTALL_DIR: &str = "copilot-cli";

/// The executable, relative to the install dir.
pub const EXECUTABLE: &str = "node_modules/.bin/copilot";

/// The unpacked runtime (`COPILOT_CACHE_HOME`), relative to the install dir.
pub const CACHE: &str = "cache";

/// What Copilot's TUI shows at each step, as the TUI test and the reboot simulation wait for it.
pub mod screen {
    /// Copilot's answer to a prompt (the mock always says `ok`).
    pub const ANSWER: &str = "● ok";

    /// The status line once the prompt takes input.
    pub const READY: &str = "/ commands · ? help";

    /// The folder-trust dialog of a Copilot's first start in a dir. Its first choice (Enter)
    /// trusts the folder for this session; its second, [`TRUST_AND_REMEMBER`], for good.
    pub const TRUST_QUESTION: &str = "Do you trust the files in this folder?";

    /// The dialog's second choice: "Yes, and remember this folder for future sessions".
    pub const TRUST_AND_REMEMBER: &str = "2";

    /// What Copilot says once the folder is remembered.
    pub const TRUSTED: &str = "has been added to trusted folders";

    /// What Copilot says once it has reloaded its MCP servers for the newly trusted folder. It
    /// may come after a first prompt typed as soon as the prompt shows (even before that
    /// prompt's answer); a `/exit` typed after such a prompt was seen to stay `Queued` for good.
    /// So a first prompt waits for it.
    pub const RELOADED: &str = "MCP Servers reloaded";

    /// The title of the question a resume asks when the session looks held although its holder
    /// is dead: seen when the resume came within about 5 s of the SIGKILLed Copilot taking its
    /// `inuse.<pid>.lock`, not 10 s after. Its first choice, "Resume anyway", is the one a user
    /// who saw the crash takes.
    pub const IN_USE_QUESTION: &str = "Session in use";
}

/// The pinned CLI as installed in the build dir.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The `copilot` executable.
    pub cli: PathBuf,
    /// `COPILOT_CACHE_HOME`: where its runtime is unpacked.
    pub cache: PathBuf,
}

/// The CLI `cargo xtask copilot-cli install` puts in the build dir, given a test's
/// `CARGO_TARGET_TMPDIR` (inside that dir); a test fails here, saying how to install it, when
/// it is missing.
pub fn installed_cli(target_tmpdir: &str) -> Installed {
    let target = Path::new(target_tmpdir)
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target dir");
    let dir = target.join(INSTALL_DIR);
    let installed = Installed {
        cli: dir.join(EXECUTABLE),
        cache: dir.join(CACHE),
    };
    assert!(
        installed.cli.is_file() && installed.cache.is_dir(),
        "the Copilot CLI is not installed at {} (with its runtime in {}): run `cargo xtask \
         copilot-cli install` (`cargo xtask test` runs it first)",
        installed.cli.display(),
        installed.cache.display()
    );
    installed
}

/// One place to run Copilot offline: `root` holds the launcher script, the request log and
/// temp files, `home` is `HOME`, and `copilot_home` is `COPILOT_HOME` (its sessions, hooks,
/// logs).
#[derive(Debug, Clone)]
pub struct Offline {
    /// The installed CLI.
    pub installed: Installed,
    /// The dir of the launcher script, the request log and temp files.
    pub root: PathBuf,
    /// `HOME` (Copilot writes a device id under its `.cache`).
    pub home: PathBuf,
    /// `COPILOT_HOME`.
    pub copilot_home: PathBuf,
}

impl Offline {
    /// Writes the launcher script into `root`; `COPILOT_HOME` is `home/.copilot`.
    pub fn new(installed: Installed, root: &Path, home: &Path) -> Offline {
        let copilot_home = home.join(".copilot");
        std::fs::create_dir_all(&copilot_home).expect("create Copilot's home");
        std::fs::write(
            root.join("agent_offline.py"),
            crate::codex_offline::LAUNCHER,
        )
        .expect("write the launcher");
        Offline {
            installed,
            root: root.to_path_buf(),
            home: home.to_path_buf(),
            copilot_home,
        }
    }

    /// The offline run of `copilot <args>` in `cwd`, with a clean environment.
    pub fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        crate::codex_offline::launched_command(
            &self.root,
            &self.installed.cli,
            args,
            cwd,
            self.environment(),
        )
    }

    /// The variables a Copilot run gets (besides `PATH`).
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        vec![
            ("HOME", self.home.display().to_string()),
            ("COPILOT_HOME", self.copilot_home.display().to_string()),
            (
                "COPILOT_CACHE_HOME",
                self.installed.cache.display().to_string(),
            ),
            ("COPILOT_OFFLINE", "true".to_string()),
            ("COPILOT_AUTO_UPDATE", "false".to_string()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("http://127.0.0.1:{PORT}/v1"),
            ),
            ("COPILOT_PROVIDER_TYPE", "openai".to_string()),
            ("COPILOT_PROVIDER_API_KEY", "dummy".to_string()),
            ("COPILOT_PROVIDER_MODEL_ID", MODEL.to_string()),
            ("COPILOT_PROVIDER_WIRE_API", "completions".to_string()),
            ("TMPDIR", self.root.display().to_string()),
            // Git, when Copilot runs it, does not look past the case's dir into this checkout.
            ("GIT_CEILING_DIRECTORIES", self.root.display().to_string()),
        ]
    }

    /// Runs `copilot <args>` offline in `cwd` to its end (bounded by [`DEADLINE`]).
    pub fn run(&self, cwd: &Path, args: &[&str]) -> Run {
        crate::codex_offline::run_launched(self.command(cwd, args), DEADLINE, "Copilot")
    }

    /// The session dirs under `COPILOT_HOME/session-state`, by name (each a session's uuid).
    pub fn sessions(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.copilot_home.join("session-state"))
            .map(|listing| {
                listing
                    .flatten()
                    .filter(|entry| entry.path().is_dir())
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .filter(|name| !name.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}
