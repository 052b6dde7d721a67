//! `crash-resume restore [--all] [--apply tmux]`: after a reboot, every surface whose session
//! did not end cleanly, with its preflight verdict, the session that would load and the command
//! that resumes it; with `--apply tmux`, re-open each resumable `tmux:` surface.
//!
//! One conversation is never resumed twice: a session bound to another surface or held by a
//! live agent process is reported as held elsewhere and not resumed, and each surface is
//! claimed in the index (under its lock) before anything is typed, so two restores at once
//! never both act on it.

use std::collections::HashMap;

use camino::Utf8PathBuf;
use index_core::{Entry, Index, Provider};
use preflight::Verdict;
use serde::Serialize;

use crate::args::{Global, RestoreArgs};
use crate::commands::{self, load, open_store, preflight_input, render};
use crate::output::OUTPUT_VERSION;
use crate::{Failure, tmux};

/// How long a restore's claim on a surface keeps a second restore away (unless the resumed
/// agent records itself first).
const CLAIM_TTL_MS: u64 = 10 * 60 * 1000;

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
    /// The transcript is close to Claude Code's retention cut-off.
    pub retention: Option<preflight::claude::RetentionRisk>,
    /// What `--apply` did.
    pub applied: Option<String>,
}

impl PlanItem {
    /// Whether the plan resumes this surface.
    pub fn resumable(&self) -> bool {
        self.command.is_some() && self.held_elsewhere.is_none()
    }
}

#[derive(Debug, Serialize)]
struct Plan<'a> {
    version: u32,
    surfaces: &'a [PlanItem],
}

pub fn restore(global: &Global, args: &RestoreArgs) -> Result<(), Failure> {
    let index = load(global)?;
    let mut plan = build_plan(global, &index, args.all)?;
    if let Some(tmux::Apply::Tmux) = args.apply {
        let server = tmux::Server::new(args.tmux_socket.clone());
        let store = open_store(global)?;
        for item in plan.iter_mut().filter(|item| item.resumable()) {
            item.applied = Some(apply_one(&store, &server, item));
        }
    }
    if global.json {
        return commands::print_json(&Plan {
            version: OUTPUT_VERSION,
            surfaces: &plan,
        });
    }
    if plan.is_empty() {
        eprintln!(
            "nothing to restore: no surface in the index{}",
            if args.all {
                ""
            } else {
                " whose session did not end cleanly"
            }
        );
        return Ok(());
    }
    commands::print_line(&plan_text(&plan))
}

/// The plan for every surface (or only those that did not end cleanly), sorted by surface.
pub fn build_plan(global: &Global, index: &Index, all: bool) -> Result<Vec<PlanItem>, Failure> {
    let mut holders: HashMap<Utf8PathBuf, Vec<(String, u32)>> = HashMap::new();
    let now = std::time::SystemTime::now();
    index
        .entries()
        .into_iter()
        .filter(|entry| all || entry.ended_at.is_none())
        .map(|entry| {
            let input = preflight_input(index, entry);
            let outcome = preflight::preflight(&input);
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
                (Some(session), Some(config_dir), "claude") => preflight::claude_transcript_path(
                    config_dir.as_str(),
                    &input.cwd,
                    session,
                    input.home.as_deref(),
                )
                .and_then(|path| {
                    preflight::claude::retention_risk(
                        &path,
                        preflight::claude::cleanup_period_days(config_dir),
                        now,
                    )
                }),
                _ => None,
            };
            let command = match session.as_deref() {
                None => None,
                Some(session) => {
                    let resumed = Entry {
                        session: index_core::SessionId::new(session)?,
                        ..entry.clone()
                    };
                    match render(global, &resumed) {
                        Ok(command) => Some(command),
                        // No launcher for this provider: the plan says so by having no command.
                        Err(Failure::NotFound(_)) => None,
                        Err(other) => return Err(other),
                    }
                }
            };
            Ok(PlanItem {
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
                retention,
                applied: None,
            })
        })
        .collect()
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
    if let Some(running) = server.busy(&target) {
        return tmux::busy_message(&running);
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
        Err(error) => return format!("skipped: cannot claim it in the index: {error}"),
    }
    match server.open(&target, item.cwd.as_deref(), command) {
        Ok(done) => done + &doubt,
        Err(error) => format!("failed: {error:#}{doubt}"),
    }
}

/// When the surface was last claimed for a restore, as the index on disk says now.
fn claimed_at(store: &index_store::Store, item: &PlanItem) -> Option<u64> {
    let index = store.load().ok()?.index;
    let entry = index.lookup(&item.surface)?;
    (entry.session.as_str() == item.held_session)
        .then_some(entry.restore_claimed_at)
        .flatten()
}

fn plan_text(plan: &[PlanItem]) -> String {
    let mut lines = Vec::new();
    for item in plan {
        let session = item.session_id.as_deref().unwrap_or("-");
        let verdict = item.verdict.as_str();
        let what = match (&item.held_elsewhere, &item.command) {
            (Some(holder), _) => format!("not resumed: held by {holder}"),
            (None, Some(command)) => command.clone(),
            (None, None) => match &item.recoverable_session_id {
                Some(evidence) => format!("starts fresh ({evidence} is on disk)"),
                None => "starts fresh".to_string(),
            },
        };
        let mut line = format!("{}\t{verdict}\t{session}\t{what}", item.surface);
        if let Some(risk) = &item.retention {
            line.push_str(&format!(
                "\t(transcript {} days old; Claude Code deletes transcripts after {} days)",
                risk.age_days, risk.cleanup_period_days
            ));
        }
        if item.ended_cleanly {
            line.push_str("\t(ended cleanly)");
        }
        if let Some(applied) = &item.applied {
            line.push_str(&format!("\t[{applied}]"));
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// The provider an entry was recorded with (the JavaScript tool knew only Claude).
pub fn provider_of(entry: &Entry) -> &str {
    entry
        .provider
        .as_ref()
        .map_or(launcher_map::DEFAULT_PROVIDER, Provider::as_str)
}
