//! How a hook command of ours is known again in a file that is not ours: the one place that
//! decides it, for every agent's hooks file (Copilot's included), for `hook install` (which
//! replaces one instead of adding a second), `hook uninstall` (which removes every one) and
//! `doctor` (which says what each runs).
//!
//! A hook command of ours has the shape `hook install` writes, `<program> [--path FILE]
//! [--allow-volatile] hook <agent> [EVENT]`, and is recognised by that shape alone, whatever
//! the program is called (`crash-resume`, Nix's `.crash-resume-wrapped`, a renamed copy) and
//! wherever it lives. What does not have the shape is not ours, even when it holds the words
//! `hook claude`: a program named by a bare word other than `crash-resume` (install always
//! writes an absolute path), any word before `hook` but our global options as install writes
//! them, an agent the registry does not know, an event after an agent whose payload names its
//! own, anything after that (another argument, `&&`, a pipe).

use agent_paths::{Agent, HookShape};

/// The program name people type, found on `PATH`: a hook written by hand with it is ours too.
pub const PROGRAM_NAME: &str = "crash-resume";

/// A hook command of ours, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OurHook {
    /// The program it runs, as written: an absolute path, or [`PROGRAM_NAME`].
    pub program: String,
    /// Its `--path`, when it has one.
    pub index_path: Option<String>,
    /// Whether it carries `--allow-volatile`.
    pub allow_volatile: bool,
    /// The agent it is the hook of.
    pub agent: Agent,
    /// The event its command line names (Copilot's), when it names one.
    pub event: Option<String>,
}

/// The hook command of ours `command` is, if it is one (the shape in this module's comment).
pub fn parse(command: &str) -> Option<OurHook> {
    let words = shlex::split(command)?;
    let (program, mut rest) = words.split_first()?;
    if !(program.starts_with('/') || program == PROGRAM_NAME) {
        return None;
    }
    let mut index_path = None;
    let mut allow_volatile = false;
    loop {
        rest = match rest {
            [flag, file, rest @ ..] if flag == "--path" && !file.is_empty() => {
                index_path = Some(file.clone());
                rest
            }
            [flag, rest @ ..] if flag == "--allow-volatile" => {
                allow_volatile = true;
                rest
            }
            _ => break,
        };
    }
    let [hook, agent, rest @ ..] = rest else {
        return None;
    };
    let agent = Agent::from_name(agent).filter(|_| hook == "hook")?;
    let event = match (agent.facts().hook_shape, rest) {
        (HookShape::CommandHooks, []) => None,
        (HookShape::BashHooks, [event])
            if !event.is_empty()
                && event
                    .chars()
                    .all(|character| character.is_ascii_alphabetic()) =>
        {
            Some(event.clone())
        }
        _ => return None,
    };
    Some(OurHook {
        program: program.clone(),
        index_path,
        allow_volatile,
        agent,
        event,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_of_a_hook_of_ours() {
        let hook =
            parse("'/opt/my tools/cr' --path /i.json --allow-volatile hook copilot sessionEnd")
                .unwrap();
        assert_eq!(
            hook,
            OurHook {
                program: "/opt/my tools/cr".to_string(),
                index_path: Some("/i.json".to_string()),
                allow_volatile: true,
                agent: Agent::Copilot,
                event: Some("sessionEnd".to_string()),
            }
        );
        assert_eq!(parse("crash-resume hook gemini").unwrap().index_path, None);
        assert_eq!(parse("/x/crash-resume hook claude SessionStart"), None);
    }
}
