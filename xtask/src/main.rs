//! Project tasks, run as `cargo xtask <task>` (the cargo-xtask pattern: plain Rust instead of
//! shell scripts, so they work wherever cargo does).
//!
//! - `test`: every test of the workspace: first checks what it needs (cargo-nextest, npm, tmux,
//!   kitty, Xvfb) and says what is missing before building anything; then installs the pinned
//!   Claude Code, Codex, Gemini, Copilot and Qwen Code CLIs
//!   (the conformance tests run them), then nextest for unit, integration and property tests, then the doc tests
//!   (nextest does not run those), then `resume-check`, then each criterion benchmark once.
//! - `reboot-sim`: the whole crash-and-resume story in a sandbox (see `reboot_sim`).
//! - `bench-cli`: the release binary timed end to end (see `bench_cli`).
//! - `resume-check`: `resume-plan`'s example answers as the binary does (see `resume_check`).
//! - `claude-cli install`: installs the pinned Claude Code CLI into the build dir and prints the
//!   path of its executable (see `claude_cli`).
//! - `codex-cli install`: the same for the pinned Codex CLI (see `codex_cli`).
//! - `zellij install`: builds the pinned zellij into the machine's build cache, once, and
//!   prints the path of its executable (see `zellij`).
//! - `gemini-cli install`: the same for the pinned Gemini CLI (see `gemini_cli`).
//! - `copilot-cli install`: the same for the pinned GitHub Copilot CLI, its runtime unpacked
//!   into the build dir too (see `copilot_cli`).
//! - `qwen-cli install`: the same for the pinned Qwen Code (see `qwen_cli`).
//! - `opencode-cli install`: the same for the pinned opencode (see `opencode_cli`).

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench_cli;
mod bench_kitty;
mod claude_cli;
mod codex_cli;
mod copilot_cli;
mod gemini_cli;
mod kitty;
mod opencode_cli;
mod qwen_cli;
mod reboot_sim;
mod resume_check;
mod workspace;
mod zellij;

use anyhow::{Result, bail};

use crate::workspace::{cargo, run};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let task = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    match task.as_str() {
        "test" => test(&rest),
        "claude-cli" => claude_cli_task(&rest),
        "codex-cli" => codex_cli_task(&rest),
        "zellij" => zellij_task(&rest),
        "gemini-cli" => gemini_cli_task(&rest),
        "copilot-cli" => copilot_cli_task(&rest),
        "qwen-cli" => qwen_cli_task(&rest),
        "opencode-cli" => opencode_cli_task(&rest),
        "reboot-sim" => reboot_sim::run(&rest),
        "bench-cli" => bench_cli::run(&rest),
        "resume-check" => resume_check::run_check(),
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown task {task:?}")
        }
    }
}

const USAGE: &str = "usage: cargo xtask <task>

tasks:
  test [NEXTEST ARGS]   run every test of the workspace
  reboot-sim [--panes N] [--real-claude | --real-codex]
                        the whole crash-and-resume story in a sandbox, checked pane by pane
  bench-cli [--runs N] [--binary PATH] [--plan | --check | --picture | --only tmux-hook | --only kitty-restore]
                        time the release binary end to end (median, p95) at 1k and 10k
                        entries, the restore plan from 1k to 10k (--plan: only that), and
                        restore --apply kitty of 10 surfaces into a live kitty (budget 2 s)
  resume-check          resume-plan's example against `crash-resume --json restore --all`
  claude-cli install    install the pinned Claude Code CLI into the build dir, print its path
  codex-cli install     install the pinned Codex CLI into the build dir, print its path
  gemini-cli install    install the pinned Gemini CLI into the build dir, print its path
  copilot-cli install   install the pinned Copilot CLI (and its runtime) into the build dir,
                        print its path
  qwen-cli install      install the pinned Qwen Code into the build dir, print its path
  opencode-cli install  install the pinned opencode into the build dir, print its path
  zellij install        build the pinned zellij into the machine's build cache, print its path";

fn claude_cli_task(args: &[String]) -> Result<()> {
    match args {
        [command] if command == "install" => {
            let executable = claude_cli::install()?;
            println!("{}", executable.display());
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown claude-cli command {args:?}")
        }
    }
}

fn zellij_task(args: &[String]) -> Result<()> {
    match args {
        [command] if command == "install" => {
            let executable = zellij::install()?;
            println!("{}", executable.display());
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown zellij command {args:?}")
        }
    }
}

fn codex_cli_task(args: &[String]) -> Result<()> {
    match args {
        [command] if command == "install" => {
            let executable = codex_cli::install()?;
            println!("{}", executable.display());
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown codex-cli command {args:?}")
        }
    }
}

fn gemini_cli_task(args: &[String]) -> Result<()> {
    match args {
        [command] if command == "install" => {
            let executable = gemini_cli::install()?;
            println!("{}", executable.display());
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown gemini-cli command {args:?}")
        }
    }
}

fn copilot_cli_task(args: &[String]) -> Result<()> {
    match args {
        [command] if command == "install" => {
            let executable = copilot_cli::install()?;
            println!("{}", executable.display());
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown copilot-cli command {args:?}")
        }
    }
}

/// What `cargo xtask test` needs besides cargo, each with how to get it, checked before any
/// long build or install: the tests' programs on `PATH` and cargo-nextest.
fn check_prerequisites() -> Result<()> {
    let search_path = std::env::var_os("PATH");
    let on_path = |name: &str| setup_check::programs::find(name, search_path.as_deref()).is_some();
    let mut missing = Vec::new();
    let nextest = bounded_run::output(
        cargo().args(["nextest", "--version"]),
        std::time::Duration::from_secs(60),
    );
    if !nextest.is_ok_and(|output| output.status.success()) {
        missing.push("cargo-nextest, which runs the tests: `cargo install --locked cargo-nextest`");
    }
    for (program, what) in [
        (
            "npm",
            "npm (Node.js 22 or later) with access to the npm registry, which installs the pinned \
             agent CLIs into the build dir",
        ),
        (
            "tmux",
            "tmux 3.3a, which the restore tests run: `apt-get install -y tmux`",
        ),
        (
            "kitty",
            "kitty, which the live kitty tests run: `apt-get install -y kitty`",
        ),
        (
            "Xvfb",
            "Xvfb, the display the live kitty tests run kitty on: `apt-get install -y xvfb`",
        ),
    ] {
        if !on_path(program) {
            missing.push(what);
        }
    }
    let node = bounded_run::output(
        std::process::Command::new("node").arg("--version"),
        std::time::Duration::from_secs(10),
    );
    if let Ok(output) = node {
        let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
        let major = version
            .trim_start_matches('v')
            .split('.')
            .next()
            .and_then(|major| major.parse::<u32>().ok());
        if major.is_some_and(|major| major < 22) {
            eprintln!(
                "warning: node {version}: the pinned Claude Code CLI asks for node 22 or later \
                 (it warns, and its tests still run)"
            );
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    bail!(
        "cargo xtask test needs what is not here; nothing was built or installed:\n  - {}\n\
         (`cargo test --workspace` runs the tests that need none of it)",
        missing.join("\n  - ")
    )
}

fn qwen_cli_task(args: &[String]) -> Result<()> {
    match args {
        [command] if command == "install" => {
            let executable = qwen_cli::install()?;
            println!("{}", executable.display());
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown qwen-cli command {args:?}")
        }
    }
}

fn opencode_cli_task(args: &[String]) -> Result<()> {
    match args {
        [command] if command == "install" => {
            let executable = opencode_cli::install()?;
            println!("{}", executable.display());
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown opencode-cli command {args:?}")
        }
    }
}

fn test(extra: &[String]) -> Result<()> {
    check_prerequisites()?;
    // The conformance tests of the preflight run the real CLI (the `real-cli` feature) and fail
    // when it is missing; the live kitty tests (`live-kitty`) fail when kitty or Xvfb is.
    let executable = claude_cli::install()?;
    eprintln!("Claude Code CLI: {}", executable.display());
    let executable = codex_cli::install()?;
    eprintln!("Codex CLI: {}", executable.display());
    let executable = gemini_cli::install()?;
    eprintln!("Gemini CLI: {}", executable.display());
    let executable = copilot_cli::install()?;
    eprintln!("Copilot CLI: {}", executable.display());
    let executable = qwen_cli::install()?;
    eprintln!("Qwen Code: {}", executable.display());
    let executable = opencode_cli::install()?;
    eprintln!("opencode: {}", executable.display());
    // The live zellij tests (the `live-zellij` feature) run this zellij, and fail without it.
    let zellij = zellij::install()?;
    eprintln!("zellij: {}", zellij.display());
    // CI's profile (`.config/nextest.toml`) when run by CI.
    let in_ci = std::env::var_os("CI").is_some();
    let profile = if in_ci { "ci" } else { "default" };
    let mut nextest = cargo();
    if in_ci {
        // A snapshot (insta) that is missing or changed fails the test and nothing is written:
        // CI never accepts a snapshot. (insta does so itself when `CI` is set; said here so a
        // stray `INSTA_UPDATE` or `INSTA_FORCE_PASS` in the environment cannot change it.)
        nextest
            .env("INSTA_UPDATE", "no")
            .env_remove("INSTA_FORCE_PASS");
    }
    run(nextest
        .args(["nextest", "run", "--workspace", "--no-fail-fast"])
        .args(["--profile", profile])
        .args([
            "--features",
            "preflight/real-cli,crash-resume/real-cli,crash-resume/live-kitty,crash-resume/live-zellij,crash-resume/live-systemd",
        ])
        .env(test_support::zellij::VARIABLE, &zellij)
        .args(extra))?;
    run(cargo().args(["test", "--workspace", "--doc"]))?;
    resume_check::run_check()?;
    // The criterion benchmarks, each run once, so they cannot rot.
    run(cargo().args(["test", "--workspace", "--benches"]))
}
