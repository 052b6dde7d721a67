//! The registry of AI coding agents: for each, its config-dir variable and default, its hook
//! file and shape, its hook payload's dialect, the rule for a clean end and its launcher; and
//! home-dir expansion of recorded paths.
//!
//! These facts are written here once; the launcher registry (`launcher-map`), the preflight and
//! the `crash-resume` binary all read them from this crate. Pure: no IO, no environment reads;
//! callers pass the home dir and the variables' values they read.

#![deny(missing_docs)]

use camino::{Utf8Path, Utf8PathBuf};

pub mod launch;

pub use launch::{Flag, Kept, LaunchFacts, Takes};

/// An agent CLI crash-resume knows: the one typed list every crate matches on, so that adding
/// an agent is one variant and one [`AgentFacts`] in [`AGENTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// Anthropic's Claude Code (`claude`).
    Claude,
    /// OpenAI's Codex CLI (`codex`).
    Codex,
    /// Google's Gemini CLI (`gemini`).
    Gemini,
    /// GitHub Copilot CLI (`copilot`).
    Copilot,
    /// Qwen Code (`qwen`), a fork of Gemini CLI with Claude-shaped sessions.
    Qwen,
}

impl Agent {
    /// Every agent, in [`AGENTS`]' order.
    pub const ALL: [Agent; 5] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Qwen,
    ];

    /// The agent the index names `name` (`claude`, `codex`, `gemini`, `copilot`, `qwen`), if it
    /// is one.
    pub fn from_name(name: &str) -> Option<Agent> {
        facts_of(name).map(|facts| facts.agent)
    }

    /// Its facts.
    pub fn facts(self) -> &'static AgentFacts {
        &AGENTS[self as usize]
    }

    /// Its name as the index records it.
    pub fn name(self) -> &'static str {
        self.facts().name
    }
}

impl std::fmt::Display for Agent {
    /// The name as the index records it ([`Agent::name`]).
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

/// How an agent says where its hooks are and what they run: Claude Code's shape (Codex and
/// Gemini use it too), or Copilot CLI's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookShape {
    /// `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "command": ...}]}]}}`, beside the
    /// agent's other settings or in a file of its own.
    CommandHooks,
    /// `{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": ..., "timeoutSec":
    /// ...}]}}`, in a file of its own among the agent's hook files. The payload does not name
    /// its event, so each hook's command ends with the event it is installed for.
    BashHooks,
}

/// What an agent's hook payload says beyond the common fields (`session_id`, `cwd`,
/// `transcript_path`, `hook_event_name`, `source`, `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Claude Code: a SessionEnd's `reason` tells a `/exit` or logout from anything else.
    ClaudeCode,
    /// Codex CLI: `thread_id`/`thread-id` as older names of the id; every end has the reason
    /// `other`; a hook may run in Codex's shared daemon, which carries another pane's
    /// environment.
    Codex,
    /// Gemini CLI: `timestamp` besides; every end by `/quit` or by a signal (SIGHUP, SIGTERM,
    /// SIGINT) has the reason `exit`; with `GITHUB_SHA` set in its environment the hook gets
    /// only an allow-list of variables (no `TMUX_PANE`), and in an untrusted folder no hook runs.
    Gemini,
    /// Copilot CLI: camelCase keys (`sessionId`, `initialPrompt`), no event name (the hook's
    /// command line carries it); every end, by `/exit` or by the pane being killed, has the
    /// reason `user_exit`; SIGKILL runs no hook.
    Copilot,
    /// Qwen Code: Claude Code's keys (and `model`); a `/quit` and a signal both end with the
    /// reason `prompt_input_exit`, so the reason tells nothing; its stdout is read as the hook's
    /// JSON answer.
    Qwen,
}

/// When a SessionEnd counts as the user ending the session on purpose (not offered after a
/// crash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanEnd {
    /// When its reason is one of a clean exit (`prompt_input_exit`, `logout`, `exit`).
    ByReason,
    /// Never by its reason, which does not tell a quit from a signal: an end reported from a
    /// pane that still exists (the hook could still name it) is the end; a killed pane's is not
    /// seen, since its hook cannot name the pane or never runs.
    FromOpenPane,
}

/// How an agent, its end and its files are said to people: in `restore`'s reason why a session
/// is or is not offered, and its note on the agent's own deletion of old conversations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndWords {
    /// The agent's name for people: `Codex`.
    pub display: &'static str,
    /// What ends a session in a pane that stays open: `a /quit, ...`.
    pub quits: &'static str,
    /// What its conversation file is called: `rollout`.
    pub file: &'static str,
    /// A place whose ends come alike after a quit and a killed pane, as a parenthesis that
    /// follows "no end was reported from its pane" (Codex's shared daemon); empty for none.
    pub unreported: &'static str,
}

/// What is known of one agent CLI: where it keeps its files, its hooks, and how it resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentFacts {
    /// The agent.
    pub agent: Agent,
    /// The agent's name as the index records it: `claude`, `codex`, `gemini`, `copilot`.
    pub name: &'static str,
    /// The environment variable that points the agent at a config dir (for Gemini, a home dir
    /// that holds `.gemini`).
    pub config_env: &'static str,
    /// The config dir the agent uses when the variable is unset, as written (`~/.claude`).
    pub default_config_dir: &'static str,
    /// The agent's user-level hook file, relative to the config dir.
    pub hook_file: &'static str,
    /// The shape of that file's hooks.
    pub hook_shape: HookShape,
    /// The hook events crash-resume installs itself for, as the agent names them: its session
    /// start and its session end.
    pub hook_events: [&'static str; 2],
    /// What its hook payload says.
    pub dialect: Dialect,
    /// When its SessionEnd is a clean end.
    pub clean_end: CleanEnd,
    /// Its end and files in words.
    pub end_words: EndWords,
    /// Its built-in launcher: the command that resumes `{session}`.
    pub launcher: &'static str,
    /// How its start is read: the flags a restore passes again, the variables that choose its
    /// model and provider ([`launch`]).
    pub launch: &'static LaunchFacts,
}

impl AgentFacts {
    /// The config dir the agent runs with: `variable` (the value of [`Self::config_env`]) when
    /// it is set and not blank, else the default under `home`; `None` when neither is known.
    pub fn config_dir(
        &self,
        variable: Option<&str>,
        home: Option<&Utf8Path>,
    ) -> Option<Utf8PathBuf> {
        match variable.filter(|value| !value.trim().is_empty()) {
            Some(value) => Some(Utf8PathBuf::from(value)),
            None => home.map(|home| expand_home(self.default_config_dir, Some(home))),
        }
    }

    /// The hook file in `config_dir`.
    pub fn hook_file_in(&self, config_dir: &Utf8Path) -> Utf8PathBuf {
        config_dir.join(self.hook_file)
    }
}

/// The agents crash-resume knows, in [`Agent`]'s order.
pub const AGENTS: [AgentFacts; 5] = [
    AgentFacts {
        agent: Agent::Claude,
        name: "claude",
        config_env: "CLAUDE_CONFIG_DIR",
        default_config_dir: "~/.claude",
        hook_file: "settings.json",
        hook_shape: HookShape::CommandHooks,
        hook_events: ["SessionStart", "SessionEnd"],
        dialect: Dialect::ClaudeCode,
        clean_end: CleanEnd::ByReason,
        end_words: EndWords {
            display: "Claude Code",
            quits: "a /exit or a logout",
            file: "transcript",
            unreported: "",
        },
        launcher: "claude --resume {session}",
        launch: &launch::CLAUDE,
    },
    AgentFacts {
        agent: Agent::Codex,
        name: "codex",
        config_env: "CODEX_HOME",
        default_config_dir: "~/.codex",
        hook_file: "hooks.json",
        hook_shape: HookShape::CommandHooks,
        hook_events: ["SessionStart", "SessionEnd"],
        dialect: Dialect::Codex,
        clean_end: CleanEnd::FromOpenPane,
        end_words: EndWords {
            display: "Codex",
            quits: "a /quit, Ctrl-C, the end of an exec run or a SIGTERM",
            file: "rollout",
            // Its daemon's SessionEnd comes alike after a quit and after a killed pane.
            unreported: " (Codex in its shared daemon reports none)",
        },
        launcher: "codex resume {session}",
        launch: &launch::CODEX,
    },
    AgentFacts {
        agent: Agent::Gemini,
        name: "gemini",
        // Gemini CLI's variable names a home dir: its files are in `$GEMINI_CLI_HOME/.gemini`.
        config_env: "GEMINI_CLI_HOME",
        default_config_dir: "~",
        hook_file: ".gemini/settings.json",
        hook_shape: HookShape::CommandHooks,
        hook_events: ["SessionStart", "SessionEnd"],
        dialect: Dialect::Gemini,
        clean_end: CleanEnd::FromOpenPane,
        end_words: EndWords {
            display: "Gemini",
            quits: "a /quit, or a SIGINT, SIGTERM or SIGHUP sent to Gemini alone",
            file: "session file",
            unreported: "",
        },
        launcher: "gemini --resume {session}",
        launch: &launch::GEMINI,
    },
    AgentFacts {
        agent: Agent::Copilot,
        name: "copilot",
        config_env: "COPILOT_HOME",
        default_config_dir: "~/.copilot",
        // Copilot reads every `*.json` in its hooks dir: this one is crash-resume's own.
        hook_file: "hooks/crash-resume.json",
        hook_shape: HookShape::BashHooks,
        hook_events: ["sessionStart", "sessionEnd"],
        dialect: Dialect::Copilot,
        clean_end: CleanEnd::FromOpenPane,
        end_words: EndWords {
            display: "Copilot",
            quits: "a /exit",
            file: "session's events.jsonl",
            unreported: "",
        },
        launcher: "copilot --resume={session}",
        launch: &launch::COPILOT,
    },
    AgentFacts {
        agent: Agent::Qwen,
        name: "qwen",
        // The `.qwen` dir itself; its sessions may live in another dir (`QWEN_RUNTIME_DIR`).
        config_env: "QWEN_HOME",
        default_config_dir: "~/.qwen",
        hook_file: "settings.json",
        hook_shape: HookShape::CommandHooks,
        hook_events: ["SessionStart", "SessionEnd"],
        dialect: Dialect::Qwen,
        clean_end: CleanEnd::FromOpenPane,
        end_words: EndWords {
            display: "Qwen Code",
            quits: "a /quit, or a signal sent to Qwen Code alone",
            file: "session file",
            unreported: "",
        },
        launcher: "qwen --resume {session}",
        launch: &launch::QWEN,
    },
];

/// What a variable an agent's facts name is to crash-resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VariableRole {
    /// Its config dir ([`AgentFacts::config_env`]), recorded with each session.
    ConfigDir,
    /// It chooses the model or the provider ([`LaunchFacts::env`]): read from the agent's
    /// process by its hook, set again for the resumed session.
    Launch,
    /// It changes how its hook is run ([`QUIRK_VARIABLES`]).
    Quirk,
}

/// A variable that the agents' quirks make crash-resume read, with what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuirkVariable {
    /// The agent.
    pub agent: Agent,
    /// The variable.
    pub name: &'static str,
    /// What it does, in a line.
    pub meaning: &'static str,
}

/// The variables an agent's quirk makes the hook read ([`Dialect`]).
pub const QUIRK_VARIABLES: [QuirkVariable; 2] = [
    QuirkVariable {
        agent: Agent::Gemini,
        name: "GITHUB_SHA",
        meaning: "set (or SURFACE=Github) where Gemini CLI started, its hooks get only an allow-list of variables: the hook reads its pane from Gemini's environment",
    },
    QuirkVariable {
        agent: Agent::Gemini,
        name: "SURFACE",
        meaning: "set to Github where Gemini CLI started, as GITHUB_SHA",
    },
];

/// Every environment variable the agents' facts name, once each in [`AGENTS`]' order (config
/// dirs, then the launch variables, then the quirks'), with the agents that read it and what it
/// is to crash-resume. `QWEN_RUNTIME_DIR`, which the hook reads for a warning too, is a launch
/// variable of Qwen Code.
pub fn variables() -> Vec<(&'static str, Vec<Agent>, VariableRole)> {
    let mut all: Vec<(&'static str, Vec<Agent>, VariableRole)> = Vec::new();
    let mut add = |name: &'static str, agent: Agent, role: VariableRole| match all
        .iter_mut()
        .find(|(known, _, _)| *known == name)
    {
        Some((_, agents, _)) if !agents.contains(&agent) => agents.push(agent),
        Some(_) => {}
        None => all.push((name, vec![agent], role)),
    };
    for facts in &AGENTS {
        add(facts.config_env, facts.agent, VariableRole::ConfigDir);
    }
    for facts in &AGENTS {
        for name in facts.launch.env {
            add(name, facts.agent, VariableRole::Launch);
        }
    }
    for quirk in &QUIRK_VARIABLES {
        add(quirk.name, quirk.agent, VariableRole::Quirk);
    }
    all
}

/// The agent assumed when a session has none recorded (the JavaScript tool knew only Claude).
pub const DEFAULT_AGENT: &str = "claude";

/// The facts of the agent named `name`, if it is one of [`AGENTS`].
pub fn facts_of(name: &str) -> Option<&'static AgentFacts> {
    AGENTS.iter().find(|facts| facts.name == name)
}

/// Replaces a leading `~` (the whole path) or `~/` by `home`.
///
/// Agents and hooks record paths as the user typed them (`~/.claude-work`). Before such a path
/// is checked on disk or quoted for a shell (where a quoted `~` no longer expands), its leading
/// `~` is replaced by the home dir. Only the current user's home is known: anything else is
/// returned unchanged: a `~user/...` form, a `~` that is not the first character, and every
/// path when `home` is `None` (the caller could not tell where home is). A trailing `/` on
/// `home` is not doubled.
///
/// ```
/// use camino::{Utf8Path, Utf8PathBuf};
/// use agent_paths::expand_home;
///
/// let home = Utf8Path::new("/home/u");
/// assert_eq!(expand_home("~/.claude", Some(home)), Utf8PathBuf::from("/home/u/.claude"));
/// assert_eq!(expand_home("~bob/x", Some(home)), Utf8PathBuf::from("~bob/x"));
/// assert_eq!(expand_home("~/.claude", None), Utf8PathBuf::from("~/.claude"));
/// ```
pub fn expand_home(path: &str, home: Option<&Utf8Path>) -> Utf8PathBuf {
    let Some(home) = home else {
        return Utf8PathBuf::from(path);
    };
    if path == "~" {
        return home.to_path_buf();
    }
    match path.strip_prefix('~').filter(|rest| rest.starts_with('/')) {
        // `rest` keeps its leading slash; joining with `Utf8Path::join` would drop `home`
        // when `rest` is `//x`, which a shell expands to `<home>//x`.
        Some(rest) => Utf8PathBuf::from(format!("{}{rest}", home.as_str().trim_end_matches('/'))),
        None => Utf8PathBuf::from(path),
    }
}

/// The Claude Code CLI the tests and the reboot simulation pin (npm `@anthropic-ai/claude-code`).
pub const CLAUDE_CODE_VERSION: &str = "2.1.328";

/// The Codex CLI they pin (npm `@openai/codex`).
pub const CODEX_VERSION: &str = "0.171.0";

/// The Gemini CLI they pin (npm `@google/gemini-cli`).
pub const GEMINI_VERSION: &str = "0.61.0";

/// The GitHub Copilot CLI they pin (npm `@github/copilot`).
pub const COPILOT_VERSION: &str = "1.0.102";

/// The Qwen Code they pin (npm `@qwen-code/qwen-code`).
pub const QWEN_VERSION: &str = "0.24.4";

/// The version of an agent CLI that the tests pin and crash-resume's rules were measured
/// against (the xtask installers install it; `crash-resume doctor` compares the one on `PATH`
/// with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinned {
    /// The agent.
    pub agent: Agent,
    /// The program people run, looked for on `PATH`.
    pub program: &'static str,
    /// The npm package it comes in.
    pub package: &'static str,
    /// The version.
    pub version: &'static str,
}

/// The pinned version of every agent that has one.
pub const PINNED: [Pinned; 5] = [
    Pinned {
        agent: Agent::Claude,
        program: "claude",
        package: "@anthropic-ai/claude-code",
        version: CLAUDE_CODE_VERSION,
    },
    Pinned {
        agent: Agent::Codex,
        program: "codex",
        package: "@openai/codex",
        version: CODEX_VERSION,
    },
    Pinned {
        agent: Agent::Gemini,
        program: "gemini",
        package: "@google/gemini-cli",
        version: GEMINI_VERSION,
    },
    Pinned {
        agent: Agent::Copilot,
        program: "copilot",
        package: "@github/copilot",
        version: COPILOT_VERSION,
    },
    Pinned {
        agent: Agent::Qwen,
        program: "qwen",
        package: "@qwen-code/qwen-code",
        version: QWEN_VERSION,
    },
];

impl Agent {
    /// Its pinned version, when it has one ([`PINNED`]).
    pub fn pinned(self) -> Option<&'static Pinned> {
        PINNED.iter().find(|pinned| pinned.agent == self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variables_are_each_agents_once_each() {
        let all = variables();
        for facts in &AGENTS {
            let names = std::iter::once(facts.config_env).chain(facts.launch.env.iter().copied());
            for name in names {
                let found = all.iter().filter(|(known, _, _)| *known == name).count();
                assert_eq!(found, 1, "{name}");
                let (_, agents, _) = all.iter().find(|(known, _, _)| *known == name).unwrap();
                assert!(agents.contains(&facts.agent), "{name} is {}'s", facts.name);
            }
        }
        let gemini = all
            .iter()
            .find(|(name, _, _)| *name == "GEMINI_CLI_HOME")
            .unwrap();
        assert_eq!(
            (gemini.1.as_slice(), gemini.2),
            ([Agent::Gemini].as_slice(), VariableRole::ConfigDir)
        );
    }

    #[test]
    fn every_agent_has_its_facts_in_order() {
        for agent in Agent::ALL {
            assert_eq!(agent.facts().agent, agent);
            assert_eq!(Agent::from_name(agent.name()), Some(agent));
        }
        assert_eq!(Agent::from_name("aider"), None);
        assert_eq!(Agent::from_name(DEFAULT_AGENT), Some(Agent::Claude));
    }

    fn check(input: &str, home: Option<&str>, expected: &str) {
        let actual = expand_home(input, home.map(Utf8Path::new));
        assert_eq!(actual, expected, "expand_home({input:?}, {home:?})");
    }

    #[test]
    fn tilde_alone_is_home() {
        check("~", Some("/home/u"), "/home/u");
        check("~", Some("/home/u/"), "/home/u/");
        check("~", Some("/"), "/");
    }

    #[test]
    fn leading_tilde_slash_is_replaced() {
        check("~/", Some("/home/u"), "/home/u/");
        check("~/.claude", Some("/home/u"), "/home/u/.claude");
        check("~/.claude/", Some("/home/u"), "/home/u/.claude/");
        check("~/my proj/sub", Some("/home/u"), "/home/u/my proj/sub");
        check("~/.claude", Some("/home/u/"), "/home/u/.claude");
        check("~/.claude", Some("/"), "/.claude");
        check("~//x", Some("/home/u"), "/home/u//x");
        check("~/~/x", Some("/home/u"), "/home/u/~/x");
        check("~/café 🦀", Some("/home/ü"), "/home/ü/café 🦀");
    }

    #[test]
    fn other_tildes_are_left_alone() {
        check("~bob", Some("/home/u"), "~bob");
        check("~bob/x", Some("/home/u"), "~bob/x");
        check("~.claude", Some("/home/u"), "~.claude");
        check("/srv/~/x", Some("/home/u"), "/srv/~/x");
        check("a~/x", Some("/home/u"), "a~/x");
        check(" ~/x", Some("/home/u"), " ~/x");
    }

    #[test]
    fn paths_without_tilde_are_unchanged() {
        check("", Some("/home/u"), "");
        check("/home/u/.claude", Some("/home/u"), "/home/u/.claude");
        check("relative/dir", Some("/home/u"), "relative/dir");
    }

    #[test]
    fn unknown_home_changes_nothing() {
        check("~", None, "~");
        check("~/", None, "~/");
        check("~/.claude", None, "~/.claude");
        check("~bob/x", None, "~bob/x");
        check("/abs", None, "/abs");
    }
}

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
