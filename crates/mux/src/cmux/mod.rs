//! cmux: its surface grammar (`cmux:<surface id>`, from `CMUX_SURFACE_ID`) and its backend,
//! written against cmux's JSON socket API (cmux runs on macOS only; a fake socket records the
//! requests it gets).
//!
//! cmux's documented `--command` for a new surface types the text and Enter into the
//! surface's shell, which a restore never does. Its socket's `workspace.create` takes an
//! `initial_command`, which cmux (`TerminalController.v2WorkspaceCreate` →
//! `TabManager.addWorkspace(initialTerminalCommand:)`) starts as the new workspace's terminal
//! process, not as typed input (that is its separate `initialTerminalInput`). So a restore
//! creates one workspace per surface, in the recorded dir, whose process is the start script.
//! An existing surface's process cannot be replaced, so none is ever taken over.
//!
//! The socket is `--cmux-socket`, else `CMUX_SOCKET_PATH`, else `/tmp/cmux.sock`. cmux's
//! default access mode admits only processes started inside cmux: run the restore from a cmux
//! terminal (or set `CMUX_SOCKET_MODE=allowAll` for cmux). Each request has one deadline for
//! connecting (a non-blocking connect, tried again while cmux's listen backlog is full, so a
//! cmux that accepts nothing does not hang the restore), writing and reading its answer; once
//! one has not answered, none is sent again.

use std::cell::{Cell, OnceCell};
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::backend::{Backend, Created, MuxError, Opened, Start};
use crate::multiplexer::Multiplexer;
use crate::pane::Busy;
use crate::surface::Surface;

pub(crate) mod address;
pub(crate) mod entry;

pub use address::CmuxSurface;

/// The socket a release build of cmux listens on.
pub const DEFAULT_SOCKET: &str = "/tmp/cmux.sock";

/// The longest answer read from the socket.
const MAX_ANSWER: u64 = 1 << 20;

/// A running cmux, reached through its socket.
#[derive(Debug)]
pub struct Cmux {
    socket: PathBuf,
    deadline: Duration,
    /// The shell the workspace falls back to once the agent exits.
    shell: String,
    next_id: Cell<u64>,
    /// Set when a request did not answer within the deadline: what it said.
    unanswered: OnceCell<String>,
}

impl Cmux {
    /// cmux on `socket`, each request given `deadline`; the workspace falls back to `shell` (the
    /// user's `$SHELL`) after the agent.
    pub fn new(socket: PathBuf, deadline: Duration, shell: Option<String>) -> Cmux {
        Cmux {
            socket,
            deadline,
            shell: crate::script::login_shell(shell),
            next_id: Cell::new(1),
            unanswered: OnceCell::new(),
        }
    }

    /// The socket this backend talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends one request (one JSON line) and reads its answer (one JSON line): its `result`
    /// when `ok`, else its error.
    fn call(&self, method: &str, params: &Value) -> Result<Value, MuxError> {
        if let Some(unanswered) = self.unanswered.get() {
            return Err(MuxError::Unanswered {
                said: unanswered.clone(),
                again: true,
            });
        }
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let request = json!({"id": id.to_string(), "method": method, "params": params});
        match self.round_trip(&request) {
            Ok(answer) => read_answer(method, &answer),
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                let said = format!(
                    "cmux did not answer within {:?} (`{method}` on {})",
                    self.deadline,
                    self.socket.display()
                );
                Err(MuxError::Unanswered {
                    said: self.unanswered.get_or_init(|| said).clone(),
                    again: false,
                })
            }
            Err(error) => Err(MuxError::NotMade(format!(
                "cannot talk to cmux on {}: {error} (is cmux running, and is this run from a cmux terminal?)",
                self.socket.display()
            ))),
        }
    }

    fn round_trip(&self, request: &Value) -> std::io::Result<String> {
        let until = Instant::now() + self.deadline;
        let left = || {
            until
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
                .ok_or(std::io::ErrorKind::TimedOut)
        };
        let mut stream = connect(&self.socket, until)?;
        stream.set_write_timeout(Some(left()?))?;
        let mut line = request.to_string();
        line.push('\n');
        stream.write_all(line.as_bytes())?;
        let mut reader = BufReader::new(std::io::Read::take(&stream, MAX_ANSWER));
        let mut answer = String::new();
        loop {
            stream.set_read_timeout(Some(left()?))?;
            let read = reader.read_line(&mut answer)?;
            if read == 0 || answer.ends_with('\n') {
                return Ok(answer);
            }
        }
    }
}

/// Connects to the socket at `path` by `until` ([`crate::client::connect_unix`]).
fn connect(path: &Path, until: Instant) -> std::io::Result<UnixStream> {
    let address = rustix::net::SocketAddrUnix::new(path)?;
    crate::client::connect_unix(&address, until.saturating_duration_since(Instant::now()))
}

/// The `result` of an answer, or what its `error` says.
fn read_answer(method: &str, answer: &str) -> Result<Value, MuxError> {
    let unreadable = || MuxError::Answer(format!("cmux answered `{method}` with {answer:?}"));
    let answer: Value = serde_json::from_str(answer.trim()).map_err(|_| unreadable())?;
    crate::client::socket_result(answer, "result", "/error/message", "cmux", method)
        .unwrap_or_else(|| Err(unreadable()))
}

impl Backend for Cmux {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Cmux
    }

    /// Never busy: a restore never takes over an existing cmux surface.
    fn busy(&self, _surface: &Surface) -> Option<Busy> {
        None
    }

    /// `workspace.create` with the recorded dir as `working_directory` and `/bin/sh -c SCRIPT`
    /// as `initial_command` (every recorded value in the script quoted, and in JSON strings).
    fn open(&self, start: &Start<'_>) -> Result<Opened, MuxError> {
        if !matches!(start.surface, Surface::Cmux(_)) {
            return Err(MuxError::OtherMultiplexer {
                surface: start.surface.to_string(),
                multiplexer: Multiplexer::Cmux,
            });
        }
        let script = crate::script::start_script(start.env, start.dir, start.command, &self.shell);
        let mut params = json!({
            "initial_command": format!("/bin/sh -c {}", crate::script::quote(&script)),
            "focus": false,
        });
        if let Some(dir) = start.dir {
            params["working_directory"] = Value::from(dir);
        }
        self.call("workspace.create", &params)?;
        Ok(Opened::Started {
            created: vec![Created::Workspace],
        })
    }

    fn unanswered(&self) -> Option<&str> {
        self.unanswered.get().map(String::as_str)
    }

    fn location(&self) -> String {
        self.socket.display().to_string()
    }

    fn check_command(&self) -> String {
        format!(
            "cmux --socket {} ping",
            crate::script::quote(&self.socket.to_string_lossy())
        )
    }
}
