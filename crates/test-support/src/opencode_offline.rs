//! The offline setup for the real opencode, shared by every place that runs it (the
//! preflight's conformance test).
//!
//! opencode runs in a network namespace with loopback alone (`unshare -n`), under the launcher
//! script of [`crate::codex_offline`], whose mock serves the OpenAI chat-completions stream
//! opencode asks for (two `POST /v1/chat/completions` per prompt: the answer and the title).
//! Its config dir (`$XDG_CONFIG_HOME/opencode`) holds [`config_json`]: a provider of type
//! `@ai-sdk/openai-compatible` pointed at the mock, no auto-update, no sharing; the variables
//! of [`Offline::environment`] turn off its downloads (models list, LSP servers) and its
//! auto-update. All its dirs (data, config, cache, state) are the case's, never the user's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The mock's port inside the namespace (each namespace has its own loopback).
pub const PORT: u16 = crate::codex_offline::PORT;

/// An opencode run is killed after this long; against the mock it ends within seconds.
pub const DEADLINE: Duration = Duration::from_secs(90);

/// opencode's exit code when `-s` names no session it has (`Session not found`) or its
/// database cannot be read.
pub const EXIT_NO_SESSION: i32 = 1;

/// The pinned version (`cargo xtask opencode-cli install`).
pub const VERSION: &str = "1.18.33";

/// The model the config selects, `<provider>/<model>`.
pub const MODEL: &str = "mock/mock-model";

/// The executable `cargo xtask opencode-cli install` puts in the build dir (the platform
/// package's native binary), given a test's `CARGO_TARGET_TMPDIR` (inside that dir); a test
/// fails here, saying how to install it, when it is missing.
pub fn installed_cli(target_tmpdir: &str) -> PathBuf {
    let target = Path::new(target_tmpdir)
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target dir");
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let cli = target.join(format!(
        "opencode-cli/node_modules/opencode-{}-{arch}/bin/opencode",
        std::env::consts::OS
    ));
    assert!(
        cli.is_file(),
        "opencode is not installed at {}: run `cargo xtask opencode-cli install` \
         (`cargo xtask test` runs it first)",
        cli.display()
    );
    cli
}

/// `<XDG_CONFIG_HOME>/opencode/opencode.json` for the tests: the mock as the one provider and
/// model, no auto-update, no sharing.
pub fn config_json() -> String {
    let config = serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {
                    "baseURL": format!("http://127.0.0.1:{PORT}/v1"),
                    "apiKey": "dummy"
                },
                "models": { "mock-model": { "name": "mock" } }
            }
        },
        "model": MODEL
    });
    serde_json::to_string_pretty(&config).expect("serialize the config")
}

/// What one offline opencode run did.
pub use crate::codex_offline::Run;

/// One place to run opencode offline: `root` holds the launcher script and the request log,
/// `home` is `HOME`, with the XDG dirs under it (`.local/share`, `.config`, `.cache`,
/// `.local/state`).
#[derive(Debug, Clone)]
pub struct Offline {
    /// The opencode executable.
    pub cli: PathBuf,
    /// The dir of the launcher script, the request log and temp files.
    pub root: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
    /// Variables besides these: `OPENCODE_DB`, ...
    pub extra: Vec<(&'static str, String)>,
}

impl Offline {
    /// Writes the launcher script into `root` and the config into `home/.config/opencode`.
    pub fn new(cli: PathBuf, root: &Path, home: &Path) -> Offline {
        let config = home.join(".config/opencode");
        std::fs::create_dir_all(&config).expect("create opencode's config dir");
        std::fs::write(config.join("opencode.json"), config_json()).expect("write the config");
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

    /// `$XDG_DATA_HOME` of the runs.
    pub fn data_home(&self) -> PathBuf {
        self.home.join(".local/share")
    }

    /// The database opencode keeps its sessions in (unless `extra` sets `OPENCODE_DB`).
    pub fn database(&self) -> PathBuf {
        self.data_home().join("opencode/opencode.db")
    }

    /// The offline run of `opencode <args>` in `cwd`, with a clean environment.
    pub fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        crate::codex_offline::launched_command(&self.root, &self.cli, args, cwd, self.environment())
    }

    /// The variables an opencode run gets (besides `PATH`).
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        let home = &self.home;
        let mut environment = vec![
            ("HOME", home.display().to_string()),
            ("XDG_DATA_HOME", self.data_home().display().to_string()),
            (
                "XDG_CONFIG_HOME",
                home.join(".config").display().to_string(),
            ),
            ("XDG_CACHE_HOME", home.join(".cache").display().to_string()),
            (
                "XDG_STATE_HOME",
                home.join(".local/state").display().to_string(),
            ),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".to_string()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".to_string()),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".to_string()),
            ("OPENCODE_DISABLE_SHARE", "1".to_string()),
            ("TMPDIR", self.root.display().to_string()),
            // Git, when opencode runs it, does not look past the case's dir into this checkout.
            ("GIT_CEILING_DIRECTORIES", self.root.display().to_string()),
        ];
        environment.extend(self.extra.iter().cloned());
        environment
    }

    /// Runs `opencode <args>` offline in `cwd` to its end (bounded by [`DEADLINE`]).
    pub fn run(&self, cwd: &Path, args: &[&str]) -> Run {
        crate::codex_offline::run_launched(self.command(cwd, args), DEADLINE, "opencode")
    }
}
