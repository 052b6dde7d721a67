//! The crash and the reboot: `crash-resume record` writers killed with SIGKILL while they run,
//! the tmux server killed with SIGKILL in the middle of them, then everything volatile dropped
//! and the tmux layout restored as tmux-resurrect does (same session names, window and pane
//! indexes, idle shells in the panes' dirs).

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use test_support::process::is_alive;
use test_support::random::XorShift;

use super::cases::{self, Slot};
use super::sandbox::{self, Sandbox};

/// How long the processes of the crashed server may take to die.
const DEATH_DEADLINE: Duration = Duration::from_secs(10);

/// The longest a writer is left to run before its SIGKILL: enough to land anywhere from start-up
/// to after the durable write.
const MAX_KILL_DELAY_MICROS: u64 = 25_000;

/// A `crash-resume record` run for an extra surface.
#[derive(Debug, Clone)]
pub struct Writer {
    pub surface: String,
    pub session: String,
    /// It exited 0 having printed `recorded ...`: the record must survive.
    pub acknowledged: bool,
    /// SIGKILL ended it.
    pub killed: bool,
}

/// `waves` waves of `per_wave` concurrent writers; about half of each wave is SIGKILLed at a
/// random moment. `during(wave)` runs right after a wave's writers start.
pub fn storm(
    sandbox: &Sandbox,
    rng: &mut XorShift,
    waves: usize,
    per_wave: usize,
    mut during: impl FnMut(usize) -> Result<()>,
) -> Result<Vec<Writer>> {
    let mut writers = Vec::new();
    for wave in 0..waves {
        let mut running: Vec<(Writer, Child, Option<Duration>)> = Vec::new();
        let started = Instant::now();
        for _ in 0..per_wave {
            let number = writers.len() + running.len();
            let writer = Writer {
                surface: format!("sim:writer-{number}"),
                session: format!("sim-writer-session-{number}"),
                acknowledged: false,
                killed: false,
            };
            let child = sandbox
                .command(sandbox.bin.join("crash-resume"))
                .args(["record", &writer.surface, &writer.session, "writers"])
                .current_dir(&sandbox.home)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .context("cannot start crash-resume record")?;
            let kill_after = (rng.below(2) == 0)
                .then(|| Duration::from_micros(rng.below(MAX_KILL_DELAY_MICROS)));
            running.push((writer, child, kill_after));
        }
        during(wave)?;
        let mut schedule: Vec<(Duration, usize)> = running
            .iter()
            .enumerate()
            .filter_map(|(position, (_, _, after))| after.map(|after| (after, position)))
            .collect();
        schedule.sort();
        for (after, position) in schedule {
            if let Some(rest) = after.checked_sub(started.elapsed()) {
                std::thread::sleep(rest);
            }
            // SIGKILL; a writer that already exited is a zombie until waited, so this is safe.
            let _ = running[position].1.kill();
        }
        for (mut writer, child, _) in running {
            let output = child
                .wait_with_output()
                .context("cannot wait for a writer")?;
            writer.killed = output.status.signal() == Some(9);
            writer.acknowledged = output.status.success()
                && String::from_utf8_lossy(&output.stdout).starts_with("recorded ");
            if !output.status.success() && !writer.killed {
                bail!(
                    "crash-resume record {} failed without being killed ({}): {}",
                    writer.surface,
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
            writers.push(writer);
        }
    }
    Ok(writers)
}

/// SIGKILLs the tmux server and waits until it is gone. Returns the pids of the processes
/// that ran in its panes (they die of the hang-up, or by the reboot).
pub fn kill_server(sandbox: &Sandbox) -> Result<Vec<u32>> {
    let server: u32 = sandbox
        .tmux(&["display-message", "-p", "#{pid}"])?
        .trim()
        .parse()
        .context("tmux gave no server pid")?;
    let panes: Vec<u32> = cases::list_panes(sandbox)?
        .iter()
        .map(|pane| pane.pid)
        .collect();
    sandbox::kill(server);
    super::wait_until(DEATH_DEADLINE, "the tmux server to die", || {
        Ok(!is_alive(server))
    })?;
    Ok(panes)
}

/// The reboot: every process of the old session dies, the volatile dirs (the tmux socket dir,
/// `TMPDIR`) and Claude Code's running state (`sessions/`) go, and a new tmux server comes up
/// with the old layout.
pub fn reboot(sandbox: &Sandbox, layout: &[Slot], doomed: &[u32]) -> Result<()> {
    sandbox.kill_all(doomed, DEATH_DEADLINE)?;
    let sessions = sandbox.claude_dir.join("sessions");
    if let Ok(listing) = fs::read_dir(&sessions) {
        for item in listing.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            let pid = name.strip_suffix(".json").and_then(|pid| pid.parse().ok());
            if pid.is_some_and(|pid| sandbox.owns_live_process(pid)) {
                bail!("{name} names a live process after the crash");
            }
        }
        fs::remove_dir_all(&sessions)
            .with_context(|| format!("cannot remove {}", sessions.display()))?;
    }
    fs::remove_dir_all(&sandbox.volatile)
        .with_context(|| format!("cannot remove {}", sandbox.volatile.display()))?;
    sandbox.create_volatile()?;
    cases::start_server(sandbox, layout)
}
