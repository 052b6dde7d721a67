//! `cargo xtask claude-cli install`: the real Claude Code CLI, pinned, for the conformance test
//! of the preflight (`crates/preflight/tests/it/claude_cli.rs`, docs/preflight.md "How agreement
//! is checked").
//!
//! The npm package `@anthropic-ai/claude-code` is a thin wrapper: the CLI is a native binary
//! shipped in a per-platform optional dependency (`@anthropic-ai/claude-code-linux-x64`, ...),
//! which the wrapper's postinstall script copies over its `bin/claude.exe` placeholder. It is
//! installed locally into `<target dir>/claude-code/` (never globally), and the executable that
//! reports the pinned version is linked to `<target dir>/claude-code/claude`, the one path the
//! test looks at.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The npm package of the Claude Code CLI.
pub const PACKAGE: &str = "@anthropic-ai/claude-code";

/// The one pinned version: the reachability table of docs/preflight.md was measured against it.
pub const VERSION: &str = test_support::transcript::CLAUDE_CODE_VERSION;

/// Where the CLI is installed, inside the build dir so that `cargo clean` removes it.
const INSTALL_DIR: &str = "claude-code";

/// Installs the pinned CLI unless it is already there; returns the executable's path.
pub fn install() -> Result<PathBuf> {
    let dir = crate::workspace::target_dir()?.join(INSTALL_DIR);
    let executable = dir.join(format!("claude{}", std::env::consts::EXE_SUFFIX));
    if reports_pinned_version(&executable) {
        eprintln!(
            "{PACKAGE}@{VERSION} is already installed in {}",
            dir.display()
        );
        return Ok(executable);
    }
    npm_install(&dir, PACKAGE, VERSION)?;
    let found = find_executable(&dir)?;
    link(&found, &executable)?;
    if !reports_pinned_version(&executable) {
        bail!(
            "{} does not report version {VERSION} after the install",
            executable.display()
        );
    }
    Ok(executable)
}

/// `npm install <package>@<version>` into `dir` (created), locally: no global install, no
/// `package.json` change, no audit. npm's report goes to stderr: stdout carries only the
/// installed executable's path.
pub fn npm_install(dir: &Path, package: &str, version: &str) -> Result<()> {
    npm_install_together(dir, &[(package, version)])
}

/// [`npm_install`] of several packages by one npm run: with `--no-save`, a second run would
/// remove what the first installed.
pub fn npm_install_together(dir: &Path, packages: &[(&str, &str)]) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let specs: Vec<String> = packages
        .iter()
        .map(|(package, version)| format!("{package}@{version}"))
        .collect();
    let mut npm = Command::new("npm");
    npm.arg("install")
        .arg("--prefix")
        .arg(dir)
        .args(["--no-save", "--no-audit", "--no-fund"])
        .args(&specs)
        .stdout(std::io::stderr());
    eprintln!("$ {npm:?}");
    let names = specs.join(" ");
    let status = npm.status().with_context(|| {
        format!("cannot run npm, which installs {names}: install Node.js with npm and retry")
    })?;
    if !status.success() {
        bail!(
            "npm could not install {names} into {}: {status}",
            dir.display()
        );
    }
    Ok(())
}

/// The installed executable that reports the pinned version: the package's own `bin` entry
/// (the native binary once the postinstall script has run), else the native binary in the
/// platform package (when npm was told not to run install scripts).
fn find_executable(dir: &Path) -> Result<PathBuf> {
    let modules = dir.join("node_modules");
    let mut candidates = vec![modules.join(".bin").join("claude")];
    let scope = modules.join("@anthropic-ai");
    let listing =
        fs::read_dir(&scope).with_context(|| format!("cannot list {}", scope.display()))?;
    let mut platform_binaries: Vec<PathBuf> = listing
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("claude-code-")
        })
        .map(|entry| {
            entry
                .path()
                .join(format!("claude{}", std::env::consts::EXE_SUFFIX))
        })
        .collect();
    platform_binaries.sort();
    candidates.extend(platform_binaries);
    candidates
        .iter()
        .find(|candidate| reports_pinned_version(candidate))
        .cloned()
        .with_context(|| {
            format!(
                "no installed executable reports version {VERSION} (tried {candidates:?}); is there a \
                 native package of {PACKAGE} for this platform?"
            )
        })
}

/// Hard-links the executable (resolved) at `link`, replacing what was there.
fn link(executable: &Path, link: &Path) -> Result<()> {
    let resolved = fs::canonicalize(executable)
        .with_context(|| format!("cannot resolve {}", executable.display()))?;
    match fs::remove_file(link) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            return Err(error).with_context(|| format!("cannot remove {}", link.display()));
        }
    }
    fs::hard_link(&resolved, link)
        .with_context(|| format!("cannot link {} to {}", resolved.display(), link.display()))
}

/// Whether `executable --version` prints the pinned version (`2.1.328 (Claude Code)`).
fn reports_pinned_version(executable: &Path) -> bool {
    version_line(executable).is_some_and(|line| line.starts_with(&format!("{VERSION} ")))
}

/// The first line `executable --version` prints, when it runs and succeeds.
pub fn version_line(executable: &Path) -> Option<String> {
    version_line_with(executable, &[])
}

/// How long `--version` may take: a Node CLI's start on a loaded machine takes seconds.
const VERSION_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// [`version_line`] with `env` set (an agent's home dirs inside its install dir, never the
/// user's), killed past [`VERSION_DEADLINE`].
pub fn version_line_with(executable: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Option<String> {
    let mut command = Command::new(executable);
    command.arg("--version");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = bounded_run::output(&mut command, VERSION_DEADLINE).ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    })
}
