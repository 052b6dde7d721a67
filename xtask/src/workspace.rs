//! The workspace as cargo sees it: where the build dir is, where a task keeps its sandbox,
//! and running cargo. A leaf: every task uses it, it uses none of them.

use std::process::Command;

use anyhow::{Context, Result, bail};

/// The build dir of the workspace, as cargo resolves it (`CARGO_TARGET_DIR`, `build.target-dir`).
pub fn target_dir() -> Result<std::path::PathBuf> {
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", output.status);
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .context("cargo metadata printed something that is not JSON")?;
    metadata["target_directory"]
        .as_str()
        .map(std::path::PathBuf::from)
        .context("cargo metadata names no target_directory")
}

/// The workspace's root dir (where its `Cargo.toml` is).
pub fn root() -> Result<camino::Utf8PathBuf> {
    let manifest = camino::Utf8Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map(camino::Utf8Path::to_path_buf)
        .context("the xtask crate has no parent dir")
}

/// Where a task keeps its sandbox: `<build dir>/<name>`, unless the build dir is on a volatile
/// path (a clone under `/tmp`), which the index refuses; then `/var/tmp/crash-resume-<name>-<checkout>`
/// (`test_support::sandbox::checkout_mark` of the build dir), one per checkout.
pub fn sandbox_base(name: &str) -> Result<std::path::PathBuf> {
    Ok(test_support::sandbox::durable_or_var_tmp(
        &target_dir()?.join(name),
        name,
    ))
}

/// `cargo`: the one running this task (`CARGO`), else the one on `PATH`.
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Runs `command`, echoing it first; fails unless it succeeds.
pub fn run(command: &mut Command) -> Result<()> {
    eprintln!("$ {command:?}");
    let status = command
        .status()
        .with_context(|| format!("cannot start {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(())
}

/// Builds the release `crash-resume`; its path.
pub fn build_release() -> Result<std::path::PathBuf> {
    run(cargo().args(["build", "--release", "-p", "crash-resume"]))?;
    Ok(target_dir()?.join("release").join("crash-resume"))
}
