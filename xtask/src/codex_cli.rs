//! `cargo xtask codex-cli install`: the real Codex CLI, pinned, for the Codex conformance tests
//! (`crates/preflight/tests/it/codex_cli.rs`, `crates/cli/tests/it/hook/codex.rs`) and
//! `reboot-sim --real-codex`.
//!
//! The npm package `@openai/codex` is a Node.js launcher (`bin/codex.js`) that runs the native
//! binary shipped in a per-platform optional dependency (`@openai/codex-linux-x64`, installed
//! under its alias). It is installed locally into `<target dir>/codex-cli/` (never globally);
//! the launcher npm links at `<target dir>/codex-cli/node_modules/.bin/codex` is what a user
//! runs, and the one path the tests look at.

use std::path::PathBuf;

use anyhow::{Result, bail};

/// The npm package of the Codex CLI.
pub const PACKAGE: &str = "@openai/codex";

/// The one pinned version: the Codex reachability table was measured against it.
pub const VERSION: &str = test_support::transcript::CODEX_VERSION;

/// Where the CLI is installed, inside the build dir so that `cargo clean` removes it.
const INSTALL_DIR: &str = "codex-cli";

/// The installed executable, relative to the install dir.
pub const EXECUTABLE: &str = "node_modules/.bin/codex";

/// Installs the pinned CLI unless it is already there; returns the executable's path.
pub fn install() -> Result<PathBuf> {
    let dir = crate::workspace::target_dir()?.join(INSTALL_DIR);
    let executable = dir.join(EXECUTABLE);
    if reports_pinned_version(&executable) {
        eprintln!(
            "{PACKAGE}@{VERSION} is already installed in {}",
            dir.display()
        );
        return Ok(executable);
    }
    crate::claude_cli::npm_install(&dir, PACKAGE, VERSION)?;
    if !reports_pinned_version(&executable) {
        bail!(
            "{} does not report version {VERSION} after the install; is there a native package \
             of {PACKAGE} for this platform?",
            executable.display()
        );
    }
    Ok(executable)
}

/// Whether `executable --version` prints the pinned version (`codex-cli 0.171.0`).
fn reports_pinned_version(executable: &std::path::Path) -> bool {
    crate::claude_cli::version_line(executable)
        .is_some_and(|line| line == format!("codex-cli {VERSION}"))
}
