//! `crash-resume restore [--all] [--apply tmux]`: after a reboot, every surface whose session
//! did not end cleanly, with its preflight verdict, the session that would load and the command
//! that resumes it; with `--apply tmux`, re-open each resumable `tmux:` surface.
//!
//! One conversation is never resumed twice: a session bound to another surface or held by a
//! live agent process is reported as held elsewhere and not resumed, and each surface is
//! claimed in the index (under its lock) before anything is started. Applying holds the
//! restore lock (`<index>.restore.lock`) from the first pane to the last, so two restores at
//! once never create the same session, window or pane: the second finds what the first made,
//! and the surfaces it claimed.
//!
//! An entry whose working dir or config dir holds a control character (an index another tool
//! wrote) is refused: it gets no command, and its values are never typed or printed raw.
//!
//! The plan is linear in the number of entries: the set of ids excluded from recovery is built
//! once, the launcher registry is loaded once, what is read per config dir (live agents, the
//! retention setting) is read once per dir, and the preflights share one cache
//! (`preflight::claude::Cache`), so each working dir is resolved and each project folder listed
//! once.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use anyhow::anyhow;
use camino::Utf8PathBuf;
use index_core::text::escape;
use index_core::{Entry, Index, Provider};
use preflight::Verdict;
use serde::Serialize;

use crate::args::{Global, RestoreArgs};
use crate::commands::{self, load, open_store};
use crate::output::OUTPUT_VERSION;
use crate::{Failure, tmux};

/// How long a restore's claim on a surface keeps a second restore away (unless the resumed
/// agent records itself first).
const CLAIM_TTL_MS: u64 = 10 * 60 * 1000;

/// How long a restore waits for another one that is applying (tmux commands only: it never
/// waits for an agent, so a long wait means something is stuck).
const RESTORE_LOCK_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Serialize)]
pub struct PlanItem {
    pub surface: String,
    pub repo: String,
    pub provider: String,
    /// The session the index holds for the surface.
    pub held_session: String,
    pub ended_cleanly: bool,
    pub verdict: Verdict,
    /// The session that would load.
    pub session_id: Option<String>,
    pub recoverable_session_id: Option<String>,
    /// The command that resumes it, when there is one to run.
    pub command: Option<String>,
    pub cwd: Option<String>,
    /// Who holds the session already: another surface or a live agent process.
    pub held_elsewhere: Option<String>,
    /// Why the entry is not resumed although it could be: a stored value that is not inert
    /// text (a control character in its working dir or config dir).
    pub refused: Option<String>,
    /// The transcript is close to Claude Code's retention cut-off.
    pub retention: Option<preflight::claude::RetentionRisk>,
    /// Why a Codex session is or is not offered, from what could be observed.
    pub why: Option<String>,
    /// What `--apply` did.
    pub applied: Option<String>,
}

impl PlanItem {
    /// Whether the plan resumes this surface.
    pub fn resumable(&self) -> bool {
        self.command.is_some() && self.held_elsewhere.is_none() && self.refused.is_none()
    }
}

#[derive(Debug, Serialize)]
struct Plan<'a> {
    version: u32,
    surfaces: &'a [PlanItem],
}

pub fn restore(global: &Global, args: &RestoreArgs) -> Result<(), Failure> {
    let max_age = args
        .max_age
        .as_deref()
        .map(|text| commands::parse_duration(text, "max age").map(commands::millis))
        .transpose()?;
    let index = load(global)?;
    let mut plan = build_plan(global, &index, args.all, max_age)?;
    let mut failed = 0;
    if let Some(tmux::Apply::Tmux) = args.apply {
        let server = tmux::Server::new(args.tmux_socket.clone());
        let store = open_store(global)?;
        failed = store
            .exclusive("restore", RESTORE_LOCK_TIMEOUT, || {
                let mut failed = 0;
                for item in plan.iter_mut().filter(|item| item.resumable()) {
                    let applied = apply_one(&store, &server, item);
                    failed += usize::from(applied.starts_with("failed"));
                    item.applied = Some(applied);
                }
                failed
            })
            .map_err(|error| match error {
                index_store::StoreError::LockTimeout { path, holder, waited } => {
                    Failure::Failed(anyhow!(
                        "another restore is applying ({holder}, lock {path}); gave up after {waited:.1?}. Nothing was opened; try again once it finishes"
                    ))
                }
                other => other.into(),
            })?;
    }
    let outcome = match failed {
        0 => Ok(()),
        failed => Err(Failure::Failed(anyhow!(
            "{failed} of the surfaces tried could not be opened (marked `failed` above)"
        ))),
    };
    if global.json {
        commands::print_json(&Plan {
            version: OUTPUT_VERSION,
            surfaces: &plan,
        })?;
        return outcome;
    }
    if plan.is_empty() {
        eprintln!(
            "nothing to restore: no surface in the index{}{}",
            if args.all {
                ""
            } else {
                " whose session did not end cleanly"
            },
            match &args.max_age {
                Some(max_age) => format!(" and was active within {max_age}"),
                None => String::new(),
            }
        );
        return Ok(());
    }
    commands::print_line(&plan_text(&plan))?;
    outcome
}

/// The plan for every surface (or only those that did not end cleanly), sorted by surface;
/// with `max_age`, only surfaces active within it (by [`Entry::last_activity`]).
pub fn build_plan(
    global: &Global,
    index: &Index,
    all: bool,
    max_age: Option<u64>,
) -> Result<Vec<PlanItem>, Failure> {
    let registry = commands::registry(global)?;
    let mut holders: HashMap<Utf8PathBuf, Vec<(String, u32)>> = HashMap::new();
    let mut cleanup_days: HashMap<Utf8PathBuf, u64> = HashMap::new();
    // Every bound id; each entry's own is taken out while its preflight runs.
    let mut excluded: BTreeSet<String> = index
        .entries()
        .into_iter()
        .map(|entry| entry.session.to_string())
        .collect();
    let cache = preflight::claude::Cache::default();
    let now = std::time::SystemTime::now();
    let now_millis = commands::now();
    let mut plan = Vec::new();
    for entry in index
        .entries()
        .into_iter()
        .filter(|entry| all || entry.ended_at.is_none())
        .filter(|entry| {
            max_age.is_none_or(|max_age| {
                !entry.is_inactive(max_age, commands::conversation_active(entry), now_millis)
            })
        })
    {
        let own = excluded.take(entry.session.as_str());
        let mut input = commands::preflight_input_excluding(entry, std::mem::take(&mut excluded));
        let outcome = preflight::preflight_with(&input, &cache);
        excluded = std::mem::take(&mut input.excluded);
        excluded.extend(own);
        let provider = input.provider.clone();
        let config_dir = input
            .config_dir
            .as_deref()
            .map(|dir| preflight::paths::expand_home(dir, input.home.as_deref()));
        let session = match outcome.verdict {
            Verdict::Resume | Verdict::Recover => outcome.session_id.clone(),
            Verdict::Unknown => Some(entry.session.to_string()),
            Verdict::Fresh => None,
        };
        let held_elsewhere = session.as_deref().and_then(|session| {
            held_elsewhere(
                index,
                entry,
                session,
                config_dir.as_ref(),
                &provider,
                &mut holders,
            )
        });
        let retention = match (&session, &config_dir, provider.as_str()) {
            (Some(session), Some(config_dir), "claude") => preflight::claude_transcript_path_with(
                config_dir.as_str(),
                &input.cwd,
                session,
                input.home.as_deref(),
                &cache,
            )
            .and_then(|path| {
                let days = *cleanup_days
                    .entry(config_dir.clone())
                    .or_insert_with(|| preflight::claude::cleanup_period_days(config_dir));
                preflight::claude::retention_risk(&path, days, now)
            }),
            _ => None,
        };
        let refused = commands::refusal(entry);
        let command = match session.as_deref() {
            Some(session) if refused.is_none() => {
                let resumed = Entry {
                    session: index_core::SessionId::new(session)?,
                    ..entry.clone()
                };
                match commands::render_with(&registry, &resumed) {
                    Ok(command) => Some(command),
                    // No launcher for this provider: the plan says so by having no command.
                    Err(Failure::NotFound(_)) => None,
                    Err(other) => return Err(other),
                }
            }
            _ => None,
        };
        let why = (provider == "codex").then(|| codex_why(entry, &outcome));
        plan.push(PlanItem {
            surface: entry.surface.to_string(),
            repo: entry.repo.to_string(),
            provider,
            held_session: entry.session.to_string(),
            ended_cleanly: entry.ended_at.is_some(),
            verdict: outcome.verdict,
            session_id: session,
            recoverable_session_id: outcome.recoverable_session_id,
            command,
            cwd: entry.cwd.clone(),
            held_elsewhere,
            refused,
            retention,
            why,
            applied: None,
        });
    }
    Ok(plan)
}

/// Why a Codex session is or is not offered. Codex gives every end the reason `other`, so the
/// evidence is where the end was seen: the hook marks a session ended only when the end came from
/// the TUI in a pane that still existed; a killed pane reports nothing.
fn codex_why(entry: &Entry, outcome: &preflight::Outcome) -> String {
    if entry.ended_at.is_some() {
        return "not offered: Codex reported its end from its pane, which stayed open (a /quit, \
                Ctrl-C, the end of an exec run or a SIGTERM)"
            .to_string();
    }
    // What the rollout check found; else the step that narrowed the sequence last.
    let disk = outcome
        .steps
        .iter()
        .rev()
        .find(|step| step.id == preflight::StepId::Transcript)
        .or_else(|| outcome.steps.iter().rev().find(|step| !step.ok))
        .map(|step| step.detail.as_str())
        .unwrap_or_default();
    match outcome.verdict {
        Verdict::Resume => {
            format!("offered: no end was reported from its pane, and the rollout resumes ({disk})")
        }
        _ => format!("no end was reported from its pane, but Codex cannot resume it: {disk}"),
    }
}

fn held_elsewhere(
    index: &Index,
    entry: &Entry,
    session: &str,
    config_dir: Option<&Utf8PathBuf>,
    provider: &str,
    holders: &mut HashMap<Utf8PathBuf, Vec<(String, u32)>>,
) -> Option<String> {
    if let Some(owner) = index
        .owner_of(session)
        .filter(|owner| **owner != entry.surface)
    {
        return Some(format!("surface {owner}"));
    }
    let config_dir = config_dir.filter(|_| provider == "claude")?;
    let live = holders
        .entry(config_dir.clone())
        .or_insert_with(|| preflight::claude::live_holders(config_dir));
    live.iter()
        .find(|(held, _)| held == session)
        .map(|(_, pid)| format!("a running agent (pid {pid})"))
}

/// Claims the surface in the index, then re-opens it in tmux. Returns what was done.
fn apply_one(store: &index_store::Store, server: &tmux::Server, item: &PlanItem) -> String {
    let Some(target) = tmux::PaneTarget::parse(&item.surface) else {
        return "skipped: not a tmux surface".to_string();
    };
    let Some(command) = &item.command else {
        return "skipped: nothing to resume".to_string();
    };
    // A busy pane is left alone before it is claimed: once the user has freed it, the next
    // restore re-opens it. (`open` checks again, for a pane that gets busy in between.)
    if let Some(reason) = server.busy(&target) {
        return reason;
    }
    let now = commands::now();
    let claimed = store
        .update(|index| index.claim_restore(&item.surface, &item.held_session, CLAIM_TTL_MS, now));
    let mut doubt = String::new();
    match claimed {
        Ok(updated) if updated.value => {}
        Ok(_) => return "skipped: another restore claimed it".to_string(),
        // The claim is in place, only its durability is in doubt: skipping now would leave the
        // surface to nobody, since a second restore sees the claim and leaves it alone.
        Err(error @ index_store::StoreError::NotDurable { .. })
            if claimed_at(store, item) == Some(now) =>
        {
            doubt = format!(" (the claim may not survive a power cut: {error})");
        }
        // Not claimed, so not opened: a failure of this restore, which says why.
        Err(error) => return format!("failed: cannot claim it in the index: {error}"),
    }
    let (outcome, opened) = match server.open(&target, item.cwd.as_deref(), command) {
        Ok(tmux::Opened::Started(done)) => (done, true),
        Ok(tmux::Opened::Skipped(reason)) => (reason, false),
        Err(error) => (format!("failed: {error:#}"), false),
    };
    if !opened {
        // Nothing was started: the claim is taken back, so the next restore may try at once
        // (best effort: a claim left behind only delays that for its time to live).
        let _ = store.update(|index| index.release_restore(&item.surface, &item.held_session, now));
    }
    outcome + &doubt
}

/// When the surface was last claimed for a restore, as the index on disk says now.
fn claimed_at(store: &index_store::Store, item: &PlanItem) -> Option<u64> {
    let index = store.load().ok()?.index;
    let entry = index.lookup(&item.surface)?;
    (entry.session.as_str() == item.held_session)
        .then_some(entry.restore_claimed_at)
        .flatten()
}

/// The plan for people: on a terminal a table whose last column gathers the notes; piped, one
/// tab-separated line per surface (surface, verdict, session, command or what happens, then
/// each note as a field of its own).
fn plan_text(plan: &[PlanItem]) -> String {
    let cells: Vec<(Vec<String>, Vec<String>)> = plan
        .iter()
        .map(|item| {
            let session = escape(item.session_id.as_deref().unwrap_or("-")).into_owned();
            let verdict = item.verdict.as_str().to_string();
            let what = match (&item.refused, &item.held_elsewhere, &item.command) {
                (Some(refused), _, _) => format!("not resumed: {refused}"),
                (None, Some(holder), _) => format!("not resumed: held by {}", escape(holder)),
                (None, None, Some(command)) => escape(command).into_owned(),
                (None, None, None) => match &item.recoverable_session_id {
                    Some(evidence) => format!("starts fresh ({} is on disk)", escape(evidence)),
                    None => "starts fresh".to_string(),
                },
            };
            let mut notes = Vec::new();
            if let Some(risk) = &item.retention {
                notes.push(format!(
                    "(transcript {} days old; Claude Code deletes transcripts after {} days)",
                    risk.age_days, risk.cleanup_period_days
                ));
            }
            if let Some(why) = &item.why {
                notes.push(format!("({why})"));
            } else if item.ended_cleanly {
                notes.push("(ended cleanly)".to_string());
            }
            if let Some(applied) = &item.applied {
                notes.push(format!("[{}]", escape(applied)));
            }
            let fields = vec![escape(&item.surface).into_owned(), verdict, session, what];
            (fields, notes)
        })
        .collect();
    if crate::table::stdout_is_terminal() {
        let joined: Vec<String> = cells.iter().map(|(_, notes)| notes.join(" ")).collect();
        let rows: Vec<Vec<&str>> = cells
            .iter()
            .zip(&joined)
            .map(|((fields, _), notes)| {
                let mut row: Vec<&str> = fields.iter().map(String::as_str).collect();
                row.push(notes);
                row
            })
            .collect();
        crate::table::aligned(
            &["SURFACE", "VERDICT", "SESSION", "COMMAND", "NOTES"],
            &rows,
        )
    } else {
        let rows: Vec<Vec<&str>> = cells
            .iter()
            .map(|(fields, notes)| fields.iter().chain(notes).map(String::as_str).collect())
            .collect();
        crate::table::tsv(&rows)
    }
}

/// The provider an entry was recorded with (the JavaScript tool knew only Claude).
pub fn provider_of(entry: &Entry) -> &str {
    entry
        .provider
        .as_ref()
        .map_or(launcher_map::DEFAULT_PROVIDER, Provider::as_str)
}
