//! `crash-resume hook claude|codex|gemini|copilot`: the agent's hook. Reads the hook's JSON on
//! stdin (for Copilot, whose payload names no event, with the event from the command line),
//! finds the surface in the environment, and records, touches or ends the entry (an end that
//! does not tell a quit from a killed pane only from a pane its multiplexer still names). A
//! record carries how the agent was started (`resume_plan::hook::read_launch`: its kept flags,
//! its model and provider variables and the wrapper it was started through, read from the
//! agent's own process among the hook's ancestors).
//!
//! A hook never fails and never delays the agent: whatever happens it exits 0, prints nothing
//! on stdout (Claude Code would add it to the conversation), and holds the agent up for at
//! most [`HOOK_BUDGET`] (2 s) whatever the settings say: it waits for its payload on stdin up
//! to 1 s, then for the lock up to `--lock-timeout` or what is left of the budget, whichever
//! is shorter. A record that does not get the lock in that time is handed, as an unnamed private
//! file on its stdin (never on the command line), to a detached copy of the hook that waits
//! longer. An invalid setting falls back to the default and is logged; it never drops a record.
//! What went wrong goes to `hook.log` next to the index (mode 0600, in a dir it creates 0700).

use std::io::Write;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow};
use camino::{Utf8Path, Utf8PathBuf};
use index_core::Record;
use index_core::capture::{HookEvent, HookPayload, parse_hook_payload};
use index_store::StoreError;

use agent_paths::Dialect;

use crate::args::Agent;
use crate::context::{self, Context, RETRY_VARIABLE};
use crate::error::Failure;

/// The longest a hook holds its agent up, whatever the settings say.
pub const HOOK_BUDGET: Duration = Duration::from_secs(2);
/// How long a hook waits for its payload on stdin (Claude Code writes it at once, and may never
/// close stdin).
const STDIN_DEADLINE: Duration = Duration::from_secs(1);
/// Kept back from the budget for the write itself and the hand-off to a retry.
const WRITE_RESERVE: Duration = Duration::from_millis(300);
/// How long a background retry waits for its payload (its parent hands it over whole).
const RETRY_STDIN_DEADLINE: Duration = Duration::from_secs(10);
/// Past this size `hook.log` is rotated to `hook.log.1` (replacing the older one), so the two
/// together stay within about twice this.
const MAX_LOG_BYTES: u64 = 256 * 1024;

/// What a hook did when it did not fail, said in `hook.log` (its `Display`) at its
/// [`HookOutcome::level`]. What needs telling is logged always (a SessionEnd that records
/// nothing, a record handed to a retry); what went as it should only when it was slow.
#[derive(Debug)]
enum HookOutcome {
    /// The event was applied to the index, in the time each phase took.
    Applied {
        done: resume_plan::hook::Done,
        surface: String,
        session: String,
        phases: Phases,
    },
    /// A SessionEnd run by Codex's daemon, which sends one whether the user quit or the pane
    /// was killed: not marked ended.
    EndedInDaemon { session: String, daemon: u32 },
    /// A SessionEnd where no surface can be named any more (normal after a crash: the
    /// multiplexer died, every agent gets its SessionEnd with no pane left): nothing to mark.
    EndedWithoutSurface { session: String, why: String },
    /// A Codex hook run by its daemon whose session no pane's title shows: nothing recorded.
    NoPaneUnderDaemon { session: String, daemon: u32 },
    /// The lock was busy past the hook's wait: the record was handed to a background retry.
    HandedToRetry {
        busy: StoreError,
        surface: String,
        session: String,
        pid: u32,
        wait: Duration,
    },
}

/// How long each phase of an applied hook took, from its start.
#[derive(Debug)]
struct Phases {
    read: Duration,
    named: Duration,
    locked: Duration,
    done: Duration,
}

/// The level a [`HookOutcome`] has in `hook.log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// A condition that is part of normal use.
    Info,
    /// One worth a look.
    Warning,
}

impl HookOutcome {
    fn level(&self) -> Level {
        match self {
            HookOutcome::HandedToRetry { .. } => Level::Warning,
            _ => Level::Info,
        }
    }

    /// Whether it is logged however fast the hook was.
    fn needs_telling(&self) -> bool {
        !matches!(
            self,
            HookOutcome::Applied { .. } | HookOutcome::NoPaneUnderDaemon { .. }
        )
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Level::Info => "info",
            Level::Warning => "warning",
        })
    }
}

impl std::fmt::Display for HookOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookOutcome::Applied {
                done,
                surface,
                session,
                phases,
            } => write!(
                f,
                "{done} {surface} → {session} (payload {}, surface {}, lock and read {}, change and write {})",
                millis_text(phases.read),
                millis_text(phases.named.saturating_sub(phases.read)),
                millis_text(phases.locked.saturating_sub(phases.named)),
                millis_text(phases.done.saturating_sub(phases.locked)),
            ),
            HookOutcome::EndedInDaemon { session, daemon } => write!(
                f,
                "session {session} ended in Codex's daemon (pid {daemon}), which sends SessionEnd \
                 whether the user quit or the pane was killed; not marked ended, it stays resumable"
            ),
            HookOutcome::EndedWithoutSurface { session, why } => write!(
                f,
                "session {session} ended where no surface can be named any more ({why}); nothing \
                 to mark, it stays resumable"
            ),
            HookOutcome::NoPaneUnderDaemon { session, daemon } => write!(
                f,
                "session {session} not recorded: Codex's daemon (pid {daemon}) runs the hook and \
                 no pane's title shows the session"
            ),
            HookOutcome::HandedToRetry {
                busy,
                surface,
                session,
                pid,
                wait,
            } => write!(
                f,
                "{busy}; {surface} → {session} handed to a background retry (pid {pid}) that waits up to {wait:?}"
            ),
        }
    }
}

/// Runs the hook; every failure is logged, none is returned.
pub fn run(cx: &Context, agent: Agent, payload_arg: Option<&str>) {
    run_hook(cx, agent, payload_arg, None);
}

/// Runs the hook of an agent whose payload names no event (Copilot's): `event` is the one its
/// command line names.
pub fn run_for_event(cx: &Context, agent: Agent, event: Option<&str>) {
    run_hook(cx, agent, None, event);
}

fn run_hook(cx: &Context, agent: Agent, payload_arg: Option<&str>, event: Option<&str>) {
    let started = Instant::now();
    let result = capture(cx, agent, payload_arg, event, started);
    let (log_line, needs_telling) = match &result {
        Ok(outcome) => (
            format!("{}: {outcome}", outcome.level()),
            outcome.needs_telling(),
        ),
        Err(error) => (format!("error: {}", crate::error::error_text(error)), true),
    };
    let elapsed = started.elapsed();
    // What went as it should is not logged unless slow: the log is for what needs telling.
    if needs_telling || elapsed > Duration::from_millis(100) {
        log(
            cx,
            &format!(
                "hook {} ({}): {log_line}",
                agent.name(),
                millis_text(elapsed)
            ),
        );
    }
}

fn capture(
    cx: &Context,
    agent: Agent,
    payload_arg: Option<&str>,
    event: Option<&str>,
    started: Instant,
) -> anyhow::Result<HookOutcome> {
    let is_retry = cx.is_hook_retry;
    let value: serde_json::Value = match payload_arg {
        Some(text) => serde_json::Deserializer::from_str(text)
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("no hook payload given"))?
            .context("the hook payload is not valid JSON")?,
        None if is_retry => read_stdin(RETRY_STDIN_DEADLINE)?,
        None => read_stdin(STDIN_DEADLINE)?,
    };
    let dialect = agent.facts().dialect;
    // In the common words from here on, so a background retry reads it as it is.
    let value = match dialect {
        Dialect::Copilot => crate::copilot::in_common_words(value, event),
        _ => value,
    };
    let payload = parse_hook_payload(&value)?;
    // The programs the hook runs (tmux, `ps`) get what is left of the budget, less the reserve.
    let programs_deadline = started + HOOK_BUDGET.saturating_sub(WRITE_RESERVE);
    let daemon = match dialect {
        Dialect::Codex => crate::codex::managed_daemon_ancestor(programs_deadline),
        _ => None,
    };
    // Codex's daemon sends SessionEnd about a minute after a thread loses its last TUI,
    // whether the user quit or the pane was killed: it says nothing of a clean end.
    if let (Some(daemon), HookEvent::SessionEnd { .. }) = (daemon, &payload.event) {
        return Ok(HookOutcome::EndedInDaemon {
            session: payload.session,
            daemon,
        });
    }
    if dialect == Dialect::Gemini
        && std::env::var_os("TMUX_PANE").is_none()
        && let Some(gemini) =
            crate::gemini::stripped_by(|name| std::env::var(name).ok(), programs_deadline)
    {
        log(
            cx,
            &format!(
                "hook gemini: warning: {}",
                crate::gemini::stripped_message(gemini)
            ),
        );
    }
    // How the agent was started, from its own process (a hook under Codex's daemon has no pane's
    // agent among its ancestors); a retry's is the one its parent read, handed over with the
    // payload.
    let launch = match (is_retry, daemon) {
        (true, _) => handed_launch(&value),
        (false, Some(_)) => None,
        (false, None) => resume_plan::hook::read_launch(
            agent.agent(),
            proc_table::table(),
            std::process::id(),
            programs_deadline,
        ),
    };
    let runtime_recorded = launch
        .as_ref()
        .is_some_and(|launch| launch.env.contains_key(preflight::qwen::RUNTIME_VAR));
    if dialect == Dialect::Qwen
        && !runtime_recorded
        && let Some(warning) = crate::qwen::unrecorded_runtime_dir(cx, payload.cwd.as_deref())
    {
        log(cx, &format!("hook qwen: warning: {warning}"));
    }
    let read = started.elapsed();
    let found = match daemon {
        Some(daemon) => {
            match crate::codex::pane_by_title(&payload.session, daemon, programs_deadline) {
                Ok(named) => Ok(named),
                Err(unfound) => {
                    return not_found_under_daemon(cx, daemon, &payload.session, unfound);
                }
            }
        }
        None => crate::surface::name(&payload.session, programs_deadline),
    };
    let named = match found {
        Ok(named) => named,
        // A SessionEnd records nothing new: its session's surface was named at its start, and
        // an error logged then if it could not be. One that cannot name its pane is normal after
        // a crash (the multiplexer died, every agent gets its SessionEnd with no pane left) and
        // only means no clean-exit mark: the session stays resumable.
        Err(error) if matches!(payload.event, HookEvent::SessionEnd { .. }) => {
            return Ok(HookOutcome::EndedWithoutSurface {
                session: payload.session,
                why: crate::error::error_text(&error),
            });
        }
        Err(error) => return Err(error),
    };
    // An agent that ends a session alike on a quit and on a killed pane ends it only from a
    // pane that still exists. A restore starts every agent with CRASH_RESUME_SURFACE naming its
    // surface: its multiplexer is asked, as without the variable, so a second crash does not
    // mark the restored session ended. A kitty window is gone with its kitty.
    if matches!(payload.event, HookEvent::SessionEnd { .. })
        && agent.facts().clean_end == agent_paths::CleanEnd::FromOpenPane
        && let Some(why) = crate::surface::explicit_pane_gone(&payload.session, programs_deadline)
            .map(|error| crate::error::error_text(&error))
            .or_else(|| crate::surface::instance_gone(&named.surface, programs_deadline))
    {
        return Ok(HookOutcome::EndedWithoutSurface {
            session: payload.session,
            why,
        });
    }
    if let Some(warning) = &named.warning {
        log(cx, &format!("hook {}: warning: {warning}", agent.name()));
    }
    let surface = named.surface;
    let mut record = build_record(cx, agent, &surface, &payload)?;
    record.window_layout = named.window_layout;
    record.boot_id = context::boot_id();
    record.launch = launch;
    let setting = lock_timeout_setting(cx);
    let lock_timeout = match is_retry {
        true => setting.map_or(RETRY_LOCK_TIMEOUT, |wait| wait.max(RETRY_LOCK_TIMEOUT)),
        false => setting
            .unwrap_or(HOOK_BUDGET)
            .min(HOOK_BUDGET.saturating_sub(started.elapsed() + WRITE_RESERVE)),
    };
    let named = started.elapsed();
    let store = context::open_store_with(cx, lock_timeout).map_err(Failure::into_error)?;
    let locked = std::cell::Cell::new(None);
    let now = context::now();
    let session = payload.session.clone();
    let legacy = crate::surface::legacy_alias(&surface);
    let scoped_surfaces: Vec<&str> = std::iter::once(surface.as_str())
        .chain(legacy.as_deref())
        .collect();
    let scope = index_store::Scope {
        surfaces: &scoped_surfaces,
        sessions: &[session.as_str()],
    };
    let updated = match store.update_entries(scope, |index| {
        locked.set(Some(started.elapsed()));
        // The pane's entry from before surfaces named their server is the same pane's: it moves
        // to the new form with its session and chain (a new session then supersedes it there),
        // and is no second claim on the pane.
        if let Some(legacy) = &legacy {
            index.rename(legacy, record.surface.clone());
        }
        let done = resume_plan::hook::apply_event(
            index,
            agent.name(),
            &payload.event,
            record.clone(),
            now,
        );
        if let (resume_plan::hook::Done::Recorded, Some(legacy)) = (done, &legacy) {
            index.forget(legacy);
        }
        done
    }) {
        // Many agents starting at once can keep the lock busy past the hook's short wait: the
        // record is handed to a detached copy of this hook that waits longer, so it is not lost
        // and the agent is not held up.
        Err(error @ (StoreError::LockTimeout { .. } | StoreError::LockDirInTheWay { .. }))
            if !is_retry =>
        {
            let retry_wait =
                setting.map_or(RETRY_LOCK_TIMEOUT, |wait| wait.max(RETRY_LOCK_TIMEOUT));
            let handed = with_launch(&value, record.launch.as_ref());
            let pid = spawn_retry(cx, agent, &surface, &handed, retry_wait)?;
            return Ok(HookOutcome::HandedToRetry {
                busy: error,
                surface,
                session,
                pid,
                wait: retry_wait,
            });
        }
        other => other.map_err(crate::error::store_error)?,
    };
    for warning in &updated.warnings {
        log(cx, &format!("warning: {warning}"));
    }
    let done = started.elapsed();
    Ok(HookOutcome::Applied {
        done: updated.value,
        surface,
        session,
        phases: Phases {
            read,
            named,
            locked: locked.get().unwrap_or(done),
            done,
        },
    })
}

/// A duration as milliseconds with one decimal: `7.2 ms`.
fn millis_text(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// A Codex hook under the daemon whose pane's title does not show its session: nothing is
/// recorded. When no title shows it (Codex is not set to write it), the log says why once per
/// daemon (and nothing else is logged); any other reason is the hook's error.
fn not_found_under_daemon(
    cx: &Context,
    daemon: u32,
    session: &str,
    unfound: crate::codex::Unfound,
) -> anyhow::Result<HookOutcome> {
    let why = match unfound {
        crate::codex::Unfound::Other(error) => return Err(error),
        crate::codex::Unfound::NoTitle(why) => why,
    };
    let marker = context::index_path(cx)
        .ok()
        .and_then(|index| Some(index.parent()?.join("codex-daemon.reported")));
    if marker.is_none_or(|marker| crate::codex::first_report_of(&marker, daemon)) {
        log(cx, &format!("hook codex: warning: {why}"));
    }
    Ok(HookOutcome::NoPaneUnderDaemon {
        session: session.to_string(),
        daemon,
    })
}

/// Reads the payload from stdin (the first JSON value, in one pass, nothing after it waited for:
/// Claude Code may never close stdin), giving up at the deadline.
fn read_stdin(deadline: Duration) -> anyhow::Result<serde_json::Value> {
    let mut stdin = DeadlineStdin {
        started: Instant::now(),
        deadline,
        stdin: std::io::stdin(),
        read: 0,
    };
    match index_core::capture::read_hook_payload(&mut stdin) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(anyhow!("no hook payload on stdin")),
        Err(error) if error.io_error_kind() == Some(std::io::ErrorKind::TimedOut) => Err(anyhow!(
            "no complete hook payload on stdin within {deadline:?}"
        )),
        Err(error) if error.io_error_kind() == Some(std::io::ErrorKind::FileTooLarge) => {
            Err(anyhow!(
                "the hook payload on stdin is larger than {MAX_PAYLOAD_BYTES} bytes, which no agent sends; it was not read further"
            ))
        }
        Err(error) if error.is_io() => Err(anyhow!(error).context("cannot read stdin")),
        Err(error) => Err(anyhow!(error).context("the hook payload is not valid JSON")),
    }
}

/// The largest hook payload read: an agent's payload is a few kilobytes (a Codex notification
/// with its last message, more); past this the read fails rather than hold the agent's
/// start-up on parsing whatever arrives.
const MAX_PAYLOAD_BYTES: usize = 16 << 20;

/// Stdin read on this thread, each read waiting in `poll` for the time left before the
/// deadline (no helper thread to start and hand the bytes over from: each hand-over waits for a
/// CPU on a busy machine); past it, a read fails with [`std::io::ErrorKind::TimedOut`], and
/// past [`MAX_PAYLOAD_BYTES`] with [`std::io::ErrorKind::FileTooLarge`].
struct DeadlineStdin {
    started: Instant,
    deadline: Duration,
    stdin: std::io::Stdin,
    /// The bytes read so far.
    read: usize,
}

impl std::io::Read for DeadlineStdin {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        use rustix::io::Errno;
        let timed_out = || std::io::Error::from(std::io::ErrorKind::TimedOut);
        if self.read > MAX_PAYLOAD_BYTES {
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        // At most one byte past the bound, which is how a payload over it is seen.
        let room = MAX_PAYLOAD_BYTES + 1 - self.read;
        let buffer = match buffer.len() > room {
            true => &mut buffer[..room],
            false => buffer,
        };
        loop {
            let left = self
                .deadline
                .checked_sub(self.started.elapsed())
                .ok_or_else(timed_out)?;
            let mut waiting = [PollFd::new(&self.stdin, PollFlags::IN)];
            let timeout = Timespec::try_from(left).map_err(std::io::Error::other)?;
            match poll(&mut waiting, Some(&timeout)) {
                Ok(0) => return Err(timed_out()),
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(error) => return Err(error.into()),
            }
            match rustix::io::read(&self.stdin, &mut *buffer) {
                Ok(read) => {
                    self.read += read;
                    return Ok(read);
                }
                Err(Errno::INTR | Errno::AGAIN) => continue,
                Err(error) => return Err(error.into()),
            }
        }
    }
}

/// The member of the payload handed to a background retry that holds the launch its parent
/// read (the retry's own ancestors are no longer the agent's).
const HANDED_LAUNCH: &str = "crash_resume_launch";

/// The payload for a background retry: `value`, with the launch read (`launch` in the index's
/// form) under [`HANDED_LAUNCH`].
fn with_launch(value: &serde_json::Value, launch: Option<&index_core::Launch>) -> String {
    let mut value = value.clone();
    if let (Some(object), Some(launch)) = (value.as_object_mut(), launch) {
        let launch = index_store::format::LaunchV1::from(launch);
        if let Ok(launch) = serde_json::to_value(launch) {
            object.insert(HANDED_LAUNCH.to_string(), launch);
        }
    }
    value.to_string()
}

/// The launch a retry's parent read ([`with_launch`]), read again with the agent's allow-list
/// when the plan uses it; `None` when none was handed over.
fn handed_launch(value: &serde_json::Value) -> Option<index_core::Launch> {
    let launch = value.get(HANDED_LAUNCH)?;
    serde::Deserialize::deserialize(launch)
        .ok()
        .map(|launch: index_store::format::LaunchV1| launch.into())
}

/// How long a background retry waits for the lock, unless `--lock-timeout` says longer.
const RETRY_LOCK_TIMEOUT: Duration = Duration::from_secs(60);

/// Starts this hook again, detached (its own process group, no output), with the surface
/// already named and a long lock wait, and the payload as its stdin: a private file (0600,
/// unlinked before the retry starts, so it has no name anyone could open and nothing is left
/// behind), written whole before the retry is started. A payload of any size goes through,
/// none of it shows on the command line, and a hook killed at any moment hands over all of it
/// or nothing. Returns its pid.
fn spawn_retry(
    cx: &Context,
    agent: Agent,
    surface: &str,
    payload: &str,
    lock_timeout: Duration,
) -> anyhow::Result<u32> {
    let mut command = Process::new(std::env::current_exe().context("cannot find this program")?);
    if let Some(path) = &cx.path {
        command.args(["--path", path]);
    }
    if cx.allow_volatile {
        command.arg("--allow-volatile");
    }
    command
        .args(["--lock-timeout", &lock_timeout.as_millis().to_string()])
        .args(["hook", agent.name()])
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
fn lock_timeout_setting(cx: &Context) -> Option<Duration> {
    let text = cx.lock_timeout.as_deref()?;
    match context::parse_duration(text, "lock timeout") {
        Ok(wait) => Some(wait),
        Err(_) => {
            log(
                cx,
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

fn build_record(
    cx: &Context,
    agent: Agent,
    surface: &str,
    payload: &HookPayload,
) -> anyhow::Result<Record> {
    let cwd = match &payload.cwd {
        Some(cwd) => Utf8PathBuf::from(cwd),
        None => Utf8PathBuf::from_path_buf(std::env::current_dir().context("no working dir")?)
            .map_err(|_| anyhow!("the working dir is not valid UTF-8"))?,
    };
    // The agent took a relative config dir (`COPILOT_HOME=state`) from its working dir: the
    // same dir is recorded absolute, or it would be looked for from wherever a restore runs.
    let config_dir = cx.config_dir(agent)?;
    let config_dir = match Utf8Path::new(&config_dir).is_relative() && !config_dir.starts_with('~')
    {
        true => cwd.join(&config_dir).into_string(),
        false => config_dir,
    };
    // Qwen Code resolves its `QWEN_HOME` itself (`~`, `.` and `..`): the dir it uses is recorded.
    let config_dir = match agent.agent() {
        agent_paths::Agent::Qwen => {
            preflight::qwen::resolve(&config_dir, Some(&cwd), cx.home().as_deref()).into_string()
        }
        _ => config_dir,
    };
    Ok(resume_plan::hook::record(
        agent.name(),
        surface,
        payload,
        &cwd,
        config_dir,
        cx.role.as_deref(),
    )?)
}

/// The hook's log: `hook.log` beside the index (stderr when that cannot be written).
pub fn log_path(cx: &Context) -> Option<Utf8PathBuf> {
    resume_plan::hook_log_path(&context::index_path(cx).ok()?)
}

fn log(cx: &Context, message: &str) {
    let line = format!(
        "{} pid {} {}\n",
        humantime::format_rfc3339_millis(std::time::SystemTime::now()),
        std::process::id(),
        index_core::text::escape_message(message)
    );
    let written = log_path(cx).is_some_and(|path| append(&path, &line).is_ok());
    if !written {
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// Appends to the log: created 0600 (its dir 0700), never through a symlink, never waiting on
/// a FIFO.
fn append(path: &Utf8Path, line: &str) -> std::io::Result<()> {
    let open = || safe_open::open_private_append(path.as_std_path());
    let mut file = open()?;
    if file.metadata()?.len() > MAX_LOG_BYTES {
        rotate(path, &file);
        file = open()?;
    }
    file.write_all(line.as_bytes())
}

/// Moves a full log to `hook.log.1`, replacing the older one, unless another hook has rotated
/// it since `file` was opened (then `path` is a new, small file and stays).
fn rotate(path: &Utf8Path, file: &std::fs::File) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let same =
            |a: &std::fs::Metadata, b: &std::fs::Metadata| (a.dev(), a.ino()) == (b.dev(), b.ino());
        let still_ours = match (std::fs::metadata(path), file.metadata()) {
            (Ok(named), Ok(opened)) => same(&named, &opened),
            _ => false,
        };
        if !still_ours {
            return;
        }
    }
    let mut older = path.as_os_str().to_owned();
    older.push(".1");
    // Not the index: hook.log is the hook's own file.
    #[allow(clippy::disallowed_methods)]
    let _ = std::fs::rename(path, older);
}
