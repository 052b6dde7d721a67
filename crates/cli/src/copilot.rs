//! GitHub Copilot CLI specifics of capture: its hook payload's words.
//!
//! Copilot CLI 1.0 sends `{"sessionId", "timestamp", "cwd", "source", "initialPrompt"}` to a
//! `sessionStart` hook and `{"sessionId", "timestamp", "cwd", "reason"}` to a `sessionEnd` one:
//! camelCase, and no event name, which `hook install copilot` therefore puts on each hook's
//! command line (`crash-resume hook copilot sessionStart`).

use serde_json::Value;

/// The payload in the words every agent's hook is read in: `session_id` for `sessionId`, and
/// `hook_event_name` for the event the command line names (Copilot's session start and end as
/// `SessionStart` and `SessionEnd`, any other as given). What is already there is kept, so a
/// payload passed through twice (a background retry's) reads the same.
pub fn in_common_words(mut value: Value, event: Option<&str>) -> Value {
    let Value::Object(object) = &mut value else {
        return value;
    };
    if !object.contains_key("session_id")
        && let Some(session) = object.get("sessionId").cloned()
    {
        object.insert("session_id".to_string(), session);
    }
    if let Some(event) = event.filter(|_| !object.contains_key("hook_event_name")) {
        let [start, end] = agent_paths::Agent::Copilot.facts().hook_events;
        let common = match event {
            event if event == start => "SessionStart",
            event if event == end => "SessionEnd",
            event => event,
        };
        object.insert("hook_event_name".to_string(), Value::from(common));
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copilot_payloads_read_in_the_common_words() {
        let start = json!({"sessionId": "s1", "cwd": "/p", "source": "new", "timestamp": 1});
        let read = in_common_words(start, Some("sessionStart"));
        assert_eq!(read["session_id"], "s1");
        assert_eq!(read["hook_event_name"], "SessionStart");
        let end = in_common_words(
            json!({"sessionId": "s1", "reason": "user_exit"}),
            Some("sessionEnd"),
        );
        assert_eq!(end["hook_event_name"], "SessionEnd");
        let other = in_common_words(json!({"sessionId": "s1"}), Some("userPromptSubmitted"));
        assert_eq!(other["hook_event_name"], "userPromptSubmitted");
        // Read twice (a retry's payload), it says the same.
        assert_eq!(in_common_words(read.clone(), None), read);
    }
}
