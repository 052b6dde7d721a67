//! The offline setup for the real Gemini CLI, shared by every place that runs it: the
//! preflight's conformance test, the CLI's capture test and `cargo xtask reboot-sim
//! --real-gemini`.
//!
//! Gemini runs in a network namespace with loopback alone (`unshare -n`), under the launcher
//! script of [`crate::codex_offline`] (which serves Gemini's model API too), with
//! `GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT` and a dummy `GEMINI_API_KEY`; its home
//! (`GEMINI_CLI_HOME`) holds [`settings_json`]: API-key auth, folder trust off, no auto-update,
//! no telemetry.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The mock's port inside the namespace (each namespace has its own loopback): the one mock
/// serves Codex's and Gemini's APIs.
pub const PORT: u16 = crate::codex_offline::PORT;

/// A Gemini run is killed after this long; against the mock it ends within seconds.
pub const DEADLINE: Duration = Duration::from_secs(90);

/// Gemini's exit code when `--resume` finds no such session in the working dir's project.
pub const EXIT_NO_SESSION: i32 = 42;

/// The executable `cargo xtask gemini-cli install` puts in the build dir, given a test's
/// `CARGO_TARGET_TMPDIR` (inside that dir); a test fails here, saying how to install it, when
/// it is missing.
pub fn installed_cli(target_tmpdir: &str) -> PathBuf {
    let target = Path::new(target_tmpdir)
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target dir");
    let cli = target.join("gemini-cli/node_modules/.bin/gemini");
    assert!(
        cli.is_file(),
        "the Gemini CLI is not installed at {}: run `cargo xtask gemini-cli install` \
         (`cargo xtask test` runs it first)",
        cli.display()
    );
    cli
}

/// `<GEMINI_CLI_HOME>/.gemini/settings.json` for the tests: API-key auth (the mock's), no
/// folder trust (a headless run in an untrusted folder exits 55, and no hook runs there), no
/// auto-update, no telemetry or usage statistics; `extra` members added at the top level.
pub fn settings_json(extra: serde_json::Value) -> String {
    let settings = serde_json::json!({
        "security": {
            "auth": { "selectedType": "gemini-api-key" },
            "folderTrust": { "enabled": false }
        },
        "general": { "disableAutoUpdate": true, "disableUpdateNag": true },
        "telemetry": { "enabled": false },
        "privacy": { "usageStatisticsEnabled": false }
    });
    with_extra(settings, extra)
}

/// `settings` as pretty JSON with `extra`'s members added at the top level, an object member
/// merged into the object of the same name (Gemini CLI's settings and those of Qwen Code, its
/// fork, take the same form).
pub(crate) fn with_extra(mut settings: serde_json::Value, extra: serde_json::Value) -> String {
    if let (Some(settings), serde_json::Value::Object(extra)) = (settings.as_object_mut(), extra) {
        for (key, value) in extra {
            match (settings.get_mut(&key), value) {
                (Some(serde_json::Value::Object(into)), serde_json::Value::Object(value)) => {
                    into.extend(value)
                }
                (_, value) => {
                    settings.insert(key, value);
                }
            }
        }
    }
    serde_json::to_string_pretty(&settings).expect("settings serialize")
}

/// What one offline Gemini run did.
pub use crate::codex_offline::Run;

/// One place to run Gemini offline: `root` holds the launcher script and the request log, and
/// `home` is `GEMINI_CLI_HOME` (and `HOME`).
#[derive(Debug, Clone)]
pub struct Offline {
    /// The Gemini executable.
    pub cli: PathBuf,
    /// The dir of the launcher script, the request log and temp files.
    pub root: PathBuf,
    /// `GEMINI_CLI_HOME` and `HOME`.
    pub home: PathBuf,
}

impl Offline {
    /// Writes the launcher script into `root` and the settings into `home/.gemini`.
    pub fn new(cli: PathBuf, root: &Path, home: &Path, settings: &str) -> Offline {
        std::fs::create_dir_all(home.join(".gemini")).expect("create Gemini's dir");
        std::fs::write(home.join(".gemini/settings.json"), settings).expect("write settings");
        std::fs::write(
            root.join("agent_offline.py"),
            crate::codex_offline::LAUNCHER,
        )
        .expect("write the launcher");
        Offline {
            cli,
            root: root.to_path_buf(),
            home: home.to_path_buf(),
        }
    }

    /// The offline run of `gemini <args>` in `cwd`, with a clean environment.
    pub fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        crate::codex_offline::launched_command(&self.root, &self.cli, args, cwd, self.environment())
    }

    /// The variables a Gemini run gets (besides `PATH`).
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        vec![
            ("HOME", self.home.display().to_string()),
            ("GEMINI_CLI_HOME", self.home.display().to_string()),
            ("GEMINI_API_KEY", "dummy".to_string()),
            ("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{PORT}")),
            ("TMPDIR", self.root.display().to_string()),
            // Git, when Gemini runs it, does not look past the case's dir into this checkout.
            ("GIT_CEILING_DIRECTORIES", self.root.display().to_string()),
        ]
    }

    /// Runs `gemini <args>` offline in `cwd` to its end (bounded by [`DEADLINE`]).
    pub fn run(&self, cwd: &Path, args: &[&str]) -> Run {
        crate::codex_offline::run_launched(self.command(cwd, args), DEADLINE, "Gemini")
    }
}
