//! `crash-resume hook claude|codex`: the agent's hook. Reads the hook's JSON on stdin, finds the
//! surface in the environment, and records, touches or ends the entry.
//!
//! A hook never fails and never delays the agent: whatever happens it exits 0, prints nothing
//! on stdout (Claude Code would add it to the conversation), and holds the agent up for at
//! most [`HOOK_BUDGET`] (2 s) whatever the settings say: it waits for its payload on stdin up
//! to 1 s, then for the lock up to `--lock-timeout` or what is left of the budget, whichever
//! is shorter. A record that does not get the lock in that time is handed, as an unnamed private
//! file on its stdin (never on the command line), to a detached copy of the hook that waits
//! longer. An
//! invalid setting falls back to the default and is logged; it never drops a record. What went
//! wrong goes to `hook.log` next to the index (mode 0600, in a dir it creates 0700).

use std::io::{Read, Write};
use std::process::Command as Process;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use camino::{Utf8Path, Utf8PathBuf};
use index_core::capture::{HookEvent, HookPayload, parse_hook_payload};
use index_core::{Provider, Record, Repo, Role, SessionId, SurfaceId};
use index_store::{Store, StoreError, StoreOptions};

use crate::args::Global;

/// The longest a hook holds its agent up, whatever the settings say.
pub const HOOK_BUDGET: Duration = Duration::from_secs(2);
/// How long a hook waits for its payload on stdin (Claude Code writes it at once, and may never
/// close stdin).
const STDIN_DEADLINE: Duration = Duration::from_secs(1);
/// Kept back from the budget for the write itself and the hand-off to a retry.
const WRITE_RESERVE: Duration = Duration::from_millis(300);
/// How long a background retry waits for its payload (its parent writes it at once).
const RETRY_STDIN_DEADLINE: Duration = Duration::from_secs(10);
/// The log is cut back to nothing past this size.
const MAX_LOG_BYTES: u64 = 1 << 20;

/// The agents whose hooks this binary understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
}

impl Agent {
    pub fn provider(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }

    /// The variable that names the agent's config dir, and its default under the home dir.
    pub fn config_dir_variable(self) -> (&'static str, &'static str) {
        match self {
            Agent::Claude => ("CLAUDE_CONFIG_DIR", ".claude"),
            Agent::Codex => ("CODEX_HOME", ".codex"),
        }
    }
}

/// Runs the hook; every failure is logged, none is returned.
pub fn run(global: &Global, agent: Agent, payload_arg: Option<&str>) {
    let started = Instant::now();
    let result = capture(global, agent, payload_arg, started);
    let log_line = match &result {
        Ok(done) => done.clone(),
        Err(error) => format!("error: {error:#}"),
    };
    let elapsed = started.elapsed();
    // Successes are not logged unless slow: the log is for problems.
    if result.is_err() || elapsed > Duration::from_millis(100) {
        log(
            global,
            &format!(
                "hook {} ({:.1} ms): {log_line}",
                agent.provider(),
                elapsed.as_secs_f64() * 1000.0
            ),
        );
    }
}

fn capture(
    global: &Global,
    agent: Agent,
    payload_arg: Option<&str>,
    started: Instant,
) -> anyhow::Result<String> {
    let is_retry = std::env::var_os(RETRY_VARIABLE).is_some();
    let text = match payload_arg {
        Some(text) => text.to_string(),
        None if is_retry => read_stdin(RETRY_STDIN_DEADLINE)?,
        None => read_stdin(STDIN_DEADLINE)?,
    };
    let value: serde_json::Value = serde_json::Deserializer::from_str(&text)
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("no hook payload on stdin"))?
        .context("the hook payload is not valid JSON")?;
    let payload = parse_hook_payload(&value).map_err(|reason| anyhow!(reason))?;
    let surface = crate::surface::name(&payload.session)?;
    let record = build_record(agent, &surface, &payload)?;
    let setting = lock_timeout_setting(global);
    let lock_timeout = match is_retry {
        true => setting.map_or(RETRY_LOCK_TIMEOUT, |wait| wait.max(RETRY_LOCK_TIMEOUT)),
        false => setting
            .unwrap_or(HOOK_BUDGET)
            .min(HOOK_BUDGET.saturating_sub(started.elapsed() + WRITE_RESERVE)),
    };
    let store = open_store(global, lock_timeout)?;
    let now = crate::commands::now();
    let session = payload.session.clone();
    let event = payload.event;
    let updated = match store.update(|index| match &event {
        HookEvent::SessionEnd { clean: true, .. } => {
            if index.end(&surface, &session, now) {
                "ended cleanly"
            } else {
                "end of an unknown session"
            }
        }
        HookEvent::SessionEnd { clean: false, .. } => {
            // Not a clean exit (a /clear, a signal): the session stays resumable.
            if index.touch(&surface, now) {
                "touched"
            } else {
                "nothing to touch"
            }
        }
        HookEvent::Activity { .. }
            if index
                .lookup(&surface)
                .is_some_and(|entry| entry.session.as_str() == session) =>
        {
            index.touch(&surface, now);
            "touched"
        }
        HookEvent::SessionStart { .. } | HookEvent::Activity { .. } => {
            index.record(record, now);
            "recorded"
        }
    }) {
        // Many agents starting at once can keep the lock busy past the hook's short wait: the
        // record is handed to a detached copy of this hook that waits longer, so it is not lost
        // and the agent is not held up.
        Err(error @ StoreError::LockTimeout { .. }) if !is_retry => {
            let retry_wait =
                setting.map_or(RETRY_LOCK_TIMEOUT, |wait| wait.max(RETRY_LOCK_TIMEOUT));
            let pid = spawn_retry(global, agent, &surface, &text, retry_wait)?;
            return Ok(format!(
                "{error}; {surface} → {session} handed to a background retry (pid {pid}) that waits up to {retry_wait:?}"
            ));
        }
        other => other?,
    };
    for warning in &updated.warnings {
        log(global, &format!("warning: {warning}"));
    }
    Ok(format!("{} {surface} → {session}", updated.value))
}

/// Reads stdin up to EOF or the first complete JSON value, whichever comes first, giving up at
/// the deadline.
fn read_stdin(deadline: Duration) -> anyhow::Result<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match stdin.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    bytes.extend_from_slice(&chunk[..read]);
                    let mut values = serde_json::Deserializer::from_slice(&bytes)
                        .into_iter::<serde_json::Value>();
                    if matches!(values.next(), Some(Ok(_))) {
                        break;
                    }
                }
            }
        }
        let _ = sender.send(bytes);
    });
    let bytes = receiver
        .recv_timeout(deadline)
        .map_err(|_| anyhow!("no complete hook payload on stdin within {deadline:?}"))?;
    String::from_utf8(bytes).context("the hook payload is not UTF-8")
}

/// Set in the environment of a hook's background retry, which must not hand off again.
const RETRY_VARIABLE: &str = "CRASH_RESUME_HOOK_RETRY";
/// How long a background retry waits for the lock, unless `--lock-timeout` says longer.
const RETRY_LOCK_TIMEOUT: Duration = Duration::from_secs(60);

/// Starts this hook again, detached (its own process group, no output), with the surface
/// already named and a long lock wait, and the payload as its stdin: a private file (0600,
/// unlinked before the retry starts, so it has no name anyone could open and nothing is left
/// behind), written whole before the retry is started. A payload of any size goes through,
/// none of it shows on the command line, and a hook killed at any moment hands over all of it
/// or nothing. Returns its pid.
fn spawn_retry(
    global: &Global,
    agent: Agent,
    surface: &str,
    payload: &str,
    lock_timeout: Duration,
) -> anyhow::Result<u32> {
    let mut command = Process::new(std::env::current_exe().context("cannot find this program")?);
    if let Some(path) = &global.path {
        command.args(["--path", path]);
    }
    if global.allow_volatile {
        command.arg("--allow-volatile");
    }
    command
        .args(["--lock-timeout", &lock_timeout.as_millis().to_string()])
        .args(["hook", agent.provider()])
        .env("CRASH_RESUME_SURFACE", surface)
        .env(RETRY_VARIABLE, "1")
        .env_remove("CRASH_RESUME_LOCK_TIMEOUT")
        .stdin(payload_file(payload).context("cannot hand the payload to the background retry")?)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command
        .spawn()
        .context("cannot start the background retry")?;
    Ok(child.id())
}

/// The payload in an unnamed private temp file, read from its start.
fn payload_file(payload: &str) -> std::io::Result<std::fs::File> {
    let mut file = tempfile::tempfile()?;
    file.write_all(payload.as_bytes())?;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))?;
    Ok(file)
}

/// The lock wait `--lock-timeout` or `CRASH_RESUME_LOCK_TIMEOUT` asks for; an invalid value is
/// logged and taken as unset, so it never costs a record.
fn lock_timeout_setting(global: &Global) -> Option<Duration> {
    let text = global.lock_timeout.as_deref()?;
    match crate::commands::parse_duration(text, "lock timeout") {
        Ok(wait) => Some(wait),
        Err(_) => {
            log(
                global,
                &format!(
                    "warning: invalid lock timeout {text:?} (from --lock-timeout or \
                     CRASH_RESUME_LOCK_TIMEOUT): give milliseconds or a duration such as 2s; \
                     using the hook's default, {HOOK_BUDGET:?}"
                ),
            );
            None
        }
    }
}

fn build_record(agent: Agent, surface: &str, payload: &HookPayload) -> anyhow::Result<Record> {
    let cwd = match &payload.cwd {
        Some(cwd) => Utf8PathBuf::from(cwd),
        None => Utf8PathBuf::from_path_buf(std::env::current_dir().context("no working dir")?)
            .map_err(|_| anyhow!("the working dir is not valid UTF-8"))?,
    };
    let config_dir = config_dir(agent)?;
    index_core::check_dirs(Some(cwd.as_str()), Some(&config_dir))?;
    let mut record = Record::new(
        SurfaceId::new(surface)?,
        SessionId::new(payload.session.as_str())?,
        Repo::new(repo_name(&cwd))?,
    );
    record.role = std::env::var("CRASH_RESUME_ROLE")
        .ok()
        .filter(|role| !role.trim().is_empty())
        .map(Role::new)
        .transpose()?;
    record.provider = Some(Provider::new(agent.provider())?);
    record.config_dir = Some(config_dir);
    record.cwd = Some(cwd.into_string());
    Ok(record)
}

/// The agent's config dir as it runs: its variable, else the default under the home dir.
pub fn config_dir(agent: Agent) -> anyhow::Result<String> {
    let (variable, default) = agent.config_dir_variable();
    match std::env::var(variable) {
        Ok(dir) if !dir.trim().is_empty() => Ok(dir),
        // Not the default dir: the agent runs with the one the variable names.
        Err(std::env::VarError::NotUnicode(dir)) => {
            bail!("{variable} {dir:?} is not valid UTF-8; crash-resume needs a UTF-8 path")
        }
        _ => {
            let home =
                crate::commands::home().ok_or_else(|| anyhow!("cannot find the home directory"))?;
            Ok(home.join(default).into_string())
        }
    }
}

/// The name of the git top-level holding `cwd` (a `.git` dir or file, so worktrees count),
/// else the name of `cwd` itself.
pub fn repo_name(cwd: &Utf8Path) -> String {
    let top = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd);
    top.file_name()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or("root")
        .to_string()
}

fn open_store(global: &Global, lock_timeout: Duration) -> anyhow::Result<Store> {
    let path = crate::commands::index_path(global).map_err(crate::Failure::into_error)?;
    let options = StoreOptions {
        lock_timeout,
        allow_volatile: global.allow_volatile,
    };
    Ok(Store::open(&path, options)?)
}

/// The hook's log: `hook.log` beside the index (stderr when that cannot be written).
pub fn log_path(global: &Global) -> Option<Utf8PathBuf> {
    let index = crate::commands::index_path(global).ok()?;
    Some(index.parent()?.join("hook.log"))
}

fn log(global: &Global, message: &str) {
    let line = format!(
        "{} pid {} {message}\n",
        humantime::format_rfc3339_millis(std::time::SystemTime::now()),
        std::process::id()
    );
    let written = log_path(global).is_some_and(|path| append(&path, &line).is_ok());
    if !written {
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// Appends to the log: created 0600 (its dir 0700), never through a symlink, never waiting on
/// a FIFO.
fn append(path: &Utf8Path, line: &str) -> std::io::Result<()> {
    let mut file = safe_open::open_private_append(path.as_std_path())?;
    let too_big = file.metadata()?.len() > MAX_LOG_BYTES;
    if too_big {
        file.set_len(0)?;
    }
    file.write_all(line.as_bytes())
}
