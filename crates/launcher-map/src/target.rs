//! What a registry renders a command from: the session's values, and the facts of the
//! environment.

use std::collections::BTreeMap;

use camino::Utf8PathBuf;

/// What is known of the session to resume, as plain values, so that a program can use this
/// crate without `index-core`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Target<'a> {
    /// The agent CLI, such as `claude` or `codex`; `None` (or blank) means [`DEFAULT_AGENT`](crate::DEFAULT_AGENT).
    pub agent: Option<&'a str>,
    /// The session id to resume.
    pub session: &'a str,
    /// The repo the session works in; used to choose a launcher. Blank counts as `None`.
    pub repo: Option<&'a str>,
    /// The working dir the session ran in, as recorded (`~` is expanded). Empty counts as `None`.
    pub cwd: Option<&'a str>,
    /// The agent's config dir, as recorded (`~` is expanded). Empty counts as `None`.
    pub config_dir: Option<&'a str>,
    /// How the agent was started, for its default launcher (a profile's or a repo's launcher
    /// is the whole command and ignores it).
    pub start: Start<'a>,
}

/// How the agent was started, as its default launcher starts it again: `[NAME=value ...]
/// <wrapper or agent> <resume arguments> <args>`, every value quoted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Start<'a> {
    /// Words passed after the resume arguments, as given (`--model`, `opus`).
    pub args: &'a [String],
    /// Variables set for the command, by name; a name that is no shell name is left out.
    pub env: Option<&'a BTreeMap<String, String>>,
    /// The program run instead of the launcher's first word (a wrapper of the user's that
    /// passes its arguments on to the agent).
    pub program: Option<&'a str>,
}

/// The facts of the environment that rendering needs; the CLI fills them in, tests give their
/// own.
#[derive(Debug, Clone, Default)]
pub struct RenderContext {
    /// The user's home dir, for expanding `~` in recorded paths; `None` leaves `~/` to the shell.
    pub home: Option<Utf8PathBuf>,
}
