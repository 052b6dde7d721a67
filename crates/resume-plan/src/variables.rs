//! The one table of every environment variable crash-resume reads, each with its owner and
//! what it means: crash-resume's own (here), each agent's (derived from `agent_paths`' facts),
//! each multiplexer's (`mux`) and the system's. The man page's ENVIRONMENT, the variables the
//! test sandbox clears and the docs' lists are derived from it or checked against it.

use agent_paths::{Agent, VariableRole};
use mux::Multiplexer;

/// Who a variable belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// crash-resume itself (`CRASH_RESUME_*`).
    CrashResume,
    /// The agents that read it, as their facts say, and what it is to crash-resume.
    Agents(Vec<Agent>, VariableRole),
    /// A multiplexer, which sets or reads it.
    Multiplexer(Multiplexer),
    /// The system: the home dir, the XDG base dirs, the search path, the shell, the terminal.
    System,
}

/// One variable crash-resume reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: &'static str,
    /// Whose it is.
    pub owner: Owner,
    /// What it means, in a line.
    pub meaning: String,
}

/// crash-resume's own variables, with what each means.
pub const OWN: [(&str, &str); 10] = [
    ("CRASH_RESUME_INDEX_PATH", "the index file (as --path)"),
    (
        "CRASH_RESUME_PROFILE",
        "the launcher profile (as --profile)",
    ),
    (
        "CRASH_RESUME_LOCK_TIMEOUT",
        "how long a write waits for the lock (as --lock-timeout)",
    ),
    (
        "CRASH_RESUME_ALLOW_VOLATILE",
        "accept an index on a volatile filesystem (as --allow-volatile)",
    ),
    (
        "CRASH_RESUME_TMUX_SOCKET",
        "the tmux server restore --apply tmux talks to (as --tmux-socket)",
    ),
    (
        "CRASH_RESUME_SURFACE",
        "the hook's surface id, over any multiplexer's variable",
    ),
    ("CRASH_RESUME_ROLE", "the role the hook records"),
    (
        crate::boot::BOOT_ID_VARIABLE,
        "for tests only: stands in for this boot's id (/proc/sys/kernel/random/boot_id, kern.boottime on macOS)",
    ),
    (
        "CRASH_RESUME_HOOK_RETRY",
        "set by the hook on its own background retry; not for people to set",
    ),
    (
        "CRASH_RESUME_FAULT",
        "for tests only, in a build with index-store's fault-injection feature: <point>:<action> stops, aborts or fails a writer at a named line of the write path",
    ),
];

/// The system's variables crash-resume reads, with what each means to it.
pub const SYSTEM: [(&str, &str); 7] = [
    (
        "XDG_STATE_HOME",
        "where the index and the hook's log live by default",
    ),
    (
        "XDG_CONFIG_HOME",
        "where launchers.toml and the login service's unit live by default",
    ),
    (
        "HOME",
        "the home dir, when the XDG dirs are not set; the default of the agents' config dirs",
    ),
    (
        "PATH",
        "where the multiplexers' and agents' programs are looked for",
    ),
    (
        "SHELL",
        "the shell a restored pane runs the resume command in",
    ),
    ("TERM", "a table is coloured on a terminal that is not dumb"),
    ("NO_COLOR", "set and not empty: no colours"),
];

/// Every variable crash-resume reads, each once: its own, the agents', the multiplexers', then
/// the system's.
pub fn all() -> Vec<Variable> {
    let own = OWN.iter().map(|(name, meaning)| Variable {
        name,
        owner: Owner::CrashResume,
        meaning: (*meaning).to_string(),
    });
    let agents = agent_paths::variables()
        .into_iter()
        .map(|(name, agents, role)| Variable {
            name,
            meaning: agent_meaning(name, &agents, role),
            owner: Owner::Agents(agents, role),
        });
    let multiplexers = mux::variables().map(|(multiplexer, name, meaning)| Variable {
        name,
        owner: Owner::Multiplexer(multiplexer),
        meaning: meaning.to_string(),
    });
    let system = SYSTEM.iter().map(|(name, meaning)| Variable {
        name,
        owner: Owner::System,
        meaning: (*meaning).to_string(),
    });
    own.chain(agents)
        .chain(multiplexers)
        .chain(system)
        .collect()
}

/// What an agent's variable means, naming its agents as people know them.
fn agent_meaning(name: &str, agents: &[Agent], role: VariableRole) -> String {
    let mut names: Vec<&str> = agents
        .iter()
        .map(|agent| agent.facts().end_words.display)
        .collect();
    let names = match names.pop() {
        Some(last) if !names.is_empty() => format!("{} and {last}", names.join(", ")),
        last => last.unwrap_or_default().to_string(),
    };
    match role {
        VariableRole::ConfigDir if name == "GEMINI_CLI_HOME" => {
            format!("{names}'s home (its files are in its .gemini), recorded with each session")
        }
        VariableRole::ConfigDir => format!("{names}'s config dir, recorded with each session"),
        VariableRole::Launch if name == preflight::qwen::RUNTIME_VAR => format!(
            "where {names} keeps its sessions: the hook reads it from the agent's process and a restore sets it again"
        ),
        VariableRole::Launch => format!(
            "chooses the model or provider of {names}: the hook reads it from the agent's process and a restore sets it again"
        ),
        VariableRole::Quirk => agent_paths::QUIRK_VARIABLES
            .iter()
            .find(|quirk| quirk.name == name)
            .map(|quirk| format!("{names}: {}", quirk.meaning))
            .unwrap_or_default(),
    }
}

/// The names of [`all`] a test sandbox must not inherit from whoever runs the tests: every one
/// but the system's.
pub fn inheritable_by_tests() -> impl Iterator<Item = &'static str> {
    all()
        .into_iter()
        .filter(|variable| variable.owner != Owner::System)
        .map(|variable| variable.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_is_listed_once_with_a_meaning() {
        let all = all();
        let mut names: Vec<&str> = all.iter().map(|variable| variable.name).collect();
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a name listed twice");
        for variable in &all {
            assert!(!variable.meaning.trim().is_empty(), "{}", variable.name);
        }
        for name in [
            "GEMINI_CLI_HOME",
            "QWEN_HOME",
            "QWEN_RUNTIME_DIR",
            "KITTY_LISTEN_ON",
        ] {
            assert!(names.contains(&name), "{name}");
        }
    }
}
