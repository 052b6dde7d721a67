//! Talking to a multiplexer the one way every backend does: its command-line client (`tmux`,
//! `wezterm cli`, `zellij`) run with a deadline and, once a call has not answered, never again;
//! an answer of its socket protocol (cmux, kitty) read into its result or its failure; and a
//! connect to a unix socket that gives up at a deadline.

use std::cell::OnceCell;
use std::os::unix::net::UnixStream;
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

/// Connects to the unix socket at `address` within `deadline`. The connect does not block:
/// while the listener's backlog is full (`EAGAIN`, or a connect still in progress) it is tried
/// again until the deadline, then fails as [`std::io::ErrorKind::TimedOut`]. Portable (no
/// `SOCK_CLOEXEC`, which macOS lacks: the flag is set after). The stream comes back blocking,
/// with no timeouts set: the caller sets its own for writing and reading.
pub(crate) fn connect_unix(
    address: &rustix::net::SocketAddrUnix,
    deadline: Duration,
) -> std::io::Result<UnixStream> {
    use rustix::io::Errno;
    let until = std::time::Instant::now() + deadline;
    let socket = rustix::net::socket(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::STREAM,
        None,
    )?;
    rustix::io::fcntl_setfd(&socket, rustix::io::FdFlags::CLOEXEC)?;
    rustix::io::ioctl_fionbio(&socket, true)?;
    loop {
        match rustix::net::connect(&socket, address) {
            Ok(()) | Err(Errno::ISCONN) => break,
            Err(Errno::INTR) => continue,
            Err(Errno::AGAIN | Errno::INPROGRESS | Errno::ALREADY) => {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("the socket did not accept the connection within {deadline:?}"),
                    ));
                }
                std::thread::sleep(left.min(CONNECT_RETRY));
            }
            Err(errno) => return Err(errno.into()),
        }
    }
    let stream = UnixStream::from(socket);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// How long a connect waits before it tries again, while the listener's backlog is full.
const CONNECT_RETRY: Duration = Duration::from_millis(10);

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener that never accepts, its backlog full: the connect gives up at its deadline.
    #[test]
    fn a_unix_connect_to_a_full_backlog_gives_up_at_its_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("full.sock");
        let listener = rustix::net::socket(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::STREAM,
            None,
        )
        .unwrap();
        let address = rustix::net::SocketAddrUnix::new(&path).unwrap();
        rustix::net::bind(&listener, &address).unwrap();
        rustix::net::listen(&listener, 0).unwrap();
        // Linux queues one connection more than the backlog: fill the queue until a connect
        // waits (each of these is held, never accepted).
        let deadline = Duration::from_millis(200);
        let mut held = Vec::new();
        let error = loop {
            match connect_unix(&address, deadline) {
                Ok(stream) => held.push(stream),
                Err(error) => break error,
            }
            assert!(held.len() < 16, "the backlog never filled");
        };
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
        drop(listener);
    }
}
