//! The launcher registry: turns a recorded agent session into the one shell line that resumes
//! it. It never runs anything.
//!
//! ```
//! use camino::Utf8PathBuf;
//! use launcher_map::{RenderContext, Registry, Target};
//!
//! let cx = RenderContext { home: Some(Utf8PathBuf::from("/home/u")) };
//! let target = Target {
//!     session: "01J-orc-lead-xyz",
//!     cwd: Some("~/my proj"),
//!     config_dir: Some("~/.claude-work"),
//!     ..Target::default()
//! };
//! let line = Registry::builtin().render(&target, &cx).unwrap();
//! assert_eq!(
//!     line,
//!     "cd '/home/u/my proj' && CLAUDE_CONFIG_DIR=/home/u/.claude-work claude --resume 01J-orc-lead-xyz",
//! );
//! ```
//!
//! # Rendering
//!
//! An agent's default launcher renders as `cd <cwd> && <ENV>=<config dir> <command>`: the
//! `cd` only when the working dir is known, the assignment only when the config dir is known and
//! is not the agent's default one (compared after `~` expansion, ignoring a trailing `/`).
//! Built in: `claude --resume <id>` (`CLAUDE_CONFIG_DIR`, default `~/.claude`; also used when no
//! agent is recorded), `codex resume <id>` (`CODEX_HOME`, default `~/.codex`),
//! `gemini --resume <id>` (`GEMINI_CLI_HOME`, a home dir holding `.gemini`, default `~`) and
//! `copilot --resume=<id>` (`COPILOT_HOME`, default `~/.copilot`), from
//! the agent registry (`agent-paths`). Repo and profile launchers get the `cd` (unless `cd = false`) but no
//! assignment: they say what they need with placeholders.
//!
//! Every value is shell-quoted (a value that needs no quoting stays bare); a NUL byte, which no
//! shell word can hold, is an error. A leading `~` in a recorded path is replaced by
//! [`RenderContext::home`] first, since a quoted `~` does not expand; with no home known, the `~/` is
//! left bare for the shell to expand.
//!
//! The built-in `golems` profile reproduces the JavaScript crash-resume-index exactly:
//! `<repo lower-cased>Claude --resume <id>`, `orcClaude` for the `orchestrator` repo and
//! `repoGolem --resume <id>` without a repo, with no `cd` and no config dir (for Claude
//! sessions; others get their agent's default).
//!
//! # `launchers.toml`
//!
//! The CLI reads `$XDG_CONFIG_HOME/crash-resume/launchers.toml`. Every key is optional; a key
//! this version does not know is an error, not ignored.
//!
//! ```toml
//! version = 1                  # the format version; 1 is the only one
//! profile = "golems"           # the profile used when none is chosen on the command line
//!
//! # An agent default: overrides a built-in one (keys left out keep the built-in values)
//! # or adds an agent (then `command` is required).
//! [providers.claude]
//! command = "claude --resume {session}"
//! config_env = "CLAUDE_CONFIG_DIR"     # the variable that points it at a config dir
//! default_config_dir = "~/.claude"     # where it looks when that variable is unset
//! cd = true                            # prefix `cd <cwd> &&` when the working dir is known
//!
//! # A launcher for one repo: wins over the agent default.
//! [repos.my-repo]
//! command = "myClaude --resume {session}"
//! cd = true                            # default true
//! provider = "claude"                  # optional: only for sessions of this provider
//!
//! # A profile: a named set of repo launchers, selected with `profile` or `--profile`.
//! [profiles.team.repos.api]
//! command = "apiClaude --resume {session}"
//! [profiles.team.fallback]             # optional: for sessions of any other repo
//! command = "{repo_lower}Claude --resume {session}"
//! cd = false
//! [profiles.team.no_repo]              # optional: for sessions without a repo
//! command = "repoGolem --resume {session}"
//! ```
//!
//! A `command` is one command, split into words as a POSIX shell would when the file is read.
//! In each word, `{session}`, `{repo}`, `{repo_lower}`, `{cwd}` and `{config_dir}` are replaced
//! by the session's values (`{{` and `}}` are literal braces), then the word is quoted: shell
//! operators and `$VAR` in a command are passed to the program literally. A word `NAME=value`
//! keeps its meaning as an environment assignment, and a word starting with `~/` is expanded.
//! Every command must use `{session}`; a launcher that uses a value the session does not have
//! fails to render, naming the launcher.
//!
//! Repo names match ignoring case and surrounding spaces, and a blank repo counts as none.
//! A launcher is chosen in this order, first match wins: the selected profile's launcher for
//! the repo, the `[repos]` launcher for the repo, the selected profile's `fallback` (or
//! `no_repo`), the agent's default. A profile defined in the file replaces a built-in one of
//! the same name.

#![deny(missing_docs)]

mod config;
mod error;
mod launcher;
mod registry;
mod target;
mod template;

pub use error::{ConfigError, RenderError, TemplateError};
pub use registry::{DEFAULT_AGENT, Registry};
pub use target::{RenderContext, Start, Target};

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
