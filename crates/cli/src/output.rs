//! The `--json` documents: a stable, versioned API. Every document carries `"version"`; entries
//! are shown in the index file's own format.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::anyhow;
use camino::Utf8Path;
use index_core::{Entry, Millis, Recorded as CoreRecorded, SessionId, SurfaceId, Value};
use index_store::Durability;
use serde::Serialize;

use crate::error::Failure;

/// The version of these documents; bumped on any incompatible change.
pub const OUTPUT_VERSION: u32 = 1;

pub type EntryJson<'a> = index_store::format::EntryV1<'a>;

#[derive(Debug, Serialize)]
pub struct Recorded<'a> {
    version: u32,
    recorded: EntryJson<'a>,
    first_sight: bool,
    superseded: Option<&'a str>,
    displaced: Option<&'a str>,
}

impl<'a> Recorded<'a> {
    pub fn new(entry: &'a Entry, outcome: &'a CoreRecorded) -> Self {
        Recorded {
            version: OUTPUT_VERSION,
            recorded: entry.into(),
            first_sight: outcome.first_sight,
            superseded: outcome.superseded.as_ref().map(SessionId::as_str),
            displaced: outcome.displaced.as_ref().map(SurfaceId::as_str),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Lookup<'a> {
    version: u32,
    surface: &'a str,
    entry: Option<EntryJson<'a>>,
}

impl<'a> Lookup<'a> {
    pub fn new(surface: &'a str, entry: Option<&'a Entry>) -> Self {
        Lookup {
            version: OUTPUT_VERSION,
            surface,
            entry: entry.map(EntryJson::from),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ResumeCmd<'a> {
    version: u32,
    surface: &'a str,
    /// The session the command resumes (for `recover`, not the recorded one).
    session: Option<&'a str>,
    command: Option<&'a str>,
    /// The preflight's verdict, when the surface has an entry that is not stale.
    verdict: Option<&'static str>,
    /// The session the index holds for the surface.
    held_session: Option<&'a str>,
    /// Who holds the session already (another surface, a running agent): nothing to resume.
    held_elsewhere: Option<String>,
    /// The same, typed.
    held_by: Option<&'a resume_plan::reasons::HeldElsewhere>,
    /// How the command starts the agent again (kept flags, variables, flags left out), when
    /// its hook recorded it and there is a command.
    #[serde(skip_serializing_if = "Option::is_none")]
    launch: Option<&'a resume_plan::resume::Relaunch>,
}

impl<'a> ResumeCmd<'a> {
    pub fn new(
        surface: &'a str,
        item: Option<&'a resume_plan::PlanItem>,
        command: Option<&'a str>,
    ) -> Self {
        ResumeCmd {
            version: OUTPUT_VERSION,
            surface,
            session: command
                .and(item)
                .and_then(|item| item.session_id.as_deref()),
            command,
            verdict: item.map(|item| item.verdict.as_str()),
            held_session: item.map(|item| item.held_session.as_str()),
            held_elsewhere: item
                .and_then(|item| item.held_elsewhere.as_ref())
                .map(ToString::to_string),
            held_by: item.and_then(|item| item.held_elsewhere.as_ref()),
            launch: command.and(item).and_then(|item| item.launch.as_ref()),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Touched<'a> {
    version: u32,
    surface: &'a str,
    touched: bool,
}

impl<'a> Touched<'a> {
    pub fn new(surface: &'a str, touched: bool) -> Self {
        Touched {
            version: OUTPUT_VERSION,
            surface,
            touched,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Forgotten<'a> {
    version: u32,
    surface: &'a str,
    forgotten: Option<EntryJson<'a>>,
    /// An entry that could not be used, as it was in the file; only when one was forgotten.
    #[serde(skip_serializing_if = "Option::is_none")]
    forgotten_unusable: Option<&'a Value>,
}

impl<'a> Forgotten<'a> {
    pub fn new(surface: &'a str, forgotten: Option<&'a index_store::Forgotten>) -> Self {
        let (entry, unusable) = match forgotten {
            Some(index_store::Forgotten::Entry(entry)) => (Some(entry.as_ref()), None),
            Some(index_store::Forgotten::Unusable(raw)) => (None, Some(raw)),
            None => (None, None),
        };
        Forgotten {
            version: OUTPUT_VERSION,
            surface,
            forgotten: entry.map(EntryJson::from),
            forgotten_unusable: unusable,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Pruned<'a> {
    version: u32,
    pruned: Vec<EntryJson<'a>>,
    /// Surfaces of entries that could not be used, pruned by their readable timestamps.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pruned_unusable: &'a [String],
    /// Entries older than the max age kept because a running agent holds their session.
    kept: Vec<KeptEntry<'a>>,
}

/// An entry `prune` kept: its surface, its session, and the agent process holding it.
#[derive(Debug, Serialize)]
struct KeptEntry<'a> {
    surface: &'a str,
    session: &'a str,
    pid: u32,
}

impl<'a> Pruned<'a> {
    pub fn new(pruned: &'a index_store::Pruned, kept: &'a [(String, String, u32)]) -> Self {
        Pruned {
            version: OUTPUT_VERSION,
            pruned: pruned.entries.iter().map(EntryJson::from).collect(),
            pruned_unusable: &pruned.unusable,
            kept: kept
                .iter()
                .map(|(surface, session, pid)| KeptEntry {
                    surface,
                    session,
                    pid: *pid,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct List<'a> {
    version: u32,
    entries: Vec<EntryJson<'a>>,
}

impl<'a> List<'a> {
    pub fn new(entries: &[&'a Entry]) -> Self {
        List {
            version: OUTPUT_VERSION,
            entries: entries
                .iter()
                .map(|entry| EntryJson::from(*entry))
                .collect(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct PathInfo<'a> {
    version: u32,
    path: &'a str,
    exists: bool,
    durable: bool,
    volatile_reason: Option<&'a str>,
    allow_volatile: bool,
}

impl<'a> PathInfo<'a> {
    pub fn new(path: &'a Utf8Path, durability: &'a Durability, allow_volatile: bool) -> Self {
        let volatile_reason = match durability {
            Durability::Durable => None,
            Durability::Volatile(reason) => Some(reason.as_str()),
        };
        PathInfo {
            version: OUTPUT_VERSION,
            path: path.as_str(),
            exists: path.exists(),
            durable: volatile_reason.is_none(),
            volatile_reason,
            allow_volatile,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Installed<'a> {
    version: u32,
    settings: &'a str,
    /// The hook events added (`SessionStart`, `SessionEnd`); empty when already installed.
    added: &'a [&'static str],
    /// Hooks of ours from another binary path that the install replaced.
    replaced: &'a [Removed],
    command: &'a str,
    /// Whether the settings file was written (never with `--dry-run`).
    written: bool,
    /// With `--dry-run`: the merged settings that would be written.
    #[serde(skip_serializing_if = "Option::is_none")]
    merged: Option<&'a serde_json::value::RawValue>,
    /// With `--codex-title`: what it did to Codex's title items ([`CodexTitle`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    codex_title: Option<&'a serde_json::value::RawValue>,
}

impl<'a> Installed<'a> {
    pub fn new(
        settings: &'a str,
        added: &'a [&'static str],
        replaced: &'a [Removed],
        command: &'a str,
        written: bool,
        merged: Option<&'a serde_json::value::RawValue>,
        codex_title: Option<&'a serde_json::value::RawValue>,
    ) -> Self {
        Installed {
            version: OUTPUT_VERSION,
            settings,
            added,
            replaced,
            command,
            written,
            merged,
            codex_title,
        }
    }
}

/// `hook install codex --codex-title`'s edit of Codex's `config.toml`, inside the hooks'
/// document.
#[derive(Debug, Serialize)]
pub struct CodexTitle<'a> {
    config: &'a str,
    /// The title items it sets; `null` when they show the thread id already.
    items: Option<&'a [String]>,
    written: bool,
    /// With `--dry-run`: the file's text that would be written (absent when nothing would).
    #[serde(skip_serializing_if = "Option::is_none")]
    merged: Option<&'a str>,
}

impl<'a> CodexTitle<'a> {
    pub fn new(
        config: &'a str,
        items: Option<&'a [String]>,
        written: bool,
        merged: Option<&'a str>,
    ) -> Self {
        CodexTitle {
            config,
            items,
            written,
            merged,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Uninstalled<'a> {
    version: u32,
    settings: &'a str,
    /// The hooks of ours removed, each with its event and command; empty when there was none.
    removed: &'a [Removed],
    /// Whether the settings file was written (never with `--dry-run`).
    written: bool,
    /// Whether the write removed the file, which held nothing but ours.
    file_removed: bool,
    /// With `--dry-run`: the settings that would be written (`null` when there is no file, or
    /// it would be removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    merged: Option<&'a serde_json::value::RawValue>,
}

impl<'a> Uninstalled<'a> {
    pub fn new(
        settings: &'a str,
        removed: &'a [Removed],
        written: bool,
        file_removed: bool,
        merged: Option<&'a serde_json::value::RawValue>,
    ) -> Self {
        Uninstalled {
            version: OUTPUT_VERSION,
            settings,
            removed,
            written,
            file_removed,
            merged,
        }
    }
}

/// `hook install tmux`: the restore at tmux server start.
#[derive(Debug, Serialize)]
pub struct TmuxInstalled<'a> {
    version: u32,
    /// The tmux config file (a symlink at the path followed).
    settings: &'a str,
    /// The log the restore appends to.
    log: &'a str,
    /// Blocks of ours the install replaced (another binary path's, or one not at the end).
    replaced: usize,
    /// Whether the config was written (never with `--dry-run`; not when already installed).
    written: bool,
    /// With `--dry-run`: the config's text that would be written.
    #[serde(skip_serializing_if = "Option::is_none")]
    merged: Option<&'a str>,
}

impl<'a> TmuxInstalled<'a> {
    pub fn new(
        settings: &'a str,
        log: &'a str,
        replaced: usize,
        written: bool,
        merged: Option<&'a str>,
    ) -> Self {
        TmuxInstalled {
            version: OUTPUT_VERSION,
            settings,
            log,
            replaced,
            written,
            merged,
        }
    }
}

/// `hook uninstall tmux`.
#[derive(Debug, Serialize)]
pub struct TmuxUninstalled<'a> {
    version: u32,
    settings: &'a str,
    /// How many blocks of ours were taken out.
    removed: usize,
    written: bool,
    /// Whether the write removed the file, which held nothing but ours.
    file_removed: bool,
    /// With `--dry-run`: the config's text that would be written (`null` when there is no file).
    #[serde(skip_serializing_if = "Option::is_none")]
    merged: Option<Option<&'a str>>,
}

impl<'a> TmuxUninstalled<'a> {
    pub fn new(
        settings: &'a str,
        removed: usize,
        written: bool,
        file_removed: bool,
        merged: Option<Option<&'a str>>,
    ) -> Self {
        TmuxUninstalled {
            version: OUTPUT_VERSION,
            settings,
            removed,
            written,
            file_removed,
            merged,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Preflight<'a> {
    version: u32,
    surface: Option<&'a str>,
    #[serde(flatten)]
    outcome: &'a preflight::Outcome,
}

impl<'a> Preflight<'a> {
    pub fn new(surface: Option<&'a str>, outcome: &'a preflight::Outcome) -> Self {
        Preflight {
            version: OUTPUT_VERSION,
            surface,
            outcome,
        }
    }
}

/// The steps as a progress list, one line each, then the verdict.
pub fn preflight_text(outcome: &preflight::Outcome) -> String {
    let mut text = String::new();
    for step in &outcome.steps {
        let mark = if step.ok { "✓" } else { "✗" };
        text.push_str(&format!(
            "{mark} {}: {} ({:.2} ms)\n",
            step.label,
            index_core::text::escape(&step.detail),
            step.duration_ms
        ));
    }
    text.push_str(outcome.verdict.as_str());
    if let Some(session) = &outcome.session_id {
        text.push_str(&format!(" {}", index_core::text::escape(session)));
    }
    if let Some(evidence) = &outcome.recoverable_session_id {
        text.push_str(&format!(
            " (on disk, not resumed: {})",
            index_core::text::escape(evidence)
        ));
    }
    text.push_str(&format!(" in {:.2} ms", outcome.duration_ms));
    text
}

pub fn print_line(text: &str) -> Result<(), Failure> {
    print_bytes(format!("{text}\n").as_bytes())
}

/// Whether the reader of stdout has gone (a closed pipe): what is left to print is dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `bytes` to stdout. A closed pipe (`crash-resume man | head -1`) is not an error: the
/// reader had what it wanted, so the rest is dropped and the command ends as it would have,
/// with nothing on stderr (as ripgrep does); any other write error fails.
pub fn print_bytes(bytes: &[u8]) -> Result<(), Failure> {
    if STDOUT_CLOSED.load(Ordering::SeqCst) {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::SeqCst);
            Ok(())
        }
        written => written
            .map_err(|error| Failure::Failed(anyhow!(error).context("cannot write to stdout"))),
    }
}

/// A message for people (an error, a warning, a note) on stderr: the one place every message
/// goes through, so no control character a value carried (a path, a payload's field) reaches
/// the terminal ([`index_core::text::escape_message`]). Best effort: stderr may be closed.
pub fn print_message(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", index_core::text::escape_message(text));
}

/// Whether this run has printed its `--json` document (so a failure after it adds none).
static DOCUMENT_PRINTED: AtomicBool = AtomicBool::new(false);

/// A failure under `--json`, when the command printed no document of its own: the message
/// said on stderr, and the exit code of the exit-code table of docs/commands.md.
#[derive(Debug, Serialize)]
pub struct ErrorDocument<'a> {
    version: u32,
    error: ErrorInfo<'a>,
}

#[derive(Debug, Serialize)]
struct ErrorInfo<'a> {
    message: &'a str,
    exit_code: u8,
}

/// Under `--json`, one document on every exit: the error document for a failure that printed
/// none (a refused entry, an index that cannot be read, invalid input).
pub fn print_error_json(message: &str, exit_code: u8) {
    if DOCUMENT_PRINTED.load(Ordering::SeqCst) {
        return;
    }
    let _ = print_json(&ErrorDocument {
        version: OUTPUT_VERSION,
        error: ErrorInfo { message, exit_code },
    });
}

pub fn print_json(value: &impl Serialize) -> Result<(), Failure> {
    DOCUMENT_PRINTED.store(true, Ordering::SeqCst);
    let text =
        serde_json::to_string_pretty(value).map_err(|error| Failure::Failed(error.into()))?;
    print_line(&text)
}

/// An age for people, to the second: `3h 2m 5s`.
pub fn format_age(age: Millis) -> humantime::FormattedDuration {
    humantime::format_duration(Duration::from_secs(age / 1000))
}

/// An age said to be past `limit`: to the second when that still shows it past the limit,
/// else to the millisecond (`1s 500ms` past `1s`, `3ms` past `1ms`), so the message never
/// contradicts itself.
pub fn format_age_past(age: Millis, limit: Duration) -> humantime::FormattedDuration {
    let seconds = Duration::from_secs(age / 1000);
    humantime::format_duration(if seconds > limit {
        seconds
    } else {
        Duration::from_millis(age)
    })
}

/// A hook of ours removed from an agent's settings: its event and its command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    pub event: String,
    pub command: String,
}

/// `crash-resume doctor`: every check, what needs doing with its fix, and whether all is well.
#[derive(Debug, Serialize)]
pub struct Doctor<'a> {
    version: u32,
    all_well: bool,
    #[serde(flatten)]
    report: &'a setup_check::Report,
}

impl<'a> Doctor<'a> {
    pub fn new(report: &'a setup_check::Report) -> Self {
        Doctor {
            version: OUTPUT_VERSION,
            all_well: report.all_well(),
            report,
        }
    }
}
