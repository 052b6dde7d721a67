//! tmux: its surface grammar (`tmux:<socket path>:<session>:<window>.<pane>`, [`TmuxPane`]) and
//! its backend ([`Server`]): find the pane (or create its session, window and pane at the
//! recorded indexes), then start the resume command as the pane's own process. A server opens
//! only its own surfaces: those naming its socket path, and, when it is the default server,
//! those recorded without a server. Nothing is ever typed
//! into a pane: a pane is re-used only when it is an idle interactive shell with no child
//! process, and `respawn-pane -k` replaces that shell, so no text a user typed there runs.
//! Talks to tmux only through its command line, each call bounded by [`CALL_DEADLINE`]: once a
//! server has not answered, it is not asked again.

use std::cell::OnceCell;
use std::process::Command as Process;
use std::sync::OnceLock;
use std::time::Duration;

use crate::backend::{Backend, Created, Elsewhere, InstanceRun, MuxError, Opened, Start};
use crate::multiplexer::Multiplexer;
use crate::pane::{Busy, PaneState};
use crate::script::quote;
use crate::surface::Surface;

pub(crate) mod address;
pub(crate) mod entry;
mod window;

pub use address::TmuxPane;
pub use entry::server_pid;

/// How long a restore waits for one program it runs (a tmux command, `ps`): a tmux server that
/// is stopped or hung never answers, and a restore must not hang with it.
pub const CALL_DEADLINE: Duration = Duration::from_secs(5);

/// The `tmux` to run: the first on `PATH`, else Homebrew's, else plain `tmux` (whose failure to
/// start then says it is missing).
pub fn program() -> &'static std::path::Path {
    static PROGRAM: OnceLock<std::path::PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        crate::program::find_program(
            "tmux",
            std::env::var_os("PATH"),
            &crate::program::HOMEBREW_DIRS,
        )
        .unwrap_or_else(|| std::path::PathBuf::from("tmux"))
    })
}

/// The most panes a restore adds to one window for one surface: a recorded pane index far past
/// the window's last pane (`tmux:w:0.5000`) is refused rather than split towards.
const MAX_NEW_PANES: u32 = 16;

/// The fields of one `list-panes -a` line, in this order. The session name is not last, since
/// a name may end in spaces and `Server::tmux` trims the output's ends.
const PANE_FIELDS: &str = "#{window_index}\t#{pane_index}\t#{session_name}\t#{pane_id}\t#{pane_pid}\t#{pane_tty}\t#{cursor_x}\t#{cursor_y}\t#{pane_current_command}";

/// What a server has of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    Nothing,
    /// The session, not the window.
    Session,
    /// The window, not the pane; its lowest and highest pane index (panes are numbered
    /// contiguously from the window's `pane-base-index`).
    Window {
        first_pane: u32,
        last_pane: u32,
    },
    Pane(Pane),
}

/// A pane that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pane {
    id: String,
    /// `pane_pid`: the process tmux started in the pane.
    pid: u32,
    /// `pane_tty`: the pane's terminal.
    tty: String,
    cursor_x: usize,
    cursor_y: usize,
    /// `pane_current_command`: the foreground process of the pane's terminal.
    running: String,
}

/// What one restore created on the way to a pane, so that a surface that then fails leaves
/// nothing behind: the session (which holds the rest), else the window, else the panes.
#[derive(Debug, Default)]
struct Made {
    session: Option<String>,
    window: Option<String>,
    /// The pane a created session or window came with.
    first_pane: Option<String>,
    /// The panes split off to reach the target's index.
    panes: Vec<String>,
}

impl Made {
    fn is_empty(&self) -> bool {
        self.session.is_none() && self.window.is_none() && self.panes.is_empty()
    }

    /// What was made, as the restore reports it.
    fn created(&self) -> Vec<Created> {
        let mut what = Vec::new();
        if self.session.is_some() {
            what.push(Created::Session);
        }
        if self.window.is_some() {
            what.push(Created::Window);
        }
        if !self.panes.is_empty() {
            let count = u32::try_from(self.panes.len()).unwrap_or(u32::MAX);
            what.push(Created::Panes { count });
        }
        what
    }
}

/// A tmux server: the default one (or `$TMUX`'s), a named socket (`tmux -L NAME`), or a socket
/// path (`tmux -S PATH`).
#[derive(Debug, Clone)]
pub struct Server {
    socket: Option<Socket>,
    /// The panes this restore created to fill lower indexes, which a later surface may take over
    /// without judging them (their shells may not show a prompt yet).
    fillers: std::cell::RefCell<Vec<String>>,
    /// Set when a call did not answer within [`CALL_DEADLINE`]: what it said. Every later call
    /// fails at once with it, so a stopped server costs one deadline, not one per call.
    unanswered: OnceCell<String>,
    /// The windows (session, index) this restore created something in, and whether each has
    /// been laid out since ([`Backend::lay_out`]).
    touched: std::cell::RefCell<std::collections::BTreeMap<(String, u32), bool>>,
}

/// How a server other than `$TMUX`'s or the default one is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Socket {
    /// `tmux -L NAME`: `NAME` in tmux's socket dir.
    Name(String),
    /// `tmux -S PATH`.
    Path(String),
}

impl Server {
    /// The server on the named socket (`tmux -L NAME`), or on the socket path when the value
    /// holds a `/` (`tmux -S PATH`), else `$TMUX`'s server or the default one.
    pub fn new(socket: Option<String>) -> Server {
        let socket = socket.map(|socket| match socket.contains('/') {
            true => Socket::Path(socket),
            false => Socket::Name(socket),
        });
        Server {
            socket,
            fillers: std::cell::RefCell::default(),
            unanswered: OnceCell::new(),
            touched: std::cell::RefCell::default(),
        }
    }

    /// `tmux -L NAME`, `tmux -S PATH` (given so, or for the server `$TMUX` names when that is
    /// not the default one: a restore a server's config started), or `tmux` for the default
    /// server: how a user reaches this one.
    fn command_line(&self) -> String {
        match &self.socket {
            Some(Socket::Name(name)) => format!("tmux -L {}", quote(name)),
            Some(Socket::Path(path)) => format!("tmux -S {}", quote(path)),
            None => {
                let path = self.socket_path();
                match path == default_socket_path() {
                    true => "tmux".to_string(),
                    false => format!("tmux -S {}", quote(&path)),
                }
            }
        }
    }

    /// The socket this server listens on, as tmux itself finds it: for `-L NAME`,
    /// `$TMUX_TMPDIR` (else `/tmp`) `/tmux-<uid>/NAME`, the dir's symlinks resolved; for `-S
    /// PATH`, the path, its dir's symlinks resolved; for the default server, the socket `$TMUX`
    /// names when set, else `default` in that dir.
    pub fn socket_path(&self) -> String {
        let from_tmux = std::env::var("TMUX").ok().and_then(|value| {
            let path = value.split(',').next().unwrap_or_default().to_string();
            (!path.is_empty()).then_some(path)
        });
        match (&self.socket, from_tmux) {
            (Some(Socket::Path(path)), _) => resolved(path),
            (Some(Socket::Name(name)), _) => socket_in_dir(name),
            (None, Some(path)) => path,
            (None, None) => default_socket_path(),
        }
    }

    /// Whether this is the default server (`default` in tmux's socket dir), which a surface
    /// recorded without its server names.
    fn is_default(&self) -> bool {
        same_socket(&self.socket_path(), &default_socket_path())
    }

    fn tmux(&self, args: &[&str]) -> Result<String, MuxError> {
        let mut command = Process::new(program());
        match &self.socket {
            Some(Socket::Name(name)) => command.args(["-L", name]),
            Some(Socket::Path(path)) => command.args(["-S", path]),
            None => &mut command,
        };
        command.args(args);
        crate::client::run(
            &mut command,
            CALL_DEADLINE,
            &self.unanswered,
            "tmux",
            args,
            || {
                let asked = args.first().copied().unwrap_or_default();
                format!("{} {asked}", self.command_line())
            },
        )
    }

    /// What the server has of `target`. Read from one listing of every pane and matched
    /// exactly: `display-message -t` is no test, since tmux answers it for a target that does
    /// not exist with another pane (the current one). No server: nothing.
    fn find(&self, target: &TmuxPane) -> Found {
        let Ok(listing) = self.tmux(&["list-panes", "-a", "-F", PANE_FIELDS]) else {
            return Found::Nothing;
        };
        let mut found = Found::Nothing;
        for line in listing.lines() {
            let fields: Vec<&str> = line.splitn(9, '\t').collect();
            let [
                window,
                pane,
                session,
                id,
                pid,
                tty,
                cursor_x,
                cursor_y,
                running,
            ] = fields[..]
            else {
                continue;
            };
            if session != target.session {
                continue;
            }
            if window.parse() != Ok(target.window) {
                if found == Found::Nothing {
                    found = Found::Session;
                }
                continue;
            }
            let Ok(index) = pane.parse::<u32>() else {
                continue;
            };
            if index != target.pane {
                found = match found {
                    Found::Window {
                        first_pane,
                        last_pane,
                    } => Found::Window {
                        first_pane: first_pane.min(index),
                        last_pane: last_pane.max(index),
                    },
                    _ => Found::Window {
                        first_pane: index,
                        last_pane: index,
                    },
                };
                continue;
            }
            return Found::Pane(Pane {
                id: id.to_string(),
                pid: pid.parse().unwrap_or(0),
                tty: tty.to_string(),
                cursor_x: cursor_x.parse().unwrap_or(0),
                cursor_y: cursor_y.parse().unwrap_or(0),
                running: running.to_string(),
            });
        }
        found
    }

    /// Why the target's pane must be left alone, when it exists and its shell is not idle at
    /// its prompt.
    fn busy_pane(&self, target: &TmuxPane) -> Option<Busy> {
        match self.find(target) {
            Found::Pane(pane) if !self.fillers.borrow().contains(&pane.id) => {
                self.judge(&pane).err()
            }
            _ => None,
        }
    }

    /// Whether the pane's shell waits at its own prompt with nothing typed
    /// ([`crate::pane::judge`]), from its processes, its terminal's mode and the cursor's
    /// line on screen.
    fn judge(&self, pane: &Pane) -> Result<(), Busy> {
        let row = pane.cursor_y.to_string();
        let line = self
            .tmux(&["capture-pane", "-p", "-t", &pane.id, "-S", &row, "-E", &row])
            .unwrap_or_default();
        let (before_cursor, after_cursor) = split_at_column(&line, pane.cursor_x);
        crate::pane::judge(&PaneState {
            foreground: pane.running.clone(),
            child: processes::first_child(pane.pid),
            interactive: processes::is_interactive_shell(pane.pid),
            canonical: terminal_is_canonical(&pane.tty),
            before_cursor: before_cursor.to_string(),
            after_cursor: after_cursor.to_string(),
        })
    }

    /// [`Backend::open`] for a tmux pane.
    fn open_pane(&self, target: &TmuxPane, start: &Start<'_>) -> Result<Opened, MuxError> {
        self.undone_on_failure(target, |made| self.open_in(target, start, made))
    }

    /// Runs `work` for `target` (refused first when tmux would rewrite its session name),
    /// noting what it creates in a [`Made`], and removes all of it again when `work` fails.
    fn undone_on_failure<T>(
        &self,
        target: &TmuxPane,
        work: impl FnOnce(&mut Made) -> Result<T, MuxError>,
    ) -> Result<T, MuxError> {
        if let Some(character) = target.rewritten_character() {
            return Err(MuxError::Unnameable {
                session: target.session.clone(),
                character,
            });
        }
        let mut made = Made::default();
        let done = work(&mut made);
        if done.is_err() {
            self.remove(&made);
        }
        done
    }

    fn open_in(
        &self,
        target: &TmuxPane,
        start: &Start<'_>,
        made: &mut Made,
    ) -> Result<Opened, MuxError> {
        let pane = self.make_pane(target, made)?;
        if made.is_empty()
            && !self.fillers.borrow().contains(&pane.id)
            && let Err(busy) = self.judge(&pane)
        {
            return Ok(Opened::Skipped(busy));
        }
        let script =
            crate::script::start_script(start.env, start.dir, start.command, &self.user_shell());
        self.tmux(&[
            "respawn-pane",
            "-k",
            "-t",
            &pane.id,
            "/bin/sh",
            "-c",
            &script,
        ])?;
        Ok(Opened::Started {
            created: made.created(),
        })
    }

    /// The target's pane, creating exactly what it lacks: the session, the window at its index,
    /// then the panes up to its index, each created thing noted in `created`.
    fn make_pane(&self, target: &TmuxPane, created: &mut Made) -> Result<Pane, MuxError> {
        let pane = self.make_pane_in(target, created)?;
        if !created.is_empty() {
            self.touched
                .borrow_mut()
                .entry((target.session.clone(), target.window))
                .or_insert(false);
        }
        Ok(pane)
    }

    fn make_pane_in(&self, target: &TmuxPane, created: &mut Made) -> Result<Pane, MuxError> {
        let mut found = self.find(target);
        if found == Found::Nothing {
            self.new_session(target, created)?;
            found = self.find(target);
        }
        if found == Found::Session {
            let window = format!("={}:{}", target.session, target.window);
            let ids = self.tmux(&[
                "new-window",
                "-d",
                "-P",
                "-F",
                "#{window_id}\t#{pane_id}",
                "-t",
                &window,
            ])?;
            let (window, pane) = ids.split_once('\t').unwrap_or((&ids, ""));
            created.window = Some(window.to_string());
            created.first_pane = Some(pane.to_string());
            found = self.find(target);
        }
        let (first_pane, last_pane) = match found {
            Found::Pane(pane) => return Ok(pane),
            Found::Window {
                first_pane,
                last_pane,
            } => (first_pane, last_pane),
            Found::Nothing | Found::Session => {
                return Err(MuxError::NotMade(format!(
                    "tmux did not make {target}: its window is not there after creating it"
                )));
            }
        };
        if target.pane < first_pane {
            return Err(MuxError::NotMade(format!(
                "tmux numbers this window's panes from {first_pane} (its pane-base-index), so it cannot hold {target}; nothing is left created"
            )));
        }
        let missing = target.pane - last_pane;
        if missing > MAX_NEW_PANES {
            return Err(MuxError::NotMade(format!(
                "{target} would need {missing} new panes in a window whose last pane is {last_pane}; a restore adds at most {MAX_NEW_PANES}, so none were made"
            )));
        }
        let mut after = format!("={}:{}.{last_pane}", target.session, target.window);
        for _ in 0..missing {
            let id = self.split(target, &after)?;
            created.panes.push(id.clone());
            after = id;
        }
        match self.find(target) {
            Found::Pane(pane) => {
                // The other panes made on the way are plain shells this restore made.
                let made = created.first_pane.iter().chain(&created.panes);
                let fillers = made.filter(|id| **id != pane.id).cloned();
                self.fillers.borrow_mut().extend(fillers);
                Ok(pane)
            }
            _ => Err(MuxError::NotMade(format!(
                "tmux did not make {target} after adding {missing} panes"
            ))),
        }
    }

    /// Splits the pane `after` of the target's window, the new pane (running the default
    /// command, a shell) after it; its id.
    fn split(&self, target: &TmuxPane, after: &str) -> Result<String, MuxError> {
        let split = ["split-window", "-d", "-P", "-F", "#{pane_id}", "-t", after];
        self.tmux(&split).or_else(|_| {
            // A small window has no room for another pane until it is tiled.
            let window = format!("={}:{}", target.session, target.window);
            self.tmux(&["select-layout", "-t", &window, "tiled"])?;
            self.tmux(&split)
        })
    }

    /// Creates the session with its first window at the target's index. The name is given with
    /// `#` doubled (tmux expands formats in it), and the session tmux made is checked to bear
    /// exactly the recorded name (read from the middle of the answer, which `Server::tmux`
    /// trims at its ends).
    fn new_session(&self, target: &TmuxPane, created: &mut Made) -> Result<(), MuxError> {
        let name = target.session.replace('#', "##");
        let made = self.tmux(&[
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{session_id}\t#{session_name}\t#{window_index}\t#{pane_id}",
            "-s",
            &name,
        ])?;
        let fields: Vec<&str> = made.splitn(4, '\t').collect();
        let [id, made_name, window, pane] = fields[..] else {
            return Err(MuxError::Answer(format!(
                "tmux said {made:?} after creating a session; expected its id, name, window and pane"
            )));
        };
        created.session = Some(id.to_string());
        created.first_pane = Some(pane.to_string());
        if made_name != target.session {
            return Err(MuxError::Renamed {
                made: made_name.to_string(),
                wanted: target.session.clone(),
            });
        }
        if window != target.window.to_string() {
            let from = format!("{id}:{window}");
            let to = format!("{id}:{}", target.window);
            self.tmux(&["move-window", "-s", &from, "-t", &to])?;
        }
        Ok(())
    }

    /// Removes what a failed open created, best effort (a failure here changes nothing of what
    /// the restore reports).
    fn remove(&self, created: &Made) {
        if let Some(session) = &created.session {
            let _ = self.tmux(&["kill-session", "-t", session]);
        } else if let Some(window) = &created.window {
            let _ = self.tmux(&["kill-window", "-t", window]);
        } else {
            for pane in created.panes.iter().rev() {
                let _ = self.tmux(&["kill-pane", "-t", pane]);
            }
        }
    }

    /// The shell a pane falls back to once the agent exits: tmux's `default-command` when set
    /// (run by its `default-shell`), else the `default-shell` itself.
    fn user_shell(&self) -> String {
        let option = |name: &str| {
            self.tmux(&["show-options", "-gv", name])
                .ok()
                .filter(|value| !value.trim().is_empty())
        };
        let shell = option("default-shell")
            .or_else(|| std::env::var("SHELL").ok())
            .unwrap_or_else(|| "/bin/sh".to_string());
        let shell = quote(&shell);
        match option("default-command") {
            Some(command) => format!("{shell} -c {}", quote(&command)),
            None => shell,
        }
    }
}

impl Backend for Server {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Tmux
    }

    fn busy(&self, surface: &Surface) -> Option<Busy> {
        match surface {
            Surface::Tmux(target) => self.busy_pane(target),
            _ => None,
        }
    }

    /// Re-uses the pane when its shell is idle at its prompt, else creates what is missing
    /// (session, window, panes up to the recorded index), then starts the command as the pane's
    /// process.
    ///
    /// No recorded value reaches tmux where tmux expands formats (`#(...)` runs a command): the
    /// session name is passed to `new-session -s` with `#` doubled, the working dir only inside
    /// the pane's script, and targets (`-t`, never expanded) name the session exactly (`=`).
    fn open(&self, start: &Start<'_>) -> Result<Opened, MuxError> {
        match start.surface {
            Surface::Tmux(target) => self.open_pane(target, start),
            other => Err(MuxError::OtherMultiplexer {
                surface: other.to_string(),
                multiplexer: Multiplexer::Tmux,
            }),
        }
    }

    /// Whether a call to this server timed out, and what it said (`tmux did not answer within
    /// 5s (server NAME)`): then no further call is made.
    fn unanswered(&self) -> Option<&str> {
        self.unanswered.get().map(String::as_str)
    }

    /// `tmux -L NAME list-sessions`, or `tmux list-sessions` for the default server.
    fn check_command(&self) -> String {
        format!("{} list-sessions", self.command_line())
    }

    fn location(&self) -> String {
        self.socket_path()
    }

    /// The server's pid and start time (`#{pid}-#{start_time}`): a server started again at the
    /// same socket path is another run.
    fn instance_run(&self) -> InstanceRun {
        match self.tmux(&["display-message", "-p", "#{pid}-#{start_time}"]) {
            Ok(run) if !run.trim().is_empty() => InstanceRun::Running(run.trim().to_string()),
            _ => InstanceRun::NotRunning,
        }
    }

    fn attach_command(&self, surface: &Surface) -> Option<String> {
        match surface {
            Surface::Tmux(pane) => Some(format!(
                "{} attach -t {}",
                self.command_line(),
                quote(&pane.session)
            )),
            _ => None,
        }
    }

    fn open_shell(
        &self,
        surface: &Surface,
        dir: Option<&str>,
    ) -> Result<Option<Vec<Created>>, MuxError> {
        match surface {
            Surface::Tmux(target) => self.open_shell_pane(target, dir),
            _ => Ok(None),
        }
    }

    fn lay_out(&self, surface: &Surface, layout: &str) -> Result<bool, MuxError> {
        match surface {
            Surface::Tmux(target) => self.lay_out_window(target, layout),
            _ => Ok(false),
        }
    }

    fn caller_surface(&self) -> Option<Surface> {
        self.caller_pane().map(Surface::Tmux)
    }

    /// A surface naming this server's socket path is this server's; one recorded without a
    /// server is the default server's, and is given this server's path when this is it.
    fn own(&self, surface: &Surface) -> Result<Surface, Elsewhere> {
        let Surface::Tmux(pane) = surface else {
            return Ok(surface.clone());
        };
        let here = self.socket_path();
        let (instance, unqualified) = match &pane.server {
            Some(server) if same_socket(server, &here) => return Ok(surface.clone()),
            None if self.is_default() => return Ok(Surface::Tmux(pane.with_server(&here))),
            Some(server) => (server.clone(), false),
            None => (default_socket_path(), true),
        };
        Err(Elsewhere {
            restore_with: format!("--tmux-socket {}", quote(&instance)),
            instance,
            unqualified,
        })
    }
}

/// The default server's socket: `default` in tmux's socket dir (`$TMUX_TMPDIR`, else `/tmp`,
/// then `tmux-<uid>`, the dir's symlinks resolved), whatever `$TMUX` says. A surface recorded
/// without its server means this one.
pub fn default_socket_path() -> String {
    socket_in_dir("default")
}

/// The socket `name` in tmux's socket dir, as `tmux -L NAME` finds it.
fn socket_in_dir(name: &str) -> String {
    let base = std::env::var("TMUX_TMPDIR")
        .ok()
        .filter(|dir| !dir.is_empty())
        .unwrap_or_else(|| "/tmp".to_string());
    let dir = format!(
        "{}/tmux-{}",
        base.trim_end_matches('/'),
        rustix::process::getuid().as_raw()
    );
    format!("{}/{name}", resolved(&dir))
}

/// `path` with its symlinks resolved, as tmux reports a socket path; as it is when it cannot be
/// (the socket not there yet: then its dir's).
fn resolved(path: &str) -> String {
    let canonical = |path: &std::path::Path| {
        std::fs::canonicalize(path)
            .ok()
            .and_then(|path| path.into_os_string().into_string().ok())
    };
    let path_buf = std::path::Path::new(path);
    if let Some(canonical) = canonical(path_buf) {
        return canonical;
    }
    match (path_buf.parent(), path_buf.file_name()) {
        (Some(dir), Some(name)) => canonical(dir).map_or_else(
            || path.to_string(),
            |dir| format!("{dir}/{}", name.to_string_lossy()),
        ),
        _ => path.to_string(),
    }
}

/// Whether two socket paths name one socket: the same text, or the same once resolved.
pub fn same_socket(one: &str, other: &str) -> bool {
    one == other || resolved(one) == resolved(other)
}

/// Whether `terminal` (a process's controlling terminal, as `proc-table` gives it) is the tmux
/// pane's tty `tty` (`#{pane_tty}`): what makes a `TMUX_PANE` in a process's environment that
/// process's own pane rather than one it inherited. `None` when the tty cannot be looked at.
pub fn is_pane_terminal(tty: &str, terminal: proc_table::Dev) -> Option<bool> {
    match tty {
        "" => Some(false),
        tty => Some(rustix::fs::stat(tty).ok()?.st_rdev == terminal),
    }
}

/// `line` cut at the terminal column `column` (wide characters count two).
pub(crate) fn split_at_column(line: &str, column: usize) -> (&str, &str) {
    let mut width = 0;
    for (at, character) in line.char_indices() {
        if width >= column {
            return line.split_at(at);
        }
        width += unicode_width::UnicodeWidthChar::width(character).unwrap_or(0);
    }
    (line, "")
}

/// Whether the terminal `tty` reads whole lines (canonical mode): a line editor at a prompt
/// turns that off. `None` when it cannot be told: not a terminal device, or not ours to open.
/// Opened without becoming our controlling terminal, and never read or written.
pub(crate) fn terminal_is_canonical(tty: &str) -> Option<bool> {
    use rustix::fs::{Mode, OFlags};
    if !tty.starts_with("/dev/") {
        return None;
    }
    let terminal = rustix::fs::open(
        tty,
        OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let modes = rustix::termios::tcgetattr(&terminal).ok()?;
    Some(
        modes
            .local_modes
            .contains(rustix::termios::LocalModes::ICANON),
    )
}

/// What the process table (`proc-table`) says of a pane's process, as far as telling an idle
/// shell needs it.
pub(crate) mod processes {
    use std::os::unix::ffi::OsStrExt as _;
    use std::time::Instant;

    use super::CALL_DEADLINE;

    /// A child of `pid`, if it has one.
    pub fn first_child(pid: u32) -> Option<u32> {
        proc_table::table()
            .children(pid, Instant::now() + CALL_DEADLINE)
            .first()
            .copied()
    }

    /// Whether `pid` is a shell at its prompt rather than one running a script or a `-c`
    /// command: every argument after the program name is an option (and none is `-c`).
    pub fn is_interactive_shell(pid: u32) -> bool {
        let Some(arguments) = proc_table::table().command_line(pid, Instant::now() + CALL_DEADLINE)
        else {
            return false;
        };
        !arguments.is_empty()
            && arguments[1..].iter().all(|argument| {
                argument.as_bytes().starts_with(b"-") && argument.as_bytes() != b"-c"
            })
    }

    /// The path of the terminal `pid` reads (its standard input); empty where it cannot be
    /// told.
    pub fn terminal_path(pid: u32) -> String {
        proc_table::table()
            .standard_input(pid)
            .map(|path| path.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}
