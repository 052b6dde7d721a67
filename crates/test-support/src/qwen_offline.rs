//! The offline setup for the real Qwen Code, shared by every place that runs it: the
//! preflight's conformance test, the CLI's capture test and `cargo xtask reboot-sim
//! --real-qwen`.
//!
//! Qwen Code runs in a network namespace with loopback alone (`unshare -n`), under the launcher
//! script of [`crate::codex_offline`], whose mock serves the OpenAI chat-completions stream
//! Qwen Code asks for (two `POST /v1/chat/completions` per prompt). `OPENAI_API_KEY`,
//! `OPENAI_MODEL` and `OPENAI_BASE_URL` (with `/v1`) together select the OpenAI auth with no
//! dialog; its config dir (`QWEN_HOME`) holds [`settings_json`]: no auto-update (which would
//! hold every start up for 5 s), no telemetry or usage statistics.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The mock's port inside the namespace (each namespace has its own loopback).
pub const PORT: u16 = crate::codex_offline::PORT;

/// A Qwen Code run is killed after this long; against the mock it ends within seconds.
pub const DEADLINE: Duration = Duration::from_secs(90);

/// Qwen Code's exit code when `--resume` finds no such session (`No saved session found with
/// ID …`).
pub const EXIT_NO_SESSION: i32 = 1;

/// The model name the mock is asked for.
pub const MODEL: &str = "mock-model";

/// The executable `cargo xtask qwen-cli install` puts in the build dir, given a test's
/// `CARGO_TARGET_TMPDIR` (inside that dir); a test fails here, saying how to install it, when
/// it is missing.
pub fn installed_cli(target_tmpdir: &str) -> PathBuf {
    let target = Path::new(target_tmpdir)
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target dir");
    let cli = target.join("qwen-cli/node_modules/.bin/qwen");
    assert!(
        cli.is_file(),
        "Qwen Code is not installed at {}: run `cargo xtask qwen-cli install` \
         (`cargo xtask test` runs it first)",
        cli.display()
    );
    cli
}

/// `<QWEN_HOME>/settings.json` for the tests: no auto-update, no telemetry or usage
/// statistics; `extra` members added at the top level (an object merged into one of these).
pub fn settings_json(extra: serde_json::Value) -> String {
    let settings = serde_json::json!({
        "general": { "enableAutoUpdate": false },
        "telemetry": { "enabled": false },
        "privacy": { "usageStatisticsEnabled": false }
    });
    crate::gemini_offline::with_extra(settings, extra)
}

/// The variables that point Qwen Code at the mock, as `NAME=value` words for a shell line.
pub fn model_words() -> String {
    format!("OPENAI_API_KEY=dummy OPENAI_MODEL={MODEL} OPENAI_BASE_URL=http://127.0.0.1:{PORT}/v1")
}

/// What one offline Qwen Code run did.
pub use crate::codex_offline::Run;

/// One place to run Qwen Code offline: `root` holds the launcher script and the request log,
/// `home` is `HOME` (its `~/.qwen` the config dir unless `extra` sets `QWEN_HOME`).
#[derive(Debug, Clone)]
pub struct Offline {
    /// The Qwen Code executable.
    pub cli: PathBuf,
    /// The dir of the launcher script, the request log and temp files.
    pub root: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
    /// Variables besides the model's: `QWEN_HOME`, `QWEN_RUNTIME_DIR`, ...
    pub extra: Vec<(&'static str, String)>,
}

impl Offline {
    /// Writes the launcher script into `root` and the settings into `home/.qwen`.
    pub fn new(cli: PathBuf, root: &Path, home: &Path, settings: &str) -> Offline {
        std::fs::create_dir_all(home.join(".qwen")).expect("create Qwen Code's dir");
        std::fs::write(home.join(".qwen/settings.json"), settings).expect("write settings");
        std::fs::write(
            root.join("agent_offline.py"),
            crate::codex_offline::LAUNCHER,
        )
        .expect("write the launcher");
        Offline {
            cli,
            root: root.to_path_buf(),
            home: home.to_path_buf(),
            extra: Vec::new(),
        }
    }

    /// The offline run of `qwen <args>` in `cwd`, with a clean environment.
    pub fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        crate::codex_offline::launched_command(&self.root, &self.cli, args, cwd, self.environment())
    }

    /// The variables a Qwen Code run gets (besides `PATH`).
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        let mut environment = vec![
            ("HOME", self.home.display().to_string()),
            ("OPENAI_API_KEY", "dummy".to_string()),
            ("OPENAI_MODEL", MODEL.to_string()),
            ("OPENAI_BASE_URL", format!("http://127.0.0.1:{PORT}/v1")),
            ("TMPDIR", self.root.display().to_string()),
            // Git, when Qwen Code runs it, does not look past the case's dir into this checkout.
            ("GIT_CEILING_DIRECTORIES", self.root.display().to_string()),
        ];
        environment.extend(self.extra.iter().cloned());
        environment
    }

    /// Runs `qwen <args>` offline in `cwd` to its end (bounded by [`DEADLINE`]).
    pub fn run(&self, cwd: &Path, args: &[&str]) -> Run {
        crate::codex_offline::run_launched(self.command(cwd, args), DEADLINE, "Qwen Code")
    }
}
