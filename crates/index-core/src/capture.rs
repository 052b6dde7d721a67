//! Capture from agents, as pure functions: which surface the environment names, and what an
//! agent hook's JSON payload says happened.
//!
//! The environment is passed in as a lookup function and the payload as parsed JSON, so these
//! rules hold the same for the CLI's hook and for an orchestrator that embeds this crate.

use serde_json::Value;

/// A surface as the environment names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SurfaceHint {
    /// A complete surface id.
    Ready(String),
    /// A tmux pane id (`%N`), to be turned into `tmux:<session>:<window>.<pane>` by asking tmux
    /// (a `%N` id does not survive a tmux restart, so it is never recorded as is).
    TmuxPane(String),
}

/// The surface of the first multiplexer variable set, in the order of `spec/cli.md`:
/// `CRASH_RESUME_SURFACE`, `CMUX_SURFACE_ID`, `TMUX_PANE`, `ZELLIJ_PANE_ID` (with
/// `ZELLIJ_SESSION_NAME`), `WEZTERM_PANE`, `KITTY_WINDOW_ID`. Empty values do not count.
pub fn surface_from_env(get: impl Fn(&str) -> Option<String>) -> Option<SurfaceHint> {
    let var = |name: &str| get(name).filter(|value| !value.trim().is_empty());
    if let Some(surface) = var("CRASH_RESUME_SURFACE") {
        return Some(SurfaceHint::Ready(surface));
    }
    if let Some(id) = var("CMUX_SURFACE_ID") {
        return Some(SurfaceHint::Ready(format!("cmux:{id}")));
    }
    if let Some(pane) = var("TMUX_PANE") {
        return Some(SurfaceHint::TmuxPane(pane));
    }
    if let Some(pane) = var("ZELLIJ_PANE_ID") {
        let session = var("ZELLIJ_SESSION_NAME").unwrap_or_default();
        return Some(SurfaceHint::Ready(format!("zellij:{session}:{pane}")));
    }
    if let Some(pane) = var("WEZTERM_PANE") {
        return Some(SurfaceHint::Ready(format!("wezterm:{pane}")));
    }
    var("KITTY_WINDOW_ID").map(|id| SurfaceHint::Ready(format!("kitty:{id}")))
}

/// What a hook reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookEvent {
    /// A session started: `startup`, `resume`, `clear`, `compact`, `fork` (or none given).
    SessionStart { source: Option<String> },
    /// A session ended; `clean` when the user exited or logged out (a crash sends nothing).
    SessionEnd { reason: Option<String>, clean: bool },
    /// Any other event (a prompt submitted, a turn stopped): the session is alive.
    Activity { name: String },
}

/// An agent hook's payload, as far as capture needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPayload {
    pub session: String,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    pub event: HookEvent,
}

/// `SessionEnd` reasons that mean the user ended the session on purpose.
pub const CLEAN_END_REASONS: [&str; 3] = ["prompt_input_exit", "logout", "exit"];

/// Reads a Claude Code or Codex CLI hook payload: `session_id` (Codex's older `thread-id` and
/// `thread_id` too), `cwd`, `transcript_path`, `hook_event_name` (or `type`), `source`,
/// `reason`. Returns what is wrong when the payload cannot be used.
pub fn parse_hook_payload(value: &Value) -> Result<HookPayload, String> {
    let Value::Object(object) = value else {
        return Err("the hook payload is not a JSON object".into());
    };
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    let session = ["session_id", "thread_id", "thread-id"]
        .into_iter()
        .find_map(text)
        .ok_or("the hook payload has no session_id")?;
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
        cwd: text("cwd"),
        transcript_path: text("transcript_path"),
        event,
    })
}
