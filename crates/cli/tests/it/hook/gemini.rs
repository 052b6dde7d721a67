//! `crash-resume hook gemini` without the real CLI: the note when Gemini hid the pane
//! (`GITHUB_SHA`).

use serde_json::json;

use crate::harness::{agent_command, hook_log, make_dir};
use crate::{BIN, Sandbox};

#[test]
fn the_hook_says_when_gemini_hid_the_pane_because_of_github_sha() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let payload = json!({
        "session_id": "0b5e7a1c-0000-4000-8000-000000000001",
        "cwd": work,
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
    .to_string();
    // Gemini started with GITHUB_SHA set and ran the hook without it (nor TMUX_PANE): the
    // shell between them is the ancestor that still has it.
    let script = format!(
        "printf '%s' \"$1\" | env -u GITHUB_SHA -u TMUX_PANE -u TMUX {} hook gemini",
        shlex::try_quote(BIN).unwrap()
    );
    let output = agent_command(&env, "sh")
        .env("GITHUB_SHA", "0123abc")
        .args(["-c", &script, "sh", &payload])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let log = hook_log(&env);
    assert!(
        log.contains("because GITHUB_SHA (or SURFACE=Github) is set in its environment"),
        "{log}"
    );
    assert!(
        log.contains("security.environmentVariableRedaction.allowed"),
        "{log}"
    );
}
