//! `cargo xtask qwen-cli install`: the real Qwen Code, pinned, for the Qwen Code conformance
//! tests (`crates/preflight/tests/it/qwen_cli.rs`, `crates/cli/tests/it/hook/qwen_tui.rs`) and
//! `reboot-sim --real-qwen`.
//!
//! The npm package `@qwen-code/qwen-code` is a Node.js bundle (`cli-entry.js` and its chunks)
//! with vendored helpers; it declares node ≥ 22 and runs on node 20. It is installed with
//! `npm install --ignore-scripts` (none of its install scripts is needed) locally into
//! `<target dir>/qwen-cli/` (never globally); the launcher npm links at
//! `<target dir>/qwen-cli/node_modules/.bin/qwen` is what a user runs, and the one path the
//! tests look at. It runs offline thereafter (the tests point it at a mock of its model API).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// The npm package of Qwen Code.
pub const PACKAGE: &str = "@qwen-code/qwen-code";

/// The one pinned version: Qwen Code's rules in docs/preflight.md were measured against it.
pub const VERSION: &str = test_support::transcript::QWEN_VERSION;

/// Where the CLI is installed, inside the build dir so that `cargo clean` removes it.
const INSTALL_DIR: &str = "qwen-cli";

/// The installed executable, relative to the install dir.
pub const EXECUTABLE: &str = "node_modules/.bin/qwen";

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
    npm_install(&dir)?;
    if !reports_pinned_version(&dir, &executable) {
        bail!(
            "{} does not report version {VERSION} after the install",
            executable.display()
        );
    }
    Ok(executable)
}

/// `npm install --ignore-scripts` of the pinned package into `dir`.
fn npm_install(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut npm = Command::new("npm");
    npm.arg("install")
        .arg("--prefix")
        .arg(dir)
        .args(["--no-save", "--no-audit", "--no-fund", "--ignore-scripts"])
        .arg(format!("{PACKAGE}@{VERSION}"))
        .stdout(std::io::stderr());
    eprintln!("$ {npm:?}");
    let status = npm.status().with_context(|| {
        format!("cannot run npm, which installs {PACKAGE}: install Node.js with npm and retry")
    })?;
    if !status.success() {
        bail!(
            "npm could not install {PACKAGE}@{VERSION} into {}: {status}",
            dir.display()
        );
    }
    Ok(())
}

/// Whether `executable --version` prints the pinned version (`0.24.4`). It runs with a home and
/// a config dir of its own inside the install dir, never the user's.
fn reports_pinned_version(dir: &Path, executable: &Path) -> bool {
    let home = dir.join("version-home");
    let qwen_home = home.join(".qwen");
    let env = [
        ("HOME", home.as_os_str()),
        ("QWEN_HOME", qwen_home.as_os_str()),
    ];
    fs::create_dir_all(&home).is_ok()
        && crate::claude_cli::version_line_with(executable, &env)
            .is_some_and(|line| line == VERSION)
}
