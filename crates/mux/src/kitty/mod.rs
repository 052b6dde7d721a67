//! kitty: its surface grammar (`kitty:<kitty pid>:<window id>`, [`KittyWindow`]) and its
//! backend ([`Kitty`]), which speaks kitty's remote control protocol on its socket directly
//! (`\eP@kitty-cmd{json}\e\\` each way): the `kitty @` client costs 0.6 s a call, the socket a
//! few milliseconds.
//!
//! A window id says nothing after kitty restarts (kitty numbers its windows from 1 again), so
//! a window is found by what outlives a restart of this tool's own windows: every window a
//! restore opens carries the surface in its environment ([`TAG_VARIABLE`], which `ls` shows),
//! and the hook in such a window records that surface again. A window the user opened is
//! found by its id only in the kitty instance the hook saw (the surface's instance is kitty's
//! pid, and the restore asks the socket's peer for its pid); in another instance, or for an id
//! recorded without the instance, it is gone, and a new window is opened.
//!
//! Nothing is ever typed into a window (no `send-text`). kitty cannot replace a window's
//! process, so an idle shell's window is replaced: the command starts in a new window beside
//! it, in its tab, then the idle window is closed. A window running anything else is left
//! alone. Each call has a deadline for connecting, writing and reading its answer; once one has
//! not answered, none is sent again. `ls` answers with each window's environment, which can
//! hold secrets: only [`TAG_VARIABLE`] is read of it, and no answer is ever quoted in an error.

use std::cell::{OnceCell, RefCell};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::backend::{Backend, Created, MuxError, Opened, Start};
use crate::multiplexer::Multiplexer;
use crate::pane::{Busy, PaneState};
use crate::surface::Surface;

pub(crate) mod address;

pub use address::KittyWindow;

/// The variable every window a restore opens carries: the surface it was opened for. The hook
/// in that window records this surface, whatever the window's id is now.
pub const TAG_VARIABLE: &str = "CRASH_RESUME_KITTY_WINDOW";

/// The protocol version sent with each command: kitty refuses a client newer than itself, and
/// every command used here is in 0.26.
const PROTOCOL_VERSION: [u32; 3] = [0, 26, 0];

/// The longest answer read (`ls` of many windows with large environments).
const MAX_ANSWER: u64 = 64 << 20;

const START: &[u8] = b"\x1bP@kitty-cmd";
const END: &[u8] = b"\x1b\\";

/// The surface the hook records for a kitty window: the one a restore opened the window for
/// (`tag`, [`TAG_VARIABLE`]) when it carries one, else the window in the instance `kitty_pid`
/// (`KITTY_PID`) names.
pub fn captured(window_id: String, kitty_pid: Option<String>, tag: Option<&str>) -> KittyWindow {
    if let Some(Ok(Surface::Kitty(window))) = tag.map(Surface::parse) {
        return window;
    }
    let instance = kitty_pid.filter(|pid| !pid.is_empty() && !pid.contains(':'));
    KittyWindow {
        instance,
        id: window_id,
    }
}

/// A running kitty, reached through its remote control socket.
#[derive(Debug)]
pub struct Kitty {
    /// `unix:PATH`, `unix:@NAME` (abstract) or `tcp:HOST:PORT`, as `--listen-on` takes it.
    address: Option<String>,
    deadline: Duration,
    /// The shell the window falls back to once the agent exits.
    shell: String,
    /// The pid of the kitty answering on a unix socket, once asked.
    pid: OnceCell<Option<u32>>,
    /// Set when a call did not answer within the deadline: what it said.
    unanswered: OnceCell<String>,
    /// The windows as an earlier `ls` listed them. A surface whose window is not among them
    /// has none now either: window ids only grow within a kitty, and only a restore (one at a
    /// time, under the restore lock) tags a window. A surface whose window is among them is
    /// looked up in a new listing. So a restore of many gone surfaces lists the windows once.
    listed: RefCell<Option<Vec<Window>>>,
}

/// One window of `ls`: the fields used (never the environment beyond [`TAG_VARIABLE`]).
#[derive(Debug, Clone, Deserialize)]
struct Window {
    id: u64,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    cmdline: Vec<String>,
    #[serde(default)]
    foreground_processes: Vec<Process>,
    #[serde(default)]
    env: Tag,
}

/// The one variable of a window's environment that is read.
#[derive(Debug, Clone, Default, Deserialize)]
struct Tag {
    #[serde(rename = "CRASH_RESUME_KITTY_WINDOW")]
    surface: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Process {
    pid: u32,
    #[serde(default)]
    cmdline: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct OsWindow {
    #[serde(default)]
    tabs: Vec<Tab>,
}

#[derive(Debug, Deserialize)]
struct Tab {
    #[serde(default)]
    windows: Vec<Window>,
}

/// A connection to kitty, by the kind of its address.
enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Kitty {
    /// kitty at `address` (what kitty's `--listen-on` names), each call given
    /// `deadline`; a window falls back to `shell` (the user's `$SHELL`) after the agent.
    pub fn new(address: Option<String>, deadline: Duration, shell: Option<String>) -> Kitty {
        Kitty {
            address: address.filter(|address| !address.trim().is_empty()),
            deadline,
            shell: crate::script::login_shell(shell),
            pid: OnceCell::new(),
            unanswered: OnceCell::new(),
            listed: RefCell::new(None),
        }
    }

    /// Sends one command and reads its answer: its `data` (`Null` when it has none), or what its
    /// error says.
    fn call(&self, command: &str, payload: &Value) -> Result<Value, MuxError> {
        if let Some(unanswered) = self.unanswered.get() {
            return Err(MuxError::Unanswered {
                said: unanswered.clone(),
                again: true,
            });
        }
        let Some(address) = &self.address else {
            return Err(MuxError::NotMade(
                "no kitty to talk to: no address of its remote control socket was given"
                    .to_string(),
            ));
        };
        let request = json!({
            "cmd": command,
            "version": PROTOCOL_VERSION,
            "no_response": false,
            "payload": payload,
        });
        let mut message = START.to_vec();
        message.extend_from_slice(request.to_string().as_bytes());
        message.extend_from_slice(END);
        match self.round_trip(address, &message) {
            Ok(answer) => read_answer(command, &answer),
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                let said = format!(
                    "kitty did not answer within {:?} (`{command}` on {address})",
                    self.deadline
                );
                Err(MuxError::Unanswered {
                    said: self.unanswered.get_or_init(|| said).clone(),
                    again: false,
                })
            }
            Err(error) => Err(MuxError::NotMade(format!(
                "cannot talk to kitty at {address}: {error} (is kitty running with allow_remote_control=yes and --listen-on {address}?)"
            ))),
        }
    }

    fn round_trip(&self, address: &str, message: &[u8]) -> std::io::Result<Vec<u8>> {
        let until = Instant::now() + self.deadline;
        let left = || {
            until
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
                .ok_or(std::io::ErrorKind::TimedOut)
        };
        let mut stream = connect(address, self.deadline)?;
        if let Stream::Unix(unix) = &stream {
            self.pid.get_or_init(|| peer_pid(unix));
        }
        stream.set_write_timeout(left()?)?;
        stream.write_all(message)?;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            stream.set_read_timeout(left()?)?;
            let read = stream.read(&mut chunk)?;
            answer.extend_from_slice(&chunk[..read]);
            if read == 0 || answer.ends_with(END) {
                return Ok(answer);
            }
            if answer.len() as u64 > MAX_ANSWER {
                return Err(std::io::Error::other(format!(
                    "its answer is longer than {MAX_ANSWER} bytes"
                )));
            }
        }
    }

    /// Every window of every tab of every OS window.
    fn windows(&self) -> Result<Vec<Window>, MuxError> {
        let data = self.call("ls", &json!({}))?;
        let listing = data.as_str().unwrap_or_default();
        let os_windows: Vec<OsWindow> = serde_json::from_str(listing).map_err(|error| {
            MuxError::Answer(format!(
                "kitty's `ls` answered what is not its JSON: {error}"
            ))
        })?;
        Ok(os_windows
            .into_iter()
            .flat_map(|os_window| os_window.tabs)
            .flat_map(|tab| tab.windows)
            .collect())
    }

    /// The surface's window, if kitty has it: the window a restore opened for it (whatever its
    /// id is now), else, in the same kitty instance the hook saw, the recorded window id.
    fn find(&self, window: &KittyWindow, surface: &Surface) -> Result<Option<Window>, MuxError> {
        let earlier = self
            .listed
            .borrow()
            .as_ref()
            .map(|windows| self.pick(windows, window, surface));
        if let Some(None) = earlier {
            return Ok(None);
        }
        let windows = self.windows()?;
        let found = self.pick(&windows, window, surface);
        self.listed.replace(Some(windows));
        Ok(found)
    }

    /// The surface's window among `windows`: the one tagged with the surface, else the recorded
    /// id when this is the kitty the hook saw.
    fn pick(&self, windows: &[Window], window: &KittyWindow, surface: &Surface) -> Option<Window> {
        let tag = surface.to_string();
        if let Some(tagged) = windows
            .iter()
            .find(|listed| listed.env.surface.as_deref() == Some(tag.as_str()))
        {
            return Some(tagged.clone());
        }
        let live = self.pid.get().copied().flatten().map(|pid| pid.to_string());
        let same_instance = window.instance.is_some() && window.instance == live;
        windows
            .iter()
            .find(|listed| same_instance && listed.id.to_string() == window.id)
            .cloned()
    }

    /// Whether the window's shell waits at its own prompt with nothing typed
    /// ([`crate::pane::judge`]): its processes, its terminal's mode, and the cursor's line.
    fn judge(&self, window: &Window) -> Result<(), Busy> {
        let Some(pid) = window.pid else {
            return Err(Busy::Program(program_name(&window.cmdline)));
        };
        let foreground = match window
            .foreground_processes
            .iter()
            .find(|process| process.pid != pid)
        {
            Some(process) => program_name(process.cmdline.as_deref().unwrap_or_default()),
            None => program_name(&window.cmdline),
        };
        let tty = crate::tmux::processes::terminal_path(pid);
        let mut state = PaneState {
            foreground,
            child: crate::tmux::processes::first_child(pid),
            interactive: crate::tmux::processes::is_interactive_shell(pid),
            canonical: crate::tmux::terminal_is_canonical(&tty),
            before_cursor: "$".to_string(),
            after_cursor: String::new(),
        };
        // Busy by its processes or its terminal's mode: the screen is not asked for.
        crate::pane::judge(&state)?;
        let screen = self
            .call(
                "get-text",
                &json!({"match": format!("id:{}", window.id), "extent": "screen", "cursor": true}),
            )
            .ok()
            .and_then(|data| data.as_str().map(str::to_string))
            .unwrap_or_default();
        (state.before_cursor, state.after_cursor) = cursor_line(&screen);
        crate::pane::judge(&state)
    }

    fn open_window(&self, window: &KittyWindow, start: &Start<'_>) -> Result<Opened, MuxError> {
        let tag = start.surface.to_string();
        if let Some(why) = rewritten_in_env(&tag) {
            return Err(MuxError::NotMade(format!(
                "kitty would rewrite {tag:?} in the window's environment ({why}), so the window \
                 could not be found again by it; nothing was created"
            )));
        }
        let script = crate::script::start_script(start.env, start.dir, start.command, &self.shell);
        let mut payload = json!({
            "args": ["/bin/sh", "-c", script],
            "type": "window",
            "keep_focus": true,
            "env": [format!("{TAG_VARIABLE}={}", start.surface)],
        });
        if let Some(dir) = start.dir {
            payload["cwd"] = Value::from(dir);
        }
        let Some(place) = self.find(window, start.surface)? else {
            self.call("launch", &payload)?;
            return Ok(Opened::Started {
                created: vec![Created::Window],
            });
        };
        if let Err(busy) = self.judge(&place) {
            return Ok(Opened::Skipped(busy));
        }
        payload["match"] = Value::from(format!("window_id:{}", place.id));
        payload["location"] = Value::from("after");
        self.call("launch", &payload)?;
        // The command runs: the idle shell's window goes, best effort (left open, it is still
        // an idle shell, and the agent must not be started again for it).
        let _ = self.call(
            "close-window",
            &json!({"match": format!("id:{}", place.id), "self": false}),
        );
        Ok(Opened::Started {
            created: Vec::new(),
        })
    }
}

impl Stream {
    fn set_write_timeout(&self, timeout: Duration) -> std::io::Result<()> {
        match self {
            Stream::Unix(stream) => stream.set_write_timeout(Some(timeout)),
            Stream::Tcp(stream) => stream.set_write_timeout(Some(timeout)),
        }
    }

    fn set_read_timeout(&self, timeout: Duration) -> std::io::Result<()> {
        match self {
            Stream::Unix(stream) => stream.set_read_timeout(Some(timeout)),
            Stream::Tcp(stream) => stream.set_read_timeout(Some(timeout)),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Unix(stream) => stream.write_all(bytes),
            Stream::Tcp(stream) => stream.write_all(bytes),
        }
    }

    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(stream) => stream.read(buffer),
            Stream::Tcp(stream) => stream.read(buffer),
        }
    }
}

/// Connects to `unix:PATH`, `unix:@NAME` (Linux's abstract namespace) or `tcp:HOST:PORT`.
fn connect(address: &str, deadline: Duration) -> std::io::Result<Stream> {
    let unsupported = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not an address kitty listens on (unix:PATH, unix:@NAME or tcp:HOST:PORT)",
        )
    };
    if let Some(path) = address.strip_prefix("unix:") {
        if let Some(name) = path.strip_prefix('@') {
            return connect_abstract(name).map(Stream::Unix);
        }
        return UnixStream::connect(path).map(Stream::Unix);
    }
    let Some(host) = address.strip_prefix("tcp:") else {
        return Err(unsupported());
    };
    let until = Instant::now() + deadline;
    let mut last = unsupported();
    for socket in resolve(host, deadline)? {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        match TcpStream::connect_timeout(&socket, left) {
            Ok(stream) => return Ok(Stream::Tcp(stream)),
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// `host`'s addresses (`HOST:PORT`), looked up on a thread of its own so that a resolver that
/// does not answer costs no more than `deadline` (the lookup itself has none; the thread is
/// left to end with the process).
fn resolve(host: &str, deadline: Duration) -> std::io::Result<Vec<std::net::SocketAddr>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let host = host.to_string();
    std::thread::Builder::new()
        .name("kitty-resolve".into())
        .spawn(move || {
            let _ = sender.send(
                std::net::ToSocketAddrs::to_socket_addrs(&host).map(Iterator::collect::<Vec<_>>),
            );
        })?;
    receiver.recv_timeout(deadline).unwrap_or_else(|_| {
        Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("the host name was not resolved within {deadline:?}"),
        ))
    })
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn connect_abstract(name: &str) -> std::io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt as _;
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    UnixStream::connect_addr(&address)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn connect_abstract(_name: &str) -> std::io::Result<UnixStream> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "abstract unix sockets exist on Linux only",
    ))
}

/// The pid of the process at the other end of a unix socket: kitty's own.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_pid(stream: &UnixStream) -> Option<u32> {
    let credentials = rustix::net::sockopt::socket_peercred(stream).ok()?;
    u32::try_from(credentials.pid.as_raw_nonzero().get()).ok()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn peer_pid(_stream: &UnixStream) -> Option<u32> {
    None
}

/// The `data` of an answer, or what its `error` says (never its traceback).
fn read_answer(command: &str, answer: &[u8]) -> Result<Value, MuxError> {
    let unreadable = || {
        MuxError::Answer(format!(
            "kitty answered `{command}` with what is not its protocol ({} bytes)",
            answer.len()
        ))
    };
    let json = answer
        .strip_prefix(START)
        .and_then(|rest| rest.strip_suffix(END))
        .ok_or_else(unreadable)?;
    let answer: Value = serde_json::from_slice(json).map_err(|_| unreadable())?;
    crate::client::socket_result(answer, "data", "/error", "kitty", command)
        .unwrap_or_else(|| Err(unreadable()))
}

/// Why kitty would not hand a value over as given in a launched window's environment: it
/// strips the value's surrounding whitespace and expands `$NAME` and `${NAME}` in it (kitty's
/// `env` parsing), with no way to escape either. `None` when it is handed over as given.
fn rewritten_in_env(value: &str) -> Option<&'static str> {
    if value.trim() != value {
        return Some("it strips the whitespace around it");
    }
    let expands = value.match_indices('$').any(|(at, _)| {
        let after = &value[at + 1..];
        let name = after.strip_prefix('{').unwrap_or(after);
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
    });
    expands.then_some("it expands $NAME in it")
}

/// A command line's program, by its base name, a login shell's `-` removed.
fn program_name(cmdline: &[String]) -> String {
    let program = cmdline.first().map(String::as_str).unwrap_or_default();
    let name = program.rsplit('/').next().unwrap_or(program);
    name.trim_start_matches('-').to_string()
}

/// The cursor's line of `get-text --add-cursor`'s answer (the screen's lines, then escape
/// codes, among them `ESC [ row ; column H`), cut at the cursor. Empty when there is no cursor
/// position: the judge then finds no prompt.
fn cursor_line(screen: &str) -> (String, String) {
    let (text, codes) = screen.split_once('\x1b').unwrap_or((screen, ""));
    let position = codes.split('\x1b').find_map(|code| {
        let (row, column) = code.strip_prefix('[')?.strip_suffix('H')?.split_once(';')?;
        Some((row.parse::<usize>().ok()?, column.parse::<usize>().ok()?))
    });
    let Some((row, column)) = position else {
        return (String::new(), String::new());
    };
    let line = text
        .split('\n')
        .nth(row.saturating_sub(1))
        .unwrap_or_default();
    let (before, after) = crate::tmux::split_at_column(line, column.saturating_sub(1));
    (before.to_string(), after.to_string())
}

impl Backend for Kitty {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Kitty
    }

    fn busy(&self, surface: &Surface) -> Option<Busy> {
        let Surface::Kitty(window) = surface else {
            return None;
        };
        match self.find(window, surface) {
            Ok(Some(place)) => self.judge(&place).err(),
            Ok(None) | Err(_) => None,
        }
    }

    /// Replaces the surface's window when its shell is idle (a new window beside it in its tab,
    /// then the idle one closed), skips it when busy, and opens a new window when it is gone;
    /// the window runs `/bin/sh -c SCRIPT` ([`crate::script::start_script`]) in the recorded dir
    /// and carries the surface in [`TAG_VARIABLE`]. Every recorded value is a JSON string of an
    /// argv element, the dir or the environment: kitty runs no shell and expands nothing.
    fn open(&self, start: &Start<'_>) -> Result<Opened, MuxError> {
        match start.surface {
            Surface::Kitty(window) => self.open_window(window, start),
            other => Err(MuxError::OtherMultiplexer {
                surface: other.to_string(),
                multiplexer: Multiplexer::Kitty,
            }),
        }
    }

    fn unanswered(&self) -> Option<&str> {
        self.unanswered.get().map(String::as_str)
    }

    fn check_command(&self) -> String {
        match &self.address {
            Some(address) => format!("kitty @ --to {} ls", crate::script::quote(address)),
            None => "kitty @ ls".to_string(),
        }
    }

    fn location(&self) -> String {
        self.address
            .clone()
            .unwrap_or_else(|| "no kitty socket".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_line_is_cut_at_the_cursor() {
        let screen = "root@vm:/tmp# \nnext\n\n\x1b[?25h\x1b[1;15H\x1b[5 q";
        assert_eq!(
            cursor_line(screen),
            ("root@vm:/tmp# ".to_string(), String::new())
        );
        let typed = "$ rm -rf x\n\x1b[?25h\x1b[1;3H";
        assert_eq!(
            cursor_line(typed),
            ("$ ".to_string(), "rm -rf x".to_string())
        );
        assert_eq!(cursor_line("no cursor"), (String::new(), String::new()));
    }

    #[test]
    fn a_tcp_host_is_resolved_within_the_deadline() {
        let addresses = resolve("localhost:9", Duration::from_secs(5)).unwrap();
        assert!(
            addresses
                .iter()
                .all(|address| address.ip().is_loopback() && address.port() == 9),
            "{addresses:?}"
        );
        assert!(!addresses.is_empty());
        assert!(resolve("no port", Duration::from_secs(5)).is_err());
    }

    #[test]
    fn values_kitty_would_rewrite_in_an_environment_are_named() {
        for kept in ["kitty:41:3", "kitty:4$:3", "kitty:$1:3", "kitty:a b:3"] {
            assert_eq!(rewritten_in_env(kept), None, "{kept}");
        }
        for rewritten in ["kitty:$HOME:3", "kitty:${X}:3", "kitty:4:3 ", " kitty:4:3"] {
            assert!(rewritten_in_env(rewritten).is_some(), "{rewritten}");
        }
    }

    #[test]
    fn a_tagged_window_records_its_tag_else_the_instance_and_id() {
        let tagged = captured("9".into(), Some("77".into()), Some("kitty:41:3"));
        assert_eq!(tagged.to_string(), "kitty:41:3");
        let plain = captured("9".into(), Some("77".into()), None);
        assert_eq!(plain.to_string(), "kitty:77:9");
        let foreign = captured("9".into(), None, Some("tmux:w:0.0"));
        assert_eq!(foreign.to_string(), "kitty:9");
    }
}
