//! Applying a restore plan through a multiplexer's [`Backend`]: the protocol, written once for
//! every multiplexer.
//!
//! One conversation is never resumed twice. The whole apply holds the restore lock
//! (`<index>.restore.lock`, [`RESTORE_LOCK`]), so two restores at once never create the same
//! place: the second finds what the first made, and the surfaces it claimed. For each resumable
//! surface of the backend's multiplexer and instance ([`Backend::own`]: a surface of another
//! tmux server is skipped, saying which), in plan order:
//!
//! 1. a busy place is skipped before anything is claimed (once the user has freed it, the next
//!    restore takes it), and so is a surface whose agent runs by the liveness rule
//!    ([`crate::live`]: a process that runs the agent with `CRASH_RESUME_SURFACE` naming the
//!    surface), whatever the multiplexer says, so that no backend needs a busy check of its own
//!    for a live agent;
//! 2. the surface is claimed in the index ([`index_core::Index::claim_restore_by`]), naming
//!    this restore (its pid and start time); a surface whose claim still holds is skipped. A
//!    claim holds while the restore that made it runs; once it is gone, only when it had started
//!    the agent less than [`CLAIM_TTL_MS`] ago and the agent has not recorded itself since (it
//!    may not show in the process table yet; once it has, the rule speaks for it). A restore killed before it started the agent
//!    leaves no claim that holds; a claim that names no restore (an earlier version's) holds
//!    [`CLAIM_TTL_MS`]. The resumed agent's own record does not clear a claim;
//! 3. the backend opens it: creates what is missing and starts the command as the place's
//!    process, in the recorded dir when it exists (else the home dir,
//!    [`PlanItem::starts_in`](crate::PlanItem::starts_in)), with `CRASH_RESUME_SURFACE` set to the
//!    surface in the instance's full form (a tmux surface recorded without its server gets the
//!    server's socket path) so that the agent's hook binds there;
//! 4. a surface that was started has that noted in its claim
//!    ([`index_core::Index::mark_restore_opened`]); one that was not (it failed, or turned busy)
//!    gets its claim back, so the next restore tries it.
//!
//! The process table is read once per apply, after the restore lock is taken.
//!
//! A surface of that multiplexer with nothing to resume gets its place made when it is missing,
//! with a shell in its recorded dir, or the home dir when that is gone ([`Backend::open_shell`]); then each window the backend
//! created places in is laid out as last recorded ([`Backend::lay_out`]), so a window comes back
//! whole. The surface the restore itself runs in ([`Backend::caller_surface`]), when the caller
//! can start a command as its own process ([`ApplyOptions::start_here`]), is claimed last and
//! left to the caller ([`Applied::StartsHere`], [`Summary::starts_here`]): its shell is busy
//! running the restore.
//!
//! Once a call to the multiplexer has not answered within its deadline, nothing more is claimed
//! and every later surface is [`Applied::NotTried`].

use std::time::Duration;

use std::time::{Duration as StdDuration, Instant, SystemTime, UNIX_EPOCH};

use index_core::{Claimant, Entry, Millis};
use index_store::{Store, StoreError};
use mux::{Backend, Opened, Start, Surface};
use proc_table::Snapshot;

use crate::PlanItem;
use crate::outcome::{Applied, Failure, Skip};

/// How long the claim of a restore that is gone keeps another restore away after it started the
/// surface's agent (time for the agent to show in the process table; then the liveness rule
/// speaks for it), and how long a claim that names no restore (an earlier version's) holds.
pub const CLAIM_TTL_MS: u64 = 30 * 1000;

/// How long reading the process table (one `ps` where there is no `/proc`) may take.
const PROCESS_TABLE_DEADLINE: StdDuration = StdDuration::from_secs(5);

/// The name of the restore lock (`<index>.restore.lock`, [`Store::exclusive`]).
pub const RESTORE_LOCK: &str = "restore";

/// How long a restore waits for another one that is applying (multiplexer calls only: it never
/// waits for an agent, so a long wait means something is stuck).
pub const RESTORE_LOCK_TIMEOUT: Duration = Duration::from_secs(60);

/// The variable that names the surface to the resumed agent's hook.
pub const SURFACE_VARIABLE: &str = "CRASH_RESUME_SURFACE";

/// What applying did, in sum (each surface's [`Applied`] is in its plan item).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// How many surfaces failed.
    pub failed: usize,
    /// How many were not tried, since the multiplexer had stopped answering.
    pub not_tried: usize,
    /// What the call that did not answer said, if one did not.
    pub unanswered: Option<String>,
    /// The surfaces whose window was laid out as recorded (one per window).
    pub laid_out: Vec<String>,
    /// The windows that could not be laid out: the surface, and why.
    pub not_laid_out: Vec<(String, String)>,
    /// The plan item the caller starts as its own process ([`Applied::StartsHere`]): the
    /// surface the restore runs in, claimed for it.
    pub starts_here: Option<usize>,
    /// That surface as the backend's instance names it in full (a tmux surface recorded
    /// without its server, with it): what [`here_script`] names to the agent.
    pub here_surface: Option<String>,
    /// A staggered restore stopped after this many failures in a row ([`Stagger`]), leaving
    /// the rest planned.
    pub stopped: Option<usize>,
}

/// How to apply.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyOptions {
    /// The caller can become the resume command of the surface it runs in (it runs on a
    /// terminal, and will start [`here_script`] as its own process): that surface is claimed
    /// for it instead of being skipped as busy.
    pub start_here: bool,
    /// Start agents a few at a time and verify each ([`Stagger`]); `None` starts them all at
    /// once and checks none.
    pub stagger: Option<Stagger>,
}

/// How a staggered restore starts agents: at most [`Stagger::max_starting`] are starting at
/// once; an agent counts as started when its own hook has bound it to its surface again (the
/// index shows a record of the surface made after the restore claimed it), within
/// [`Stagger::start_timeout`]; one not bound and not in the process table for [`EXIT_GRACE`]
/// (or the start timeout, when shorter) has exited, or never ran: it failed. After [`Stagger::max_failures`] failures in a row
/// (a start that failed, an agent that exited, or one not bound in time) the restore stops
/// and leaves the rest planned, unclaimed ([`Applied::Stopped`]). A failed start never
/// removes or changes the recorded session: its claim is taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stagger {
    /// How many agents may be starting at once (at least 1).
    pub max_starting: usize,
    /// How long an agent has to bind itself.
    pub start_timeout: StdDuration,
    /// How many failures in a row stop the restore (at least 1).
    pub max_failures: usize,
}

impl Default for Stagger {
    fn default() -> Self {
        Stagger {
            max_starting: 3,
            start_timeout: StdDuration::from_secs(30),
            max_failures: 3,
        }
    }
}

/// How long a started agent may take to show in the process table before, not bound and not
/// running, it counts as failed.
pub const EXIT_GRACE: StdDuration = StdDuration::from_secs(5);

/// How often a staggered restore looks at the index and the process table while agents start.
const POLL_INTERVAL: StdDuration = StdDuration::from_millis(50);

/// Applies every resumable item of `plan` through `backend`, holding the restore lock of
/// `store`'s index, and records in each item what was done (`applied`, `outcome`). `now` is the
/// clock (epoch milliseconds). Fails only when the restore lock cannot be had within
/// [`RESTORE_LOCK_TIMEOUT`] (`StoreError::LockTimeout`: another restore is applying), and then
/// nothing was opened.
pub fn apply(
    store: &Store,
    backend: &dyn Backend,
    plan: &mut [PlanItem],
    now: &dyn Fn() -> Millis,
) -> Result<Summary, StoreError> {
    apply_with(store, backend, plan, now, ApplyOptions::default())
}

/// [`apply`], with `options`.
pub fn apply_with(
    store: &Store,
    backend: &dyn Backend,
    plan: &mut [PlanItem],
    now: &dyn Fn() -> Millis,
    options: ApplyOptions,
) -> Result<Summary, StoreError> {
    store.exclusive(RESTORE_LOCK, RESTORE_LOCK_TIMEOUT, || {
        apply_locked(store, backend, plan, now, options)
    })
}

/// [`apply_with`], the restore lock held by the caller.
pub(crate) fn apply_locked(
    store: &Store,
    backend: &dyn Backend,
    plan: &mut [PlanItem],
    now: &dyn Fn() -> Millis,
    options: ApplyOptions,
) -> Summary {
    {
        let mut summary = Summary::default();
        let table = proc_table::table();
        let deadline = Instant::now() + PROCESS_TABLE_DEADLINE;
        let programs: Vec<&str> = plan.iter().map(|item| item.agent.as_str()).collect();
        let processes = Snapshot::read(table, deadline, &programs);
        let me = std::process::id();
        let claims = Claims {
            processes: &processes,
            claimant: table.started(me, deadline).map(|started| Claimant {
                pid: me,
                started: millis_of(started),
                opened: false,
            }),
        };
        let here = options
            .start_here
            .then(|| backend.caller_surface())
            .flatten()
            .map(|surface| surface.to_string());
        summary.here_surface.clone_from(&here);
        // Each item's surface, parsed once for the whole apply.
        let surfaces: Vec<Parsed> = plan
            .iter()
            .map(|item| Surface::parse(&item.surface))
            .collect();
        let here = plan.iter().zip(&surfaces).position(|(item, surface)| {
            item.resumable() && here.is_some() && own_surface(backend, surface) == here
        });
        let mut starting = Starting::default();
        for position in 0..plan.len() {
            if Some(position) == here {
                continue;
            }
            let item = &mut plan[position];
            let surface = &surfaces[position];
            let before = now();
            let applied = match (backend.unanswered(), starting.stopped) {
                (Some(unanswered), _) if item.resumable() => Some(Applied::NotTried {
                    unanswered: unanswered.to_string(),
                }),
                (Some(_), _) => None,
                (None, Some(failures_in_a_row)) if item.resumable() => {
                    Some(Applied::Stopped { failures_in_a_row })
                }
                (None, _) if item.resumable() => {
                    Some(apply_one(store, backend, item, surface, now, &claims))
                }
                (None, _) => open_shell(backend, item, surface),
            };
            let started = applied.as_ref().is_some_and(Applied::is_started);
            let failed = applied.as_ref().is_some_and(Applied::is_failure);
            record(&mut summary, item, applied);
            let Some(stagger) = options.stagger else {
                continue;
            };
            if started {
                starting.pending.push(Pending {
                    position,
                    surface: own_surface(backend, surface).unwrap_or_else(|| item.surface.clone()),
                    started_at: before,
                    started: Instant::now(),
                    last_seen: Instant::now(),
                });
            } else if failed {
                starting.failed(stagger);
            }
            while starting.pending.len() >= stagger.max_starting.max(1) {
                starting.wait(store, plan, stagger, &mut summary);
            }
        }
        if let Some(stagger) = options.stagger {
            while !starting.pending.is_empty() {
                starting.wait(store, plan, stagger, &mut summary);
            }
        }
        lay_out(backend, plan, &surfaces, &mut summary);
        if let Some(position) = here {
            let item = &mut plan[position];
            let applied = match backend.unanswered() {
                Some(unanswered) => Applied::NotTried {
                    unanswered: unanswered.to_string(),
                },
                None => match claim(store, item, now(), &claims) {
                    Ok(claim_not_durable) => {
                        summary.starts_here = Some(position);
                        Applied::StartsHere { claim_not_durable }
                    }
                    Err(applied) => applied,
                },
            };
            record(&mut summary, item, Some(applied));
        }
        summary.unanswered = backend.unanswered().map(str::to_string);
        summary.stopped = starting.stopped;
        summary
    }
}

/// An agent a staggered restore started and has not verified yet.
struct Pending {
    /// Its plan item.
    position: usize,
    /// Its surface in the instance's full form (what its hook records).
    surface: String,
    /// The clock just before it was claimed: a record of its surface after this is its own.
    started_at: Millis,
    /// When it was started.
    started: Instant,
    /// When it was last seen in the process table (when it was started, before).
    last_seen: Instant,
}

/// The agents a staggered restore is starting, and the failures in a row so far.
#[derive(Default)]
struct Starting {
    pending: Vec<Pending>,
    failures_in_a_row: usize,
    /// Set once the failures in a row reached the limit: how many.
    stopped: Option<usize>,
}

impl Starting {
    /// Notes a failure; stops at the limit.
    fn failed(&mut self, stagger: Stagger) {
        self.failures_in_a_row += 1;
        if self.failures_in_a_row >= stagger.max_failures.max(1) {
            self.stopped = Some(self.failures_in_a_row);
        }
    }

    /// Waits until at least one pending agent is bound, has failed or has run out of time, and
    /// notes what it came to in its plan item.
    fn wait(
        &mut self,
        store: &Store,
        plan: &mut [PlanItem],
        stagger: Stagger,
        summary: &mut Summary,
    ) {
        loop {
            let resolved = self.look(store, plan, stagger);
            if !resolved.is_empty() {
                for (pending, verdict) in resolved {
                    self.settle(
                        store,
                        &mut plan[pending.position],
                        &pending,
                        verdict,
                        stagger,
                        summary,
                    );
                }
                return;
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// One look at the index and the process table: the pending agents that are settled now,
    /// taken out of the pending list.
    fn look(
        &mut self,
        store: &Store,
        plan: &[PlanItem],
        stagger: Stagger,
    ) -> Vec<(Pending, Verdict)> {
        let index = store.load().map(|snapshot| snapshot.index).ok();
        let table = proc_table::table();
        let deadline = Instant::now() + PROCESS_TABLE_DEADLINE;
        let programs: Vec<&str> = self
            .pending
            .iter()
            .map(|pending| plan[pending.position].agent.as_str())
            .collect();
        let processes = Snapshot::read(table, deadline, &programs);
        let mut settled = Vec::new();
        let mut still = Vec::new();
        for mut pending in std::mem::take(&mut self.pending) {
            let item = &plan[pending.position];
            let recorded_since = |surface: &str| {
                index
                    .as_ref()
                    .and_then(|index| index.lookup(surface))
                    .and_then(|entry| entry.last_active)
                    .is_some_and(|last| last > pending.started_at)
            };
            let elapsed = pending.started.elapsed();
            let running = processes
                .carrying(SURFACE_VARIABLE, &pending.surface, &item.agent)
                .is_some();
            if running {
                pending.last_seen = Instant::now();
            }
            let verdict = if recorded_since(&pending.surface) || recorded_since(&item.surface) {
                Some(Verdict::Bound {
                    after_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                })
            } else if !running
                && pending.last_seen.elapsed() >= EXIT_GRACE.min(stagger.start_timeout)
            {
                Some(Verdict::Exited)
            } else if elapsed >= stagger.start_timeout {
                Some(Verdict::NotInTime)
            } else {
                None
            };
            match verdict {
                Some(verdict) => settled.push((pending, verdict)),
                None => still.push(pending),
            }
        }
        self.pending = still;
        settled
    }

    /// Notes what a started agent came to in its item and the summary, and counts a failure.
    fn settle(
        &mut self,
        store: &Store,
        item: &mut PlanItem,
        pending: &Pending,
        verdict: Verdict,
        stagger: Stagger,
        summary: &mut Summary,
    ) {
        let Some(Applied::Started {
            created,
            claim_not_durable,
            ..
        }) = item.outcome.take()
        else {
            return;
        };
        let waited_ms = u64::try_from(stagger.start_timeout.as_millis()).unwrap_or(u64::MAX);
        let applied = match verdict {
            Verdict::Bound { after_ms } => {
                self.failures_in_a_row = 0;
                Applied::Started {
                    created,
                    claim_not_durable,
                    verified: Some(crate::outcome::Verified::Bound { after_ms }),
                }
            }
            Verdict::NotInTime => {
                self.failed(stagger);
                Applied::Started {
                    created,
                    claim_not_durable,
                    verified: Some(crate::outcome::Verified::NotInTime { waited_ms }),
                }
            }
            Verdict::Exited => {
                self.failed(stagger);
                // The claim is taken back, so the next restore may try; the recorded session
                // is left as it was.
                if let Some(claimed_at) = claimed_at_any(store, item) {
                    release(store, item, claimed_at);
                }
                summary.failed += 1;
                Applied::failure(
                    Failure::AgentExited,
                    format!(
                        "its agent exited (or never ran) without binding itself to {}; the recorded session is kept",
                        pending.surface
                    ),
                )
            }
        };
        item.applied = Some(applied.to_string());
        item.outcome = Some(applied);
    }
}

/// What a look found a started agent came to.
#[derive(Clone, Copy)]
enum Verdict {
    /// Its hook recorded its surface this long after it was started.
    Bound { after_ms: u64 },
    /// It runs, unbound, past the start timeout.
    NotInTime,
    /// It is not running, and not bound.
    Exited,
}

/// When the item's surface was last claimed, whatever session it holds now.
fn claimed_at_any(store: &Store, item: &PlanItem) -> Option<Millis> {
    let index = store.load().ok()?.index;
    index.lookup(&item.surface)?.restore_claimed_at
}

/// What a claim is judged by: the process table read once, and this restore's name.
struct Claims<'a> {
    processes: &'a Snapshot,
    claimant: Option<Claimant>,
}

impl Claims<'_> {
    /// Whether the claim on `entry` still holds at `now`: while the restore that made it runs;
    /// once it is gone, when it had started the agent less than [`CLAIM_TTL_MS`] ago and the
    /// agent has not recorded itself since (once it has, the liveness rule speaks for it).
    fn holds(&self, entry: &Entry, now: Millis) -> bool {
        let Some(claimed_at) = entry.restore_claimed_at else {
            return false;
        };
        let recent = now.saturating_sub(claimed_at) < CLAIM_TTL_MS;
        match &entry.restore_claimed_by {
            Some(by) => {
                let started = UNIX_EPOCH + StdDuration::from_millis(by.started);
                let recorded_since = entry.last_active.is_some_and(|last| last > claimed_at);
                self.processes.is_running_since(by.pid, started)
                    || (by.opened && recent && !recorded_since)
            }
            None => recent,
        }
    }
}

/// `time` in epoch milliseconds.
fn millis_of(time: SystemTime) -> Millis {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

/// Notes what was done to `item` in it and in `summary`.
fn record(summary: &mut Summary, item: &mut PlanItem, applied: Option<Applied>) {
    let Some(applied) = applied else {
        return;
    };
    summary.failed += usize::from(applied.is_failure());
    summary.not_tried += usize::from(applied.is_not_tried());
    item.applied = Some(applied.to_string());
    item.outcome = Some(applied);
}

/// The script the caller runs as its own process for the surface it was given
/// ([`Summary::starts_here`]): the resume command in the recorded dir, with the surface named
/// as `surface` (the full form, [`Summary::here_surface`]), and no shell after it (the
/// caller's shell is there). `None` when the item has no command.
pub fn here_script(item: &PlanItem, surface: &str) -> Option<String> {
    let command = item.command.as_deref()?;
    Some(mux::script::here_script(
        &[(SURFACE_VARIABLE, surface)],
        item.usable_dir(),
        command,
    ))
}

/// Takes back the claim of a surface that was not started after all (the caller could not
/// start [`here_script`]); best effort, as a claim left behind only delays the next restore.
pub fn release(store: &Store, item: &PlanItem, now: Millis) {
    let _ = store.update(|index| index.release_restore(&item.surface, &item.held_session, now));
}

/// An item's surface, parsed once per apply (or why it is not its multiplexer's address).
type Parsed = Result<Surface, mux::NotCanonical>;

/// The item's surface in the full form of the backend's instance, when it is a surface of that
/// multiplexer and instance.
fn own_surface(backend: &dyn Backend, surface: &Parsed) -> Option<String> {
    let surface = surface
        .as_ref()
        .ok()
        .filter(|surface| surface.multiplexer() == Some(backend.multiplexer()))?;
    backend.own(surface).ok().map(|surface| surface.to_string())
}

/// A place for a surface of the backend's multiplexer and instance with nothing to resume:
/// made with a shell when missing. `None` when nothing was done.
fn open_shell(backend: &dyn Backend, item: &PlanItem, surface: &Parsed) -> Option<Applied> {
    let surface = surface
        .as_ref()
        .ok()
        .filter(|surface| surface.multiplexer() == Some(backend.multiplexer()))
        .filter(|surface| backend.own(surface).is_ok())?;
    match backend.open_shell(surface, item.usable_dir()) {
        Ok(Some(created)) => Some(Applied::Shell { created }),
        Ok(None) => None,
        Err(error) => Some(Applied::failed(&error)),
    }
}

/// Lays out each window the backend created places in, with the layout of its most recently
/// active surface that recorded one.
fn lay_out(backend: &dyn Backend, plan: &[PlanItem], surfaces: &[Parsed], summary: &mut Summary) {
    let mut recorded: Vec<(&PlanItem, &Surface, &str)> = plan
        .iter()
        .zip(surfaces)
        .filter_map(|(item, surface)| {
            let layout = item.window_layout.as_deref()?;
            let surface = surface.as_ref().ok()?;
            (surface.multiplexer() == Some(backend.multiplexer()) && backend.own(surface).is_ok())
                .then_some((item, surface, layout))
        })
        .collect();
    recorded.sort_by_key(|(item, _, _)| std::cmp::Reverse(item.last_activity));
    for (item, surface, layout) in recorded {
        if backend.unanswered().is_some() {
            return;
        }
        match backend.lay_out(surface, layout) {
            Ok(true) => summary.laid_out.push(item.surface.clone()),
            Ok(false) => {}
            Err(error) => summary
                .not_laid_out
                .push((item.surface.clone(), error.to_string())),
        }
    }
}

/// Claims the surface in the index, then has the backend open it.
fn apply_one(
    store: &Store,
    backend: &dyn Backend,
    item: &PlanItem,
    surface: &Parsed,
    now: &dyn Fn() -> Millis,
    claims: &Claims<'_>,
) -> Applied {
    let surface = match surface {
        Ok(surface) if surface.multiplexer() == Some(backend.multiplexer()) => surface,
        Ok(_) => {
            return Applied::skipped(Skip::OtherMultiplexer {
                applied_to: backend.multiplexer(),
            });
        }
        Err(error) => {
            return Applied::failure(Failure::NotCanonical, error.to_string());
        }
    };
    // A surface of another instance (another tmux server) is that instance's restore's.
    let full = match backend.own(surface) {
        Ok(full) => full.to_string(),
        Err(elsewhere) => return Applied::skipped(Skip::OtherInstance { elsewhere }),
    };
    let Some(command) = &item.command else {
        return Applied::skipped(Skip::NothingToResume);
    };
    // A busy place is left alone before it is claimed: once the user has freed it, the next
    // restore re-opens it. (`open` checks again, for a place that gets busy in between.)
    if let Some(busy) = backend.busy(surface) {
        return Applied::skipped(Skip::Busy { busy });
    }
    // The surface's agent runs (a restore started it, here or in another multiplexer): left
    // alone, whatever the multiplexer says of the place.
    if let Some(pid) = claims
        .processes
        .carrying(SURFACE_VARIABLE, &item.surface, &item.agent)
    {
        return Applied::skipped(Skip::Running { pid });
    }
    // A multiplexer that did not answer is not written to: nothing is claimed for it.
    if let Some(unanswered) = backend.unanswered() {
        return Applied::failure(Failure::Unanswered, unanswered.to_string());
    }
    let now = now();
    let claim_not_durable = match claim(store, item, now, claims) {
        Ok(claim_not_durable) => claim_not_durable,
        Err(applied) => return applied,
    };
    let start = Start {
        surface,
        dir: item.usable_dir(),
        command,
        env: &[(SURFACE_VARIABLE, &full)],
    };
    let applied = match backend.open(&start) {
        Ok(Opened::Started { created }) => Applied::Started {
            created,
            claim_not_durable: None,
            verified: None,
        },
        Ok(Opened::Skipped(busy)) => Applied::skipped(Skip::Busy { busy }),
        Err(error) => Applied::failed(&error),
    }
    .with_claim_not_durable(claim_not_durable);
    if applied.is_started() {
        // The claim now holds past this restore, until the agent shows (best effort: a claim
        // not marked holds only while this restore runs, and the rule then speaks).
        let _ = store.update(|index| index.mark_restore_opened(&item.surface, now));
    } else {
        // Nothing was started: the claim is taken back, so the next restore may try at once
        // (best effort: a claim left behind holds only while this restore runs).
        release(store, item, now);
    }
    applied
}

/// Claims the surface in the index at `now`: whether the claim may not survive a power cut
/// (why), or what to report instead when it was not claimed.
fn claim(
    store: &Store,
    item: &PlanItem,
    now: Millis,
    claims: &Claims<'_>,
) -> Result<Option<String>, Applied> {
    let claimed = store.update(|index| {
        index.claim_restore_by(
            &item.surface,
            &item.held_session,
            claims.claimant,
            now,
            |entry| claims.holds(entry, now),
        )
    });
    match claimed {
        Ok(updated) if updated.value => Ok(None),
        Ok(_) => Err(Applied::skipped(Skip::Claimed)),
        // The claim is in place, only its durability is in doubt: skipping now would leave the
        // surface to nobody, since a second restore sees the claim and leaves it alone.
        Err(error @ StoreError::NotDurable { .. }) if claimed_at(store, item) == Some(now) => {
            Ok(Some(error.to_string()))
        }
        // Not claimed, so not opened: a failure of this restore, which says why.
        Err(error) => Err(Applied::failure(
            Failure::Claim,
            format!("cannot claim it in the index: {error}"),
        )),
    }
}

/// When the surface was last claimed for a restore, as the index on disk says now.
fn claimed_at(store: &Store, item: &PlanItem) -> Option<u64> {
    let index = store.load().ok()?.index;
    let entry = index.lookup(&item.surface)?;
    (entry.session.as_str() == item.held_session)
        .then_some(entry.restore_claimed_at)
        .flatten()
}
