//! A verdict to the session it resumes and the command that resumes it (through the launcher
//! registry), where that command starts (the recorded working dir, or the home dir when it is
//! gone), and the rule that refuses an entry whose values are not inert text.

use camino::{Utf8Path, Utf8PathBuf};
use index_core::{Entry, Provider};
use launcher_map::{Registry, RenderError, Target};
use preflight::paths::StartDir;
use preflight::{Outcome, Verdict};

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
    let cwd = entry.cwd.as_deref().filter(|cwd| !cwd.trim().is_empty())?;
    Some(preflight::paths::start_dir(cwd, home))
}

/// The launcher registry's view of an entry, resuming `session` (the entry's own, or the one a
/// preflight recovered), with the working dir recorded.
pub fn target<'a>(entry: &'a Entry, session: &'a str) -> Target<'a> {
    Target {
        provider: entry.provider.as_ref().map(Provider::as_str),
        session,
        repo: Some(entry.repo.as_str()),
        cwd: entry.cwd.as_deref(),
        config_dir: entry.config_dir.as_deref(),
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
    let gone = start_dir(entry, home.as_deref()).is_some_and(|start| start.gone().is_some());
    let target = Target {
        cwd: if gone { None } else { entry.cwd.as_deref() },
        ..target(entry, session)
    };
    registry.render(&target, &launcher_map::RenderContext { home })
}

/// Like [`render`], but a provider without a launcher gives no command instead of an error.
pub fn command(
    registry: &Registry,
    entry: &Entry,
    session: &str,
    home: Option<Utf8PathBuf>,
) -> Result<Option<String>, RenderError> {
    match render(registry, entry, session, home) {
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
