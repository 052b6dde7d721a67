//! The pinned agent versions, and Claude Code transcript lines (`<session>.jsonl`, one JSON
//! object a line) in the shape the pinned CLI writes them.

use std::path::Path;

use serde_json::{Value, json};

/// The pinned agent versions: the agent registry's (`agent_paths::PINNED`), which the binary's
/// `doctor` reads too.
pub use agent_paths::{
    CLAUDE_CODE_VERSION, CODEX_VERSION, COPILOT_VERSION, GEMINI_VERSION, QWEN_VERSION,
};

/// The fields every line of one conversation carries.
#[derive(Debug, Clone, Copy)]
pub struct ClaudeLine<'a> {
    /// The session the transcript belongs to (`sessionId`).
    pub session: &'a str,
    /// The working dir the CLI ran in (`cwd`).
    pub cwd: &'a Path,
    /// This line's id (`uuid`).
    pub uuid: &'a str,
    /// The line it follows (`parentUuid`), `None` for the first.
    pub parent: Option<&'a str>,
    /// When it was written (`timestamp`, RFC 3339).
    pub timestamp: &'a str,
}

impl ClaudeLine<'_> {
    /// A line of `kind` (`user`, `assistant`, ...) carrying `message`.
    pub fn with(&self, kind: &str, message: &Value) -> Value {
        json!({
            "parentUuid": self.parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": CLAUDE_CODE_VERSION,
            "gitBranch": "",
            "type": kind,
            "message": message,
            "uuid": self.uuid,
            "timestamp": self.timestamp,
        })
    }

    /// The user's prompt `text`.
    pub fn user(&self, text: &str) -> Value {
        self.with("user", &json!({ "role": "user", "content": text }))
    }

    /// The model's answer `text`, as message `id`.
    pub fn assistant(&self, id: &str, text: &str) -> Value {
        self.with("assistant", &assistant_message(id, text))
    }
}

/// An assistant message as the Messages API returns it: `text` as message `id`.
pub fn assistant_message(id: &str, text: &str) -> Value {
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{ "type": "text", "text": text }],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": { "input_tokens": 12, "output_tokens": 8 },
    })
}

/// Lines as a `.jsonl` file's bytes: each followed by a newline.
pub fn jsonl(lines: &[Value]) -> Vec<u8> {
    lines
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>()
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_the_pinned_version_and_their_links() {
        let first = ClaudeLine {
            session: "s",
            cwd: Path::new("/w"),
            uuid: "u1",
            parent: None,
            timestamp: "2026-01-05T09:30:00.000Z",
        };
        let user = first.user("hi");
        let answer = ClaudeLine {
            uuid: "u2",
            parent: Some("u1"),
            ..first
        }
        .assistant("m", "hello");
        assert_eq!(user["version"], CLAUDE_CODE_VERSION);
        assert_eq!(user["parentUuid"], Value::Null);
        assert_eq!(user["message"]["content"], "hi");
        assert_eq!(answer["parentUuid"], "u1");
        assert_eq!(answer["message"]["content"][0]["text"], "hello");
        let bytes = jsonl(&[user, answer]);
        assert_eq!(bytes.iter().filter(|byte| **byte == b'\n').count(), 2);
    }
}
