//! `cargo xtask resume-check`: proves that `resume-plan`'s example, which uses the library
//! crates only, answers as the binary does. In a sandbox (its own home, XDG dirs, Claude and
//! Codex config dirs, a `launchers.toml`), surfaces are recorded with `crash-resume record`
//! so that the plan holds each verdict (resume, recover, fresh, unknown) and a repo launcher;
//! then, for every surface, `resume_check <INDEX> <SURFACE>` must print the verdict and the
//! command that `crash-resume --json restore --all` gives for it, and a surface the index does
//! not hold must exit 4.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use anyhow::{Context, Result, bail, ensure};
use resume_plan::Plan;
use test_support::transcript::{ClaudeLine, jsonl};

use crate::workspace::{cargo, run, sandbox_base, target_dir};

/// Ids of the sessions in the sandbox (UUIDs, as Claude Code writes them).
const RESUMED: &str = "5a1e0000-0000-4000-8000-00000000000a";
const LOST: &str = "5a1e0000-0000-4000-8000-00000000000b";
const ON_DISK: &str = "5a1e0000-0000-4000-8000-00000000000c";
const NOWHERE: &str = "5a1e0000-0000-4000-8000-00000000000e";
const API: &str = "5a1e0000-0000-4000-8000-00000000000d";

pub fn run_check() -> Result<()> {
    run(cargo().args(["build", "-q", "-p", "crash-resume", "--bin", "crash-resume"]))?;
    run(cargo().args([
        "build",
        "-q",
        "-p",
        "resume-plan",
        "--example",
        "resume_check",
    ]))?;
    let debug = target_dir()?.join("debug");
    let binary = debug.join("crash-resume");
    let example = debug.join("examples").join("resume_check");

    let sandbox = sandbox_base("resume-check")?;
    if sandbox.exists() {
        fs::remove_dir_all(&sandbox).with_context(|| format!("cannot clear {sandbox:?}"))?;
    }
    let home = sandbox.join("home");
    let claude = home.join(".claude");
    let work = home.join("work");
    let other = home.join("other");
    let api = home.join("api");
    for dir in [&claude, &work, &other, &api, &home.join(".codex")] {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {dir:?}"))?;
    }
    fs::create_dir_all(home.join("config/crash-resume"))?;
    fs::write(
        home.join("config/crash-resume/launchers.toml"),
        "[repos.api]\ncommand = \"apiClaude --resume {session}\"\n",
    )?;
    write_transcript(&claude, &work, RESUMED)?;
    write_transcript(&claude, &other, ON_DISK)?;
    write_transcript(&claude, &api, API)?;

    let environment = |command: &mut Command| {
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("CODEX_HOME", home.join(".codex"));
    };
    let crash_resume = |args: &[&str]| -> Result<Output> {
        let mut command = Command::new(&binary);
        environment(&mut command);
        command
            .args(args)
            .output()
            .context("cannot run crash-resume")
    };
    let record = |surface: &str, session: &str, repo: &str, provider: &str, cwd: &Path| {
        let cwd = cwd.to_str().context("a UTF-8 sandbox")?;
        let output = crash_resume(&[
            "record",
            surface,
            session,
            repo,
            "--provider",
            provider,
            "--cwd",
            cwd,
        ])?;
        ensure!(output.status.success(), "record {surface}: {output:?}");
        Ok(())
    };
    record("tmux:w:0.0", RESUMED, "work", "claude", &work)?;
    record("tmux:w:0.1", LOST, "other", "claude", &other)?;
    record("tmux:w:0.2", NOWHERE, "work", "claude", &home.join("empty"))?;
    // `unknown`: a Gemini session recorded without its working dir, whose project (and so its
    // session files) cannot be told.
    let output = crash_resume(&[
        "record",
        "tmux:w:0.3",
        "s-gemini",
        "work",
        "--provider",
        "gemini",
    ])?;
    ensure!(output.status.success(), "record tmux:w:0.3: {output:?}");
    record(
        "tmux:w:0.4",
        "019a0000-0000-7000-8000-000000000001",
        "work",
        "codex",
        &work,
    )?;
    record("tmux:w:0.5", API, "api", "claude", &api)?;

    let output = crash_resume(&["--json", "restore", "--all"])?;
    ensure!(output.status.success(), "restore --all: {output:?}");
    let plan: Plan = serde_json::from_slice(&output.stdout).context("restore printed no plan")?;
    let index = home.join("state/crash-resume/index.json");
    let mut verdicts = Vec::new();
    for item in &plan.surfaces {
        let mut command = Command::new(&example);
        environment(&mut command);
        let output = command.arg(&index).arg(&item.surface).output()?;
        ensure!(
            output.status.success(),
            "resume_check {}: {output:?}",
            item.surface
        );
        let stdout = String::from_utf8(output.stdout)?;
        let lines: Vec<&str> = stdout.lines().collect();
        let mut expected = vec![item.verdict.as_str()];
        expected.extend(item.command.as_deref());
        if lines != expected {
            bail!(
                "resume_check {}: printed {lines:?}, the binary says {expected:?}",
                item.surface
            );
        }
        verdicts.push(item.verdict.as_str());
    }
    for verdict in ["resume", "recover", "fresh", "unknown"] {
        ensure!(
            verdicts.contains(&verdict),
            "no surface got `{verdict}`: {verdicts:?}"
        );
    }
    ensure!(
        plan.surfaces.iter().any(|item| item
            .command
            .as_deref()
            .is_some_and(|c| c.contains("apiClaude"))),
        "the launchers.toml repo launcher was not used"
    );
    let mut command = Command::new(&example);
    environment(&mut command);
    let missing = command.arg(&index).arg("tmux:none:9.9").output()?;
    ensure!(
        missing.status.code() == Some(4),
        "a surface not in the index: {missing:?}"
    );
    eprintln!(
        "resume-check: the example agrees with `restore --all` on {} surfaces",
        verdicts.len()
    );
    Ok(())
}

/// A Claude Code transcript for `session` in `cwd`, where Claude Code keeps it.
fn write_transcript(config_dir: &Path, cwd: &Path, session: &str) -> Result<()> {
    let path = preflight::claude_transcript_path(
        config_dir.to_str().context("a UTF-8 sandbox")?,
        cwd.to_str().context("a UTF-8 sandbox")?,
        session,
        None,
    )
    .context("a UUID session has a transcript path")?;
    fs::create_dir_all(path.parent().context("a transcript has a dir")?)?;
    let first = ClaudeLine {
        session,
        cwd,
        uuid: "5a1e0000-0000-4000-8000-000000000001",
        parent: None,
        timestamp: "2026-11-30T10:00:00.000Z",
    };
    let second = ClaudeLine {
        uuid: "5a1e0000-0000-4000-8000-000000000002",
        parent: Some(first.uuid),
        ..first
    };
    let lines = [first.user("hi"), second.assistant("msg_1", "Hello")];
    fs::write(&path, jsonl(&lines))?;
    Ok(())
}
