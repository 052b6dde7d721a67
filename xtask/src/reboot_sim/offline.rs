//! What the stories with real agents in tmux panes share (`codex`, `gemini`, `copilot`): the tmux server in
//! a network namespace with loopback alone (`unshare -n`), started by the offline launcher of
//! `test_support::codex_offline` (written into the sandbox), which serves the mocks of the
//! model APIs on 127.0.0.1 and, when the story lets go of it, SIGKILLs every process left in the
//! namespace by pid; the agent's wrapper in the sandbox's bin dir; the story's start; the screen
//! helpers; the index and the restore plans as JSON; and the row that lists what the mock was
//! asked.

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use test_support::codex_offline;

use super::cases::{self, Slot};
use super::checks::Row;
use super::sandbox::{Sandbox, create_dir, kill, sh_quote};
use super::{wait_for, wait_until};

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
        let socket = test_support::tmux::socket_path(&sandbox.volatile, &sandbox.socket);
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

/// Each of a story's cases with its pane's place, the pane's dir created.
pub fn case_slots<C: Copy>(cases: &[C], slot: impl Fn(C) -> Slot) -> Result<Vec<(C, Slot)>> {
    let slots: Vec<(C, Slot)> = cases.iter().map(|case| (*case, slot(*case))).collect();
    for (_, slot) in &slots {
        create_dir(&slot.dir)?;
    }
    Ok(slots)
}

/// The crash of a story whose tmux server runs in `namespace` with `layout`: the tmux server
/// SIGKILLed, then every process left in the namespace; `after_crash` then does what happened
/// to the disk meanwhile (a file deleted). Then the reboot: the volatile dirs dropped, a new
/// namespace with the same layout of idle shells, which it returns.
pub fn crash_and_reboot(
    sandbox: &Sandbox,
    namespace: Namespace,
    requests: &Path,
    layout: &[Slot],
    after_crash: impl FnOnce() -> Result<()>,
) -> Result<Namespace> {
    let server: u32 = sandbox
        .tmux(&["display-message", "-p", "#{pid}"])?
        .parse()
        .context("tmux printed no server pid")?;
    kill(server);
    namespace.crash()?;
    after_crash()?;
    fs::remove_dir_all(&sandbox.volatile)
        .with_context(|| format!("cannot remove {}", sandbox.volatile.display()))?;
    sandbox.create_volatile()?;
    let namespace = Namespace::start(sandbox, requests)?;
    cases::start_server(sandbox, layout)?;
    Ok(namespace)
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

/// The start of a story: the wrapper `agent` (`env` exported, then `cli`), crash-resume's hooks
/// installed by `hook install <agent>` (what it said printed), the namespace whose mock logs to
/// `requests`, and its tmux server with a pane at each case's slot. Returns the namespace and
/// that layout.
pub fn start_story<C>(
    sandbox: &Sandbox,
    (agent, cli): (&str, &Path),
    env: &[(&str, String)],
    slots: &[(C, Slot)],
    requests: &Path,
) -> Result<(Namespace, Vec<Slot>)> {
    install_wrapper(sandbox, agent, env, cli)?;
    eprintln!(
        "reboot-sim: {}",
        sandbox.crash_resume_ok(&["hook", "install", agent])?.trim()
    );
    let namespace = Namespace::start(sandbox, requests)?;
    let layout: Vec<Slot> = slots.iter().map(|(_, slot)| slot.clone()).collect();
    cases::start_server(sandbox, &layout)?;
    Ok((namespace, layout))
}

/// The session a story recorded for `case`, or none (`""`) when it did not get one.
pub fn session_of_case<C: Copy + PartialEq>(sessions: &[(C, String)], case: C) -> String {
    sessions
        .iter()
        .find(|(each, _)| *each == case)
        .map(|(_, session)| session.clone())
        .unwrap_or_default()
}

/// What `restore` offers after the reboot: its words (printed), then its plan, the plan of
/// `restore --all`, and what `restore --apply tmux` did.
pub struct Restored {
    pub plan: Vec<Value>,
    pub plan_all: Vec<Value>,
    pub applied: Vec<Value>,
}

/// Runs the restore of a story (see [`Restored`]).
pub fn restore_all_ways(sandbox: &Sandbox) -> Result<Restored> {
    eprint!(
        "reboot-sim: crash-resume restore says:\n{}",
        sandbox.crash_resume_ok(&["restore"])?
    );
    Ok(Restored {
        plan: restore_plan(sandbox, &["--json", "restore"])?,
        plan_all: restore_plan(sandbox, &["--json", "restore", "--all"])?,
        applied: restore_plan(sandbox, &test_support::restore_apply_args(&sandbox.socket))?,
    })
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

/// Waits until the index holds `session` for `surface`: the agent's hook recorded it.
pub fn wait_recorded(sandbox: &Sandbox, surface: &str, session: &str) -> Result<()> {
    wait_for(
        SCREEN_DEADLINE,
        &format!("{surface}'s session to be recorded"),
        || {
            Ok(entry(sandbox, surface)?
                .filter(|entry| entry["sessionId"] == session)
                .map(|_| ()))
        },
    )
}

/// Ends the agent in `slot` with the command `end` (typed, then submitted once the screen shows
/// `shown`), and waits until its hook marked the pane's session ended.
pub fn end_in_pane(sandbox: &Sandbox, slot: &Slot, end: &str, shown: &str) -> Result<()> {
    let surface = slot.surface();
    sandbox.tmux(&["send-keys", "-t", &slot.target(), "-l", end])?;
    screen_shows(sandbox, slot, shown)?;
    press_enter_until(sandbox, slot, &format!("the {end} to be recorded"), || {
        Ok(entry(sandbox, &surface)?.is_some_and(|entry| entry["ended_at"].is_u64()))
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
        .find(|entry| cases::value_names_place(&entry["surfaceId"], surface)))
}

/// The surfaces of the plan `crash-resume ARGS` prints.
pub fn restore_plan(sandbox: &Sandbox, args: &[&str]) -> Result<Vec<Value>> {
    let plan: Value = serde_json::from_str(&sandbox.crash_resume_ok(args)?)?;
    Ok(plan["surfaces"].as_array().cloned().unwrap_or_default())
}

pub fn find<'a>(plan: &'a [Value], surface: &str) -> Option<&'a Value> {
    plan.iter()
        .find(|item| cases::value_names_place(&item["surface"], surface))
}

/// Why the plan item offers its session or not (`restore`'s `why`), or nothing.
pub fn why(item: Option<&Value>) -> String {
    item.and_then(|item| item["why"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The expected and the got of a crashed pane that the restore should resume into `held`;
/// `resumed` is what the pane did after the restore, `item` its plan item and `applied` what
/// `restore --apply` did to it.
pub fn crashed_cells(
    held: &str,
    resumed: &Result<()>,
    item: Option<&Value>,
    applied: Option<&Value>,
    problems: &mut Vec<String>,
) -> (String, String) {
    if let Err(error) = resumed {
        problems.push(format!("{error:#}"));
    }
    if applied.and_then(|item| item["applied"].as_str()).is_none() {
        problems.push("restore --apply tmux did not act on the pane".into());
    }
    if end_kind(item) != "offered" {
        problems.push(format!("restore's reason: {:?}", why(item)));
    }
    (
        format!("resume {}", short(held)),
        match resumed {
            Ok(()) => format!("resume {}", short(held)),
            Err(_) => "not resumed".to_string(),
        },
    )
}

/// The expected and the got of a pane whose agent was ended with `end` (`/quit`): not offered
/// by `restore` (`item`), and `restore --all` (`item_all`) says why.
pub fn ended_cells(
    end: &str,
    item: Option<&Value>,
    item_all: Option<&Value>,
    problems: &mut Vec<String>,
) -> (String, String) {
    if item.is_some() {
        problems.push(format!("restore offers a session that ended with {end}"));
    }
    let ended = end_kind(item_all) == "ended";
    if !ended {
        problems.push(format!("restore --all's reason: {:?}", why(item_all)));
    }
    (
        "ended, not offered".to_string(),
        match item {
            None if ended => "ended, not offered".to_string(),
            None => "not offered".to_string(),
            Some(_) => "offered".to_string(),
        },
    )
}

/// The expected and the got of a pane whose conversation file was deleted after the crash: a
/// fresh start, and `restore` saying that the agent cannot resume it.
pub fn deleted_cells(item: Option<&Value>, problems: &mut Vec<String>) -> (String, String) {
    let verdict = item
        .and_then(|item| item["verdict"].as_str())
        .unwrap_or("-");
    let said_why = end_kind(item) == "cannot_resume";
    if verdict != "fresh" || !said_why {
        problems.push(format!("verdict {verdict}, reason {:?}", why(item)));
    }
    (
        "fresh (cannot resume, says why)".to_string(),
        format!(
            "{verdict}{}",
            if said_why {
                " (cannot resume, says why)"
            } else {
                ""
            }
        ),
    )
}

/// What is wrong when the index did not hold `held` for `surface` before the crash
/// (`before_crash`: the entries of `list`).
pub fn recorded_problem(before_crash: &[Value], surface: &str, held: &str) -> Option<String> {
    let recorded = before_crash
        .iter()
        .find(|entry| cases::value_names_place(&entry["surfaceId"], surface));
    (recorded.and_then(|entry| entry["sessionId"].as_str()) != Some(held))
        .then(|| format!("the index held {recorded:?} before the crash, not {held}"))
}

/// Why a plan item's session is or is not offered, typed (its `end_evidence`'s kind:
/// `offered`, `ended`, `cannot_resume`); empty when it says nothing.
pub fn end_kind(item: Option<&Value>) -> &str {
    item.and_then(|item| item["end_evidence"]["kind"].as_str())
        .unwrap_or_default()
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
