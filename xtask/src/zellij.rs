//! `cargo xtask zellij install`: the real zellij, pinned, for the zellij backend's live tests and
//! `reboot-sim --mux zellij`.
//!
//! zellij ships no package the machines here can install, so it is built from crates.io with
//! `cargo install --locked` (about 16 minutes on 2 cores). The build is kept outside the build
//! dir, in a cache shared by every clone on the machine (CI runs each time in a fresh clone):
//! `$CRASH_RESUME_BUILD_CACHE`, else `$XDG_CACHE_HOME/crash-resume-build`, else
//! `~/.cache/crash-resume-build`, one dir per version, so a second run finds it at once.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::workspace::{cargo, run};

/// The crate of zellij on crates.io.
const CRATE: &str = "zellij";

/// The one pinned version: the zellij backend's behaviour was measured against it.
pub const VERSION: &str = setup_check::programs::ZELLIJ_VERSION;

/// The dir of the build cache shared by the clones of this machine.
fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CRASH_RESUME_BUILD_CACHE").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::home_dir()
            .context("no home dir to keep the build cache in; set CRASH_RESUME_BUILD_CACHE")?
            .join(".cache"),
    };
    Ok(base.join("crash-resume-build"))
}

/// Installs the pinned zellij unless it is already in the cache; returns the executable's path.
pub fn install() -> Result<PathBuf> {
    let root = cache_dir()?.join(format!("{CRATE}-{VERSION}"));
    let executable = root.join("bin").join(CRATE);
    if reports_pinned_version(&executable) {
        eprintln!("{CRATE} {VERSION} is already built in {}", root.display());
        return Ok(executable);
    }
    eprintln!(
        "building {CRATE} {VERSION} into {} (about 16 minutes on 2 cores, once per machine)",
        root.display()
    );
    run(cargo()
        .args(["install", "--locked", CRATE, "--version", VERSION, "--root"])
        .arg(&root))?;
    if !reports_pinned_version(&executable) {
        bail!(
            "{} does not report version {VERSION} after the build",
            executable.display()
        );
    }
    Ok(executable)
}

/// Whether `executable --version` prints the pinned version (`zellij 0.45.1`).
fn reports_pinned_version(executable: &std::path::Path) -> bool {
    crate::claude_cli::version_line(executable)
        .is_some_and(|line| line == format!("{CRATE} {VERSION}"))
}
