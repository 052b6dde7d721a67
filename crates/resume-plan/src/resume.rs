//! A verdict to the session it resumes and the command that resumes it (through the launcher
//! registry), where that command starts (the recorded working dir, or the home dir when it is
//! gone), and the rule that refuses an entry whose values are not inert text.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use index_core::{AgentName, Entry};
use launcher_map::{Registry, RenderError, Start, Target};
use preflight::paths::StartDir;
use preflight::{Outcome, Verdict};
use serde::{Deserialize, Serialize};

use crate::reasons::Refusal;

/// The session a restore would load for `entry` after the preflight said `outcome`: the checked
/// id for `resume` and `recover`, the held id when nothing could be checked (`unknown`), and
/// none for `fresh`.
pub fn resumed_session(entry: &Entry, outcome: &Outcome) -> Option<String> {
    match outcome.verdict {
        Verdict::Resume | Verdict::Recover => outcome.session_id.clone(),
        Verdict::Unknown => Some(entry.session.to_string()),
        Verdict::Fresh => None,
    }
}

/// Where a restore starts `entry`'s agent ([`preflight::paths::start_dir`], the rule the
/// preflight judges by): the recorded working dir, or the home dir when the recorded one is
/// gone; `None` when no working dir is recorded.
pub fn start_dir(entry: &Entry, home: Option<&Utf8Path>) -> Option<StartDir> {
    start_dir_with(entry, home, &preflight::Cache::default())
}

/// [`start_dir`] for one of many entries (a restore plan): each working dir looked at once.
pub fn start_dir_with(
    entry: &Entry,
    home: Option<&Utf8Path>,
    cache: &preflight::Cache,
) -> Option<StartDir> {
    let cwd = entry.cwd.as_deref().filter(|cwd| !cwd.trim().is_empty())?;
    Some(cache.start_dir(cwd, home))
}

/// How a restore starts an entry's agent again, from the launch its hook recorded: the kept
/// flags that the pinned CLI still takes, the recorded model and provider variables, and the
/// flags left out. `launch` in `--json`: `{"args": [...], "env": {...}, "dropped": [...]}`,
/// each member absent when empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relaunch {
    /// The words passed after the resume arguments, as recorded (`--model`, `opus`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The variables set for the command, by name, as recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The recorded flags the pinned CLI does not take (an older version's), left out of the
    /// command, as recorded without their values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// The user's wrapper the agent was started through, as recorded: whether the command runs
    /// it, and why not when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<WrapperUse>,
}

/// A recorded wrapper, as the command uses it: `{"path": ..., "used": true}`, or `{"path":
/// ..., "used": false, "why": ...}` when the agent is started itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrapperUse {
    /// Its path, as recorded.
    pub path: String,
    /// Whether the command runs it (with the resume arguments and the kept flags) in place of
    /// the agent.
    pub used: bool,
    /// Why it is not used: it does not pass its arguments on, or it is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Relaunch {
    /// The notes a restore and `resume-cmd` give on stderr: for the flags left out, and for a
    /// wrapper the command does not run.
    pub fn notes(&self, surface: &str, agent: &str) -> Vec<String> {
        let display = agent_paths::Agent::from_name(agent)
            .map_or(agent, |agent| agent.facts().end_words.display);
        let surface = index_core::text::escape(surface);
        let mut notes = Vec::new();
        if !self.dropped.is_empty() {
            let flags: Vec<String> = self
                .dropped
                .iter()
                .map(|flag| index_core::text::escape(flag).into_owned())
                .collect();
            let (them, it) = match flags.len() {
                1 => ("the flag", "it"),
                _ => ("the flags", "them"),
            };
            notes.push(format!(
                "note: surface {surface} was started with {them} {}, which {display} no longer \
                 takes: it is resumed without {it}",
                flags.join(" "),
            ));
        }
        if let Some(WrapperUse {
            path,
            used: false,
            why,
        }) = &self.wrapper
        {
            notes.push(format!(
                "note: surface {surface}'s {display} was started through {}, which {}: it is \
                 resumed by starting {display} itself",
                index_core::text::escape(path),
                why.as_deref().unwrap_or("cannot be run again"),
            ));
        }
        notes
    }
}

/// How a restore starts `entry`'s agent again ([`Relaunch`]); `None` when its hook recorded no
/// launch, or for an agent this version does not know (nothing of it could be checked). The
/// recorded flags are read again with the agent's allow-list
/// ([`agent_paths::LaunchFacts::keep`]): what the pinned CLI does not know is dropped, and so
/// is what it no longer keeps; a variable that is not among the agent's is left out. A launch
/// holding a control character (which the hook never records; another writer's index may hold
/// one) is not used at all.
pub fn relaunch(entry: &Entry) -> Option<Relaunch> {
    let launch = entry
        .launch
        .as_ref()
        .filter(|launch| launch.control_character().is_none())?;
    let agent = entry
        .agent
        .as_ref()
        .map_or(agent_paths::DEFAULT_AGENT, AgentName::as_str);
    let facts = agent_paths::Agent::from_name(agent)?.facts().launch;
    let kept = facts.keep(&launch.args);
    let env = launch
        .env
        .iter()
        .filter(|(name, _)| facts.env.contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let wrapper = launch.wrapper.as_ref().map(|wrapper| {
        let why = if !std::path::Path::new(&wrapper.path).is_file() {
            Some("is gone".to_string())
        } else if let Some(reason) = index_store::untrusted_path(Utf8Path::new(&wrapper.path)) {
            // Another user could change what it runs: never started on a restore.
            Some(format!("is not safe to run: {reason}"))
        } else if !wrapper.passes_args {
            Some("does not pass its arguments on (its text holds no \"$@\")".to_string())
        } else {
            None
        };
        WrapperUse {
            path: wrapper.path.clone(),
            used: why.is_none(),
            why,
        }
    });
    Some(Relaunch {
        args: kept.args,
        env,
        dropped: kept.unknown,
        wrapper,
    })
    .filter(|relaunch| relaunch != &Relaunch::default())
}

/// The launcher registry's view of an entry, resuming `session` (the entry's own, or the one a
/// preflight recovered), with the working dir recorded; started as `relaunch` says.
pub fn target<'a>(
    entry: &'a Entry,
    session: &'a str,
    relaunch: Option<&'a Relaunch>,
) -> Target<'a> {
    Target {
        agent: entry.agent.as_ref().map(AgentName::as_str),
        session,
        repo: Some(entry.repo.as_str()),
        cwd: entry.cwd.as_deref(),
        config_dir: entry.config_dir.as_deref(),
        start: Start {
            args: relaunch.map_or(&[], |relaunch| relaunch.args.as_slice()),
            env: relaunch.map(|relaunch| &relaunch.env),
            program: relaunch
                .and_then(|relaunch| relaunch.wrapper.as_ref())
                .filter(|wrapper| wrapper.used)
                .map(|wrapper| wrapper.path.as_str()),
        },
    }
}

/// The shell line that resumes `session` in `entry`'s surface; `home` expands `~` in recorded
/// paths. When the recorded working dir is gone ([`start_dir`]), the line has no `cd` (it could
/// only fail, and the agent would never start): it is rendered as for an entry without a working
/// dir, and runs where it is started, the home dir for `restore --apply` (a launcher that names
/// `{cwd}` then fails to render, as for an entry without one).
pub fn render(
    registry: &Registry,
    entry: &Entry,
    session: &str,
    home: Option<Utf8PathBuf>,
) -> Result<String, RenderError> {
    render_with(registry, entry, session, home, &preflight::Cache::default())
}

/// [`render`] for one of many entries: the working dir is looked at through `cache`.
fn render_with(
    registry: &Registry,
    entry: &Entry,
    session: &str,
    home: Option<Utf8PathBuf>,
    cache: &preflight::Cache,
) -> Result<String, RenderError> {
    let gone =
        start_dir_with(entry, home.as_deref(), cache).is_some_and(|start| start.gone().is_some());
    let relaunch = relaunch(entry);
    let target = Target {
        cwd: if gone { None } else { entry.cwd.as_deref() },
        ..target(entry, session, relaunch.as_ref())
    };
    registry.render(&target, &launcher_map::RenderContext { home })
}

/// Like [`render`], but an agent without a launcher gives no command instead of an error.
pub fn command(
    registry: &Registry,
    entry: &Entry,
    session: &str,
    home: Option<Utf8PathBuf>,
) -> Result<Option<String>, RenderError> {
    command_with(registry, entry, session, home, &preflight::Cache::default())
}

/// [`command`] for one of many entries (a restore plan's item): the working dir is looked at
/// through `cache`.
pub fn command_with(
    registry: &Registry,
    entry: &Entry,
    session: &str,
    home: Option<Utf8PathBuf>,
    cache: &preflight::Cache,
) -> Result<Option<String>, RenderError> {
    match render_with(registry, entry, session, home, cache) {
        Ok(command) => Ok(Some(command)),
        Err(RenderError::NoLauncher { .. }) => Ok(None),
        Err(other) => Err(other),
    }
}

/// Why an entry is not resumed and its values not shown, when it holds a working dir or config
/// dir that would reach a shell or a terminal as something other than text (an index written by
/// another tool may hold one). [`Entry::check_dirs`] finds nothing else wrong with a dir.
pub fn refusal(entry: &Entry) -> Option<Refusal> {
    let error = entry.check_dirs().err()?;
    Refusal::of_dirs(entry.surface.as_str(), &error)
}
