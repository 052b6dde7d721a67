//! `--real-claude`: the real Claude Code CLI as the resumed process. The pinned npm package
//! (`cargo xtask claude-cli install`, see `claude_cli`) runs offline: its API address is a
//! closed loopback port, so it answers a resume (loads the transcript and appends the prompt,
//! or says "No conversation found") and then fails fast on the request.

use std::fs::File;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::sandbox::Sandbox;

/// How long one refusal may take (the CLI answers "No conversation found" within seconds).
const PROBE_DEADLINE: Duration = Duration::from_secs(45);

pub use test_support::claude_offline::offline_env;

/// A loopback port nothing listens on: bound, then released.
pub fn closed_port() -> Result<u16> {
    test_support::claude_offline::closed_port().context("cannot bind a loopback port")
}

/// What the real CLI answers to `claude -p --resume <held>` run in `cwd` (outside any pane, so
/// its hooks record nothing): its exit status and the first line it printed on stderr.
pub fn answer_to_resume(
    sandbox: &Sandbox,
    cli: &Path,
    port: u16,
    cwd: &Path,
    held: &str,
) -> Result<String> {
    // Output to a file, not a pipe: a helper the CLI leaves behind cannot hold the run open.
    let stderr_path = sandbox.root.join(format!("real-probe-{held}.stderr"));
    let stderr = File::create(&stderr_path)
        .with_context(|| format!("cannot create {}", stderr_path.display()))?;
    let mut child = sandbox
        .command(cli)
        .envs(offline_env(port))
        .args(["-p", "--resume", held, "reboot-sim probe of a fresh pane"])
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("cannot run {}", cli.display()))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status.to_string();
        }
        if started.elapsed() > PROBE_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break format!("still running after {PROBE_DEADLINE:?}, killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let said = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    Ok(format!("{status}; {said}"))
}
