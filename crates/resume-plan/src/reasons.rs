//! What a plan item says besides its verdict, typed: who holds its session already
//! ([`HeldElsewhere`]), why its entry is refused ([`Refusal`]), and why a session of an agent
//! whose end reason does not tell a quit from a crash is or is not offered ([`EndEvidence`]).
//! Each is said in words by its `Display`, in one place; callers match on the variants, never on
//! the words.

use std::fmt;

use agent_paths::Agent;
use index_core::text::escape;
use index_core::{IdKind, InvalidId};
use serde::{Deserialize, Serialize};

/// Who holds a session besides the surface the plan item is for: the session is not resumed
/// there, since that would open one conversation twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HeldElsewhere {
    /// Another surface of the index is bound to the session.
    Surface {
        /// That surface, as recorded.
        surface: String,
    },
    /// A running agent process has the session open.
    Agent {
        /// The agent's pid.
        pid: u32,
    },
}

impl fmt::Display for HeldElsewhere {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeldElsewhere::Surface { surface } => write!(f, "surface {surface}"),
            HeldElsewhere::Agent { pid } => write!(f, "a running agent (pid {pid})"),
        }
    }
}

/// Which stored dir of an entry a [`Refusal`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredDir {
    /// The working dir (`cwd`).
    Cwd,
    /// The agent's config dir (`config_dir`).
    ConfigDir,
}

impl StoredDir {
    fn kind(self) -> IdKind {
        match self {
            StoredDir::Cwd => IdKind::WorkingDir,
            StoredDir::ConfigDir => IdKind::ConfigDir,
        }
    }
}

/// Why an entry is not resumed although it could be, and its values not shown: a stored value
/// that would reach a shell or a terminal as something other than text (an index written by
/// another tool may hold one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Refusal {
    /// A stored dir holds a control character (C0, DEL or C1).
    ControlCharacter {
        /// The entry's surface, as recorded.
        surface: String,
        /// Which dir.
        dir: StoredDir,
        /// The control character's code point.
        code: u32,
        /// Its byte offset in the dir.
        at: usize,
    },
}

impl Refusal {
    /// The refusal of `surface`'s entry whose dirs failed `error` ([`index_core::check_dirs`]);
    /// `None` for an error that is not about a stored dir's character.
    pub fn of_dirs(surface: &str, error: &InvalidId) -> Option<Refusal> {
        let InvalidId::Control { kind, code, at } = *error else {
            return None;
        };
        let dir = match kind {
            IdKind::WorkingDir => StoredDir::Cwd,
            IdKind::ConfigDir => StoredDir::ConfigDir,
            _ => return None,
        };
        Some(Refusal::ControlCharacter {
            surface: surface.to_string(),
            dir,
            code,
            at,
        })
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::ControlCharacter {
                surface,
                dir,
                code,
                at,
            } => {
                let error = InvalidId::Control {
                    kind: dir.kind(),
                    code: *code,
                    at: *at,
                };
                write!(
                    f,
                    "the entry of surface {} is refused: its {error}; record the surface again or drop it with `crash-resume forget`",
                    escape(surface)
                )
            }
        }
    }
}

/// An agent whose end reason does not tell a quit from a crash, so that whether its session
/// is offered rests on where the end was seen (its `agent_paths::CleanEnd` is
/// `FromOpenPane`). A new such agent is a variant here; its words are the agent registry's
/// (`agent_paths::EndWords`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnclearEnd {
    /// Codex CLI: every end has the reason `other`.
    Codex,
    /// Gemini CLI: every end has the reason `exit`.
    Gemini,
    /// GitHub Copilot CLI: a `/exit` and a killed tmux server both end with `user_exit`.
    Copilot,
    /// Qwen Code: a `/quit` and a signal both end with `prompt_input_exit`.
    Qwen,
}

impl UnclearEnd {
    /// The agent, when its end reason does not tell a quit from a crash.
    pub fn of(agent: Agent) -> Option<UnclearEnd> {
        match agent {
            Agent::Claude => None,
            Agent::Codex => Some(UnclearEnd::Codex),
            Agent::Gemini => Some(UnclearEnd::Gemini),
            Agent::Copilot => Some(UnclearEnd::Copilot),
            Agent::Qwen => Some(UnclearEnd::Qwen),
        }
    }

    /// The agent itself.
    pub fn agent(self) -> Agent {
        match self {
            UnclearEnd::Codex => Agent::Codex,
            UnclearEnd::Gemini => Agent::Gemini,
            UnclearEnd::Copilot => Agent::Copilot,
            UnclearEnd::Qwen => Agent::Qwen,
        }
    }

    fn words(self) -> agent_paths::EndWords {
        self.agent().facts().end_words
    }
}

/// Why a session of an [`UnclearEnd`] agent is or is not offered, from what could be observed:
/// the hook marks a session ended only when the end came from the agent in a pane that still
/// existed; a killed pane reports nothing, nor does Codex running in its shared daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EndEvidence {
    /// Not offered: the agent reported its end from its pane, which stayed open.
    Ended {
        /// The agent.
        agent: UnclearEnd,
    },
    /// Offered: no end was reported from its pane, and its transcript resumes.
    Offered {
        /// The agent.
        agent: UnclearEnd,
        /// What the preflight's transcript check found, in its words.
        detail: String,
    },
    /// No end was reported from its pane, but the agent cannot resume it.
    CannotResume {
        /// The agent.
        agent: UnclearEnd,
        /// Why, as the preflight's step that decided says it.
        detail: String,
    },
}

impl EndEvidence {
    /// Whether the session is offered.
    pub fn offered(&self) -> bool {
        matches!(self, EndEvidence::Offered { .. })
    }
}

impl fmt::Display for EndEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndEvidence::Ended { agent } => {
                let agent_paths::EndWords {
                    display: name,
                    quits,
                    ..
                } = agent.words();
                write!(
                    f,
                    "not offered: {name} reported its end from its pane, which stayed open ({quits})"
                )
            }
            EndEvidence::Offered { agent, detail } => {
                let agent_paths::EndWords {
                    unreported: daemon,
                    file,
                    ..
                } = agent.words();
                write!(
                    f,
                    "offered: no end was reported from its pane{daemon}, and the {file} resumes \
                     ({detail})"
                )
            }
            EndEvidence::CannotResume { agent, detail } => {
                let agent_paths::EndWords {
                    display: name,
                    unreported: daemon,
                    ..
                } = agent.words();
                write!(
                    f,
                    "no end was reported from its pane{daemon}, but {name} cannot resume it: {detail}"
                )
            }
        }
    }
}
