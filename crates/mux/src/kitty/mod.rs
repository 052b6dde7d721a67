//! kitty: its surface grammar (`kitty:<kitty pid>:<window id>`, [`KittyWindow`]) and its
//! backend ([`Kitty`]), which speaks kitty's remote control protocol on its socket directly
//! (`\eP@kitty-cmd{json}\e\\` each way): the `kitty @` client costs 0.6 s a call, the socket a
//! few milliseconds.
//!
//! A window id says nothing after kitty restarts (kitty numbers its windows from 1 again), so
//! a window is found by what outlives a restart of this tool's own windows: every window a
//! restore opens carries a tag in its environment ([`TAG_VARIABLE`]), `<kitty pid>:<window
//! id>:<surface>`, which its first process sets from the `KITTY_PID` and `KITTY_WINDOW_ID`
//! kitty gave it (the process then runs the start script with the tag in its environment, so
//! `ls` shows it). The tag counts only in that window: every process started from the window
//! inherits it, among them a kitty started there (whose windows each carry it), so the hook
//! takes the tag's surface only where `KITTY_PID` and `KITTY_WINDOW_ID` are the tag's, and a
//! restore only from the window whose id and kitty are the tag's ([`captured`],
//! [`bound_surface`]). `ls` is asked for every variable of each window's environment: by
//! default it leaves out the ones every window shares. A window the user opened is found by
//! its id only in the kitty instance the hook saw (the surface's instance is kitty's pid, and
//! the restore asks the socket's peer for its pid); in another instance, or for an id recorded
//! without the instance, it is gone, and a new window is opened.
//!
//! Nothing is ever typed into a window (no `send-text`). kitty cannot replace a window's
//! process, so an idle shell's window is replaced: the command starts in a new window beside
//! it, in its tab, then the idle window is closed. A window running anything else is left
//! alone. Each call has a deadline for connecting (a unix or tcp socket whose listen backlog is
//! full makes a connect wait), writing and reading its answer; once one has not answered, none
//! is sent again. `ls` answers with each window's environment, which can hold secrets: only
//! [`TAG_VARIABLE`] and `KITTY_PID` are read of it, and no answer is ever quoted in an error.

use std::cell::{OnceCell, RefCell};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::backend::{Backend, Created, InstanceRun, MuxError, Opened, Start};
use crate::multiplexer::Multiplexer;
use crate::pane::{Busy, PaneState};
use crate::surface::Surface;

pub(crate) mod address;
pub(crate) mod entry;

pub use address::KittyWindow;

/// The variable every window a restore opens carries: `<kitty pid>:<window id>:<surface>`, the
/// window (its kitty's pid and its id) and the surface it was opened for. The hook in that
/// window records this surface, whatever the window's id is now; anywhere else (a process that
/// inherited it) the tag counts for nothing.
pub const TAG_VARIABLE: &str = crate::multiplexer::KITTY_TAG_VARIABLE;

/// The protocol version sent with each command: kitty refuses a client newer than itself, and
/// every command used here is in 0.26.
const PROTOCOL_VERSION: [u32; 3] = [0, 26, 0];

/// The longest answer read (`ls` of many windows with large environments).
const MAX_ANSWER: u64 = 64 << 20;

const START: &[u8] = b"\x1bP@kitty-cmd";
const END: &[u8] = b"\x1b\\";

/// The surface the hook records for a kitty window: the one a restore opened the window for
/// (`tag`, [`TAG_VARIABLE`]) when the tag was made for this window (its kitty pid and window
/// id are `kitty_pid`, `KITTY_PID`, and `window_id`, `KITTY_WINDOW_ID`), else the window in the
/// instance `kitty_pid` names.
pub fn captured(window_id: String, kitty_pid: Option<String>, tag: Option<&str>) -> KittyWindow {
    let instance = kitty_pid.filter(|pid| !pid.is_empty() && !pid.contains(':'));
    let bound = instance
        .as_deref()
        .zip(tag)
        .and_then(|(pid, tag)| bound_surface(tag, pid, &window_id));
    bound.unwrap_or(KittyWindow {
        instance,
        id: window_id,
    })
}

/// The surface a tag (`<kitty pid>:<window id>:<surface>`, [`TAG_VARIABLE`]) names, when it was
/// made for the window `window_id` of the kitty whose pid is `kitty_pid`; `None` for a tag made
/// for another window or kitty (inherited), or in another form.
pub fn bound_surface(tag: &str, kitty_pid: &str, window_id: &str) -> Option<KittyWindow> {
    let mut fields = tag.splitn(3, ':');
    let (pid, window, surface) = (fields.next()?, fields.next()?, fields.next()?);
    let number = |field: &str| !field.is_empty() && field.bytes().all(|byte| byte.is_ascii_digit());
    if !(number(pid) && number(window) && pid == kitty_pid && window == window_id) {
        return None;
    }
    match Surface::parse(surface) {
        Ok(Surface::Kitty(window)) => Some(window),
        _ => None,
    }
}

/// The script a window's first process runs: the tag set from the window's own `KITTY_PID` and
/// `KITTY_WINDOW_ID` and exported, then `/bin/sh -c SCRIPT` exec'd, so that the window's
/// process (whose environment `ls` shows) carries it from then on.
fn tagging_script(surface: &Surface, script: &str) -> String {
    let quote = crate::script::quote;
    format!(
        "{TAG_VARIABLE}=\"$KITTY_PID:$KITTY_WINDOW_ID:\"{}; export {TAG_VARIABLE}; exec /bin/sh -c {}",
        quote(&surface.to_string()),
        quote(script)
    )
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

/// One window of `ls`: the fields used (never the environment beyond [`TAG_VARIABLE`] and
/// `KITTY_PID`).
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
    env: Env,
}

/// The variables of a window's environment that are read.
#[derive(Debug, Clone, Default, Deserialize)]
struct Env {
    /// [`TAG_VARIABLE`].
    #[serde(rename = "CRASH_RESUME_KITTY_WINDOW")]
    tag: Option<String>,
    /// The pid of the kitty the window is in, as kitty set it.
    #[serde(rename = "KITTY_PID")]
    kitty_pid: Option<String>,
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

    /// Every window of every tab of every OS window, each with its whole environment (`ls`
    /// leaves out what every window shares unless asked for all).
    fn windows(&self) -> Result<Vec<Window>, MuxError> {
        let data = self.call("ls", &json!({"all_env_vars": true}))?;
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
    fn find(&self, window: &KittyWindow) -> Result<Option<Window>, MuxError> {
        let earlier = self
            .listed
            .borrow()
            .as_ref()
            .map(|windows| self.pick(windows, window));
        if let Some(None) = earlier {
            return Ok(None);
        }
        let windows = self.windows()?;
        let found = self.pick(&windows, window);
        self.listed.replace(Some(windows));
        Ok(found)
    }

    /// The surface's window among `windows`: the one whose tag was made for it, by this kitty,
    /// for that window, else the recorded id when this is the kitty the hook saw.
    fn pick(&self, windows: &[Window], window: &KittyWindow) -> Option<Window> {
        let live = self.pid.get().copied().flatten().map(|pid| pid.to_string());
        let tagged_for = |listed: &Window| {
            let kitty_pid = live.as_deref().or(listed.env.kitty_pid.as_deref())?;
            bound_surface(
                listed.env.tag.as_deref()?,
                kitty_pid,
                &listed.id.to_string(),
            )
        };
        if let Some(tagged) = windows
            .iter()
            .find(|listed| tagged_for(listed).as_ref() == Some(window))
        {
            return Some(tagged.clone());
        }
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
        let script = crate::script::start_script(start.env, start.dir, start.command, &self.shell);
        let mut payload = json!({
            "args": ["/bin/sh", "-c", tagging_script(start.surface, &script)],
            "type": "window",
            "keep_focus": true,
        });
        if let Some(dir) = start.dir {
            payload["cwd"] = Value::from(dir);
        }
        let Some(place) = self.find(window)? else {
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

/// Connects to `unix:PATH`, `unix:@NAME` (Linux's abstract namespace) or `tcp:HOST:PORT`,
/// within `deadline`: a socket whose listen backlog is full makes a connect wait.
fn connect(address: &str, deadline: Duration) -> std::io::Result<Stream> {
    let unsupported = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not an address kitty listens on (unix:PATH, unix:@NAME or tcp:HOST:PORT)",
        )
    };
    if let Some(path) = address.strip_prefix("unix:") {
        let socket = match path.strip_prefix('@') {
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Some(name) => rustix::net::SocketAddrUnix::new_abstract_name(name.as_bytes())?,
            // Abstract socket names are Linux's alone.
            #[cfg(not(any(target_os = "linux", target_os = "android")))]
            Some(_) => return Err(unsupported()),
            None => rustix::net::SocketAddrUnix::new(path)?,
        };
        return crate::client::connect_unix(&socket, deadline).map(Stream::Unix);
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
        match self.find(window) {
            Ok(Some(place)) => self.judge(&place).err(),
            Ok(None) | Err(_) => None,
        }
    }

    /// Replaces the surface's window when its shell is idle (a new window beside it in its tab,
    /// then the idle one closed), skips it when busy, and opens a new window when it is gone;
    /// the window runs `/bin/sh -c SCRIPT` ([`crate::script::start_script`]) in the recorded dir
    /// and carries the surface, bound to the window, in [`TAG_VARIABLE`]. The recorded dir is a
    /// JSON string kitty takes as it is; every other recorded value is one quoted word of the
    /// script.
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

    /// The pid of the kitty answering on the unix socket (asked with one `ls` when not known
    /// yet): a kitty started again at the same address is another run. Untold over TCP, where
    /// the peer's pid is not known.
    fn instance_run(&self) -> InstanceRun {
        if self.pid.get().is_none() && self.windows().is_err() {
            return InstanceRun::NotRunning;
        }
        match self.pid.get().copied().flatten() {
            Some(pid) => InstanceRun::Running(format!("kitty-{pid}")),
            None => InstanceRun::Untold,
        }
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
    fn a_tag_counts_only_in_the_window_it_was_made_for() {
        let check = |window: &str, pid: Option<&str>, tag: Option<&str>, expected: &str| {
            let captured = captured(window.into(), pid.map(str::to_string), tag);
            assert_eq!(captured.to_string(), expected, "{window} {pid:?} {tag:?}");
        };
        check("9", Some("77"), Some("77:9:kitty:41:3"), "kitty:41:3");
        check("9", Some("77"), Some("77:9:kitty:3"), "kitty:3");
        // Inherited: made in another kitty (a kitty started from the window), or another window.
        check("9", Some("78"), Some("77:9:kitty:41:3"), "kitty:78:9");
        check("2", Some("77"), Some("77:9:kitty:41:3"), "kitty:77:2");
        // The form before the tag named its window, another multiplexer's surface, no instance.
        check("9", Some("77"), Some("kitty:41:3"), "kitty:77:9");
        check("9", Some("77"), Some("77:9:tmux:w:0.0"), "kitty:77:9");
        check("9", Some("77"), Some(":9:kitty:41:3"), "kitty:77:9");
        check("9", None, Some("77:9:kitty:41:3"), "kitty:9");
        check("9", Some("77"), None, "kitty:77:9");
    }

    #[test]
    fn the_tagging_script_quotes_the_surface_and_the_script() {
        let surface = Surface::parse("kitty:4$(x):3").unwrap();
        assert_eq!(
            tagging_script(&surface, "echo 'a'"),
            "CRASH_RESUME_KITTY_WINDOW=\"$KITTY_PID:$KITTY_WINDOW_ID:\"'kitty:4$(x):3'; \
             export CRASH_RESUME_KITTY_WINDOW; exec /bin/sh -c \"echo 'a'\""
        );
    }
}
