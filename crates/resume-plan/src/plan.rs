//! The restore plan: for every surface (or those whose session did not end cleanly), the
//! preflight's verdict, the session that would load, the command that resumes it, and why it is
//! not resumed when it is not. [`PlanItem`] is the `--json restore` wire form, readable back.
//!
//! One conversation is never resumed twice: a session bound to another surface, or held by a
//! live Claude Code process, is reported as held elsewhere. The plan is linear in the number of
//! entries: the excluded ids are built once, and what is read per config dir (live agents, the
//! retention setting) once per dir; the preflights share one cache (which also remembers a
//! locked Codex state database, so its busy wait is paid once per plan).

use std::collections::BTreeSet;
use std::time::SystemTime;

use agent_paths::{Agent, CleanEnd};
use camino::Utf8PathBuf;
use index_core::{Entry, Index, InvalidId, Millis, SessionId};
use launcher_map::{Registry, RenderError};
use preflight::Verdict;
use serde::{Deserialize, Serialize};

use crate::reasons::{EndEvidence, HeldElsewhere, Refusal, UnclearEnd};
use crate::{Environment, input, resume};

/// One surface of the plan. Its `--json` form (version 1) says [`PlanItem::held_elsewhere`],
/// [`PlanItem::refused`] and [`PlanItem::why`] both in words and typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "crate::wire::PlanItemV1", from = "crate::wire::PlanItemV1")]
pub struct PlanItem {
    /// The surface (a pane) the entry belongs to.
    pub surface: String,
    /// The entry's repo.
    pub repo: String,
    /// The entry's agent (`claude` when none was recorded); `provider` in `--json`.
    pub agent: String,
    /// The session the index holds for the surface.
    pub held_session: String,
    /// Whether the session ended on purpose (a clean exit), as its hook reported.
    pub ended_cleanly: bool,
    /// The preflight's verdict.
    pub verdict: Verdict,
    /// The session that would load.
    pub session_id: Option<String>,
    /// A conversation of the same dir found on disk that the verdict does not use (evidence).
    pub recoverable_session_id: Option<String>,
    /// The command that resumes it, when there is one to run.
    pub command: Option<String>,
    /// The entry's working dir, as recorded.
    pub cwd: Option<String>,
    /// Where the agent starts instead of the recorded working dir, which is gone (deleted or
    /// renamed): the home dir. The command then has no `cd`, and the verdict is what the agent
    /// does started there. `None` when it starts in the recorded dir.
    pub starts_in: Option<String>,
    /// Who holds the session already: another surface or a live agent process.
    pub held_elsewhere: Option<HeldElsewhere>,
    /// Why the entry is not resumed although it could be: a stored value that is not inert
    /// text (a control character in its working dir or config dir).
    pub refused: Option<Refusal>,
    /// The transcript is close to the agent's retention cut-off (Claude Code's
    /// `cleanupPeriodDays`, Gemini's `general.sessionRetention.maxAge`).
    pub retention: Option<preflight::claude::RetentionRisk>,
    /// What the agent's own start-up cleanup may delete once this is resumed (Gemini with
    /// `general.sessionRetention` on), as the preflight's cleanup step says it.
    pub cleanup: Option<String>,
    /// Why a session of an agent whose end reason does not tell a quit from a crash (Codex,
    /// Gemini) is or is not offered, from what could be observed.
    pub why: Option<EndEvidence>,
    /// What applying the plan did to this surface, for people (filled in by whoever applies
    /// it): [`PlanItem::outcome`] said as text, kept for readers of the first `--json` form.
    pub applied: Option<String>,
    /// When the surface was last active, in epoch milliseconds: the later of its entry's
    /// `last_active` and its transcript's last change ([`Entry::last_activity`]).
    pub last_activity: Millis,
    /// What applying the plan did to this surface, typed.
    pub outcome: Option<crate::outcome::Applied>,
    /// The layout of the surface's window when it was last recorded (the index entry's
    /// `window_layout`): applying lays out a window it re-creates with the newest one.
    pub window_layout: Option<String>,
    /// Why the surface's pane died, from evidence ([`crate::boot::say_why_died`]); `None` for
    /// one whose session ended cleanly, or before it was said.
    pub died: Option<crate::boot::Died>,
    /// How the command starts the agent again, from the launch its hook recorded: the kept
    /// flags, the model and provider variables, and the flags the pinned CLI does not take,
    /// left out ([`resume::Relaunch`]). `None` when nothing was recorded, or the entry is
    /// refused.
    pub launch: Option<resume::Relaunch>,
}

impl PlanItem {
    /// Whether the plan resumes this surface.
    pub fn resumable(&self) -> bool {
        self.command.is_some() && self.held_elsewhere.is_none() && self.refused.is_none()
    }

    /// Where applying the plan starts the surface's command or shell: the recorded working dir
    /// when it exists, else [`PlanItem::starts_in`] (the home dir); `None` when the entry is
    /// refused or neither is known.
    pub fn usable_dir(&self) -> Option<&str> {
        if self.refused.is_some() {
            return None;
        }
        self.cwd
            .as_deref()
            .filter(|dir| std::path::Path::new(dir).is_dir())
            .or(self.starts_in.as_deref())
    }
}

/// The whole plan, as `crash-resume --json restore` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The version of the JSON output.
    pub version: u32,
    /// One item per surface, sorted by surface.
    pub surfaces: Vec<PlanItem>,
    /// When the plan was applied: which instance of the multiplexer it was applied to
    /// (`mux::Backend::location`: for tmux, the server's socket path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_into: Option<String>,
    /// With `--once-per-boot`, when a restore of this boot into this instance had run: that
    /// run, as the ledger holds it (nothing was done, `surfaces` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub already_ran: Option<crate::boot::Run>,
    /// A staggered restore stopped after this many failed starts in a row, leaving the
    /// surfaces after them planned (`outcome` `stopped`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<usize>,
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A launcher failed to render (a NUL byte in a recorded value, a field it lacks).
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A recovered session id that is not a valid id.
    #[error(transparent)]
    InvalidId(#[from] InvalidId),
}

/// Plans surfaces one at a time, sharing what is read once for all of them.
#[derive(Debug)]
pub struct Planner<'a> {
    index: &'a Index,
    registry: &'a Registry,
    env: &'a Environment,
    home: Option<Utf8PathBuf>,
    excluded: BTreeSet<String>,
    cache: preflight::Cache,
    now: SystemTime,
}

impl<'a> Planner<'a> {
    /// A planner over `index`, rendering commands with `registry`, in the environment `env`.
    pub fn new(index: &'a Index, registry: &'a Registry, env: &'a Environment) -> Self {
        Planner::with_cache(index, registry, env, preflight::Cache::default())
    }

    /// [`Planner::new`], its preflights sharing `cache`: what it holds already is not read
    /// again (such as the sessions running agents hold, when the caller knows them:
    /// [`preflight::claude::Cache::assume_live_holders`]).
    pub fn with_cache(
        index: &'a Index,
        registry: &'a Registry,
        env: &'a Environment,
        cache: preflight::Cache,
    ) -> Self {
        Planner {
            index,
            registry,
            env,
            home: env.home(),
            // Every bound id; each entry's own is taken out while its preflight runs.
            excluded: input::excluded_ids(index, None),
            cache,
            now: SystemTime::now(),
        }
    }

    /// The plan for one entry of the index.
    pub fn item(&mut self, entry: &Entry) -> Result<PlanItem, PlanError> {
        let own = self.excluded.take(entry.session.as_str());
        let mut input =
            input::preflight_input_excluding(entry, std::mem::take(&mut self.excluded), self.env);
        let outcome = preflight::preflight_with(&input, &self.cache);
        self.excluded = std::mem::take(&mut input.excluded);
        self.excluded.extend(own);
        let agent = input.agent.clone().unwrap_or_default();
        let session = resume::resumed_session(entry, &outcome);
        let layout = preflight::open_layout(&input, &self.cache);
        let held_elsewhere = session
            .as_deref()
            .and_then(|session| self.held_elsewhere(entry, session, layout.as_deref()));
        // The transcript as the preflight located it; located again only for a recovered
        // session, which the preflight found by a scan.
        let retention = match (&session, &layout) {
            (Some(session), Some(layout)) => outcome
                .transcript
                .clone()
                .or_else(|| Some(layout.locate(session)))
                .and_then(|transcript| layout.retention(&transcript, self.now)),
            _ => None,
        };
        let refused = resume::refusal(entry);
        let starts_in = resume::start_dir_with(entry, self.home.as_deref(), &self.cache)
            .filter(|start| start.gone().is_some())
            .and_then(|start| start.dir().map(ToString::to_string));
        let command = match session.as_deref() {
            Some(session) if refused.is_none() => {
                // A recovered id is rendered only once it is known to be a valid id.
                let session = SessionId::new(session)?;
                resume::command_with(
                    self.registry,
                    entry,
                    session.as_str(),
                    self.home.clone(),
                    &self.cache,
                )?
            }
            _ => None,
        };
        let why = Agent::from_name(&agent)
            .filter(|agent| agent.facts().clean_end == CleanEnd::FromOpenPane)
            .and_then(UnclearEnd::of)
            .map(|agent| end_evidence(agent, entry, &outcome))
            // A session a running agent holds is not offered, whatever its end says.
            .filter(|evidence| {
                held_elsewhere.is_none() || !matches!(evidence, EndEvidence::Offered { .. })
            });
        let cleanup = outcome
            .steps
            .iter()
            .find(|step| step.id == preflight::StepId::Cleanup)
            .map(|step| step.detail.clone());
        let last_activity = entry.last_activity(self.conversation_active(
            entry,
            session.as_deref(),
            outcome.transcript.as_ref(),
        ));
        let launch = match refused {
            None => resume::relaunch(entry),
            Some(_) => None,
        };
        let item = PlanItem {
            surface: entry.surface.to_string(),
            repo: entry.repo.to_string(),
            agent,
            held_session: entry.session.to_string(),
            ended_cleanly: entry.ended_at.is_some(),
            verdict: outcome.verdict,
            session_id: session,
            recoverable_session_id: outcome.recoverable_session_id,
            command,
            cwd: entry.cwd.clone(),
            starts_in,
            held_elsewhere,
            refused,
            retention,
            cleanup,
            why,
            applied: None,
            last_activity,
            outcome: None,
            window_layout: entry.window_layout.clone(),
            died: None,
            launch,
        };
        Ok(item)
    }

    /// When `entry`'s own conversation last changed on disk: the transcript the preflight
    /// located when the held session is the one that `loads`, else looked up through the
    /// plan's cache.
    fn conversation_active(
        &self,
        entry: &Entry,
        loads: Option<&str>,
        transcript: Option<&preflight::layout::Transcript>,
    ) -> Option<Millis> {
        match transcript {
            Some(transcript) if loads == Some(entry.session.as_str()) => {
                transcript.modified().and_then(input::millis_since_epoch)
            }
            _ => input::conversation_active_with(entry, self.env, &self.cache),
        }
    }

    /// Who holds `session` besides `entry`'s surface: another surface of the index, a live
    /// agent process of the same config dir, or the surface's own live agent (the liveness
    /// rule, [`crate::live`]).
    fn held_elsewhere(
        &self,
        entry: &Entry,
        session: &str,
        layout: Option<&dyn preflight::layout::Layout>,
    ) -> Option<HeldElsewhere> {
        if let Some(owner) = self
            .index
            .owner_of(session)
            .filter(|owner| **owner != entry.surface)
        {
            return Some(HeldElsewhere::Surface {
                surface: owner.to_string(),
            });
        }
        layout
            .and_then(|layout| {
                layout
                    .live_holders()
                    .into_iter()
                    .find(|(held, _)| held == session)
                    .map(|(_, pid)| pid)
            })
            .or_else(|| crate::live::surface_agent(self.cache.processes(), entry))
            .map(|pid| HeldElsewhere::Agent { pid })
    }
}

/// The working dirs in which `plan` resumes more than one session of an agent whose start-up
/// cleanup is on (Gemini's): each start deletes, in its dir, the session files that hold no
/// prompt yet, the other panes' included. Each dir with its surfaces, sorted.
pub fn shared_cleanup_dirs(plan: &[PlanItem]) -> Vec<(String, Vec<String>)> {
    let mut dirs: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
    for item in plan
        .iter()
        .filter(|item| item.resumable() && item.cleanup.is_some())
    {
        let Some(cwd) = &item.cwd else { continue };
        dirs.entry((item.agent.clone(), cwd.clone()))
            .or_default()
            .push(item.surface.clone());
    }
    dirs.into_iter()
        .filter(|(_, surfaces)| surfaces.len() > 1)
        .map(|((_, cwd), surfaces)| (cwd, surfaces))
        .collect()
}

/// Which surfaces a plan holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    /// Also the surfaces whose session ended cleanly.
    pub all: bool,
    /// Only surfaces active within this many milliseconds of `now` (by
    /// [`Entry::last_activity`], which counts the transcript's changes).
    pub max_age: Option<Millis>,
    /// The time the max age is measured to, in epoch milliseconds.
    pub now: Millis,
}

/// The plan for the surfaces of `index` that `options` selects, sorted by surface.
pub fn build_plan(
    index: &Index,
    registry: &Registry,
    env: &Environment,
    options: PlanOptions,
) -> Result<Vec<PlanItem>, PlanError> {
    let mut planner = Planner::new(index, registry, env);
    let mut plan = Vec::new();
    for entry in index
        .entries()
        .into_iter()
        .filter(|entry| options.all || entry.ended_at.is_none())
    {
        let item = planner.item(entry)?;
        // The item's last activity counts its transcript's last change already.
        if let Some(max_age) = options.max_age
            && options.now.saturating_sub(item.last_activity) > max_age
        {
            continue;
        }
        plan.push(item);
    }
    Ok(plan)
}

/// Why a session of an agent whose end reason does not tell a quit from a crash (Codex, Gemini,
/// Copilot) is or is not offered. Codex gives every end the reason `other`, Gemini `exit`,
/// Copilot `user_exit` (after a `/exit` and after a killed tmux server alike), so the
/// evidence is where the end was seen: the hook marks a session ended only when the end came
/// from the agent in a pane that still existed; a killed pane reports nothing, nor does Codex
/// running in its shared daemon.
fn end_evidence(agent: UnclearEnd, entry: &Entry, outcome: &preflight::Outcome) -> EndEvidence {
    if entry.ended_at.is_some() {
        return EndEvidence::Ended { agent };
    }
    // What the transcript check found; else the step that narrowed the sequence last.
    let detail = outcome
        .steps
        .iter()
        .rev()
        .find(|step| step.id == preflight::StepId::Transcript)
        .or_else(|| outcome.steps.iter().rev().find(|step| !step.ok))
        .map(|step| step.detail.clone())
        .unwrap_or_default();
    match outcome.verdict {
        Verdict::Resume => EndEvidence::Offered { agent, detail },
        _ => EndEvidence::CannotResume { agent, detail },
    }
}
