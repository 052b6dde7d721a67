//! What can go wrong: reading a launcher config, and rendering a command.

use camino::Utf8PathBuf;

/// A launcher config that cannot be used, or a profile that does not exist.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read launcher config {path}: {source}; make it a readable file or remove it")]
    Read {
        /// The launcher config file.
        path: Utf8PathBuf,
        #[source]
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not TOML, or not the launcher format (a wrong type, an unknown key).
    #[error(
        "launcher config {path} is invalid at line {line}, column {column}: {message}; fix the file"
    )]
    Syntax {
        /// The launcher config file.
        path: Utf8PathBuf,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What the TOML parser said.
        message: String,
        /// The parser's own error (its message is `message`, stated once above; not a
        /// `source`, so that a printed chain does not state the cause twice).
        toml: Box<toml::de::Error>,
    },
    /// A launcher's `command` cannot be used as a template.
    #[error("launcher config {path}: `{key}` {problem}")]
    Template {
        /// The launcher config file.
        path: Utf8PathBuf,
        /// The TOML key of the command, such as `repos.api.command`.
        key: String,
        #[source]
        /// What is wrong with the template.
        problem: TemplateError,
    },
    /// A value that is well-formed TOML but makes no sense as a launcher setting.
    #[error("launcher config {path}: `{key}` {reason}")]
    Invalid {
        /// The launcher config file.
        path: Utf8PathBuf,
        /// The TOML key at fault.
        key: String,
        /// What is wrong, in words.
        reason: String,
    },
    /// A profile was asked for by name (`--profile`, or `profile = ...` in a launcher config)
    /// and none has it. One wording wherever the name came from.
    #[error(
        "no launcher profile named `{name}`{}; known profiles: {}; choose one of them or define \
         [profiles.{}] in launchers.toml",
        file.as_ref().map(|file| format!(" (chosen by `profile` in {file})")).unwrap_or_default(),
        known.join(", "),
        toml_key(name)
    )]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: Vec<String>,
        /// The launcher config that chose it; `None` when it came from the command line.
        file: Option<Utf8PathBuf>,
    },
}

/// Why a command template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error(
        "cannot be split into words (an unclosed quote or a trailing backslash?); fix its quoting"
    )]
    /// The command cannot be split into words (an unclosed quote).
    Unsplittable,
    #[error("is empty; give the command that resumes a session")]
    /// The command is empty.
    Empty,
    #[error("contains a NUL byte, which no shell command can carry; remove it")]
    /// The command holds a NUL byte.
    Nul,
    #[error(
        "uses an unknown placeholder `{{{name}}}`; use {{session}}, {{repo}}, {{repo_lower}}, \
         {{cwd}} or {{config_dir}}, or write `{{{{` and `}}}}` for literal braces"
    )]
    /// A placeholder that is not one of the known fields.
    UnknownPlaceholder {
        /// The name asked for.
        name: String,
    },
    #[error("has a `{{` without a closing `}}`; write `{{{{` for a literal brace")]
    /// A `{` without its `}`.
    UnclosedBrace,
    #[error("has a `}}` without an opening `{{`; write `}}}}` for a literal brace")]
    /// A `}` without its `{`.
    StrayBrace,
    #[error(
        "does not use {{session}}, so it cannot resume a session; add {{session}} where the session id goes"
    )]
    /// The command does not use `{session}`.
    NoSession,
}

/// A session for which no command can be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// No repo or profile launcher applies and the agent has no default.
    #[error(
        "no launcher for agent `{agent}`; add a [providers.{agent}] launcher (or a \
         [repos.<repo>] one) to launchers.toml"
    )]
    NoLauncher {
        /// The agent that has no launcher.
        agent: String,
    },
    /// A value contains a NUL byte, which no shell word can hold.
    #[error(
        "the {value} contains a NUL byte, which no shell command can carry; fix the recorded value"
    )]
    Unquotable {
        /// Which value: `session id`, `repo`, `working dir`, `config dir` or `command`.
        value: &'static str,
    },
    /// The launcher's command uses a placeholder the session has no value for.
    #[error(
        "launcher `{launcher}` uses {{{placeholder}}} but the session has no recorded {value}; \
         record it, or change the launcher in launchers.toml"
    )]
    MissingValue {
        /// The launcher's key in launchers.toml, such as `repos.api`.
        launcher: String,
        /// The placeholder, such as `{cwd}`.
        placeholder: &'static str,
        /// The value it needs, such as `working dir`.
        value: &'static str,
    },
}

/// A name as it would be written in a TOML key: bare when it can be, quoted otherwise.
pub(crate) fn toml_key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_owned()
    } else {
        format!("{name:?}")
    }
}
