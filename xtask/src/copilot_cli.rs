//! `cargo xtask copilot-cli install`: the real GitHub Copilot CLI, pinned, for the Copilot
//! conformance tests (`crates/preflight/tests/it/copilot_cli.rs`,
//! `crates/cli/tests/it/copilot_tui.rs`).
//!
//! The npm package `@github/copilot` is a small loader (`npm-loader.js`) with the native
//! executable in a platform package (`@github/copilot-linux-x64`, ...). On its first run the
//! executable unpacks its runtime, about 235 MB, into `COPILOT_CACHE_HOME`: that cache is kept
//! beside the install (`<target dir>/copilot-cli/cache`, see `test_support::copilot_offline`), so
//! the install pays it once and no test does. It is installed locally into
//! `<target dir>/copilot-cli/` (never globally), and runs offline thereafter (the tests point it
//! at a mock of a chat-completions provider).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use test_support::copilot_offline::{CACHE, EXECUTABLE, INSTALL_DIR};

/// The npm package of the Copilot CLI.
pub const PACKAGE: &str = "@github/copilot";

/// The one pinned version: Copilot's rules in docs/preflight.md were measured against it.
pub const VERSION: &str = test_support::transcript::COPILOT_VERSION;

/// Installs the pinned CLI unless it is already there, and unpacks its runtime into the
/// install's cache; returns the executable's path.
pub fn install() -> Result<PathBuf> {
    let dir = crate::workspace::target_dir()?.join(INSTALL_DIR);
    let executable = dir.join(EXECUTABLE);
    if reports_pinned_version(&dir, &executable)? {
        eprintln!(
            "{PACKAGE}@{VERSION} is already installed in {}",
            dir.display()
        );
        return Ok(executable);
    }
    crate::claude_cli::npm_install(&dir, PACKAGE, VERSION)?;
    if !reports_pinned_version(&dir, &executable)? {
        bail!(
            "{} does not report version {VERSION} after the install",
            executable.display()
        );
    }
    Ok(executable)
}

/// Whether `executable --version` prints the pinned version (`GitHub Copilot CLI 1.0.102.`).
/// The first run unpacks the runtime into the install's cache; it runs with a home of its own
/// inside the install dir, never the user's, and never updates itself.
fn reports_pinned_version(dir: &Path, executable: &Path) -> Result<bool> {
    if !executable.is_file() {
        return Ok(false);
    }
    let home = dir.join("version-home");
    std::fs::create_dir_all(&home).with_context(|| format!("cannot create {}", home.display()))?;
    let copilot_home = home.join(".copilot");
    let cache = dir.join(CACHE);
    let env = [
        ("HOME", home.as_os_str()),
        ("COPILOT_HOME", copilot_home.as_os_str()),
        ("COPILOT_CACHE_HOME", cache.as_os_str()),
        ("COPILOT_AUTO_UPDATE", "false".as_ref()),
    ];
    Ok(crate::claude_cli::version_line_with(executable, &env)
        .is_some_and(|line| line == format!("GitHub Copilot CLI {VERSION}.")))
}
