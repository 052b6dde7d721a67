//! Preflight: will a pane resume its conversation, recover another one, or start fresh?
//!
//! Answered before anything is spawned, by evaluating the condition the agent CLI will evaluate
//! when asked to `--resume` (is the transcript where the CLI looks, and does it hold a
//! conversation?), in the order the spawn path tries things: the resume gate, the held id, the
//! recovery retry, the pane's history. The verdict table and the rules are
//! `docs/preflight.md`; this crate never spawns or writes anything.
//!
//! ```no_run
//! use preflight::{Input, Verdict, preflight};
//!
//! let outcome = preflight(&Input {
//!     agent: Some("claude".into()),
//!     session: Some("3f2c...".into()),
//!     cwd: Some("/home/u/project".into()),
//!     config_dir: Some("/home/u/.claude".into()),
//!     ..Input::default()
//! });
//! if outcome.verdict == Verdict::Resume { /* claude --resume <outcome.session_id> */ }
//! ```

#![deny(missing_docs)]

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod layout;
pub mod opencode;
pub mod paths;
pub mod qwen;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use agent_paths::Agent;
use camino::{Utf8Path, Utf8PathBuf};
use serde::Serialize;

use crate::layout::{Layout, NoLayout, Transcript};
use crate::paths::StartDir;

/// How many links of a session chain are followed before giving up (cycle-safe besides).
pub const MAX_CHAIN_HOPS: usize = 16;

/// What the preflight is asked about: plain values, filled by the caller from an index entry
/// or from flags.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// The agent: `claude`, `codex`, `gemini`, `copilot`, or another name. `None` (or blank): it
    /// cannot resume by id.
    pub agent: Option<String>,
    /// The id the next spawn would attempt to `--resume` ("held"), if any.
    pub session: Option<String>,
    /// The session's working dir as recorded; `~` and symlinks are resolved here. `None` (or
    /// blank): not known.
    pub cwd: Option<String>,
    /// The agent's config dir (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `COPILOT_HOME`, `QWEN_HOME`; for Gemini the home dir
    /// that holds `.gemini`, `GEMINI_CLI_HOME`). Empty: nothing to check.
    pub config_dir: Option<String>,
    /// The session whose conversation the pane shows, when no id is held.
    pub history_session: Option<String>,
    /// The surface's known session chain, oldest first; the last id is the head.
    pub chain: Vec<String>,
    /// Ids bound to other surfaces: never offered as a recovery.
    pub excluded: BTreeSet<String>,
    /// The home dir, for `~` in `cwd` and `config_dir`, and where a restore starts the agent
    /// when `cwd` is gone ([`paths::start_dir`]): the verdict is then what the agent does
    /// started there.
    pub home: Option<Utf8PathBuf>,
    /// The variables the agent was started with, as its hook recorded them (the index entry's
    /// launch): Qwen Code's `QWEN_RUNTIME_DIR` says where its sessions are, over its `.env`
    /// files and settings, as it did for the agent.
    pub launch_env: std::collections::BTreeMap<String, String>,
}

/// The answer, as the spawn path would act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// `--resume <session_id>` will load the conversation.
    Resume,
    /// The held id is gone; the retry resumes `session_id`, another conversation of this dir.
    Recover,
    /// The spawn starts a blank conversation.
    Fresh,
    /// Nothing to check against: the agent cannot resume by id, or no config dir is known.
    Unknown,
}

impl Verdict {
    /// The verdict's wire name, as the `--json` documents and the text output write it:
    /// `resume`, `recover`, `fresh` or `unknown` (the same as its serde form).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Resume => "resume",
            Verdict::Recover => "recover",
            Verdict::Fresh => "fresh",
            Verdict::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Verdict {
    /// The wire name ([`Verdict::as_str`]).
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Stable ids of the steps (labels may change, ids do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepId {
    /// Whether the agent can resume by id (`provider` on the wire, its first name).
    #[serde(rename = "provider")]
    Agent,
    /// The held id.
    SessionId,
    /// The session the pane shows, when no id is held.
    History,
    /// The gate: the chain's head.
    Chain,
    /// The transcript check.
    Transcript,
    /// The recovery retry.
    Recovery,
    /// The recovery scan, as evidence.
    Scan,
    /// What resuming puts at risk: the agent's own start-up cleanup (Gemini).
    Cleanup,
    /// The recorded working dir is gone: where the agent starts instead (only then taken).
    WorkingDir,
}

impl StepId {
    /// The step's label for people.
    pub fn label(self) -> &'static str {
        match self {
            StepId::Agent => "Checking agent",
            StepId::SessionId => "Resolving session id",
            StepId::History => "Continuing this pane's conversation",
            StepId::Chain => "Checking the agent's conversation",
            StepId::Transcript => "Locating transcript",
            StepId::Recovery => "Checking recovery",
            StepId::Scan => "Scanning for recoverable sessions",
            StepId::Cleanup => "Checking the agent's start-up cleanup",
            StepId::WorkingDir => "Checking the working dir",
        }
    }
}

/// One labelled step of the sequence. `ok = false` is how the sequence narrows, not an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The step.
    pub id: StepId,
    /// The step's label for people.
    pub label: &'static str,
    /// Whether the step passed.
    pub ok: bool,
    /// What it found.
    pub detail: String,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
}

/// The verdict, the session that would actually load, the evidence, and the steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// The session that would load.
    pub session_id: Option<String>,
    /// What the recovery scan found on disk when the verdict does not use it (row 6): evidence
    /// only, never a verdict.
    pub recoverable_session_id: Option<String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// Where the session that would load is on disk, as the preflight located it (not part of
    /// the `--json` documents).
    #[serde(skip)]
    pub transcript: Option<Transcript>,
}

/// Runs the preflight. Reads at most one file check per session asked about, one directory
/// listing for the recovery scan, and transcript tails along a `continued-in` chain.
pub fn preflight(input: &Input) -> Outcome {
    preflight_with(input, &Cache::default())
}

/// What a batch of preflights (a restore plan) reads once: Claude Code's folders and settings,
/// which Codex state databases are locked, Gemini's projects and session files. Keep one for
/// one batch, not longer.
#[derive(Debug, Default)]
pub struct Cache {
    /// Claude Code's project folders, working dirs and transcripts.
    pub claude: claude::Cache,
    /// Codex's state databases found locked.
    pub codex: codex::Cache,
    /// Gemini's project slugs and session files.
    pub gemini: gemini::Cache,
    /// The process table, read once.
    processes: std::cell::OnceCell<proc_table::Snapshot>,
    /// Where each recorded working dir starts its agent, by home dir then working dir: one
    /// `stat` per dir for the batch.
    start_dirs: std::cell::RefCell<HashMap<Option<Utf8PathBuf>, HashMap<String, StartDir>>>,
}

impl Cache {
    /// Every running process ([`proc_table::Snapshot`], with the environment of the agents'
    /// processes), read the first time it is asked for and kept for the batch.
    pub fn processes(&self) -> &proc_table::Snapshot {
        self.processes.get_or_init(|| {
            let deadline = Instant::now() + claude::PS_DEADLINE;
            let programs = agent_paths::AGENTS.map(|facts| facts.name);
            proc_table::Snapshot::read(proc_table::table(), deadline, &programs)
        })
    }

    /// [`paths::start_dir`] through the cache: each working dir is looked at once per batch.
    pub fn start_dir(&self, cwd: &str, home: Option<&Utf8Path>) -> StartDir {
        let known = self
            .start_dirs
            .borrow()
            .get(&home.map(Utf8Path::to_path_buf))
            .and_then(|dirs| dirs.get(cwd).cloned());
        known.unwrap_or_else(|| {
            let start = paths::start_dir(cwd, home);
            self.start_dirs
                .borrow_mut()
                .entry(home.map(Utf8Path::to_path_buf))
                .or_default()
                .insert(cwd.to_owned(), start.clone());
            start
        })
    }

    /// Takes `processes` as the process table for the batch instead of reading it: for a
    /// caller that has read it already.
    pub fn assume_processes(&self, processes: proc_table::Snapshot) {
        let _ = self.processes.set(processes);
    }
}

/// [`preflight`] for one of many inputs asked about at once (a restore plan): what is read
/// from disk is kept in `cache` and read once for the whole batch. The answers are the same.
pub fn preflight_with(input: &Input, cache: &Cache) -> Outcome {
    let started = Instant::now();
    let mut trail = Trail {
        steps: Vec::new(),
        mark: started,
    };
    let decision = decide(input, &mut trail, cache);
    Outcome {
        verdict: decision.verdict,
        session_id: decision.session,
        recoverable_session_id: decision.recoverable,
        steps: trail.steps,
        duration_ms: millis_since(started),
        transcript: decision.transcript,
    }
}

/// Milliseconds since `mark`, rounded to whole microseconds: `14.868`, never
/// `14.868000000000001` (a whole number of microseconds divided by 1000 prints as its decimal).
fn millis_since(mark: Instant) -> f64 {
    mark.elapsed().as_micros() as f64 / 1000.0
}

struct Trail {
    steps: Vec<Step>,
    mark: Instant,
}

impl Trail {
    /// Records a step; its duration is the time since the previous step.
    fn step(&mut self, id: StepId, ok: bool, detail: impl Into<String>) {
        self.steps.push(Step {
            id,
            label: id.label(),
            ok,
            detail: detail.into(),
            duration_ms: millis_since(self.mark),
        });
        self.mark = Instant::now();
    }
}

struct Decision {
    verdict: Verdict,
    session: Option<String>,
    recoverable: Option<String>,
    transcript: Option<Transcript>,
}

impl Decision {
    fn new(verdict: Verdict, session: Option<&str>) -> Self {
        Decision {
            verdict,
            session: session.map(str::to_string),
            recoverable: None,
            transcript: None,
        }
    }

    /// A resume of `session` from `transcript`.
    fn resume(session: &str, transcript: Transcript) -> Self {
        Decision {
            transcript: Some(transcript),
            ..Decision::new(Verdict::Resume, Some(session))
        }
    }
}

fn non_empty(value: &Option<String>) -> Option<&str> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

fn decide(input: &Input, trail: &mut Trail, cache: &Cache) -> Decision {
    let home = input.home.as_deref();
    let Some(agent_name) = non_empty(&input.agent) else {
        trail.step(
            StepId::Agent,
            false,
            "this agent cannot resume a session by id",
        );
        return Decision::new(Verdict::Unknown, None);
    };
    let Some(agent) = Agent::from_name(agent_name) else {
        trail.step(
            StepId::Agent,
            false,
            format!("{agent_name}: no known transcript layout to check a resume against"),
        );
        return Decision::new(Verdict::Unknown, None);
    };
    let Some(config_dir) = non_empty(&input.config_dir) else {
        trail.step(StepId::Agent, true, agent_name);
        trail.step(
            StepId::Transcript,
            false,
            "no config dir known: nothing to check against",
        );
        return Decision::new(Verdict::Unknown, None);
    };
    let config_dir = paths::expand_home(config_dir, home);
    let start = start_dir(input, cache);
    let cwd = start_cwd(input, start.as_ref());
    let disk = match layout::open(agent, config_dir, cwd, home, &input.launch_env, cache) {
        Ok(layout) => layout,
        Err(NoLayout::NoWorkingDir) => {
            trail.step(StepId::Agent, true, agent_name);
            trail.step(
                StepId::Transcript,
                false,
                "no working dir known: nothing to check against",
            );
            return Decision::new(Verdict::Unknown, None);
        }
    };
    let disk = disk.as_ref();
    trail.step(
        StepId::Agent,
        true,
        format!("{agent_name}, transcripts in {}", disk.describe()),
    );
    match &start {
        Some(StartDir::Home { gone, home }) => trail.step(
            StepId::WorkingDir,
            false,
            format!(
                "the working dir {gone} is gone: a restore starts the agent in the home dir \
                 {home}, and this is what it does there"
            ),
        ),
        Some(StartDir::Nowhere { gone }) => trail.step(
            StepId::WorkingDir,
            false,
            format!(
                "the working dir {gone} is gone and no home dir is known to start the agent \
                 in: judged as if it started in the recorded dir"
            ),
        ),
        Some(StartDir::Recorded(_)) | None => {}
    }

    let decision = match non_empty(&input.session) {
        Some(held) => decide_held(input, disk, held, trail),
        None => decide_unheld(input, disk, trail),
    };
    if let Some(session) = decision.session.as_deref()
        && let Some(hazard) = disk.hazard(session)
    {
        trail.step(StepId::Cleanup, false, hazard);
    }
    decision
}

/// Where a restore starts the agent of `input` ([`paths::start_dir`]); `None` when no working
/// dir is recorded.
fn start_dir(input: &Input, cache: &Cache) -> Option<StartDir> {
    non_empty(&input.cwd).map(|cwd| cache.start_dir(cwd, input.home.as_deref()))
}

/// The working dir the agent's layout is read for: the recorded one, or the home dir it starts
/// in when the recorded one is gone.
fn start_cwd<'a>(input: &'a Input, start: Option<&'a StartDir>) -> Option<&'a str> {
    match start {
        Some(start @ StartDir::Home { .. }) => start.dir().map(Utf8Path::as_str),
        _ => non_empty(&input.cwd),
    }
}

/// Rows 2 to 4: the spawn attempts `--resume <held>`; when the CLI rejects it, the retry
/// resumes the recovery candidate, else starts blank.
fn decide_held(input: &Input, disk: &dyn Layout, held: &str, trail: &mut Trail) -> Decision {
    trail.step(StepId::SessionId, true, format!("holding {held}"));
    if let Some(decision) = gate(input, disk, held, trail) {
        return decision;
    }
    let located = disk.locate(held);
    let reachable = located.reachable;
    trail.step(
        StepId::Transcript,
        reachable,
        format!("{}: {}", located.place, located.state),
    );
    if reachable {
        return Decision::resume(held, located);
    }
    let held_elsewhere = std::cell::RefCell::new(Vec::new());
    let scanned = disk.scan(&|id| {
        let excluded = input.excluded.contains(id);
        if excluded && id != held {
            held_elsewhere.borrow_mut().push(id.to_string());
        }
        id == held || excluded
    });
    match scanned {
        Ok(Some(candidate)) => {
            trail.step(
                StepId::Recovery,
                true,
                format!(
                    "{} ({} bytes) is on disk for this working dir",
                    candidate.session, candidate.size
                ),
            );
            Decision::new(Verdict::Recover, Some(&candidate.session))
        }
        Ok(None) => {
            trail.step(
                StepId::Recovery,
                false,
                nothing_to_recover(
                    "no other conversation on disk for this working dir",
                    held_elsewhere.into_inner(),
                ),
            );
            Decision::new(Verdict::Fresh, None)
        }
        Err(reason) => {
            trail.step(StepId::Recovery, false, reason.to_string());
            Decision::new(Verdict::Fresh, None)
        }
    }
}

/// Rows 5 and 6: no id held. The pane's history continues when its session is reachable;
/// otherwise the spawn starts blank and the scan only reports what is on disk.
fn decide_unheld(input: &Input, disk: &dyn Layout, trail: &mut Trail) -> Decision {
    trail.step(StepId::SessionId, false, "no session id held");
    if let Some(history) = non_empty(&input.history_session) {
        if let Some(decision) = gate(input, disk, history, trail) {
            return with_evidence(decision, input, disk, trail);
        }
        let located = disk.locate(history);
        let reachable = located.reachable;
        trail.step(
            StepId::History,
            reachable,
            format!("{history} at {}: {}", located.place, located.state),
        );
        if reachable {
            return Decision::resume(history, located);
        }
    }
    with_evidence(Decision::new(Verdict::Fresh, None), input, disk, trail)
}

/// Adds row 6's evidence to a `fresh` verdict: what the recovery scan would find.
fn with_evidence(
    mut decision: Decision,
    input: &Input,
    disk: &dyn Layout,
    trail: &mut Trail,
) -> Decision {
    if decision.verdict != Verdict::Fresh {
        return decision;
    }
    let held_elsewhere = std::cell::RefCell::new(Vec::new());
    let scanned = disk.scan(&|id| {
        let excluded = input.excluded.contains(id);
        if excluded {
            held_elsewhere.borrow_mut().push(id.to_string());
        }
        excluded
    });
    match scanned {
        Ok(Some(candidate)) => {
            trail.step(
                StepId::Scan,
                true,
                format!(
                    "{} ({} bytes) is on disk; not resumed on this path, reported only",
                    candidate.session, candidate.size
                ),
            );
            decision.recoverable = Some(candidate.session);
        }
        Ok(None) => trail.step(
            StepId::Scan,
            false,
            nothing_to_recover("nothing recoverable on disk", held_elsewhere.into_inner()),
        ),
        Err(reason) => trail.step(StepId::Scan, false, reason.to_string()),
    }
    decision
}

/// Why a recovery scan found nothing: `none`, or, when the only conversations on disk are
/// bound to other surfaces, that they are there and held.
fn nothing_to_recover(none: &str, mut held_elsewhere: Vec<String>) -> String {
    if held_elsewhere.is_empty() {
        return none.to_string();
    }
    held_elsewhere.sort();
    let (count, names) = (held_elsewhere.len(), held_elsewhere.join(", "));
    let (noun, verb) = if count == 1 {
        ("conversation", "is")
    } else {
        ("conversations", "are")
    };
    format!(
        "no conversation on disk for this working dir is free to recover: the {noun} {names} \
         {verb} on disk but bound to another surface"
    )
}

/// The resume gate: a candidate that is not the head of its session chain is redirected to the
/// head when the head is reachable here, else refused. `None`: the candidate stands.
fn gate(input: &Input, disk: &dyn Layout, candidate: &str, trail: &mut Trail) -> Option<Decision> {
    let head = chain_head(input, disk, candidate);
    if head == candidate {
        if input.chain.len() > 1 {
            trail.step(
                StepId::Chain,
                true,
                format!("{candidate} has not moved on to another session"),
            );
        }
        return None;
    }
    let located = disk.locate(&head);
    if located.reachable {
        trail.step(StepId::Chain, true, format!("moved on to {head}"));
        Some(Decision::resume(&head, located))
    } else {
        trail.step(
            StepId::Chain,
            false,
            format!(
                "the conversation moved on to {head}, which this spawn cannot resume ({}: {})",
                located.place, located.state
            ),
        );
        Some(Decision::new(Verdict::Fresh, None))
    }
}

/// Follows the chain from `candidate`: to the surface's newest id when the candidate is an
/// earlier one, and along `continued-in` records at the end of transcripts; bounded and
/// cycle-safe. The last id reached is the head.
fn chain_head(input: &Input, disk: &dyn Layout, candidate: &str) -> String {
    let mut current = candidate.to_string();
    let mut seen = HashSet::from([current.clone()]);
    for _ in 0..MAX_CHAIN_HOPS {
        let next = match input.chain.last() {
            Some(head) if *head != current && input.chain.contains(&current) => Some(head.clone()),
            _ => disk.continued_in(&current),
        };
        match next {
            Some(next) if seen.insert(next.clone()) => current = next,
            _ => break,
        }
    }
    current
}

/// When the transcript `input.session` would be resumed from was last modified: the time the
/// conversation last changed (a prompt, an answer). `None` when no transcript is known: no
/// session, an unknown agent, no config dir, or no file. For Claude Code it is the file
/// [`claude::locate`] finds (the working dir's project folder first, as the CLI looks); for
/// Codex the rollout file; for Gemini the session file `--resume` would load.
pub fn transcript_modified(input: &Input) -> Option<std::time::SystemTime> {
    transcript_modified_with(input, &Cache::default())
}

/// [`transcript_modified`] for one of many inputs asked about at once (`list`, a restore
/// plan): the agent's files are read through `cache`, once for the whole batch.
pub fn transcript_modified_with(input: &Input, cache: &Cache) -> Option<std::time::SystemTime> {
    let layout = open_layout(input, cache)?;
    layout.last_change(non_empty(&input.session)?)
}

/// The layout `input`'s agent keeps for its working dir, reading through `cache`; `None`
/// for an agent with no known layout, no config dir, or, where the layout depends on it, no
/// working dir.
pub fn open_layout<'a>(input: &Input, cache: &'a Cache) -> Option<Box<dyn Layout + 'a>> {
    let home = input.home.as_deref();
    let agent = Agent::from_name(non_empty(&input.agent)?)?;
    let config_dir = paths::expand_home(non_empty(&input.config_dir)?, home);
    let start = start_dir(input, cache);
    layout::open(
        agent,
        config_dir,
        start_cwd(input, start.as_ref()),
        home,
        &input.launch_env,
        cache,
    )
    .ok()
}

/// The transcript path a Claude session would be resumed from, for messages and tests.
pub fn claude_transcript_path(
    config_dir: &str,
    cwd: &str,
    session: &str,
    home: Option<&Utf8Path>,
) -> Option<Utf8PathBuf> {
    claude_transcript_path_with(config_dir, cwd, session, home, &claude::Cache::default())
}

/// [`claude_transcript_path`] resolving the working dir through a batch's cache.
pub fn claude_transcript_path_with(
    config_dir: &str,
    cwd: &str,
    session: &str,
    home: Option<&Utf8Path>,
    cache: &claude::Cache,
) -> Option<Utf8PathBuf> {
    let config_dir = paths::expand_home(config_dir, home);
    let cwd = cache.resolve_working_dir(cwd, home);
    claude::transcript_path(&claude::project_dir(&config_dir, &cwd), session)
}

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

#[cfg(test)]
mod tests {
    use super::Verdict;

    #[test]
    fn verdict_names_are_the_wire_names_of_the_serialized_form() {
        let all = [
            (Verdict::Resume, "resume"),
            (Verdict::Recover, "recover"),
            (Verdict::Fresh, "fresh"),
            (Verdict::Unknown, "unknown"),
        ];
        for (verdict, name) in all {
            assert_eq!(verdict.as_str(), name);
            assert_eq!(serde_json::to_value(verdict).unwrap(), name, "{verdict:?}");
        }
    }
}
