//! GitHub Copilot CLI's on-disk layout: `$COPILOT_HOME/session-state/<id>/events.jsonl`, one
//! dir per session, flat (not per working dir), and the rules `copilot --resume=<id>` applies
//! to it, as measured against Copilot CLI 1.0.102.
//!
//! A session dir appears at start-up, its `events.jsonl` only at the first prompt. The resume
//! loads the session when the file's first non-blank line is a `session.start` event envelope
//! (a JSON object whose `id` is a UUID); what follows is read leniently (a torn last line, a
//! garbage line in the middle, no `session.shutdown`, a missing `workspace.yaml` all load). An
//! unknown id, a dir without `events.jsonl`, an empty (or blank) one is "No session, task, or
//! name matched"; a first line that is torn or not a start event is "was found but could not be
//! loaded". A running Copilot holds its session with `inuse.<pid>.lock` in the session's dir
//! (removed on a clean exit, left behind by a SIGKILL).

use std::fs;

use camino::{Utf8Path, Utf8PathBuf};
use safe_open::Symlinks;

/// How much of `events.jsonl` is read to find its first line (a start event is about 500
/// bytes).
const HEAD_BYTES: u64 = 1 << 20;

/// Where Copilot keeps its sessions under its home.
pub fn sessions_dir(home: &Utf8Path) -> Utf8PathBuf {
    home.join("session-state")
}

/// What `copilot --resume=<id>` finds for a session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reachability {
    /// The first line is a start event: the resume loads it.
    Reachable,
    /// No dir of that id ("No session, task, or name matched"); an id that is not one path
    /// component cannot name one.
    NotFound,
    /// The dir has no `events.jsonl`: the session never had a prompt ("No session, task, or
    /// name matched").
    NeverPrompted,
    /// `events.jsonl` holds nothing but blank lines ("No session, task, or name matched").
    Empty,
    /// The first line is torn or not a start event ("was found but could not be loaded").
    Unloadable,
}

impl Reachability {
    /// Whether `--resume` loads it.
    pub fn is_reachable(self) -> bool {
        self == Reachability::Reachable
    }

    /// What was found, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Reachability::Reachable => "a session Copilot resumes",
            Reachability::NotFound => {
                "no session dir of this id (Copilot: No session, task, or name matched)"
            }
            Reachability::NeverPrompted => {
                "its session dir has no events.jsonl: the session never had a prompt (Copilot: \
                 No session, task, or name matched)"
            }
            Reachability::Empty => {
                "its events.jsonl is empty (Copilot: No session, task, or name matched)"
            }
            Reachability::Unloadable => {
                "the first line of its events.jsonl is not a whole session.start event (Copilot: \
                 was found but could not be loaded)"
            }
        }
    }
}

/// What is on disk for one id: the `events.jsonl` path and what the resume makes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// `session-state/<id>/events.jsonl` (`session-state` itself for an id that cannot name
    /// a dir of it, such as `../x`).
    pub path: Utf8PathBuf,
    /// What `--resume` finds there.
    pub reachability: Reachability,
}

/// Whether `session` can name a dir of `session-state` (one path component, not `.` or `..`).
fn is_dir_name(session: &str) -> bool {
    !session.is_empty() && session != "." && session != ".." && !session.contains('/')
}

/// What `copilot --resume=<session>` finds under `home` (`COPILOT_HOME`).
pub fn locate(home: &Utf8Path, session: &str) -> Found {
    let sessions = sessions_dir(home);
    if !is_dir_name(session) {
        // No dir of `session-state` has that name: the dir is what was looked in.
        return Found {
            path: sessions,
            reachability: Reachability::NotFound,
        };
    }
    let dir = sessions.join(session);
    let path = dir.join("events.jsonl");
    let reachability = if !dir.is_dir() {
        Reachability::NotFound
    } else {
        match safe_open::read_head(path.as_std_path(), Symlinks::Follow, HEAD_BYTES) {
            Err(_) => Reachability::NeverPrompted,
            Ok(head) => first_line_reachability(&head.bytes),
        }
    };
    Found { path, reachability }
}

/// The resume's reading of the file's head: its first non-blank line.
fn first_line_reachability(head: &[u8]) -> Reachability {
    let Some(line) = head
        .split(|byte| *byte == b'\n')
        .find(|line| !line.trim_ascii().is_empty())
    else {
        return Reachability::Empty;
    };
    let Ok(event) = serde_json::from_slice::<serde_json::Value>(line) else {
        return Reachability::Unloadable;
    };
    let is_start = event.get("type").and_then(serde_json::Value::as_str) == Some("session.start");
    let has_id = event
        .get("id")
        .and_then(serde_json::Value::as_str)
        .is_some_and(is_uuid);
    match is_start && has_id {
        true => Reachability::Reachable,
        false => Reachability::Unloadable,
    }
}

/// Whether `text` is a UUID in its hyphenated form.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(group, length)| {
            group.len() == length && group.bytes().all(|byte| byte.is_ascii_hexdigit())
        })
}

/// The sessions running Copilot processes hold, as `(session, pid)`: an `inuse.<pid>.lock` in
/// the session's dir whose pid is a running Copilot (a SIGKILLed one leaves its lock behind,
/// and after a reboot the pid may be anything's), and the session a running Copilot was
/// started to resume (`--resume=<id>` on its command line): a resumed Copilot takes its lock
/// only at its first prompt, so until then its command line is all that says it holds it.
pub fn live_holders(home: &Utf8Path, processes: &proc_table::Snapshot) -> Vec<(String, u32)> {
    let mut held = locked_sessions(home, processes);
    for (session, pid) in resumed_by_running_copilots(processes) {
        if !held.contains(&(session.clone(), pid)) {
            held.push((session, pid));
        }
    }
    held
}

/// The sessions whose `inuse.<pid>.lock` names a running Copilot started before the lock was
/// written.
fn locked_sessions(home: &Utf8Path, processes: &proc_table::Snapshot) -> Vec<(String, u32)> {
    let Ok(listing) = fs::read_dir(sessions_dir(home)) else {
        return Vec::new();
    };
    let mut held = Vec::new();
    for session in listing.flatten() {
        let Ok(name) = session.file_name().into_string() else {
            continue;
        };
        let Ok(files) = fs::read_dir(session.path()) else {
            continue;
        };
        for file in files.flatten() {
            let pid = file.file_name().to_str().and_then(|file| {
                file.strip_prefix("inuse.")?
                    .strip_suffix(".lock")?
                    .parse::<u32>()
                    .ok()
            });
            let written = || file.metadata().ok()?.modified().ok();
            if let Some(pid) = pid
                && written().is_some_and(|written| processes.holds_since(pid, "copilot", written))
            {
                held.push((name.clone(), pid));
            }
        }
    }
    held
}

/// `(session, pid)` for every running process whose command line runs Copilot and resumes a
/// session by id (`--resume=<id>`, or `--resume <id>`).
fn resumed_by_running_copilots(processes: &proc_table::Snapshot) -> Vec<(String, u32)> {
    processes
        .running("copilot")
        .filter_map(|process| Some((resumed_session(&process.command_line)?, process.pid)))
        .collect()
}

/// The session a Copilot command line resumes: the value of `--resume=<id>` or the word after
/// `--resume`.
fn resumed_session(words: &[std::ffi::OsString]) -> Option<String> {
    let words: Vec<&str> = words.iter().filter_map(|word| word.to_str()).collect();
    words
        .iter()
        .enumerate()
        .find_map(|(at, word)| match word.strip_prefix("--resume") {
            Some(value) if value.starts_with('=') => Some(value[1..].to_string()),
            Some("") => words
                .get(at + 1)
                .filter(|next| !next.starts_with('-'))
                .map(ToString::to_string),
            _ => None,
        })
        .filter(|session| !session.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_a_command_line_resumes() {
        let words =
            |line: &str| -> Vec<std::ffi::OsString> { line.split(' ').map(Into::into).collect() };
        let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(
            resumed_session(&words(&format!("copilot --resume={id}"))).as_deref(),
            Some(id)
        );
        assert_eq!(
            resumed_session(&words(&format!("node /x/copilot --resume {id} --yolo"))).as_deref(),
            Some(id)
        );
        assert_eq!(resumed_session(&words("copilot --resume")), None);
        assert_eq!(resumed_session(&words("copilot --resume --yolo")), None);
        assert_eq!(resumed_session(&words("copilot --resume=")), None);
        assert_eq!(resumed_session(&words("copilot -p hi")), None);
    }

    fn check(head: &str, expected: Reachability) {
        assert_eq!(
            first_line_reachability(head.as_bytes()),
            expected,
            "{head:?}"
        );
    }

    const START: &str = r#"{"type":"session.start","data":{"sessionId":"s"},"id":"3954ca0e-6638-4d4d-9582-4054d63a68af"}"#;

    #[test]
    fn the_first_non_blank_line_decides() {
        check(START, Reachability::Reachable);
        check(
            &format!("\n  {START}\ngarbage\n{{\"type\":"),
            Reachability::Reachable,
        );
        check("", Reachability::Empty);
        check("\n\n \n", Reachability::Empty);
        check(&START[..40], Reachability::Unloadable);
        check(
            r#"{"type":"session.model_change","data":{},"id":"3954ca0e-6638-4d4d-9582-4054d63a68af"}"#,
            Reachability::Unloadable,
        );
        check(
            r#"{"type":"session.start","data":{}}"#,
            Reachability::Unloadable,
        );
    }

    #[test]
    fn only_a_single_component_names_a_session_dir() {
        assert!(is_dir_name("7a750c0a-b8de-4dcb-a82a-727d305ac747"));
        for bad in ["", ".", "..", "../x", "a/b"] {
            assert!(!is_dir_name(bad), "{bad:?}");
            // Nothing is looked for outside `session-state`, and what was looked in is named.
            let home = Utf8Path::new("/h/.copilot");
            assert_eq!(
                locate(home, bad),
                Found {
                    path: sessions_dir(home),
                    reachability: Reachability::NotFound,
                },
                "{bad:?}"
            );
        }
    }
}
