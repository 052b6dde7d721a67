//! Validated identifiers: a surface, a session, a repo, a role, an agent.
//!
//! Each is checked once, where it enters the program, and carried as a newtype from then on, so
//! the index never holds an empty, blank, control-character or over-long id, nor a session id
//! that a command line would take for an option. The working dir and config dir stay opaque
//! strings, but [`validate_dir`] holds them to the same rule on control characters: every value
//! that ends up in a resume command, in a pane or on a terminal is inert text.

use std::borrow::Borrow;
use std::fmt;

use compact_str::CompactString;
use thiserror::Error;

/// The longest id accepted, in bytes (UTF-8).
pub const MAX_ID_BYTES: usize = 512;

/// Which kind of id a value was meant to be; used in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// A surface id.
    Surface,
    /// A session id.
    Session,
    /// A repo name.
    Repo,
    /// A role.
    Role,
    /// An agent's name.
    Agent,
    /// The working dir a session runs in (not an id, but held to the same character rule).
    WorkingDir,
    /// An agent's config dir (likewise).
    ConfigDir,
}

impl fmt::Display for IdKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IdKind::Surface => "surface id",
            IdKind::Session => "session id",
            IdKind::Repo => "repo",
            IdKind::Role => "role",
            IdKind::Agent => "agent",
            IdKind::WorkingDir => "working dir",
            IdKind::ConfigDir => "config dir",
        })
    }
}

/// Why a string is not a valid id.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InvalidId {
    #[error("{kind} is empty; give a non-empty value")]
    /// The value is empty.
    Empty {
        /// Which kind of value.
        kind: IdKind,
    },
    #[error("{kind} is only whitespace; give a non-blank value")]
    /// The value holds only spaces.
    Blank {
        /// Which kind of value.
        kind: IdKind,
    },
    #[error("{kind} contains a control character (U+{code:04X}) at byte {at}; remove it")]
    /// The value holds a control character.
    Control {
        /// Which kind of value.
        kind: IdKind,
        /// The control character's code point.
        code: u32,
        /// Its byte offset.
        at: usize,
    },
    #[error("{kind} is {len} bytes long; at most {max} bytes are allowed", max = MAX_ID_BYTES)]
    /// The value is longer than allowed.
    TooLong {
        /// Which kind of value.
        kind: IdKind,
        /// The value's length in bytes.
        len: usize,
    },
    #[error(
        "{kind} begins with '-', so an agent would read it as an option; give the id the agent printed"
    )]
    /// A session id that begins with `-`, which a command line would take for an option.
    OptionLike {
        /// Which kind of value.
        kind: IdKind,
    },
    #[error("{kind} is a relative path; give an absolute one")]
    /// A dir that is not absolute: it would be resolved against whatever dir a resume runs in.
    Relative {
        /// Which kind of value.
        kind: IdKind,
    },
}

impl InvalidId {
    /// Which kind of value was refused.
    pub fn kind(&self) -> IdKind {
        match *self {
            InvalidId::Empty { kind }
            | InvalidId::Blank { kind }
            | InvalidId::Control { kind, .. }
            | InvalidId::TooLong { kind, .. }
            | InvalidId::OptionLike { kind }
            | InvalidId::Relative { kind } => kind,
        }
    }
}

/// Checks the rules every id shares: non-empty, not only whitespace, no control characters,
/// at most [`MAX_ID_BYTES`] bytes; and a session id does not begin with `-`.
pub fn validate(kind: IdKind, value: &str) -> Result<(), InvalidId> {
    if value.is_empty() {
        return Err(InvalidId::Empty { kind });
    }
    if value.len() > MAX_ID_BYTES {
        return Err(InvalidId::TooLong {
            kind,
            len: value.len(),
        });
    }
    no_control(kind, value)?;
    if value.trim().is_empty() {
        return Err(InvalidId::Blank { kind });
    }
    if kind == IdKind::Session && value.starts_with('-') {
        return Err(InvalidId::OptionLike { kind });
    }
    Ok(())
}

/// Checks a working dir or config dir: no control character (C0, DEL or C1), which a terminal
/// or a shell's line editor would act on. Any other text is a valid path here.
pub fn validate_dir(kind: IdKind, value: &str) -> Result<(), InvalidId> {
    no_control(kind, value)
}

fn no_control(kind: IdKind, value: &str) -> Result<(), InvalidId> {
    // `char::is_control` is the Unicode category Cc: C0, DEL and C1.
    match value.char_indices().find(|(_, c)| c.is_control()) {
        Some((at, control)) => Err(InvalidId::Control {
            kind,
            code: u32::from(control),
            at,
        }),
        None => Ok(()),
    }
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        ///
        /// Held as a compact string: ids up to 24 bytes (most surface and session ids) live
        /// inline, so comparing one in a hash table needs no trip to the heap.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(CompactString);

        impl $name {
            /// Validates `value` and wraps it.
            pub fn new(value: impl Into<String>) -> Result<Self, InvalidId> {
                let value = value.into();
                validate($kind, &value)?;
                Ok(Self(CompactString::from(value)))
            }

            /// The value as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The value as an owned string.
            pub fn into_string(self) -> String {
                self.0.into_string()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidId;
            fn try_from(value: String) -> Result<Self, InvalidId> {
                Self::new(value)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = InvalidId;
            fn try_from(value: &str) -> Result<Self, InvalidId> {
                Self::new(value)
            }
        }
    };
}

id_type!(
    /// A terminal surface: a tmux pane, a cmux surface, a zellij pane, a window.
    SurfaceId,
    IdKind::Surface
);
id_type!(
    /// An agent session id, the value given to `--resume`.
    SessionId,
    IdKind::Session
);
id_type!(
    /// The repository (project) name a session works in.
    Repo,
    IdKind::Repo
);
id_type!(
    /// A free-form role label (for example `lead`, `worker`).
    Role,
    IdKind::Role
);
id_type!(
    /// An agent's name: `claude`, `codex`, `gemini`, `copilot`, or another name (the index
    /// file's `provider` field).
    AgentName,
    IdKind::Agent
);
