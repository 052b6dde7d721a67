//! Project tasks, run as `cargo xtask <task>` (the cargo-xtask pattern: plain Rust instead of
//! shell scripts, so they work wherever cargo does).
//!
//! - `test`: every test of the workspace: nextest for unit, integration and property tests,
//!   then the doc tests (nextest does not run those).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::Command;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let task = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    match task.as_str() {
        "test" => test(&rest),
        _ => {
            eprintln!("usage: cargo xtask <task>\n\ntasks:\n  test [NEXTEST ARGS]   run every test of the workspace");
            bail!("unknown task {task:?}")
        }
    }
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run(command: &mut Command) -> Result<()> {
    eprintln!("$ {command:?}");
    let status = command.status().with_context(|| format!("cannot start {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(())
}

fn test(extra: &[String]) -> Result<()> {
    run(cargo()
        .args(["nextest", "run", "--workspace", "--no-fail-fast"])
        .args(extra))?;
    run(cargo().args(["test", "--workspace", "--doc"]))
}
