//! `cargo xtask gemini-cli install`: the real Gemini CLI, pinned, for the Gemini conformance
//! tests (`crates/preflight/tests/it/gemini_cli.rs`, `crates/cli/tests/it/hook/gemini_tui.rs`) and
//! `reboot-sim --real-gemini`.
//!
//! The npm package `@google/gemini-cli` is a Node.js bundle (`bundle/gemini.js`) with no native
//! part the tests need (its optional `node-pty` and `keytar` are not built: npm is not asked to
//! run install scripts it has not been told to trust). It is installed locally into
//! `<target dir>/gemini-cli/` (never globally); the launcher npm links at
//! `<target dir>/gemini-cli/node_modules/.bin/gemini` is what a user runs, and the one path the
//! tests look at. It runs offline thereafter (the tests point it at a mock of its model API).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// The npm package of the Gemini CLI.
pub const PACKAGE: &str = "@google/gemini-cli";

/// The one pinned version: Gemini's rules in docs/preflight.md were measured against it.
pub const VERSION: &str = test_support::transcript::GEMINI_VERSION;

/// Where the CLI is installed, inside the build dir so that `cargo clean` removes it.
const INSTALL_DIR: &str = "gemini-cli";

/// The installed executable, relative to the install dir.
pub const EXECUTABLE: &str = "node_modules/.bin/gemini";

/// Installs the pinned CLI unless it is already there; returns the executable's path.
pub fn install() -> Result<PathBuf> {
    let dir = crate::workspace::target_dir()?.join(INSTALL_DIR);
    let executable = dir.join(EXECUTABLE);
    if reports_pinned_version(&dir, &executable) {
        eprintln!(
            "{PACKAGE}@{VERSION} is already installed in {}",
            dir.display()
        );
        return Ok(executable);
    }
    crate::claude_cli::npm_install(&dir, PACKAGE, VERSION)?;
    if !reports_pinned_version(&dir, &executable) {
        bail!(
            "{} does not report version {VERSION} after the install",
            executable.display()
        );
    }
    Ok(executable)
}

/// Whether `executable --version` prints the pinned version (`0.61.0`). Even `--version` writes
/// into Gemini's home (temp files of its project registry, left behind), so it runs with a home
/// of its own inside the install dir, never the user's.
fn reports_pinned_version(dir: &Path, executable: &Path) -> bool {
    let home = dir.join("version-home");
    std::fs::create_dir_all(&home).is_ok()
        && crate::claude_cli::version_line_with(
            executable,
            &[("GEMINI_CLI_HOME", home.as_os_str())],
        )
        .is_some_and(|line| line == VERSION)
}
