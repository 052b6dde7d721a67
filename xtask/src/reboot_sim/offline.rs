//! What the stories with real agents in tmux panes share (`codex`, `gemini`): the tmux server in
//! a network namespace with loopback alone (`unshare -n`), started by the offline launcher of
//! `test_support::codex_offline` (written into the sandbox), which serves the mocks of the
//! model APIs on 127.0.0.1 and, when the story lets go of it, SIGKILLs every process left in the
//! namespace by pid; the agent's wrapper in the sandbox's bin dir; the screen helpers; the index
//! and the restore plan as JSON; and the row that lists what the mock was asked.

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use test_support::codex_offline;

use super::cases::Slot;
use super::checks::Row;
use super::sandbox::{Sandbox, sh_quote};
use super::wait::{wait_for, wait_until};

/// How long one agent screen may take to appear.
pub const SCREEN_DEADLINE: Duration = Duration::from_secs(90);

/// How long an Enter may take to be taken as a submit before it is pressed again.
const SUBMIT_RETRY: Duration = Duration::from_secs(3);

/// The namespace, held by its launcher: dropping it ends every process in it.
pub struct Namespace {
    launcher: Child,
}

impl Namespace {
    /// Starts the launcher with a tmux server (the sandbox's) as its command; every request to
    /// the mock is appended to `requests` as `METHOD PATH`.
    pub fn start(sandbox: &Sandbox, requests: &Path) -> Result<Namespace> {
        let script = sandbox.root.join("agent_offline.py");
        fs::write(&script, codex_offline::LAUNCHER)
            .with_context(|| format!("cannot write {}", script.display()))?;
        let mut launcher = sandbox
            .command("unshare")
            .args(["-n", "--", "python3"])
            .arg(&script)
            .args(["--port", &codex_offline::PORT.to_string(), "--log"])
            .arg(requests)
            .args([
                "--",
                "sh",
                "-c",
                codex_offline::TMUX_SERVER,
                &sandbox.socket,
            ])
            .current_dir(&sandbox.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run unshare (util-linux), which keeps the agent offline")?;
        let socket = sandbox
            .volatile
            .join(format!("tmux-{}", rustix::process::getuid().as_raw()))
            .join(&sandbox.socket);
        wait_for(
            SCREEN_DEADLINE,
            "the tmux server in the network namespace",
            || {
                if let Some(status) = launcher.try_wait()? {
                    let mut stderr = String::new();
                    if let Some(pipe) = launcher.stderr.as_mut() {
                        let _ = std::io::Read::read_to_string(pipe, &mut stderr);
                    }
                    bail!(
                        "cannot create a network namespace for the agent, or start tmux in it \
                         ({status}): {}; run as root or allow unprivileged user namespaces",
                        stderr.trim()
                    );
                }
                Ok(socket.exists().then_some(()))
            },
        )?;
        Ok(Namespace { launcher })
    }

    /// SIGKILLs everything in the namespace (the launcher does it by pid) and waits.
    pub fn crash(mut self) -> Result<()> {
        drop(self.launcher.stdin.take());
        let status = self.launcher.wait()?;
        // The launcher's own failures (an isolated namespace, a free port) are 97 and 98.
        if matches!(status.code(), Some(97 | 98)) {
            bail!("the offline launcher failed: {status}");
        }
        Ok(())
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        drop(self.launcher.stdin.take());
        let _ = self.launcher.wait();
    }
}

/// Writes the wrapper `name` in the sandbox's bin dir (what a pane and a restore run): `env`
/// exported, then `cli` with the wrapper's arguments.
pub fn install_wrapper(
    sandbox: &Sandbox,
    name: &str,
    env: &[(&str, String)],
    cli: &Path,
) -> Result<()> {
    let exports: Vec<String> = env
        .iter()
        .map(|(variable, value)| format!("{variable}={}", sh_quote(value)))
        .collect();
    let wrapper = sandbox.bin.join(name);
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexport {}\nexec {} \"$@\"\n",
            exports.join(" "),
            sh_quote(&cli.to_string_lossy())
        ),
    )
    .with_context(|| format!("cannot write {}", wrapper.display()))?;
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", wrapper.display()))
}

/// What the pane shows now (no scroll-back: a dialog that closed is gone from it).
pub fn screen(sandbox: &Sandbox, slot: &Slot) -> Result<String> {
    sandbox.tmux(&["capture-pane", "-p", "-J", "-t", &slot.target()])
}

pub fn screen_shows(sandbox: &Sandbox, slot: &Slot, text: &str) -> Result<()> {
    wait_for(
        SCREEN_DEADLINE,
        &format!("{text:?} on {}", slot.surface()),
        || Ok(screen(sandbox, slot)?.contains(text).then_some(())),
    )
    .with_context(|| {
        format!(
            "{} shows:\n{}",
            slot.surface(),
            screen(sandbox, slot).unwrap_or_default()
        )
    })
}

/// Presses Enter, and again every [`SUBMIT_RETRY`] until `done` holds (within
/// [`SCREEN_DEADLINE`]).
pub fn press_enter_until(
    sandbox: &Sandbox,
    slot: &Slot,
    what: &str,
    mut done: impl FnMut() -> Result<bool>,
) -> Result<()> {
    wait_for(SCREEN_DEADLINE, what, || {
        sandbox.tmux(&["send-keys", "-t", &slot.target(), "Enter"])?;
        Ok(wait_until(SUBMIT_RETRY, what, &mut done).ok())
    })
    .with_context(|| {
        format!(
            "{} shows:\n{}",
            slot.surface(),
            screen(sandbox, slot).unwrap_or_default()
        )
    })
}

/// The first 8 characters of a session id, for the table.
pub fn short(session: &str) -> &str {
    session.get(..8).unwrap_or(session)
}

/// The entries of `crash-resume --json list`.
pub fn list(sandbox: &Sandbox) -> Result<Vec<Value>> {
    let list: Value = serde_json::from_str(&sandbox.crash_resume_ok(&["--json", "list"])?)?;
    Ok(list["entries"].as_array().cloned().unwrap_or_default())
}

/// The index's entry of `surface`.
pub fn entry(sandbox: &Sandbox, surface: &str) -> Result<Option<Value>> {
    Ok(list(sandbox)?
        .into_iter()
        .find(|entry| entry["surfaceId"] == surface))
}

/// The surfaces of the plan `crash-resume ARGS` prints.
pub fn restore_plan(sandbox: &Sandbox, args: &[&str]) -> Result<Vec<Value>> {
    let plan: Value = serde_json::from_str(&sandbox.crash_resume_ok(args)?)?;
    Ok(plan["surfaces"].as_array().cloned().unwrap_or_default())
}

pub fn find<'a>(plan: &'a [Value], surface: &str) -> Option<&'a Value> {
    plan.iter().find(|item| item["surface"] == surface)
}

/// The row of what the mock was asked (`requests`, one `METHOD PATH` a line): `expected` says
/// which requests the agent may make, `allowed` tells them.
pub fn requests_row(
    requests: &Path,
    agent: &str,
    expected: &str,
    allowed: impl Fn(&str) -> bool,
) -> Row {
    let requests = fs::read_to_string(requests).unwrap_or_default();
    let other: Vec<&str> = requests.lines().filter(|line| !allowed(line)).collect();
    Row {
        surface: "(mock)".to_string(),
        case: format!("{agent}'s requests"),
        expected: expected.to_string(),
        got: format!(
            "{} requests, {} other",
            requests.lines().count(),
            other.len()
        ),
        problems: if other.is_empty() {
            Vec::new()
        } else {
            vec![format!("other requests: {other:?}")]
        },
    }
}
