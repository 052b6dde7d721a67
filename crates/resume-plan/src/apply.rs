//! Applying a restore plan through a multiplexer's [`Backend`]: the protocol, written once for
//! every multiplexer.
//!
//! One conversation is never resumed twice. The whole apply holds the restore lock
//! (`<index>.restore.lock`, [`RESTORE_LOCK`]), so two restores at once never create the same
//! place: the second finds what the first made, and the surfaces it claimed. For each resumable
//! surface of the backend's multiplexer, in plan order:
//!
//! 1. a busy place is skipped before anything is claimed (once the user has freed it, the next
//!    restore takes it);
//! 2. the surface is claimed in the index ([`index_core::Index::claim_restore`]); one another
//!    restore claimed is skipped;
//! 3. the backend opens it: creates what is missing and starts the command as the place's
//!    process, in the recorded dir when it exists, with `CRASH_RESUME_SURFACE` set to the
//!    recorded surface so that the agent's hook binds there;
//! 4. a surface that was not started (it failed, or turned busy) gets its claim back, so the
//!    next restore tries it.
//!
//! Once a call to the multiplexer has not answered within its deadline, nothing more is claimed
//! and every later surface is [`Applied::NotTried`].

use std::time::Duration;

use index_core::Millis;
use index_store::{Store, StoreError};
use mux::{Backend, Opened, Start, Surface};

use crate::PlanItem;
use crate::outcome::{Applied, Failure, Skip};

/// How long a restore's claim on a surface keeps a second restore away (unless the resumed
/// agent records itself first).
pub const CLAIM_TTL_MS: u64 = 10 * 60 * 1000;

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
}

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
    store.exclusive(RESTORE_LOCK, RESTORE_LOCK_TIMEOUT, || {
        let mut summary = Summary::default();
        for item in plan.iter_mut().filter(|item| item.resumable()) {
            let applied = match backend.unanswered() {
                Some(unanswered) => Applied::NotTried {
                    unanswered: unanswered.to_string(),
                },
                None => apply_one(store, backend, item, now),
            };
            summary.failed += usize::from(applied.is_failure());
            summary.not_tried += usize::from(applied.is_not_tried());
            item.applied = Some(applied.to_string());
            item.outcome = Some(applied);
        }
        summary.unanswered = backend.unanswered().map(str::to_string);
        summary
    })
}

/// Claims the surface in the index, then has the backend open it.
fn apply_one(
    store: &Store,
    backend: &dyn Backend,
    item: &PlanItem,
    now: &dyn Fn() -> Millis,
) -> Applied {
    let surface = match Surface::parse(&item.surface) {
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
    let Some(command) = &item.command else {
        return Applied::skipped(Skip::NothingToResume);
    };
    // A busy place is left alone before it is claimed: once the user has freed it, the next
    // restore re-opens it. (`open` checks again, for a place that gets busy in between.)
    if let Some(busy) = backend.busy(&surface) {
        return Applied::skipped(Skip::Busy { busy });
    }
    // A multiplexer that did not answer is not written to: nothing is claimed for it.
    if let Some(unanswered) = backend.unanswered() {
        return Applied::failure(Failure::Unanswered, unanswered.to_string());
    }
    let now = now();
    let claimed = store
        .update(|index| index.claim_restore(&item.surface, &item.held_session, CLAIM_TTL_MS, now));
    let mut claim_not_durable = None;
    match claimed {
        Ok(updated) if updated.value => {}
        Ok(_) => {
            return Applied::skipped(Skip::Claimed);
        }
        // The claim is in place, only its durability is in doubt: skipping now would leave the
        // surface to nobody, since a second restore sees the claim and leaves it alone.
        Err(error @ StoreError::NotDurable { .. }) if claimed_at(store, item) == Some(now) => {
            claim_not_durable = Some(error.to_string());
        }
        // Not claimed, so not opened: a failure of this restore, which says why.
        Err(error) => {
            return Applied::failure(
                Failure::Claim,
                format!("cannot claim it in the index: {error}"),
            );
        }
    }
    let dir = item
        .cwd
        .as_deref()
        .filter(|dir| std::path::Path::new(dir).is_dir());
    let start = Start {
        surface: &surface,
        dir,
        command,
        env: &[(SURFACE_VARIABLE, &item.surface)],
    };
    let applied = match backend.open(&start) {
        Ok(Opened::Started { created }) => Applied::Started {
            created,
            claim_not_durable: None,
        },
        Ok(Opened::Skipped(busy)) => Applied::skipped(Skip::Busy { busy }),
        Err(error) => Applied::failed(&error),
    }
    .with_claim_not_durable(claim_not_durable);
    if !applied.is_started() {
        // Nothing was started: the claim is taken back, so the next restore may try at once
        // (best effort: a claim left behind only delays that for its time to live).
        let _ = store.update(|index| index.release_restore(&item.surface, &item.held_session, now));
    }
    applied
}

/// When the surface was last claimed for a restore, as the index on disk says now.
fn claimed_at(store: &Store, item: &PlanItem) -> Option<u64> {
    let index = store.load().ok()?.index;
    let entry = index.lookup(&item.surface)?;
    (entry.session.as_str() == item.held_session)
        .then_some(entry.restore_claimed_at)
        .flatten()
}
