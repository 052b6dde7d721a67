//! The offline setup for the real Codex CLI, shared by every place that runs it: the preflight's
//! conformance test, the CLI's capture test and `cargo xtask reboot-sim --real-codex`.
//!
//! Codex runs in a network namespace with loopback alone (`unshare -n`), under
//! `codex_offline.py` (its text is `LAUNCHER`), which brings loopback up, serves a mock of the
//! Responses API on 127.0.0.1:`PORT` and kills by pid every process left in the namespace when
//! its command ends. Codex finds the mock through `config_toml`.

use std::path::{Path, PathBuf};

/// The mock's port inside the namespace (each namespace has its own loopback).
pub const PORT: u16 = 18080;

/// The launcher script, written next to whatever runs it.
pub const LAUNCHER: &str = include_str!("codex_offline.py");

/// The launcher's command for a tmux server (named by the first argument) that lives in the
/// namespace until the launcher's stdin closes.
pub const TMUX_SERVER: &str = "tmux -L \"$0\" -f /dev/null start-server \\; \
     set-option -g exit-empty off && exec cat > /dev/null";

/// The executable `cargo xtask codex-cli install` puts in the build dir, given a test's
/// `CARGO_TARGET_TMPDIR` (inside that dir); a test fails here, saying how to install it, when it
/// is missing.
pub fn installed_cli(target_tmpdir: &str) -> PathBuf {
    let target = Path::new(target_tmpdir)
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target dir");
    let cli = target.join("codex-cli/node_modules/.bin/codex");
    assert!(
        cli.is_file(),
        "the Codex CLI is not installed at {}: run `cargo xtask codex-cli install` \
         (`cargo xtask test` runs it first)",
        cli.display()
    );
    cli
}

/// `$CODEX_HOME/config.toml`: the mock as the model provider (its key in `MOCK_API_KEY`), no
/// retries, no approvals, a read-only sandbox, no paste-burst detection (typed text and Enter
/// are not a paste), and each of `trusted` a trusted project.
pub fn config_toml(trusted: &[&Path]) -> String {
    let mut config = format!(
        r#"model_provider = "mock"
model = "gpt-5"
approval_policy = "never"
sandbox_mode = "read-only"
disable_paste_burst = true

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{PORT}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"#
    );
    for dir in trusted {
        config.push_str(&format!(
            "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            dir.display()
        ));
    }
    config
}
