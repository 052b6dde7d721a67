//! Talking to a multiplexer the one way every backend does: its command-line client (`tmux`,
//! `wezterm cli`, `zellij`) run with a deadline and, once a call has not answered, never again;
//! and an answer of its socket protocol (cmux, kitty) read into its result or its failure.

use std::cell::OnceCell;
use std::process::Command;
use std::time::Duration;

use crate::backend::MuxError;

/// Runs `command` (the client with its arguments, `args` among them) within `deadline`: its
/// stdout, trimmed, or a failure naming `program` and what it said on stderr. A call that does
/// not answer is noted in `unanswered` with what it said (naming the call by `asked`, such as
/// `tmux -L x list-panes`); from then on every call fails at once with that, unasked.
pub(crate) fn run(
    command: &mut Command,
    deadline: Duration,
    unanswered: &OnceCell<String>,
    program: &'static str,
    args: &[&str],
    asked: impl FnOnce() -> String,
) -> Result<String, MuxError> {
    if let Some(said) = unanswered.get() {
        return Err(MuxError::Unanswered {
            said: said.clone(),
            again: true,
        });
    }
    let output = match bounded_run::output(command, deadline) {
        Ok(output) => output,
        Err(error) if error.is_timeout() => {
            let said = format!("{error} (`{}`)", asked());
            return Err(MuxError::Unanswered {
                said: unanswered.get_or_init(|| said).clone(),
                again: false,
            });
        }
        Err(error) => return Err(error.into()),
    };
    if !output.status.success() {
        return Err(MuxError::Failed {
            program,
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// An answer of a multiplexer's socket protocol, `{"ok": bool, <result_key>: ..., "error": ...}`
/// (cmux's and kitty's shapes): the result when `ok`, else the failure its error message (at
/// `error_pointer`) says; `None` when it has no `ok` at all.
pub(crate) fn socket_result(
    mut answer: serde_json::Value,
    result_key: &str,
    error_pointer: &str,
    program: &'static str,
    args: &str,
) -> Option<Result<serde_json::Value, MuxError>> {
    match answer.get("ok").and_then(serde_json::Value::as_bool)? {
        true => Some(Ok(answer
            .get_mut(result_key)
            .map(serde_json::Value::take)
            .unwrap_or(serde_json::Value::Null))),
        false => Some(Err(MuxError::Failed {
            program,
            args: args.to_string(),
            stderr: answer
                .pointer(error_pointer)
                .and_then(serde_json::Value::as_str)
                .unwrap_or("no message")
                .to_string(),
        })),
    }
}
