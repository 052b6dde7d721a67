//! The `--json restore` form of a plan item, version 1: [`PlanItem`] as it is written and read
//! back. What the item says typed ([`HeldElsewhere`], [`Refusal`], [`EndEvidence`]) is written
//! twice: in words under the keys the first documents had (`held_elsewhere`, `refused`, `why`),
//! and typed under `held_by`, `refusal` and `end_evidence`. Reading takes the typed keys; the
//! words are never parsed.

use index_core::Millis;
use preflight::Verdict;
use serde::{Deserialize, Serialize};

use crate::PlanItem;
use crate::outcome::Applied;
use crate::reasons::{EndEvidence, HeldElsewhere, Refusal};

/// A plan item as the `--json restore` document holds it.
#[derive(Serialize, Deserialize)]
pub(crate) struct PlanItemV1 {
    surface: String,
    repo: String,
    #[serde(rename = "provider")]
    agent: String,
    held_session: String,
    ended_cleanly: bool,
    verdict: Verdict,
    session_id: Option<String>,
    recoverable_session_id: Option<String>,
    command: Option<String>,
    cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    starts_in: Option<String>,
    /// [`PlanItemV1::held_by`] in words.
    #[serde(default)]
    held_elsewhere: Option<String>,
    /// [`PlanItemV1::refusal`] in words.
    #[serde(default)]
    refused: Option<String>,
    retention: Option<preflight::claude::RetentionRisk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cleanup: Option<String>,
    /// [`PlanItemV1::end_evidence`] in words.
    #[serde(default)]
    why: Option<String>,
    applied: Option<String>,
    #[serde(default)]
    last_activity: Millis,
    outcome: Option<Applied>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window_layout: Option<String>,
    #[serde(default)]
    held_by: Option<HeldElsewhere>,
    #[serde(default)]
    refusal: Option<Refusal>,
    #[serde(default)]
    end_evidence: Option<EndEvidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    died: Option<crate::boot::Died>,
    launch: Option<crate::resume::Relaunch>,
}

impl From<PlanItem> for PlanItemV1 {
    fn from(item: PlanItem) -> Self {
        let PlanItem {
            surface,
            repo,
            agent,
            held_session,
            ended_cleanly,
            verdict,
            session_id,
            recoverable_session_id,
            command,
            cwd,
            starts_in,
            held_elsewhere,
            refused,
            retention,
            cleanup,
            why,
            applied,
            last_activity,
            outcome,
            window_layout,
            died,
            launch,
        } = item;
        PlanItemV1 {
            surface,
            repo,
            agent,
            held_session,
            ended_cleanly,
            verdict,
            session_id,
            recoverable_session_id,
            command,
            cwd,
            starts_in,
            held_elsewhere: held_elsewhere.as_ref().map(ToString::to_string),
            refused: refused.as_ref().map(ToString::to_string),
            retention,
            cleanup,
            why: why.as_ref().map(ToString::to_string),
            applied,
            last_activity,
            outcome,
            window_layout,
            died,
            held_by: held_elsewhere,
            refusal: refused,
            end_evidence: why,
            launch,
        }
    }
}

impl From<PlanItemV1> for PlanItem {
    fn from(item: PlanItemV1) -> Self {
        let PlanItemV1 {
            surface,
            repo,
            agent,
            held_session,
            ended_cleanly,
            verdict,
            session_id,
            recoverable_session_id,
            command,
            cwd,
            starts_in,
            held_elsewhere: _,
            refused: _,
            retention,
            cleanup,
            why: _,
            applied,
            last_activity,
            outcome,
            window_layout,
            died,
            held_by,
            refusal,
            end_evidence,
            launch,
        } = item;
        PlanItem {
            surface,
            repo,
            agent,
            held_session,
            ended_cleanly,
            verdict,
            session_id,
            recoverable_session_id,
            command,
            cwd,
            starts_in,
            held_elsewhere: held_by,
            refused: refusal,
            retention,
            cleanup,
            why: end_evidence,
            applied,
            last_activity,
            outcome,
            window_layout,
            died,
            launch,
        }
    }
}
