//! Claude Code as measured, reduced to what decides `claude --resume <id>`: the one model of it
//! that the spawn simulation (the preflight's property tests) and the stand-in agent (the CLI's
//! tests and the reboot simulation) both judge with.
//!
//! Written from `docs/preflight.md` ("Claude Code: where the transcript is", "The project folder
//! name") and from what the conformance test against the real CLI found, never from the
//! product's code: the folder name below is this module's own, so that a mistake in the
//! preflight's is caught rather than repeated.
//!
//! The rule: `--resume <id>` loads `C/projects/<folder name of the resolved working dir>/<id>.jsonl`
//! when that is a regular file holding a conversation (a JSON line of type `user` or
//! `assistant`); when it is not (and no directory stands in the way) and the id is a UUID, the
//! CLI loads `<id>.jsonl` from whichever project folder holds one with a conversation, if
//! exactly one does.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Folder names longer than this are cut and given a hash suffix.
const LONGEST_WHOLE_NAME: usize = 200;

/// The name Claude Code gives the project folder of the working dir `path`: every UTF-16 unit
/// that is not an ASCII letter or digit becomes `-` (a character outside the BMP gives two);
/// a name longer than 200 is cut to 200, followed by `-` and the base-36 magnitude of a 32-bit
/// signed rolling hash (`h = h * 31 + unit`) of the path's UTF-16 units.
pub fn folder_name(path: &str) -> String {
    let mut name = String::new();
    for character in path.chars() {
        let kept = character.is_ascii_alphanumeric();
        for _ in 0..character.len_utf16() {
            name.push(if kept { character } else { '-' });
        }
    }
    if name.len() <= LONGEST_WHOLE_NAME {
        return name;
    }
    let mut hash: i32 = 0;
    for unit in path.encode_utf16() {
        hash = hash.wrapping_mul(31).wrapping_add(i32::from(unit));
    }
    let mut magnitude = i64::from(hash).unsigned_abs();
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit((magnitude % 36) as u32, 36).expect("a base-36 digit"));
        magnitude /= 36;
        if magnitude == 0 {
            break;
        }
    }
    let suffix: String = digits.into_iter().rev().collect();
    format!("{}-{suffix}", &name[..LONGEST_WHOLE_NAME])
}

/// Claude Code with config dir `C`, started in a working dir: where its transcripts are and
/// which one `--resume` loads.
#[derive(Debug, Clone)]
pub struct ClaudeCli {
    /// `C/projects`.
    projects: PathBuf,
    /// `C/projects/<folder name of the resolved working dir>`.
    project_dir: PathBuf,
}

impl ClaudeCli {
    /// The CLI with config dir `config_dir` in the working dir `resolved_cwd`, as the kernel
    /// reports it (symlinks resolved: the CLI names the folder from its own `getcwd`).
    pub fn new(config_dir: &Path, resolved_cwd: &str) -> ClaudeCli {
        let projects = config_dir.join("projects");
        ClaudeCli {
            project_dir: projects.join(folder_name(resolved_cwd)),
            projects,
        }
    }

    /// `C/projects`.
    pub fn projects(&self) -> &Path {
        &self.projects
    }

    /// The working dir's project folder, where a new session's transcript goes.
    pub fn project_dir(&self) -> &Path {
        &self.project_dir
    }

    /// `<project folder>/<session>.jsonl`.
    pub fn transcript(&self, session: &str) -> PathBuf {
        self.project_dir.join(format!("{session}.jsonl"))
    }

    /// The transcript `claude --resume <session>` loads, if any.
    pub fn loaded(&self, session: &str) -> Option<PathBuf> {
        self.resume(session).ok()
    }

    /// Whether `claude --resume <session>` loads a conversation.
    pub fn resumes(&self, session: &str) -> bool {
        self.loaded(session).is_some()
    }

    /// The transcript `claude --resume <session>` loads, or what the CLI prints when it loads
    /// none (`No conversation found with session ID: <id>`, or the EISDIR failure when a
    /// directory stands where the transcript would be).
    pub fn resume(&self, session: &str) -> Result<PathBuf, String> {
        let derived = self.transcript(session);
        if holds_conversation_at(&derived) {
            return Ok(derived);
        }
        if derived.is_dir() {
            return Err(
                "Failed to resume session: EISDIR: illegal operation on a directory".into(),
            );
        }
        let not_found = || format!("No conversation found with session ID: {session}");
        if !looks_like_uuid(session) {
            return Err(not_found());
        }
        let holding: Vec<PathBuf> = fs::read_dir(&self.projects)
            .map_err(|_| not_found())?
            .flatten()
            .map(|entry| entry.path().join(format!("{session}.jsonl")))
            .filter(|path| holds_conversation_at(path))
            .collect();
        match holding.as_slice() {
            [only] => Ok(only.clone()),
            _ => Err(not_found()),
        }
    }

    /// The session named by a `continuedInSessionId` in the last non-empty line of the
    /// transcript the CLI would load (else the one in the working dir's folder).
    pub fn continued_in(&self, session: &str) -> Option<String> {
        let path = self
            .loaded(session)
            .unwrap_or_else(|| self.transcript(session));
        let bytes = regular_file_bytes(&path)?;
        let text = String::from_utf8_lossy(&bytes);
        let last_line = text.lines().rev().find(|line| !line.trim().is_empty())?;
        let record: Value = serde_json::from_str(last_line).ok()?;
        let next = record.get("continuedInSessionId")?.as_str()?;
        (!next.is_empty()).then(|| next.to_owned())
    }
}

/// Eight, four, four, four and twelve hex digits joined by dashes.
pub fn looks_like_uuid(session: &str) -> bool {
    let lengths: Vec<usize> = session.split('-').map(str::len).collect();
    lengths == [8, 4, 4, 4, 12] && session.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

/// The contents of a regular file (following symlinks, as the CLI does); `None` for anything
/// else.
pub fn regular_file_bytes(path: &Path) -> Option<Vec<u8>> {
    let metadata = fs::metadata(path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    fs::read(path).ok()
}

/// `path` is a regular file that [`holds_conversation`].
pub fn holds_conversation_at(path: &Path) -> bool {
    regular_file_bytes(path).is_some_and(|bytes| holds_conversation(&bytes))
}

/// At least one line that parses as a JSON object whose `type` is `user` or `assistant`.
pub fn holds_conversation(bytes: &[u8]) -> bool {
    bytes.split(|byte| *byte == b'\n').any(|line| {
        serde_json::from_slice::<Value>(line).is_ok_and(|record| {
            matches!(
                record.get("type").and_then(Value::as_str),
                Some("user" | "assistant")
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_follow_the_documented_vectors() {
        for (path, expected) in [
            (
                "/home/u/my_project dir",
                "-home-u-my-project-dir".to_string(),
            ),
            (
                r"C:\code\café (old)@2~x",
                "C--code-caf---old--2-x".to_string(),
            ),
            ("/x/😀y", "-x---y".to_string()),
            (&"a".repeat(200), "a".repeat(200)),
            (&"a".repeat(201), format!("{}-rkvsv5", "a".repeat(200))),
        ] {
            assert_eq!(folder_name(path), expected, "path {path:?}");
        }
    }

    #[test]
    fn a_uuid_resumes_from_the_one_other_folder_that_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let cli = ClaudeCli::new(dir.path(), "/work/here");
        let session = "6f1c2a9e-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
        assert_eq!(
            cli.resume(session),
            Err(format!("No conversation found with session ID: {session}"))
        );
        let elsewhere = cli.projects().join("-work-there");
        fs::create_dir_all(&elsewhere).unwrap();
        let path = elsewhere.join(format!("{session}.jsonl"));
        fs::write(&path, "{\"type\":\"user\"}\n").unwrap();
        assert_eq!(cli.resume(session), Ok(path));
        fs::create_dir_all(cli.transcript(session)).unwrap();
        assert!(cli.resume(session).unwrap_err().contains("EISDIR"));
    }
}
