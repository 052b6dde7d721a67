//! `crash-resume hook install claude|codex|gemini|copilot|qwen`: adds the session start and end
//! command hooks to the agent's hook file (the agent registry's: Claude Code's `settings.json`,
//! Codex's `hooks.json`, Gemini CLI's `.gemini/settings.json`, Qwen Code's `settings.json`, all
//! of one shape; Copilot CLI's
//! `hooks/crash-resume.json`, a file of our own in its shape), keeping every other setting,
//! idempotently, written atomically; a hook of ours that another binary path installed is
//! replaced, not doubled. `hook uninstall` removes every hook of ours, whichever binary path
//! installed it, the same way.
//!
//! The user's file is treated as theirs:
//! - what it holds is kept as written: each member's value is carried over as its original
//!   text (numbers such as `12345678901234567890123` included), only the hook lists that gain
//!   an entry are rewritten;
//! - a file with a duplicate key anywhere is refused (keeping one of them would silently drop
//!   the other), as is a file that does not parse (a byte-order mark or a comment named), is
//!   not an object, is read-only, belongs to another user or is larger than 16 MiB;
//! - the previous version is kept in a new file of its own, `<file>.crash-resume-<UTC time>.bak`,
//!   never over a file that is already there;
//! - only the exact command it installs counts as installed; a hook "of ours" is one whose
//!   command has the shape `hook install` writes (`<program> [--path FILE] hook <agent>`),
//!   whatever the program is called and wherever it lives (`super::ours` decides it);
//! - dirs it creates are 0700.
//!
//! The merge works on any agent's hooks file of these shapes (`{"hooks": {"<Event>": [{"hooks":
//! [{"type": "command", "command": ...}]}]}}`, or Copilot's `{"version": 1, "hooks": {"<event>":
//! [{"type": "command", "bash": "... <event>", "timeoutSec": ...}]}}`, each command ending with
//! its event): [`install_command_hooks`] takes the file, its shape, the command and the events.

use std::fmt;

use anyhow::{Context as _, anyhow};
use camino::{Utf8Path, Utf8PathBuf};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use agent_paths::HookShape;

use crate::args::{Agent, RetentionSetting};
use crate::context::Context;
use crate::error::Failure;
use crate::output;
use crate::output::Removed;

/// How long Copilot may run one of our hooks (the hook holds its agent up for 2 s at most).
const COPILOT_HOOK_TIMEOUT_SEC: u64 = 10;

/// Gemini's setting that turns its start-up cleanup off.
const GEMINI_RETENTION_OFF: Setting = Setting {
    path: &["general", "sessionRetention", "enabled"],
    value: false,
};

/// What the user must still do in the agent once the hooks are in its file (`retention_off`:
/// Gemini's cleanup is off in the file written; `title_set`: Codex's title shows the thread id).
fn next_steps(
    agent: Agent,
    path: &Utf8Path,
    retention_off: bool,
    title_set: bool,
) -> Option<String> {
    let path = index_core::text::escape(path.as_str());
    match agent.facts().dialect {
        agent_paths::Dialect::ClaudeCode => Some(
            "next: start Claude Code in a terminal pane (tmux, zellij, WezTerm, kitty, cmux); its \
             SessionStart hook records the session, and `crash-resume list` shows it. After a \
             crash, `crash-resume restore` shows what would be resumed and `crash-resume restore \
             --apply tmux` re-opens tmux panes"
                .to_string(),
        ),
        agent_paths::Dialect::Copilot => Some(
            "next: start Copilot (`copilot`) in a terminal pane and trust its folder when asked; \
             Copilot runs its sessionStart hook at the first prompt, not at start-up, so a \
             session is recorded once a prompt was sent (one that never had a prompt cannot be \
             resumed anyway). `crash-resume list` shows it"
                .to_string(),
        ),
        agent_paths::Dialect::Gemini => {
            let cleanup = if retention_off {
                "Gemini's start-up cleanup is off in this file (general.sessionRetention.enabled \
                 is false), so it deletes no conversation, nor any session older than 30 days"
            } else {
                "Gemini's start-up cleanup (general.sessionRetention, on by default) deletes at \
                 every start, in its working dir, each session file that holds no prompt and \
                 every file named with the same first 8 characters of its id: a resume in a later \
                 minute than the session's file was named for leaves such a stub (the \
                 conversation goes on in the old file), and the next Gemini start in that dir \
                 deletes it with the conversation; a second pane starting in the same dir deletes \
                 the first one's session while it has no prompt. Run `crash-resume hook install \
                 gemini --retention off` to turn the cleanup off (it also stops deleting sessions \
                 older than 30 days)"
            };
            Some(format!(
                "Gemini runs no hook in an untrusted folder (folder trust is on by default): \
                 trust each working dir when Gemini asks, or nothing is recorded there. With \
                 GITHUB_SHA (or SURFACE=Github) set, Gemini hides TMUX_PANE from its hooks and \
                 the pane cannot be named: unset it, or add \"TMUX_PANE\", \"TMUX\" and \
                 \"CRASH_RESUME_SURFACE\" to security.environmentVariableRedaction.allowed in \
                 {path}. {cleanup}"
            ))
        }
        agent_paths::Dialect::Qwen => Some(
            "next: start Qwen Code (`qwen`) in a terminal pane; its SessionStart hook records the \
             session at start-up, and `crash-resume list` shows it. Qwen Code writes a session's \
             file only at its first prompt: a session that never had one has nothing to resume. \
             A /quit and a crash end alike for Qwen Code: a session counts as ended only when its \
             end came from a pane that still exists"
                .to_string(),
        ),
        agent_paths::Dialect::Codex => Some(format!(
            "Codex runs a new hook only once it is trusted: start `codex`, and at \"Hooks need \
             review\" choose \"Trust all and continue\" (Codex saves the trust in config.toml \
             under [hooks.state.\"{path}:session_start:0:0\"]); `codex exec` skips untrusted hooks \
             silently. By default Codex runs hooks in its shared daemon, whose environment is \
             not the session's pane: crash-resume finds the pane by its title, which shows the \
             session's thread id only with \"thread-id\" among `terminal_title` under [tui] in \
             config.toml{}",
            match title_set {
                true => " (set there)",
                false =>
                    "; `crash-resume hook install codex --codex-title` adds it (keeping \
                          the other title items), or run `codex --no-daemon`. Without it, \
                          Codex sessions are not recorded",
            }
        )),
    }
}

/// `hook install` (`uninstall` false) or `hook uninstall` of `agent`'s hooks.
pub fn run(
    cx: &Context,
    agent: Agent,
    settings: Option<String>,
    dry_run: bool,
    uninstall: bool,
    retention: Option<RetentionSetting>,
    codex_title: bool,
) -> Result<(), Failure> {
    let given = settings.is_some();
    let also: &[Setting] = match (agent, retention) {
        (_, None) => &[],
        (Agent::Gemini, Some(RetentionSetting::Off)) => &[GEMINI_RETENTION_OFF],
        (_, Some(_)) => {
            return Err(Failure::Usage(anyhow!(
                "--retention is Gemini's setting; {} has no start-up cleanup to turn off",
                agent.name()
            )));
        }
    };
    let path = match settings {
        Some(path) if path.trim().is_empty() => {
            return Err(Failure::Usage(anyhow!(
                "--settings is empty; give the settings file's path"
            )));
        }
        Some(path) => Utf8PathBuf::from(path),
        None => agent.facts().hook_file_in(&config_dir(cx, agent)?),
    };
    if uninstall {
        return uninstall_command_hooks(cx, &path, agent.facts().hook_shape, given, dry_run);
    }
    super::ours::refuse_volatile_index(cx)?;
    let command = super::ours::hook_command(cx, agent)?;
    // Said after the hooks, before `--codex-title` (if given) adds it.
    let title_set = agent.facts().dialect == agent_paths::Dialect::Codex
        && config_dir(cx, agent).is_ok_and(|dir| {
            safe_open::read_head(
                std::path::Path::new(&dir).join("config.toml").as_path(),
                safe_open::Symlinks::Follow,
                1 << 20,
            )
            .is_ok_and(|head| {
                crate::codex::title_has_thread_id(&String::from_utf8_lossy(&head.bytes))
            })
        });
    let file = HookFile {
        path: &path,
        shape: agent.facts().hook_shape,
        command: &command,
        events: &agent.facts().hook_events,
        also,
        given,
    };
    let next = |path: &Utf8Path, settings: &[u8]| {
        let retention_off = agent == Agent::Gemini && GEMINI_RETENTION_OFF.is_in(settings);
        next_steps(agent, path, retention_off, title_set)
    };
    let then = || match codex_title {
        true => self::codex_title(cx, agent, dry_run),
        false => Ok(None),
    };
    install_command_hooks(cx, &file, dry_run, next, then)
}

/// The agent's config dir the install writes into: its variable (`~` expanded), else its
/// default under the home dir. A relative one is refused (exit 2): the agent resolves it from
/// whichever dir it starts in, which the install cannot know; so is a home dir that is not an
/// existing dir, which the install would otherwise create.
fn config_dir(cx: &Context, agent: Agent) -> Result<Utf8PathBuf, Failure> {
    let facts = agent.facts();
    let dir = cx.config_dir(agent).map_err(Failure::Failed)?;
    let dir = agent_paths::expand_home(&dir, cx.home().as_deref());
    let from_variable = cx.env().config_vars.contains_key(facts.config_env);
    let source = match from_variable {
        true => facts.config_env,
        false => "HOME",
    };
    if dir.is_relative() {
        let value = match from_variable {
            true => dir.to_string(),
            false => cx.home().map(Utf8PathBuf::into_string).unwrap_or_default(),
        };
        return Err(Failure::Usage(anyhow!(
            "{source} is a relative path ({}), which {} resolves from whichever dir it starts \
             in; set it to an absolute path, or name the file with --settings",
            index_core::text::escape(&value),
            facts.end_words.display
        )));
    }
    if !from_variable
        && let Some(home) = cx.home()
        && !home.is_dir()
    {
        return Err(Failure::Usage(anyhow!(
            "HOME ({}) is not an existing dir, so {}'s settings under it would be written where \
             no agent of yours looks; set HOME to your home dir, or name the file with --settings",
            index_core::text::escape(home.as_str()),
            facts.end_words.display
        )));
    }
    Ok(dir)
}

/// `hook install codex --codex-title`: adds the thread id to Codex's title items in
/// `$CODEX_HOME/config.toml` (created when missing), the same locked read-merge-write with a
/// backup as the hooks, the rest of the file kept as written. Under `--json` it prints nothing
/// and returns what it did, for the hooks' document.
fn codex_title(
    cx: &Context,
    agent: Agent,
    dry_run: bool,
) -> Result<Option<Box<RawValue>>, Failure> {
    let dir = config_dir(cx, agent)?;
    let path = index_store::resolve_path(&dir.join("config.toml"))
        .map_err(|error| settings_failure(&error))?;
    let refused = |reason: String| {
        Failure::Failed(anyhow!(
            "cannot add \"thread-id\" to Codex's title items in {}: {reason}; the file was left \
             untouched",
            index_core::text::escape(path.as_str())
        ))
    };
    let edit = |current: Option<&[u8]>| {
        let text = std::str::from_utf8(current.unwrap_or_default())
            .map_err(|_| refused("it is not UTF-8".to_string()))?;
        crate::codex::add_thread_id_to_title(text).map_err(refused)
    };
    let escaped = index_core::text::escape(path.as_str());
    if dry_run {
        let current =
            index_store::read_editable(&path).map_err(|error| settings_failure(&error))?;
        let edit = edit(current.as_deref())?;
        if cx.json {
            return title_json(&path, &edit, false, true).map(Some);
        }
        return match edit {
            crate::codex::TitleEdit::Already => {
                output::print_message(&format!(
                    "Codex's title items in {escaped} already show the thread id"
                ));
                Ok(())
            }
            crate::codex::TitleEdit::Added { text, items } => {
                output::print_message(&format!(
                    "would set terminal_title = {items:?} under [tui] (dry run: {escaped} was not \
                     written)"
                ));
                output::print_line(text.trim_end())
            }
        }
        .map(|()| None);
    }
    let mut result = None;
    let edited = index_store::edit_file(&path, LOCK_TIMEOUT, |current| {
        let edit = edit(current).map_err(EditError::Refused)?;
        let bytes = match &edit {
            crate::codex::TitleEdit::Already => None,
            crate::codex::TitleEdit::Added { text, .. } => Some(text.clone().into_bytes()),
        };
        result = Some(edit);
        Ok::<_, EditError>(bytes)
    })
    .map_err(|error| match error {
        EditError::Store(error) => settings_failure(&error),
        EditError::Refused(failure) => failure,
    })?;
    let result = result.expect("the edit ran");
    if cx.json {
        return title_json(&path, &result, edited.written, false).map(Some);
    }
    match result {
        crate::codex::TitleEdit::Added { items, .. } if edited.written => {
            output::print_message(&format!(
                "set terminal_title = {items:?} under [tui] in {escaped}{}: each Codex TUI started \
                 from now on shows its thread id in its pane's title, where a hook in Codex's \
                 daemon finds it",
                kept_as(edited.backup.as_deref())
            ));
        }
        _ => output::print_message(&format!(
            "Codex's title items in {escaped} already show the thread id"
        )),
    }
    Ok(None)
}

/// The `codex_title` member of `hook install codex --codex-title`'s document.
fn title_json(
    path: &Utf8Path,
    edit: &crate::codex::TitleEdit,
    written: bool,
    dry_run: bool,
) -> Result<Box<RawValue>, Failure> {
    let (items, merged) = match edit {
        crate::codex::TitleEdit::Already => (None, None),
        crate::codex::TitleEdit::Added { text, items } => {
            (Some(items.as_slice()), dry_run.then_some(text.as_str()))
        }
    };
    serde_json::value::to_raw_value(&output::CodexTitle::new(
        path.as_str(),
        items,
        written,
        merged,
    ))
    .map_err(|error| Failure::Failed(error.into()))
}

/// A setting an install makes besides the hooks, only when asked to: a boolean at a path of
/// object keys.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    pub path: &'static [&'static str],
    pub value: bool,
}

impl Setting {
    /// Whether the merged settings (their bytes) hold it.
    fn is_in(&self, settings: &[u8]) -> bool {
        let pointer: String = self.path.iter().map(|key| format!("/{key}")).collect();
        serde_json::from_slice::<Value>(settings)
            .ok()
            .and_then(|settings| settings.pointer(&pointer).cloned())
            == Some(Value::Bool(self.value))
    }

    /// The setting as words: `general.sessionRetention.enabled = false`.
    fn describe(&self) -> String {
        format!("{} = {}", self.path.join("."), self.value)
    }
}

/// Removes every hook of ours ([`super::ours::is_ours`]) from the hooks file at `path`, whichever binary
/// path installed it, keeping everything else as written (a hook group left with no hook is
/// dropped, and an event left with no group). The same locked read-merge-write and backup as
/// an install; a missing file, or one with no hook of ours, is left alone.
fn uninstall_command_hooks(
    cx: &Context,
    path: &Utf8Path,
    shape: HookShape,
    given: bool,
    dry_run: bool,
) -> Result<(), Failure> {
    let via_link = std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_symlink());
    let path = index_store::resolve_path(path).map_err(|error| settings_failure(&error))?;
    let current = index_store::read_editable(&path).map_err(|error| settings_failure(&error))?;
    let stripped = |current: Option<&[u8]>| -> Result<(Vec<Removed>, Vec<u8>), Failure> {
        let mut settings = parse_settings(&path, current.unwrap_or_default(), given)?;
        let removed = strip_ours(&mut settings, shape, &[]).map_err(|reason| {
            Failure::Failed(anyhow!("{path}: {reason}; the file was left untouched"))
        })?;
        // A file left with nothing of anyone's in it (Copilot's hooks file of ours keeps only
        // the version install wrote) is removed: no content, which the edit takes for that.
        // Not through a link, which would be left leading nowhere.
        let nothing_left = settings
            .0
            .iter()
            .all(|(key, _)| shape == HookShape::BashHooks && key == "version");
        if !removed.is_empty() && nothing_left && !via_link {
            return Ok((removed, Vec::new()));
        }
        let mut bytes =
            serde_json::to_vec_pretty(&settings).map_err(|error| Failure::Failed(error.into()))?;
        bytes.push(b'\n');
        Ok((removed, bytes))
    };
    let escaped = index_core::text::escape(path.as_str());
    if current.is_none() || dry_run {
        let (removed, bytes) = match &current {
            Some(current) => stripped(Some(current))?,
            None => (Vec::new(), Vec::new()),
        };
        if cx.json {
            return report_uninstall_json(&path, &removed, false, false, dry_run.then_some(&bytes));
        }
        output::print_message(&match (&current, removed.is_empty()) {
            (None, _) => format!("no hooks of crash-resume to remove: {escaped} does not exist"),
            (Some(_), true) => {
                format!("no hooks of crash-resume in {escaped} (dry run: it was not written)")
            }
            (Some(_), false) => format!(
                "would remove {} (dry run: {escaped} was not written)",
                describe_removed(&removed)
            ),
        });
        return match current {
            Some(_) => output::print_line(String::from_utf8_lossy(&bytes).trim_end()),
            None => Ok(()),
        };
    }
    let mut result = None;
    let edited = index_store::edit_file(&path, LOCK_TIMEOUT, |current| {
        let (removed, bytes) = stripped(current).map_err(EditError::Refused)?;
        let write = !removed.is_empty();
        result = Some(removed);
        Ok::<_, EditError>(write.then_some(bytes))
    })
    .map_err(|error| match error {
        EditError::Store(error) => settings_failure(&error),
        EditError::Refused(failure) => failure,
    })?;
    let removed = result.expect("the edit ran");
    if cx.json {
        return report_uninstall_json(&path, &removed, edited.written, edited.removed, None);
    }
    if !edited.written {
        return output::print_line(&format!(
            "no hooks of crash-resume in {escaped}; nothing to remove"
        ));
    }
    output::print_line(&format!(
        "removed {} from {escaped}{}{}",
        describe_removed(&removed),
        match edited.removed {
            true => ", and the file, which held nothing else",
            false => "",
        },
        kept_as(edited.backup.as_deref())
    ))
}

/// ` (the previous version is kept as BACKUP)`, when there is one.
fn kept_as(backup: Option<&Utf8Path>) -> String {
    match backup {
        Some(backup) => format!(
            " (the previous version is kept as {})",
            index_core::text::escape(backup.as_str())
        ),
        None => String::new(),
    }
}

/// `the SessionStart hook (CMD) and the SessionEnd hook (CMD)`.
fn describe_removed(removed: &[Removed]) -> String {
    removed
        .iter()
        .map(|removed| {
            format!(
                "the {} hook ({})",
                removed.event,
                index_core::text::escape(&removed.command)
            )
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

fn report_uninstall_json(
    path: &Utf8Path,
    removed: &[Removed],
    written: bool,
    file_removed: bool,
    merged: Option<&Vec<u8>>,
) -> Result<(), Failure> {
    let merged = merged
        .map(|bytes| {
            let text = String::from_utf8_lossy(bytes).trim_end().to_string();
            RawValue::from_string(if text.is_empty() {
                "null".to_string()
            } else {
                text
            })
        })
        .transpose()
        .map_err(|error| Failure::Failed(error.into()))?;
    output::print_json(&output::Uninstalled::new(
        path.as_str(),
        removed,
        written,
        file_removed,
        merged.as_deref(),
    ))
}

/// A hooks file to add a command hook to.
#[derive(Debug, Clone, Copy)]
pub struct HookFile<'a> {
    pub path: &'a Utf8Path,
    /// The shape of its hooks.
    pub shape: HookShape,
    /// The exact command ([`event_command`] of it, per event): only a hook running exactly this
    /// counts as installed.
    pub command: &'a str,
    pub events: &'a [&'static str],
    /// Settings to make besides, asked for on the command line.
    pub also: &'a [Setting],
    /// The path came from `--settings`, so the advice does not suggest it.
    pub given: bool,
}

/// How long an install waits for another one writing the same dir's settings.
const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Adds the file's command as a command hook of each of its events (a symlink at the path is
/// followed when it is safe to, so a dotfile manager's link stays a link), creating the file
/// when it is missing, and makes the file's other settings; prints what it did, and
/// `next_steps` for the file written (given its merged bytes), if any.
///
/// The write is a locked read-merge-write ([`index_store::edit_file`]): installs at once all
/// land, and settings the agent writes meanwhile are merged into, not overwritten.
pub fn install_command_hooks(
    cx: &Context,
    file: &HookFile<'_>,
    dry_run: bool,
    next_steps: impl FnOnce(&Utf8Path, &[u8]) -> Option<String>,
    then: impl FnOnce() -> Result<Option<Box<RawValue>>, Failure>,
) -> Result<(), Failure> {
    let path = index_store::resolve_path(file.path).map_err(|error| settings_failure(&error))?;
    // Read first (for a dry run, only): what cannot be read is refused before anything is made.
    let current = index_store::read_editable(&path).map_err(|error| settings_failure(&error))?;
    if dry_run {
        let merged = merged(&path, current.as_deref(), file)?;
        return report_dry_run(cx, &path, file, &merged, then);
    }
    if current.is_none()
        && let Some(dir) = path.parent().filter(|dir| !dir.as_str().is_empty())
    {
        safe_open::create_private_dirs(dir.as_std_path())
            .with_context(|| {
                format!("cannot create {dir}; or choose another settings file with --settings")
            })
            .map_err(Failure::Failed)?;
    }
    let mut result = None;
    let edited = index_store::edit_file(&path, LOCK_TIMEOUT, |current| {
        let merged = merged(&path, current, file).map_err(EditError::Refused)?;
        let write = merged.changes().then(|| merged.bytes.clone());
        result = Some(merged);
        Ok::<_, EditError>(write)
    })
    .map_err(|error| match error {
        EditError::Store(error) => settings_failure(&error),
        EditError::Refused(failure) => failure,
    })?;
    let merged = result.expect("the edit ran");
    if !merged.set.is_empty() {
        output::print_message(&format!(
            "set {} in {}",
            merged.set.join(" and "),
            index_core::text::escape(path.as_str())
        ));
    }
    // Under `--json`, one document: the hooks', with what `then` did in it.
    let mut then = Some(then);
    if cx.json {
        let done = then.take().map(|then| then()).transpose()?.flatten();
        report_json(&path, file, &merged, edited.written, false, done.as_deref())?;
    } else if !edited.written || (merged.added.is_empty() && merged.replaced.is_empty()) {
        output::print_line(&format!(
            "already installed in {}",
            index_core::text::escape(path.as_str())
        ))?;
    } else {
        let replaced = match merged.replaced.is_empty() {
            true => String::new(),
            false => format!(", replacing {}", describe_removed(&merged.replaced)),
        };
        let added = match merged.added.is_empty() {
            true => "crash-resume's".to_string(),
            false => merged.added.join(" and "),
        };
        output::print_line(&format!(
            "installed {added} hooks into {}: {}{replaced}{}",
            index_core::text::escape(path.as_str()),
            index_core::text::escape(file.command),
            kept_as(edited.backup.as_deref())
        ))?;
    }
    // The next step comes last, where it is read.
    if let Some(note) = next_steps(&path, &merged.bytes) {
        output::print_message(&note);
    }
    if let Some(then) = then {
        then()?;
    }
    Ok(())
}

/// Why an edit of the settings did not go through: the store's failure, or the settings
/// refused (already said in full).
enum EditError {
    Store(index_store::StoreError),
    Refused(Failure),
}

impl From<index_store::StoreError> for EditError {
    fn from(error: index_store::StoreError) -> Self {
        EditError::Store(error)
    }
}

/// A store failure on the settings file, said of the settings file, with the way out.
fn settings_failure(error: &index_store::StoreError) -> Failure {
    use index_store::StoreError;
    let text = match error {
        StoreError::IsDirectory { path } => {
            format!("settings path {path} is a directory; give the settings file's path")
        }
        StoreError::NotUtf8 { path } => {
            format!("settings path {} is not valid UTF-8", path.display())
        }
        StoreError::Read { path, cause } => format!("cannot read {path}: {cause}"),
        StoreError::Write { path, cause } => format!("cannot write {path}: {cause}"),
        StoreError::Lock { path, cause } => format!("cannot lock {path}: {cause}"),
        other => other.to_string(),
    };
    Failure::Failed(anyhow!(
        "{text}; or choose another settings file with --settings"
    ))
}

/// The settings `current` holds (none when `None`) with the file's command added (a hook of ours
/// from another binary path replaced) and its other settings made.
fn merged(path: &Utf8Path, current: Option<&[u8]>, file: &HookFile<'_>) -> Result<Merged, Failure> {
    let mut settings = parse_settings(path, current.unwrap_or_default(), file.given)?;
    let refused =
        |reason| Failure::Failed(anyhow!("{path}: {reason}; the file was left untouched"));
    // A hook of ours from another binary path is replaced, not doubled.
    let keep: Vec<String> = file
        .events
        .iter()
        .map(|event| event_command(file.shape, file.command, event))
        .collect();
    let replaced = strip_ours(&mut settings, file.shape, &keep).map_err(refused)?;
    if !replaced.is_empty() {
        // Read back as written, so the merge sees the stripped hooks as text again.
        let bytes = serde_json::to_vec(&settings).map_err(|error| Failure::Failed(error.into()))?;
        settings = parse_settings(path, &bytes, file.given)?;
    }
    let added = merge(&mut settings, file.shape, file.command, file.events).map_err(refused)?;
    let mut set = Vec::new();
    for setting in file.also {
        if set_bool(&mut settings, setting.path, setting.value).map_err(refused)? {
            set.push(setting.describe());
        }
    }
    let mut bytes =
        serde_json::to_vec_pretty(&settings).map_err(|error| Failure::Failed(error.into()))?;
    bytes.push(b'\n');
    Ok(Merged {
        added,
        replaced,
        set,
        bytes,
    })
}

/// What an install makes of the settings.
struct Merged {
    /// The events the command was added to.
    added: Vec<&'static str>,
    /// The hooks of ours, from another binary path, that it replaced.
    replaced: Vec<Removed>,
    /// The other settings it changed, in words.
    set: Vec<String>,
    /// The settings with the change.
    bytes: Vec<u8>,
}

impl Merged {
    /// Whether the settings change at all.
    fn changes(&self) -> bool {
        !self.added.is_empty() || !self.replaced.is_empty() || !self.set.is_empty()
    }
}

/// Sets the boolean at `path` (object keys, created where missing), each object on the way
/// rebuilt and every other member kept as written; whether it changed anything.
fn set_bool(settings: &mut Members, path: &[&str], value: bool) -> Result<bool, String> {
    let (key, rest) = path.split_first().expect("a setting has a path");
    if rest.is_empty() {
        if settings
            .get(key)
            .is_some_and(|current| current.trim() == value.to_string())
        {
            return Ok(false);
        }
        settings.set(key, Node::New(Value::Bool(value)));
        return Ok(true);
    }
    let mut inner: Members = match settings.get(key) {
        Some(text) => {
            serde_json::from_str(text).map_err(|_| format!("`{key}` is not a JSON object"))?
        }
        None => Members::default(),
    };
    let changed = set_bool(&mut inner, rest, value)?;
    if changed {
        settings.set(key, Node::Object(inner));
    }
    Ok(changed)
}

fn report_json(
    path: &Utf8Path,
    file: &HookFile<'_>,
    merged: &Merged,
    written: bool,
    dry_run: bool,
    codex_title: Option<&RawValue>,
) -> Result<(), Failure> {
    let bytes = String::from_utf8_lossy(&merged.bytes).into_owned();
    let bytes = RawValue::from_string(bytes).map_err(|error| Failure::Failed(error.into()))?;
    output::print_json(&output::Installed::new(
        path.as_str(),
        &merged.added,
        &merged.replaced,
        file.command,
        written,
        dry_run.then_some(&*bytes),
        codex_title,
    ))
}

fn report_dry_run(
    cx: &Context,
    path: &Utf8Path,
    file: &HookFile<'_>,
    merged: &Merged,
    then: impl FnOnce() -> Result<Option<Box<RawValue>>, Failure>,
) -> Result<(), Failure> {
    if cx.json {
        let then = then()?;
        return report_json(path, file, merged, false, true, then.as_deref());
    }
    let mut would = Vec::new();
    if !merged.added.is_empty() {
        would.push(format!("would add {}", merged.added.join(" and ")));
    }
    if !merged.replaced.is_empty() {
        would.push(format!(
            "would replace {}",
            describe_removed(&merged.replaced)
        ));
    }
    if !merged.set.is_empty() {
        would.push(format!("would set {}", merged.set.join(" and ")));
    }
    output::print_message(&format!(
        "{} (dry run: {path} was not written)",
        if would.is_empty() {
            "already installed".to_string()
        } else {
            would.join(", ")
        }
    ));
    output::print_line(String::from_utf8_lossy(&merged.bytes).trim_end())?;
    then().map(|_| ())
}

/// A JSON object as its members in order, each value kept as its original text until it is
/// changed.
#[derive(Debug, Default)]
struct Members(Vec<(String, Node)>);

/// A member's value: its original text, or a part rebuilt by the merge.
#[derive(Debug)]
enum Node {
    Raw(Box<RawValue>),
    Object(Members),
    List(Vec<Node>),
    New(Value),
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Raw(raw) => raw.serialize(serializer),
            Node::Object(members) => members.serialize(serializer),
            Node::List(items) => items.serialize(serializer),
            Node::New(value) => value.serialize(serializer),
        }
    }
}

impl Serialize for Members {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<Box<RawValue>>()?;
                    members.push((key, Node::Raw(value)));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

impl Members {
    /// The original text of `key`'s value.
    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|(name, value)| match value {
            Node::Raw(raw) if name == key => Some(raw.get()),
            _ => None,
        })
    }

    /// Drops `key` and its value.
    fn remove(&mut self, key: &str) {
        self.0.retain(|(name, _)| name != key);
    }

    /// Sets `key` to `value`, in its place when it is there, else at the end.
    fn set(&mut self, key: &str, value: Node) {
        match self.0.iter_mut().find(|(name, _)| name == key) {
            Some((_, slot)) => *slot = value,
            None => self.0.push((key.to_string(), value)),
        }
    }
}

/// The settings in `bytes` (empty or blank: none yet). `given`: the path came from
/// `--settings`, so the advice does not suggest it.
fn parse_settings(path: &Utf8Path, bytes: &[u8], given: bool) -> Result<Members, Failure> {
    let text = std::str::from_utf8(bytes)
        .map_err(|error| Failure::Failed(anyhow!("cannot read {path}: {error}")))?;
    if text.trim().is_empty() {
        return Ok(Members::default());
    }
    let refuse = |reason: String| {
        Failure::Failed(anyhow!(
            "{reason}; fix it by hand{}, the file was left untouched",
            if given {
                ""
            } else {
                " or choose another file with --settings"
            }
        ))
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => {}
        Ok(_) => return Err(refuse(format!("{path} is not a JSON object"))),
        Err(error) => {
            return Err(refuse(format!(
                "cannot parse {path} ({error}{})",
                unparsable_because(text, &error)
            )));
        }
    }
    // Every key is checked at every depth: a duplicate would otherwise lose one of its values.
    let mut checker = serde_json::Deserializer::from_str(text);
    UniqueKeys(String::new())
        .deserialize(&mut checker)
        .map_err(|error| refuse(format!("{path} holds a key twice ({error})")))?;
    serde_json::from_str::<Members>(text)
        .map_err(|error| refuse(format!("cannot parse {path} ({error})")))
}

/// What JSON does not allow that a settings file is known to hold where `error` is: a
/// byte-order mark at its start, or a comment (Gemini CLI reads its settings with comments
/// stripped; crash-resume could not keep them). Empty when it is something else.
fn unparsable_because(text: &str, error: &serde_json::Error) -> &'static str {
    if text.starts_with('\u{feff}') {
        return ": it begins with a byte-order mark (U+FEFF), which JSON does not allow; \
                save it as UTF-8 without one";
    }
    let at = text
        .lines()
        .nth(error.line().saturating_sub(1))
        .and_then(|line| {
            let column = error.column().saturating_sub(1);
            line.char_indices()
                .nth(column)
                .map(|(offset, _)| &line[offset..])
        })
        .unwrap_or_default();
    if at.starts_with("//") || at.starts_with("/*") {
        return ": it holds a comment, which JSON does not allow and crash-resume could not \
                keep; remove the comments";
    }
    ""
}

/// Walks a JSON value and fails on the first object that holds a key twice, naming the key and
/// where it is (`hooks.SessionStart[0]`).
struct UniqueKeys(String);

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let place = match self.0.is_empty() {
                true => key.clone(),
                false => format!("{}.{key}", self.0),
            };
            if !seen.insert(key) {
                return Err(de::Error::custom(format!(
                    "the key `{place}` appears twice; keep one of them"
                )));
            }
            map.next_value_seed(UniqueKeys(place))?;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut at = 0;
        while seq
            .next_element_seed(UniqueKeys(format!("{}[{at}]", self.0)))?
            .is_some()
        {
            at += 1;
        }
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// The command a hook of `shape` runs for `event`: the command itself, or for a payload that
/// does not name its event (Copilot's), the command with the event as its last word.
fn event_command(shape: HookShape, command: &str, event: &str) -> String {
    match shape {
        HookShape::CommandHooks => command.to_string(),
        HookShape::BashHooks => format!("{command} {event}"),
    }
}

/// A new entry of an event's list that runs `command`.
fn new_entry(shape: HookShape, command: &str) -> Value {
    match shape {
        HookShape::CommandHooks => {
            json!({ "hooks": [ { "type": "command", "command": command } ] })
        }
        HookShape::BashHooks => {
            json!({ "type": "command", "bash": command, "timeoutSec": COPILOT_HOOK_TIMEOUT_SEC })
        }
    }
}

/// Whether an entry of an event's list already runs exactly `command`.
fn runs(shape: HookShape, entry: &str, command: &str) -> bool {
    entry_commands(shape, entry)
        .iter()
        .any(|runs| runs == command)
}

/// The command of each hook of an entry of an event's list: a group's hooks' `command`s, or
/// the entry's own `bash`.
fn entry_commands(shape: HookShape, entry: &str) -> Vec<String> {
    let Ok(entry) = serde_json::from_str::<Value>(entry) else {
        return Vec::new();
    };
    let hooks = match shape {
        HookShape::CommandHooks => entry
            .get("hooks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        HookShape::BashHooks => vec![entry],
    };
    let key = match shape {
        HookShape::CommandHooks => "command",
        HookShape::BashHooks => "bash",
    };
    hooks
        .iter()
        .filter_map(|hook| hook.get(key).and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Removes every hook of ours but those running exactly one of `keep`, from every event;
/// returns what it removed. Only the lists and groups that lose a hook are rewritten (their other members
/// kept as written); a group left with no hook is dropped, and so is an event left with no
/// group.
fn strip_ours(
    settings: &mut Members,
    shape: HookShape,
    keep: &[String],
) -> Result<Vec<Removed>, String> {
    let Some(hooks) = settings.get("hooks") else {
        return Ok(Vec::new());
    };
    let mut hooks: Members =
        serde_json::from_str(hooks).map_err(|_| "`hooks` is not a JSON object".to_string())?;
    // Uninstall (nothing to keep) removes every hook of ours; an install replaces only one that
    // runs the same arguments from another binary path (installs for other indexes stay).
    let arguments = |command: &str| shlex::split(command).map(|words| words[1..].to_vec());
    let doomed = |command: &str| {
        super::ours::is_ours(command)
            && (keep.is_empty()
                || keep.iter().all(|keep| command != keep)
                    && keep
                        .iter()
                        .any(|keep| arguments(command) == arguments(keep)))
    };
    let events: Vec<String> = hooks.0.iter().map(|(event, _)| event.clone()).collect();
    let mut removed = Vec::new();
    for event in events {
        // Only lists of groups can hold a hook of ours; anything else is left as it is.
        let Some(Ok(groups)) = hooks
            .get(&event)
            .map(serde_json::from_str::<Vec<Box<RawValue>>>)
        else {
            continue;
        };
        let before = removed.len();
        let mut kept_groups = Vec::new();
        for group in groups {
            let commands = entry_commands(shape, group.get());
            if !commands.iter().any(|command| doomed(command)) {
                kept_groups.push(Node::Raw(group));
                continue;
            }
            // Copilot's entry is the hook itself: it goes whole.
            if shape == HookShape::BashHooks {
                removed.extend(commands.into_iter().map(|command| Removed {
                    event: event.clone(),
                    command,
                }));
                continue;
            }
            let mut members: Members = serde_json::from_str(group.get())
                .map_err(|_| format!("a group of `hooks.{event}` is not a JSON object"))?;
            let list: Vec<Box<RawValue>> = members
                .get("hooks")
                .map(serde_json::from_str)
                .transpose()
                .map_err(|_| format!("the `hooks` of a group of `hooks.{event}` is not a list"))?
                .unwrap_or_default();
            let mut left = Vec::new();
            for hook in list {
                let command = serde_json::from_str::<Value>(hook.get())
                    .ok()
                    .and_then(|hook| {
                        hook.get("command")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    });
                match command {
                    Some(command) if doomed(&command) => removed.push(Removed {
                        event: event.clone(),
                        command,
                    }),
                    _ => left.push(Node::Raw(hook)),
                }
            }
            if !left.is_empty() {
                members.set("hooks", Node::List(left));
                kept_groups.push(Node::Object(members));
            }
        }
        if removed.len() == before {
            continue;
        }
        if kept_groups.is_empty() {
            hooks.remove(&event);
        } else {
            hooks.set(&event, Node::List(kept_groups));
        }
    }
    // The `hooks` that held only ours goes with them (an install puts it back).
    match (removed.is_empty(), hooks.0.is_empty()) {
        (true, _) => {}
        (false, true) => settings.remove("hooks"),
        (false, false) => settings.set("hooks", Node::Object(hooks)),
    }
    Ok(removed)
}

/// Adds the command hook to each event that lacks it; returns the events it was added to. Only
/// the lists that gain an entry are rewritten (their other entries kept as written).
fn merge(
    settings: &mut Members,
    shape: HookShape,
    command: &str,
    events: &[&'static str],
) -> Result<Vec<&'static str>, String> {
    // A Copilot hooks file of another format version: hooks of ours in it would be read as
    // that format says, or not at all.
    if shape == HookShape::BashHooks
        && let Some(version) = settings.get("version")
        && serde_json::from_str::<Value>(version).ok() != Some(json!(1))
    {
        return Err(format!(
            "its \"version\" is {}, not the format 1 that crash-resume writes hooks in",
            index_core::text::escape(version.trim())
        ));
    }
    let mut hooks: Members = match settings.get("hooks") {
        Some(hooks) => {
            serde_json::from_str(hooks).map_err(|_| "`hooks` is not a JSON object".to_string())?
        }
        None => Members::default(),
    };
    let mut added = Vec::new();
    for &event in events {
        let groups: Vec<Box<RawValue>> = match hooks.get(event) {
            Some(groups) => serde_json::from_str(groups)
                .map_err(|_| format!("`hooks.{event}` is not a list"))?,
            None => Vec::new(),
        };
        let command = event_command(shape, command, event);
        let present = groups
            .iter()
            .any(|group| runs(shape, group.get(), &command));
        if !present {
            let mut groups: Vec<Node> = groups.into_iter().map(Node::Raw).collect();
            groups.push(Node::New(new_entry(shape, &command)));
            hooks.set(event, Node::List(groups));
            added.push(event);
        }
    }
    if !added.is_empty() {
        // Copilot reads a hooks file only with its format's version.
        if shape == HookShape::BashHooks && settings.get("version").is_none() {
            settings.set("version", Node::New(json!(1)));
        }
        settings.set("hooks", Node::Object(hooks));
    }
    Ok(added)
}
