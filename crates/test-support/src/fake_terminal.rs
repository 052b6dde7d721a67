//! Fakes of the two multiplexers no test can run (WezTerm is not packaged for CI, cmux runs on
//! macOS only) that behave as measured against the real ones, so the CLI's restore tests run
//! through them end to end: each starts what it is asked to start as a real process (in its own
//! session, killed when the fake is dropped).
//!
//! - [`FakeWezterm`]: a `wezterm` program (a shell script) that keeps its panes in a state dir.
//!   As a real headless `wezterm-mux-server` does: pane ids count from 0 and start again at 0
//!   after the server restarts ([`FakeWezterm::restart`]), so `wezterm:<pane id>` then names
//!   another pane; `spawn` without `--cwd` (or with one that does not exist) starts the pane in
//!   `HOME`; `spawn` outside a pane needs `--new-window` (or `--pane-id`) and prints the new
//!   pane's id; `list --format json` gives `pane_id`, `window_id`, `tab_id`, `workspace`, `cwd`
//!   (a `file://` URL), `title` and `tty_name`.
//! - [`FakeCmux`]: a cmux socket (one JSON line in, one out) whose `workspace.create` starts
//!   `initial_command` with `/bin/sh -c` in `working_directory` (else `HOME`), answering or
//!   holding each request as the test says.
//! - [`full_socket`]: a socket that accepts nothing, its listen backlog full (a hung kitty or
//!   cmux), to which a connect waits.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

/// The `wezterm` script: `cli [--no-auto-start] list --format json` and `cli [--no-auto-start]
/// spawn [--new-window] [--pane-id N] [--cwd DIR] -- PROGRAM...`. `$STATE/panes` holds one
/// line per pane, `id<TAB>pid<TAB>dir`; `$STATE/next` the next pane id.
const WEZTERM_SCRIPT: &str = r#"#!/bin/sh
state='@STATE@'
[ "$1" = cli ] || { echo "wezterm: only cli is faked" >&2; exit 2; }
shift
[ "$1" = --no-auto-start ] && shift
[ -e "$state/running" ] || { echo "failed to connect to the mux server" >&2; exit 1; }
case "$1" in
list)
    printf '['
    sep=''
    while IFS="$(printf '\t')" read -r id pid dir; do
        printf '%s{"window_id":%s,"tab_id":%s,"pane_id":%s,"workspace":"default","cwd":"file://localhost%s","title":"sh","tty_name":"/dev/pts/%s"}' \
            "$sep" "$id" "$id" "$id" "$dir" "$id"
        sep=','
    done < "$state/panes"
    printf ']\n'
    ;;
spawn)
    shift
    beside=''; window=''; cwd=''
    while [ $# -gt 0 ]; do
        case "$1" in
        --new-window) window=1; shift;;
        --pane-id) beside="$2"; shift 2;;
        --cwd) cwd="$2"; shift 2;;
        --) shift; break;;
        *) echo "wezterm cli spawn: unexpected $1" >&2; exit 2;;
        esac
    done
    if [ -z "$window" ] && [ -z "$beside" ] && [ -z "${WEZTERM_PANE-}" ]; then
        echo "--pane-id was not specified and \$WEZTERM_PANE is not set in the environment" >&2
        exit 1
    fi
    if [ -n "$beside" ] && ! cut -f1 "$state/panes" | grep -qx "$beside"; then
        echo "pane $beside not found" >&2
        exit 1
    fi
    [ -n "$cwd" ] && [ -d "$cwd" ] || cwd="$HOME"
    id=$(cat "$state/next")
    echo $((id + 1)) > "$state/next"
    cd "$cwd" || exit 1
    WEZTERM_PANE=$id setsid "$@" < /dev/null > /dev/null 2>&1 &
    printf '%s\t%s\t%s\n' "$id" "$!" "$cwd" >> "$state/panes"
    echo "$id"
    ;;
*) echo "wezterm cli $1: not faked" >&2; exit 2;;
esac
"#;

/// A fake `wezterm` in `bin`, its panes' processes killed when it is dropped.
#[derive(Debug)]
pub struct FakeWezterm {
    state: PathBuf,
}

impl FakeWezterm {
    /// Writes `bin/wezterm` and starts its (fake) server with no pane.
    pub fn install(bin: &Path) -> FakeWezterm {
        let state = bin.join("wezterm-state");
        std::fs::create_dir_all(&state).expect("create the fake wezterm's state dir");
        let script = WEZTERM_SCRIPT.replace("@STATE@", &state.to_string_lossy());
        let program = bin.join("wezterm");
        std::fs::write(&program, script).expect("write the fake wezterm");
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))
            .expect("make the fake wezterm executable");
        let fake = FakeWezterm { state };
        fake.start_server();
        fake
    }

    fn start_server(&self) {
        std::fs::write(self.state.join("panes"), "").expect("reset the fake wezterm's panes");
        std::fs::write(self.state.join("next"), "0\n").expect("reset the pane ids");
        std::fs::write(self.state.join("running"), "").expect("start the fake server");
    }

    /// Every pane: its id, the pid of its process, its dir.
    pub fn panes(&self) -> Vec<(u32, u32, String)> {
        std::fs::read_to_string(self.state.join("panes"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let mut fields = line.split('\t');
                Some((
                    fields.next()?.parse().ok()?,
                    fields.next()?.parse().ok()?,
                    fields.next()?.to_string(),
                ))
            })
            .collect()
    }

    /// Kills the server with every pane's process, and starts it again: pane ids count from 0
    /// again, as a real WezTerm's do.
    pub fn restart(&self) {
        self.kill_panes();
        self.start_server();
    }

    fn kill_panes(&self) {
        for (_, pid, _) in self.panes() {
            kill_group(pid);
        }
    }
}

impl Drop for FakeWezterm {
    fn drop(&mut self) {
        self.kill_panes();
    }
}

/// SIGKILLs the process group (a session `setsid` made) that `pid` leads.
fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// How a [`FakeCmux`] treats the next requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmuxMode {
    /// Starts what `workspace.create` asks for and answers.
    Answer,
    /// Reads the request and never answers (a cmux that hangs).
    Hold,
}

/// A fake cmux socket served by a thread of the test, which starts what it is asked to start
/// with the environment `command` gives.
#[derive(Debug)]
pub struct FakeCmux {
    socket: PathBuf,
    mode: Arc<Mutex<CmuxMode>>,
    started: Arc<Mutex<Vec<u32>>>,
    requests: Receiver<serde_json::Value>,
}

impl FakeCmux {
    /// Listens on `socket`; each started command is `command` (a `/bin/sh` with the
    /// environment of an agent) run with `-c INITIAL_COMMAND` in `working_directory`, else in
    /// `home`.
    pub fn serve(
        socket: &Path,
        home: &Path,
        command: impl Fn() -> Command + Send + 'static,
    ) -> FakeCmux {
        let listener = UnixListener::bind(socket).expect("bind the fake cmux socket");
        let mode = Arc::new(Mutex::new(CmuxMode::Answer));
        let started = Arc::new(Mutex::new(Vec::new()));
        let (sender, requests) = channel();
        let serving = Serving {
            mode: Arc::clone(&mode),
            started: Arc::clone(&started),
            sender,
            home: home.to_path_buf(),
        };
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                if !serving.answer(&stream, &command) {
                    return;
                }
            }
        });
        FakeCmux {
            socket: socket.to_path_buf(),
            mode,
            started,
            requests,
        }
    }

    /// The socket's path.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// How the next requests are treated.
    pub fn set_mode(&self, mode: CmuxMode) {
        *self.mode.lock().expect("the fake cmux's mode") = mode;
    }

    /// The next request the fake read, waiting for it at most `crate::world::DEADLINE`.
    pub fn next_request(&self) -> serde_json::Value {
        self.requests
            .recv_timeout(crate::world::DEADLINE)
            .expect("a request to the fake cmux within the deadline")
    }

    /// The pids of every command it started, in order.
    pub fn started(&self) -> Vec<u32> {
        self.started.lock().expect("the fake cmux's starts").clone()
    }
}

impl Drop for FakeCmux {
    fn drop(&mut self) {
        for pid in self.started() {
            kill_group(pid);
        }
    }
}

/// What the serving thread holds.
struct Serving {
    mode: Arc<Mutex<CmuxMode>>,
    started: Arc<Mutex<Vec<u32>>>,
    sender: Sender<serde_json::Value>,
    home: PathBuf,
}

impl Serving {
    /// Reads one request and answers it (or holds it); `false` once the test is gone.
    fn answer(
        &self,
        stream: &std::os::unix::net::UnixStream,
        command: &dyn Fn() -> Command,
    ) -> bool {
        let mut line = String::new();
        if BufReader::new(stream).read_line(&mut line).is_err() {
            return true;
        }
        let Ok(request) = serde_json::from_str::<serde_json::Value>(&line) else {
            return true;
        };
        let mode = *self.mode.lock().expect("the fake cmux's mode");
        if self.sender.send(request.clone()).is_err() {
            return false;
        }
        if mode == CmuxMode::Hold {
            // Held open until the client gives up.
            let _ = BufReader::new(stream).read_line(&mut String::new());
            return true;
        }
        let id = request["id"].clone();
        let answer = match request["method"].as_str() {
            Some("workspace.create") => {
                let params = &request["params"];
                let dir = params["working_directory"]
                    .as_str()
                    .map(PathBuf::from)
                    .filter(|dir| dir.is_dir())
                    .unwrap_or_else(|| self.home.clone());
                let initial = params["initial_command"].as_str().unwrap_or("exec sh");
                let child = command()
                    .args(["-c", initial])
                    .current_dir(dir)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .process_group(0)
                    .spawn();
                match child {
                    Ok(child) => {
                        let pid = child.id();
                        self.started
                            .lock()
                            .expect("the fake cmux's starts")
                            .push(pid);
                        // Reaped by a thread of its own, so it leaves no zombie behind.
                        std::thread::spawn(move || {
                            let mut child = child;
                            let _ = child.wait();
                        });
                        serde_json::json!({"id": id, "ok": true, "result": {
                            "workspace_id": format!("W{pid}"), "surface_id": format!("S{pid}")}})
                    }
                    Err(error) => serde_json::json!({"id": id, "ok": false,
                        "error": {"code": "spawn", "message": error.to_string()}}),
                }
            }
            _ => serde_json::json!({"id": id, "ok": false,
                "error": {"code": "method_not_found", "message": "not faked"}}),
        };
        let mut writer = stream;
        let _ = writer.write_all(format!("{answer}\n").as_bytes());
        true
    }
}

/// A unix socket listening with a backlog of 0 that never accepts, its queue filled: a blocking
/// connect to it waits until the listener accepts. The held connections go with it.
#[derive(Debug)]
pub struct FullSocket {
    _listener: rustix::fd::OwnedFd,
    _held: Vec<rustix::fd::OwnedFd>,
}

/// A [`FullSocket`] at `path`.
pub fn full_socket(path: &Path) -> FullSocket {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketType};
    let listener = rustix::net::socket(AddressFamily::UNIX, SocketType::STREAM, None).unwrap();
    let address = SocketAddrUnix::new(path).unwrap();
    rustix::net::bind(&listener, &address).unwrap();
    rustix::net::listen(&listener, 0).unwrap();
    // Linux queues one connection more than the backlog; a non-blocking connect past that
    // fails at once (EAGAIN) where a blocking one waits.
    let mut held = Vec::new();
    loop {
        let stream = rustix::net::socket(AddressFamily::UNIX, SocketType::STREAM, None).unwrap();
        rustix::io::ioctl_fionbio(&stream, true).unwrap();
        if rustix::net::connect(&stream, &address).is_err() {
            break;
        }
        held.push(stream);
        assert!(held.len() < 64, "the backlog never filled");
    }
    FullSocket {
        _listener: listener,
        _held: held,
    }
}
