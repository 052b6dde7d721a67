//! An agent's hook event to an operation on the index: which events record a session, which
//! only mark it alive, and which end it; and the record a hook makes for its surface.

use std::ffi::OsString;
use std::time::Instant;

use agent_paths::{Agent, CleanEnd};
use camino::Utf8Path;
use index_core::capture::{HookEvent, HookPayload};
use index_core::{
    AgentName, Index, InvalidId, Launch, Millis, Record, Repo, Role, SessionId, SurfaceId, Wrapper,
};
use proc_table::Table;

/// What a hook event does to its surface's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexOp {
    /// Bind the surface to the session (a start, or activity of a session not yet recorded).
    Record,
    /// Mark the entry alive: activity of the recorded session, or an end that is not clean (a
    /// `/clear`, a signal), after which the session stays resumable.
    Touch,
    /// Mark the session ended on purpose: it is not offered after a crash.
    End,
}

/// The operation for `event`, sent by `provider`'s hook for `session`, given the session the
/// surface's entry holds now (`held`).
///
/// An agent whose end reason does not tell a quit from a crash ([`CleanEnd::FromOpenPane`]:
/// Codex ends every session with the reason `other`, a `/quit`, Ctrl-C, the end of an exec run
/// and SIGTERM alike; Gemini with `exit`, a `/quit` and SIGHUP, SIGTERM, SIGINT alike; a killed
/// pane sends nothing): its `SessionEnd` that reaches the index came from the agent in a pane
/// that still exists (the caller refuses a vanished pane before), so it is taken as the end.
/// An unknown agent's end counts by its reason, as Claude Code's.
pub fn index_op(
    agent_name: &str,
    event: &HookEvent,
    held: Option<&SessionId>,
    session: &str,
) -> IndexOp {
    let clean_end =
        agent_paths::facts_of(agent_name).map_or(CleanEnd::ByReason, |facts| facts.clean_end);
    match (event, clean_end) {
        // A `/clear` ends one conversation to start the next in the same pane: not an end of
        // the pane's work (its SessionStart records the next one).
        (HookEvent::SessionEnd { reason, .. }, CleanEnd::FromOpenPane)
            if reason.as_deref() == Some("clear") =>
        {
            IndexOp::Touch
        }
        (HookEvent::SessionEnd { .. }, CleanEnd::FromOpenPane) => IndexOp::End,
        (HookEvent::SessionEnd { clean, .. }, CleanEnd::ByReason) if *clean => IndexOp::End,
        (HookEvent::SessionEnd { .. }, CleanEnd::ByReason) => IndexOp::Touch,
        (HookEvent::Activity { .. }, _) if held.is_some_and(|held| held.as_str() == session) => {
            IndexOp::Touch
        }
        (HookEvent::SessionStart { .. } | HookEvent::Activity { .. }, _) => IndexOp::Record,
    }
}

/// What [`apply_event`] did to the index; its `Display` is the word the hook's log uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// The surface was bound to the session.
    Recorded,
    /// The entry was marked alive.
    Touched,
    /// A touch for a surface the index does not hold: nothing changed.
    NothingToTouch,
    /// The session was marked ended on purpose.
    EndedCleanly,
    /// An end of a session the surface's entry does not hold: nothing changed.
    EndOfUnknownSession,
}

impl std::fmt::Display for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Done::Recorded => "recorded",
            Done::Touched => "touched",
            Done::NothingToTouch => "nothing to touch",
            Done::EndedCleanly => "ended cleanly",
            Done::EndOfUnknownSession => "end of an unknown session",
        })
    }
}

/// Applies `provider`'s hook event to the index; `record` is what [`IndexOp::Record`] binds.
/// Returns what was done.
pub fn apply_event(
    index: &mut Index,
    agent_name: &str,
    event: &HookEvent,
    record: Record,
    now: Millis,
) -> Done {
    let surface = record.surface.clone();
    let session = record.session.clone();
    let held = index.lookup(surface.as_str()).map(|entry| &entry.session);
    match index_op(agent_name, event, held, session.as_str()) {
        IndexOp::End if index.end(surface.as_str(), session.as_str(), now) => Done::EndedCleanly,
        IndexOp::End => Done::EndOfUnknownSession,
        IndexOp::Touch if index.touch(surface.as_str(), now) => Done::Touched,
        IndexOp::Touch => Done::NothingToTouch,
        IndexOp::Record => {
            index.record(record, now);
            Done::Recorded
        }
    }
}

/// The record a hook makes for `surface`: the payload's session in `cwd` (its repo is the git
/// top-level's name), with the agent, its config dir and the role. Refuses a dir that holds
/// a control character, a relative `cwd` (an agent always sends an absolute one; a relative one
/// would resume in whatever dir the restore runs in), and ids that are not valid.
pub fn record(
    agent_name: &str,
    surface: &str,
    payload: &HookPayload,
    cwd: &Utf8Path,
    config_dir: String,
    role: Option<&str>,
) -> Result<Record, InvalidId> {
    index_core::check_dirs(Some(cwd.as_str()), Some(&config_dir))?;
    if cwd.is_relative() {
        return Err(InvalidId::Relative {
            kind: index_core::IdKind::WorkingDir,
        });
    }
    let mut record = Record::new(
        SurfaceId::new(surface)?,
        SessionId::new(payload.session.as_str())?,
        Repo::new(repo_name(cwd))?,
    );
    record.role = role
        .filter(|role| !role.trim().is_empty())
        .map(Role::new)
        .transpose()?;
    record.agent = Some(AgentName::new(agent_name)?);
    record.config_dir = Some(config_dir);
    record.cwd = Some(cwd.to_string());
    Ok(record)
}

/// The name of the git top-level holding `cwd` (a `.git` dir or file, so worktrees count),
/// else the name of `cwd` itself.
pub fn repo_name(cwd: &Utf8Path) -> String {
    let top = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd);
    top.file_name()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or("root")
        .to_string()
}

/// How many ancestors of the hook are looked through for its agent: the agent runs the hook
/// directly or through a shell or two.
pub const AGENT_ANCESTORS: usize = 16;

/// The most bytes of kept flags recorded (an inline MCP config can be long): past this none
/// is, as for a command line that cannot be read.
pub const MAX_LAUNCH_ARGS_BYTES: usize = 64 * 1024;

/// How `agent` was started, read from its own process: the nearest of `pid`'s ancestors that
/// runs the agent's program (a native binary, a script run by node, through a symlink:
/// [`proc_table::arguments_of`]), and the outermost of the agent's processes right above it
/// (Codex's node launcher above its binary), whose arguments are the ones it was given. When
/// what started that one is a shell script of the user's ([`wrapper_of`]), the wrapper is
/// recorded; when it passes its arguments on, the flags are read from the wrapper's own
/// arguments (what the user typed, which a restore gives it again).
/// `None` when no ancestor runs the agent (a hook run by hand, by a daemon) or its command line
/// cannot be read.
pub fn read_launch(agent: Agent, table: Table, pid: u32, deadline: Instant) -> Option<Launch> {
    let ancestry = table.ancestry(pid, AGENT_ANCESTORS, deadline)?;
    let program = agent.facts().name;
    let mut lines = ancestry
        .ancestors
        .iter()
        .map(|ancestor| (ancestor.pid, table.command_line(ancestor.pid, deadline)));
    let (nearest, words) = lines.by_ref().find_map(|(pid, words)| {
        let words = words?;
        proc_table::runs_program(&words, program).then_some((pid, words))
    })?;
    let mut outermost = words;
    let mut above = None;
    for (_, words) in lines {
        match words {
            Some(words) if proc_table::runs_program(&words, program) => {
                outermost = words;
            }
            other => {
                above = other;
                break;
            }
        }
    }
    let environment = table.environment(nearest, deadline);
    let wrapper = above.as_deref().and_then(wrapper_of);
    // A wrapper that passes its arguments on is run again with them; else the agent itself is,
    // with its own.
    let args = match &wrapper {
        Some((wrapper, args)) if wrapper.passes_args => *args,
        _ => proc_table::arguments_of(&outermost, program).unwrap_or_default(),
    };
    let mut launch = launch_from(agent, args, environment.as_deref());
    launch.wrapper = wrapper.map(|(wrapper, _)| wrapper);
    Some(launch)
}

/// The shells a wrapper script of the user's is run by.
const WRAPPER_SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh"];

/// The most bytes of a wrapper script read to tell whether it passes its arguments on.
pub const MAX_WRAPPER_BYTES: u64 = 64 * 1024;

/// The wrapper a command line runs, when it is a shell running a script file by its absolute
/// path (`/bin/sh /home/u/bin/cl --model opus`, as the kernel starts a script found on `PATH`),
/// and the arguments it was given; whether it passes them on to the agent is whether its text
/// (the first [`MAX_WRAPPER_BYTES`]) holds `"$@"`. A shell running code (`sh -c ...`), an
/// interactive shell, or a script named by a relative path is no wrapper that can be known.
pub fn wrapper_of(words: &[OsString]) -> Option<(Wrapper, &[OsString])> {
    use std::io::Read as _;
    let runner = words.first()?.to_str()?;
    let runner = runner.rsplit('/').next().unwrap_or(runner);
    if !WRAPPER_SHELLS.contains(&runner) {
        return None;
    }
    // The first word that is not an option, nor the value of one that takes a file or a name.
    let mut at = 1;
    while let Some(word) = words.get(at).and_then(|word| word.to_str()) {
        match word {
            "-c" => return None,
            "--rcfile" | "--init-file" | "-o" | "-O" | "+O" => at += 2,
            _ if word.starts_with('-') || word.starts_with('+') => at += 1,
            _ => break,
        }
    }
    let script = words.get(at)?.to_str()?;
    let path = std::path::Path::new(script);
    if !path.is_absolute() || script.chars().any(char::is_control) {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(MAX_WRAPPER_BYTES).read_to_end(&mut text).ok()?;
    let passes_args = text.windows(4).any(|window| window == b"\"$@\"");
    Some((
        Wrapper {
            path: script.to_string(),
            passes_args,
        },
        &words[at + 1..],
    ))
}

/// The launch of `agent` started with `args` (its command line after the program) in
/// `environment` (`NAME=value` entries; `None` when it could not be read): the flags its
/// allow-list keeps ([`agent_paths::LaunchFacts::keep`]) and its model and provider variables,
/// as given. Nothing else is kept: no prompt, no one-shot flag, no flag the CLI does not know.
/// A command line with a word that is not UTF-8 or holds a control character, or whose kept
/// flags pass [`MAX_LAUNCH_ARGS_BYTES`], gives no flags; a variable that is not UTF-8 or holds
/// a control character is left out.
pub fn launch_from(agent: Agent, args: &[OsString], environment: Option<&[OsString]>) -> Launch {
    let facts = agent.facts().launch;
    let words: Option<Vec<&str>> = args.iter().map(|word| word.to_str()).collect();
    let inert = |text: &str| !text.chars().any(char::is_control);
    let args = words
        .filter(|words| words.iter().all(|word| inert(word)))
        .map(|words| facts.keep(&words).args)
        .filter(|kept| kept.iter().map(String::len).sum::<usize>() <= MAX_LAUNCH_ARGS_BYTES)
        .unwrap_or_default();
    let env = environment
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| entry.to_str()?.split_once('='))
        .filter(|(name, value)| facts.env.contains(name) && inert(value))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    Launch {
        args,
        env,
        wrapper: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(agent_name: &str, event: &HookEvent, held: Option<&str>, expected: IndexOp) {
        let held = held.map(|id| SessionId::new(id).unwrap());
        assert_eq!(
            index_op(agent_name, event, held.as_ref(), "s1"),
            expected,
            "{agent_name} {event:?} {held:?}"
        );
    }

    fn end(clean: bool) -> HookEvent {
        HookEvent::SessionEnd {
            reason: Some("other".into()),
            clean,
        }
    }

    fn activity() -> HookEvent {
        HookEvent::Activity {
            name: "Stop".into(),
        }
    }

    #[test]
    fn events_map_to_operations() {
        check(
            "claude",
            &HookEvent::SessionStart { source: None },
            Some("s1"),
            IndexOp::Record,
        );
        check(
            "claude",
            &HookEvent::SessionStart { source: None },
            None,
            IndexOp::Record,
        );
        check("claude", &activity(), Some("s1"), IndexOp::Touch);
        check("claude", &activity(), Some("s0"), IndexOp::Record);
        check("claude", &activity(), None, IndexOp::Record);
        check("claude", &end(true), Some("s1"), IndexOp::End);
        check("claude", &end(false), Some("s1"), IndexOp::Touch);
        check("codex", &end(false), Some("s1"), IndexOp::End);
        check("codex", &activity(), Some("s1"), IndexOp::Touch);
        // Gemini's reason `exit` is a /quit and a signal alike: the end counts by where it
        // came from, as Codex's.
        check("gemini", &end(true), Some("s1"), IndexOp::End);
        check("gemini", &end(false), Some("s1"), IndexOp::End);
        check("aider", &end(false), Some("s1"), IndexOp::Touch);
        let clear = HookEvent::SessionEnd {
            reason: Some("clear".into()),
            clean: false,
        };
        check("gemini", &clear, Some("s1"), IndexOp::Touch);
    }

    #[test]
    fn a_launch_keeps_the_allowed_flags_and_the_agents_variables() {
        let words = |line: &str| -> Vec<OsString> { line.split(' ').map(OsString::from).collect() };
        let environment = words("ANTHROPIC_MODEL=opus ANTHROPIC_API_KEY=sk HOME=/h X=a=b");
        let launch = launch_from(
            Agent::Claude,
            &words("--model opus -p secret --add-dir ../x"),
            Some(&environment),
        );
        assert_eq!(launch.args, ["--model", "opus", "--add-dir", "../x"]);
        assert_eq!(
            launch.env.into_iter().collect::<Vec<_>>(),
            [("ANTHROPIC_MODEL".to_string(), "opus".to_string())]
        );
        let control = launch_from(Agent::Claude, &words("--model o\x1bpus"), None);
        assert_eq!(control, Launch::default());
        let codex = launch_from(Agent::Codex, &words("resume abc -s read-only"), None);
        assert_eq!(codex.args, ["-s", "read-only"]);
    }

    #[test]
    fn a_wrapper_is_a_shell_running_a_script_by_its_absolute_path() {
        let dir = tempfile::tempdir().unwrap();
        let passing = dir.path().join("cl");
        std::fs::write(&passing, "#!/bin/sh\nexec claude --verbose \"$@\"\n").unwrap();
        let closed = dir.path().join("cl2");
        std::fs::write(&closed, "#!/bin/sh\nclaude $*\n").unwrap();
        let line = |words: &[&str]| -> Vec<OsString> { words.iter().map(OsString::from).collect() };
        let passing = passing.to_str().unwrap();
        let words = line(&["/bin/sh", "-e", passing, "--model", "x"]);
        let (wrapper, args) = wrapper_of(&words).unwrap();
        assert_eq!(wrapper.path, passing);
        assert!(wrapper.passes_args);
        assert_eq!(args, line(&["--model", "x"]).as_slice());
        let words = line(&["bash", closed.to_str().unwrap()]);
        assert!(!wrapper_of(&words).unwrap().0.passes_args);
        for words in [
            line(&["sh", "-c", passing]),
            line(&["bash", "--rcfile", passing]),
            line(&["-bash"]),
            line(&["zsh", "-l"]),
            line(&["sh", "cl"]),
            line(&["node", passing]),
            line(&["sh", "/no/such/script"]),
        ] {
            assert_eq!(wrapper_of(&words), None, "{words:?}");
        }
    }
}
