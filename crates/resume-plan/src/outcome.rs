//! What applying the plan did to one surface ([`Applied`]), typed: the `--json restore`
//! document carries it as `outcome`, and its text (the `applied` field, and the table's note)
//! is said from it here, once. Nothing parses the text.

use std::fmt;

use mux::pane::Busy;
use mux::{Created, Elsewhere, Multiplexer, MuxError};
use serde::{Deserialize, Serialize};

/// What applying the plan did to one surface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Applied {
    /// The resume command runs as the surface's place's process.
    Started {
        /// What the multiplexer created to get there, in order; empty when the existing place
        /// was re-used.
        created: Vec<Created>,
        /// The claim is in place but may not survive a power cut: why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        claim_not_durable: Option<String>,
        /// Whether the agent's own hook bound it to the surface again in time (only for a
        /// staggered restore, [`crate::apply::Stagger`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verified: Option<Verified>,
    },
    /// Nothing to resume there: the missing place was made, with the user's shell in the
    /// recorded dir, so that its window comes back whole.
    Shell {
        /// What the multiplexer created, in order; empty when the place was one this restore
        /// had made on the way to another.
        created: Vec<Created>,
    },
    /// The restore runs in this surface's place: the surface is claimed, and the restore's own
    /// process becomes its resume command once every other surface is done.
    StartsHere {
        /// The claim may not survive a power cut: why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        claim_not_durable: Option<String>,
    },
    /// The surface was left alone.
    Skipped {
        /// Why.
        reason: Skip,
        /// It was claimed, and the claim (taken back since) may not have survived a power cut:
        /// why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        claim_not_durable: Option<String>,
    },
    /// The surface could not be opened (its claim, if any, was taken back).
    Failed {
        /// Why, as a kind.
        reason: Failure,
        /// What failed, for people.
        message: String,
        /// It was claimed, and the claim (taken back since) may not have survived a power cut:
        /// why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        claim_not_durable: Option<String>,
    },
    /// The surface was not tried: an earlier call to the multiplexer did not answer.
    NotTried {
        /// What the call that did not answer said.
        unanswered: String,
    },
    /// The surface was left planned, not claimed: this many starts had failed in a row
    /// (`--max-failures`), and the restore stopped starting agents.
    Stopped {
        /// The failures in a row that stopped it.
        failures_in_a_row: usize,
    },
}

/// Whether a started agent came back: its own hook bound it to its surface again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verified {
    /// The agent's hook recorded it on its surface this long after it was started.
    Bound {
        /// Milliseconds from its start to its record.
        after_ms: u64,
    },
    /// The agent runs but did not record itself within the start timeout.
    NotInTime {
        /// The start timeout, in milliseconds.
        waited_ms: u64,
    },
}

/// Why a surface was left alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Skip {
    /// Its place exists and is not an idle shell at its prompt.
    Busy {
        /// What keeps it busy.
        busy: Busy,
    },
    /// Another restore claimed it first.
    Claimed,
    /// Its agent runs: a process runs the surface's agent with `CRASH_RESUME_SURFACE` naming
    /// the surface (the liveness rule, [`crate::live`]).
    Running {
        /// The agent's pid.
        pid: u32,
    },
    /// The plan has no command for it.
    NothingToResume,
    /// It is another multiplexer's surface (or none's) than the one applied to.
    OtherMultiplexer {
        /// The multiplexer applied to.
        applied_to: Multiplexer,
    },
    /// It is a surface of another instance of the multiplexer applied to (another tmux
    /// server), or one recorded without its instance (the default one's) while the restore
    /// opens another.
    OtherInstance {
        /// Where it belongs, and how a restore reaches it.
        #[serde(flatten)]
        elsewhere: Elsewhere,
    },
}

/// Why a surface could not be opened, as a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// Its id is under a multiplexer's prefix but not that multiplexer's address.
    NotCanonical,
    /// The multiplexer did not answer a call within its deadline.
    Unanswered,
    /// The claim could not be written to the index.
    Claim,
    /// The multiplexer refused or failed to create the place or to start the command.
    Multiplexer,
    /// The agent was started but exited (or never ran) without its hook binding it to the
    /// surface; the recorded session is left as it was.
    AgentExited,
}

impl Applied {
    /// Whether the surface failed (what makes a restore exit 1).
    pub fn is_failure(&self) -> bool {
        matches!(self, Applied::Failed { .. })
    }

    /// Whether the surface was not tried.
    pub fn is_not_tried(&self) -> bool {
        matches!(self, Applied::NotTried { .. })
    }

    /// Whether the resume command was started.
    pub fn is_started(&self) -> bool {
        matches!(self, Applied::Started { .. })
    }

    /// Whether the surface was left planned after too many failures in a row.
    pub fn is_stopped(&self) -> bool {
        matches!(self, Applied::Stopped { .. })
    }

    /// A failure of the multiplexer, said with each cause once.
    pub(crate) fn failed(error: &MuxError) -> Applied {
        let reason = match error {
            MuxError::Unanswered { .. } => Failure::Unanswered,
            _ => Failure::Multiplexer,
        };
        Applied::Failed {
            reason,
            message: describe(error),
            claim_not_durable: None,
        }
    }

    /// A surface left alone for `reason`.
    pub(crate) fn skipped(reason: Skip) -> Applied {
        Applied::Skipped {
            reason,
            claim_not_durable: None,
        }
    }

    /// A surface that failed for `reason`, said in `message`.
    pub(crate) fn failure(reason: Failure, message: String) -> Applied {
        Applied::Failed {
            reason,
            message,
            claim_not_durable: None,
        }
    }

    /// Notes that the surface's claim may not survive a power cut, and why.
    pub(crate) fn with_claim_not_durable(mut self, why: Option<String>) -> Applied {
        match &mut self {
            Applied::Started {
                claim_not_durable, ..
            }
            | Applied::StartsHere { claim_not_durable }
            | Applied::Skipped {
                claim_not_durable, ..
            }
            | Applied::Failed {
                claim_not_durable, ..
            } => *claim_not_durable = why,
            Applied::Shell { .. } | Applied::NotTried { .. } | Applied::Stopped { .. } => {}
        }
        self
    }

    /// Why the surface's claim may not survive a power cut, when it may not.
    fn claim_not_durable(&self) -> Option<&str> {
        match self {
            Applied::Started {
                claim_not_durable, ..
            }
            | Applied::StartsHere { claim_not_durable }
            | Applied::Skipped {
                claim_not_durable, ..
            }
            | Applied::Failed {
                claim_not_durable, ..
            } => claim_not_durable.as_deref(),
            Applied::Shell { .. } | Applied::NotTried { .. } | Applied::Stopped { .. } => None,
        }
    }
}

/// A backend's error for people: the recorded names it carries escaped, then each cause.
fn describe(error: &MuxError) -> String {
    use index_core::text::escape;
    let mut said = match error {
        MuxError::Unnameable { session, character } => format!(
            "tmux cannot name a session {} (it rewrites {}); nothing was created",
            escape(session),
            escape(&character.to_string())
        ),
        MuxError::Renamed { made, wanted } => format!(
            "tmux named the session {} instead of {}",
            escape(made),
            escape(wanted)
        ),
        other => other.to_string(),
    };
    let mut cause = std::error::Error::source(error);
    while let Some(error) = cause {
        said = format!("{said}: {error}");
        cause = error.source();
    }
    said
}

impl fmt::Display for Applied {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Applied::Started {
                created, verified, ..
            } => {
                if created.is_empty() {
                    formatter.write_str("started in the existing pane")?;
                } else {
                    let created: Vec<String> = created.iter().map(Created::to_string).collect();
                    write!(
                        formatter,
                        "created {} and started in it",
                        created.join(", ")
                    )?;
                }
                match verified {
                    Some(Verified::Bound { after_ms }) => write!(
                        formatter,
                        "; verified: its agent bound itself after {:.1}s",
                        *after_ms as f64 / 1000.0
                    )?,
                    Some(Verified::NotInTime { waited_ms }) => write!(
                        formatter,
                        "; not verified: its agent runs but did not bind itself within {}s",
                        waited_ms / 1000
                    )?,
                    None => {}
                }
            }
            Applied::Shell { created } => {
                let created: Vec<String> = created.iter().map(Created::to_string).collect();
                match created.is_empty() {
                    true => formatter.write_str("nothing to resume: a shell in its dir")?,
                    false => write!(
                        formatter,
                        "nothing to resume: created {} with a shell in its dir",
                        created.join(", ")
                    )?,
                }
            }
            Applied::StartsHere { .. } => formatter.write_str(
                "starts in this pane, where the restore runs, once the others are done",
            )?,
            Applied::Skipped { reason, .. } => {
                formatter.write_str("skipped: ")?;
                match reason {
                    Skip::Busy { busy } => write_busy(busy, formatter),
                    Skip::Claimed => formatter.write_str("another restore claimed it"),
                    Skip::Running { pid } => write!(formatter, "its agent runs (pid {pid})"),
                    Skip::NothingToResume => formatter.write_str("nothing to resume"),
                    Skip::OtherMultiplexer { applied_to } => {
                        write!(formatter, "not a {applied_to} surface")
                    }
                    Skip::OtherInstance { elsewhere } => {
                        let instance = index_core::text::escape(&elsewhere.instance);
                        let restore_with = index_core::text::escape(&elsewhere.restore_with);
                        match elsewhere.unqualified {
                            true => write!(
                                formatter,
                                "recorded without its server, so the default server's ({instance}), not this one's; restore it there with `--apply tmux {restore_with}`"
                            ),
                            false => write!(
                                formatter,
                                "not this server's: it is in {instance}; restore it there with `--apply tmux {restore_with}`"
                            ),
                        }
                    }
                }?;
            }
            Applied::Failed { message, .. } => write!(formatter, "failed: {message}")?,
            Applied::NotTried { unanswered } => write!(formatter, "not tried: {unanswered}")?,
            Applied::Stopped { failures_in_a_row } => write!(
                formatter,
                "not tried: {failures_in_a_row} starts failed in a row, so the restore stopped; left planned"
            )?,
        }
        match self.claim_not_durable() {
            Some(why) => write!(formatter, " (the claim may not survive a power cut: {why})"),
            None => Ok(()),
        }
    }
}

/// Why a pane is left alone, for people (a line the screen showed is escaped).
fn write_busy(busy: &Busy, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
    match busy {
        Busy::Program(program) => write!(formatter, "the pane is busy running {program}"),
        Busy::Child(pid) => write!(
            formatter,
            "the pane is busy: its shell runs a program (pid {pid})"
        ),
        Busy::Script => write!(
            formatter,
            "the pane is busy: its shell runs a script or command"
        ),
        Busy::LineMode => write!(
            formatter,
            "the pane is busy: its shell reads a line (a `read`, a `select` menu, or a shell with no line editor), not its prompt"
        ),
        Busy::UnknownMode => write!(
            formatter,
            "the pane is busy as far as can be told: its terminal's mode cannot be read"
        ),
        Busy::Continuation => write!(
            formatter,
            "the pane is busy: its shell waits for the rest of a command (a continuation prompt)"
        ),
        Busy::Typed(line) => write!(
            formatter,
            "the pane is busy: text is typed at its prompt ({})",
            index_core::text::escape(line.trim())
        ),
        Busy::NoPrompt => write!(formatter, "the pane is busy: no prompt is shown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(busy: Busy) -> String {
        Applied::skipped(Skip::Busy { busy }).to_string()
    }

    #[test]
    fn reasons_say_why_and_escape_what_the_screen_showed() {
        assert_eq!(
            said(Busy::Typed("$ echo \u{1b}[2J".into())),
            "skipped: the pane is busy: text is typed at its prompt (\"$ echo \\e[2J\")"
        );
        assert!(said(Busy::LineMode).contains("`read`"));
    }
}
