//! Capture from agents, as pure functions: what an agent hook's JSON payload says happened
//! (which surface the agent runs in is `mux::capture`'s).
//!
//! The payload is passed in as parsed JSON, so these rules hold the same for the CLI's hook and
//! for an orchestrator that embeds this crate.

use serde_json::Value;

/// What a hook reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookEvent {
    /// A session started: `startup`, `resume`, `clear`, `compact`, `fork` (or none given).
    SessionStart {
        /// What started it, as the agent reported it.
        source: Option<String>,
    },
    /// A session ended; `clean` when the user exited or logged out (a crash sends nothing).
    SessionEnd {
        /// Why, in words.
        reason: Option<String>,
        /// Whether the user ended it on purpose.
        clean: bool,
    },
    /// Any other event (a prompt submitted, a turn stopped): the session is alive.
    Activity {
        /// The event's name, such as `Stop`.
        name: String,
    },
}

/// An agent hook's payload, as far as capture needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPayload {
    /// The session id.
    pub session: String,
    /// The working dir the agent runs in.
    pub cwd: Option<String>,
    /// Where the agent writes the conversation.
    pub transcript_path: Option<String>,
    /// What happened.
    pub event: HookEvent,
}

/// `SessionEnd` reasons that mean the user ended the session on purpose.
pub const CLEAN_END_REASONS: [&str; 3] = ["prompt_input_exit", "logout", "exit"];

/// How much of a hook's stdin is asked for at once: a pipe's default capacity.
const PAYLOAD_CHUNK: usize = 64 * 1024;

/// Reads an agent hook's payload from `reader` (its stdin): the first JSON value, parsed as its
/// bytes arrive, each byte once whatever the size, and read no further than its last byte, since
/// an agent may never close the hook's stdin. `Ok(None)`: the reader ended with nothing but
/// whitespace. An I/O error of `reader` (such as a deadline passed) comes back as the error's
/// [`serde_json::Error::io_error_kind`].
///
/// It takes the reader as `dyn Read` so that the parser is compiled here, once, with this
/// crate's optimisation (the workspace builds this crate optimised in tests too): a generic
/// one would be compiled, unoptimised, in each test build of its caller.
pub fn read_hook_payload(
    reader: &mut dyn std::io::Read,
) -> Result<Option<Value>, serde_json::Error> {
    let buffered = std::io::BufReader::with_capacity(PAYLOAD_CHUNK, reader);
    serde_json::Deserializer::from_reader(buffered)
        .into_iter()
        .next()
        .transpose()
}

/// Why a hook payload cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// The payload is JSON, but not an object.
    #[error("the hook payload is not a JSON object")]
    NotAnObject,
    /// No `session_id` (nor `thread_id`, `thread-id`) that is a non-empty string.
    #[error("the hook payload has no session_id")]
    NoSessionId,
}

/// Reads a Claude Code or Codex CLI hook payload: `session_id` (Codex's older `thread-id` and
/// `thread_id` too), `cwd`, `transcript_path`, `hook_event_name` (or `type`), `source`,
/// `reason`. Returns what is wrong when the payload cannot be used.
pub fn parse_hook_payload(value: &Value) -> Result<HookPayload, PayloadError> {
    let Value::Object(object) = value else {
        return Err(PayloadError::NotAnObject);
    };
    // Values are taken byte for byte: a dir or an id may begin or end with a space, and a
    // trimmed one would name another dir or session. Only an empty value counts as absent.
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    let session = ["session_id", "thread_id", "thread-id"]
        .into_iter()
        .find_map(text)
        .ok_or(PayloadError::NoSessionId)?;
    let name = text("hook_event_name")
        .or_else(|| text("type"))
        .unwrap_or_default();
    let event = match name.as_str() {
        "SessionStart" => HookEvent::SessionStart {
            source: text("source"),
        },
        "SessionEnd" => {
            let reason = text("reason");
            let clean = reason
                .as_deref()
                .is_some_and(|reason| CLEAN_END_REASONS.contains(&reason));
            HookEvent::SessionEnd { reason, clean }
        }
        _ => HookEvent::Activity { name },
    };
    Ok(HookPayload {
        session,
        // Present but empty is kept, so the record refuses it as not absolute rather than
        // falling back to the hook's own dir.
        cwd: object
            .get("cwd")
            .and_then(Value::as_str)
            .map(str::to_string),
        transcript_path: text("transcript_path"),
        event,
    })
}
