//! `cargo xtask opencode-cli install`: the real opencode, pinned, for the opencode conformance
//! test (`crates/preflight/tests/it/opencode_cli.rs`).
//!
//! The npm package `opencode-ai` is a launcher whose `bin` entry works only after its
//! postinstall script (local, no download) has linked the native binary in; with
//! `--ignore-scripts` it prints that the script was not run. The binary itself ships in a
//! platform package (`opencode-linux-x64`, an optional dependency) and runs as it is, so the
//! tests run it, `node_modules/opencode-<os>-<arch>/bin/opencode`, whether or not the script
//! ran. It is installed locally into `<target dir>/opencode-cli/` (never globally). `@opencode-ai/plugin` at the same version is installed beside it: with
//! any plugin configured, opencode first npm-installs that package into its config dir and,
//! offline, waits for it for good; the tests link this copy in instead.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// The npm package of opencode.
pub const PACKAGE: &str = "opencode-ai";

/// The package opencode's plugins import, pinned with it.
pub const PLUGIN_PACKAGE: &str = "@opencode-ai/plugin";

/// The one pinned version: opencode's rules in `crates/preflight/src/opencode.rs` were measured
/// against it.
pub const VERSION: &str = "1.18.33";

/// Where the CLI is installed, inside the build dir so that `cargo clean` removes it.
const INSTALL_DIR: &str = "opencode-cli";

/// The native executable, relative to the install dir.
pub fn executable() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!(
        "node_modules/opencode-{}-{arch}/bin/opencode",
        std::env::consts::OS
    )
}

/// Installs the pinned CLI (and the plugin package) unless it is already there; returns the
/// executable's path.
pub fn install() -> Result<PathBuf> {
    let dir = crate::workspace::target_dir()?.join(INSTALL_DIR);
    let executable = dir.join(executable());
    let plugin = dir.join("node_modules/@opencode-ai/plugin/package.json");
    if reports_pinned_version(&dir, &executable) && plugin.is_file() {
        eprintln!(
            "{PACKAGE}@{VERSION} is already installed in {}",
            dir.display()
        );
        return Ok(executable);
    }
    crate::claude_cli::npm_install_together(
        &dir,
        &[(PACKAGE, VERSION), (PLUGIN_PACKAGE, VERSION)],
    )?;
    if !reports_pinned_version(&dir, &executable) {
        bail!(
            "{} does not report version {VERSION} after the install",
            executable.display()
        );
    }
    Ok(executable)
}

/// Whether `executable --version` prints the pinned version. It runs with a home and data,
/// config, cache and state dirs of its own inside the install dir, never the user's, and
/// without its auto-update.
fn reports_pinned_version(dir: &Path, executable: &Path) -> bool {
    let home = dir.join("version-home");
    let dirs = ["data", "config", "cache", "state"].map(|name| home.join(name));
    let env = [
        ("HOME", home.as_os_str()),
        ("XDG_DATA_HOME", dirs[0].as_os_str()),
        ("XDG_CONFIG_HOME", dirs[1].as_os_str()),
        ("XDG_CACHE_HOME", dirs[2].as_os_str()),
        ("XDG_STATE_HOME", dirs[3].as_os_str()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".as_ref()),
    ];
    std::fs::create_dir_all(&home).is_ok()
        && crate::claude_cli::version_line_with(executable, &env)
            .is_some_and(|line| line == VERSION)
}
