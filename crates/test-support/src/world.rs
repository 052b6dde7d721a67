//! The test world: what a test of crash-resume that runs agents in a multiplexer needs around
//! a [`Sandbox`]: an agent's environment inside it (its XDG, Claude and Codex dirs, a `bin` dir
//! first on `PATH`), the stand-in agent installed there as `claude`, a private tmux server with
//! panes at given places (and a guard that keeps it stopped), and waits with deadlines. The
//! CLI's tests use it through their harness; the reboot simulation and the benchmarks use its
//! waits and its tmux server. zellij's instance is [`crate::zellij`]'s.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::process::process_state;
use crate::sandbox::{Sandbox, sandboxed};
use crate::{stand_in, tmux};

/// How long a test waits for something another process does before it fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Variables of the caller's environment that would change what an agent does, on top of those
/// [`sandboxed`] removes (every one crash-resume reads): an agent run under `CI` or
/// `CONTINUOUS_INTEGRATION` behaves as in a CI job (Gemini CLI then runs without its
/// interface, as if piped), not as in a user's pane.
const AGENT_REMOVED_VARIABLES: [&str; 2] = ["CI", "CONTINUOUS_INTEGRATION"];

/// Claude Code's config dir in the sandbox (`CLAUDE_CONFIG_DIR`), not the default one, so that
/// resume commands carry it.
pub fn claude_dir(env: &Sandbox) -> PathBuf {
    env.home().join(".claude-work")
}

/// Codex CLI's home in the sandbox (`CODEX_HOME`).
pub fn codex_home(env: &Sandbox) -> PathBuf {
    env.home().join(".codex-work")
}

/// Where a private tmux server of this sandbox keeps its socket (`TMUX_TMPDIR`).
pub fn tmux_tmpdir(env: &Sandbox) -> PathBuf {
    env.root().join("run")
}

/// The sandbox's `bin` dir, first on the `PATH` of everything started through [`agent_command`].
pub fn bin_dir(env: &Sandbox) -> PathBuf {
    env.root().join("bin")
}

/// `program` with the sandbox's environment, as an agent would run it: every XDG dir, the Claude
/// and Codex config dirs and tmux's socket dir inside the sandbox, the sandbox's `bin` first on
/// `PATH`, and no surface, role or tmux variable of the caller.
pub fn agent_command(env: &Sandbox, program: impl AsRef<std::ffi::OsStr>) -> Command {
    for dir in [bin_dir(env), tmux_tmpdir(env)] {
        fs::create_dir_all(&dir).expect("create a sandbox dir");
    }
    let mut command = sandboxed(env, program);
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    command
        .env("PATH", format!("{}:{path}", bin_dir(env).display()))
        .env("XDG_DATA_HOME", env.root().join("data"))
        .env("XDG_CACHE_HOME", env.root().join("cache"))
        .env("XDG_RUNTIME_DIR", tmux_tmpdir(env))
        .env("TMUX_TMPDIR", tmux_tmpdir(env))
        .env("CLAUDE_CONFIG_DIR", claude_dir(env))
        .env("CODEX_HOME", codex_home(env));
    for variable in AGENT_REMOVED_VARIABLES {
        command.env_remove(variable);
    }
    command
}

/// Makes `dir` (and its parents).
pub fn make_dir(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap_or_else(|error| panic!("create {}: {error}", dir.display()));
    dir.to_path_buf()
}

/// The file the stand-in `claude` appends one line to each time it runs.
pub fn claude_runs_path(env: &Sandbox) -> PathBuf {
    env.root().join("claude-runs.log")
}

/// Installs the stand-in agent (`stand_in`, its `record` mode) as `claude` in the sandbox's
/// `bin`: it appends the pane it runs in, its working dir, the dir the shell was in before
/// (`OLDPWD`), its config dir, the surface its environment names (`CRASH_RESUME_SURFACE`) and
/// its arguments to [`claude_runs_path`], and exits.
pub fn install_claude_stand_in(env: &Sandbox) {
    write_claude_stand_in(env, None, false);
}

/// Like [`install_claude_stand_in`], but the stand-in then fires the real SessionStart hook
/// (`<crash_resume> hook claude`) for the session it was asked to resume, as Claude Code does,
/// and stays (as `sleep`), so the pane's process shows that it runs.
pub fn install_claude_stand_in_that_stays(env: &Sandbox, crash_resume: &Path) {
    write_claude_stand_in(env, Some(crash_resume), false);
}

/// Like [`install_claude_stand_in_that_stays`], but it stays as `sleep` started under the name
/// `claude` (its command line's first word), as Claude Code's process shows: the liveness rule
/// takes it for the agent.
pub fn install_claude_stand_in_that_stays_as_claude(env: &Sandbox, crash_resume: &Path) {
    write_claude_stand_in(env, Some(crash_resume), true);
}

fn write_claude_stand_in(env: &Sandbox, stay_with: Option<&Path>, as_claude: bool) {
    let quoted = |path: &Path| stand_in::sh_quote(&path.to_string_lossy());
    let mut line = format!(
        "{} record --runs {} --pwd \"$PWD\" --oldpwd \"${{OLDPWD-}}\"",
        quoted(stand_in::agent()),
        quoted(&claude_runs_path(env))
    );
    if let Some(crash_resume) = stay_with {
        line.push_str(&format!(" --stay-with {}", quoted(crash_resume)));
        if as_claude {
            line.push_str(" --stay-as claude");
        }
    }
    line.push_str(" --");
    stand_in::write_wrapper(&bin_dir(env), &line).expect("write the stand-in's claude wrapper");
}

/// The lines the stand-in `claude` wrote so far.
pub fn claude_runs(env: &Sandbox) -> Vec<String> {
    fs::read_to_string(claude_runs_path(env))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Calls `probe` until it returns `Some`, failing the test after [`DEADLINE`].
pub fn wait_until<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    wait_within(DEADLINE, what, probe)
}

/// Calls `probe` until it returns `Some`, failing the test after `deadline`.
pub fn wait_within<T>(deadline: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    poll_for(deadline, what, || Ok::<_, TimedOut>(probe()))
        .unwrap_or_else(|error| panic!("{error}"))
}

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(10);

/// A wait that gave up: what it waited for and how long.
#[derive(Debug, thiserror::Error)]
#[error("gave up after {deadline:.1?} waiting for {what}")]
pub struct TimedOut {
    /// What was waited for.
    pub what: String,
    /// How long.
    pub deadline: Duration,
}

/// Polls `check` until it finds something, at most `deadline`; an error of `check` ends the
/// wait.
pub fn poll_for<T, E: From<TimedOut>>(
    deadline: Duration,
    what: &str,
    mut check: impl FnMut() -> Result<Option<T>, E>,
) -> Result<T, E> {
    let started = Instant::now();
    loop {
        if let Some(found) = check()? {
            return Ok(found);
        }
        if started.elapsed() > deadline {
            return Err(TimedOut {
                what: what.to_string(),
                deadline,
            }
            .into());
        }
        std::thread::sleep(POLL);
    }
}

/// Polls `check` until it holds, at most `deadline`.
pub fn poll_until<E: From<TimedOut>>(
    deadline: Duration,
    what: &str,
    mut check: impl FnMut() -> Result<bool, E>,
) -> Result<(), E> {
    poll_for(deadline, what, || Ok(check()?.then_some(())))
}

/// Quotes `word` for a POSIX shell the way the resume commands do: as it is when it holds only
/// safe characters, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || ",._+:@%/-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        assert!(!word.contains('\''), "test paths hold no single quote");
        format!("'{word}'")
    }
}

/// One pane of a tmux layout: `tmux:<session>:<window>.<pane>`, started in `dir`.
#[derive(Debug, Clone)]
pub struct PanePlace {
    /// The tmux session's name.
    pub session: String,
    /// The window's index.
    pub window: u32,
    /// The pane's index in the window.
    pub pane: u32,
}

impl PanePlace {
    /// The pane `pane` of window `window` of the session `session`.
    pub fn new(session: &str, window: u32, pane: u32) -> PanePlace {
        PanePlace {
            session: session.to_string(),
            window,
            pane,
        }
    }

    /// Its place in its server, `tmux:<session>:<window>.<pane>`: the surface id recorded
    /// before surfaces named their server, which means the default server's pane
    /// ([`TmuxServer::surface`] is the id capture records now).
    pub fn surface(&self) -> String {
        mux::tmux::TmuxPane {
            server: None,
            session: self.session.clone(),
            window: self.window,
            pane: self.pane,
        }
        .to_string()
    }

    /// The exact tmux target of the pane.
    pub fn target(&self) -> String {
        format!("={}:{}.{}", self.session, self.window, self.pane)
    }

    fn window_target(&self) -> String {
        format!("={}:{}", self.session, self.window)
    }
}

/// A private tmux server (`tmux -L <unique name> -f /dev/null`, its socket inside the
/// sandbox), started with the sandbox's agent environment, so that every pane has it; killed
/// when dropped.
#[derive(Debug)]
pub struct TmuxServer {
    name: String,
    /// `TMUX_TMPDIR`: the dir of the server's socket dir.
    tmpdir: PathBuf,
    /// The environment every tmux client of this server runs with: the sandbox's agent
    /// environment (tmux gives a pane that a command-line client creates that client's
    /// environment).
    client_env: Vec<(OsString, Option<OsString>)>,
}

/// The shell every pane runs: no rc files, a plain prompt.
pub const PANE_SHELL: &str = "bash --norc --noprofile";

/// What the panes' shells get on top of the agent environment.
const PANE_ENVIRONMENT: [(&str, &str); 5] = [
    ("SHELL", "/bin/bash"),
    ("PS1", "$ "),
    ("TERM", "xterm-256color"),
    ("LANG", "C.UTF-8"),
    ("HISTFILE", "/dev/null"),
];

impl TmuxServer {
    /// Starts a server with one pane at each place of `layout` (in order: a session's windows
    /// and a window's panes from the lowest index, panes numbered from 0 without gaps), each
    /// running `command(place)` in `dir(place)`, and waits until each pane runs it.
    pub fn start(env: &Sandbox, name: &str, layout: &[(PanePlace, PathBuf, &str)]) -> TmuxServer {
        TmuxServer::start_with(env, name, layout, &[])
    }

    /// [`TmuxServer::start`], the server started with `vars` on top of the agent environment
    /// (as a server started inside another multiplexer's pane has that pane's variables), so
    /// that every pane inherits them.
    pub fn start_with(
        env: &Sandbox,
        name: &str,
        layout: &[(PanePlace, PathBuf, &str)],
        vars: &[(&str, &str)],
    ) -> TmuxServer {
        let server = TmuxServer::named_with(env, name, vars);
        let socket = server.socket_path();
        assert!(
            socket.as_os_str().len() < 100,
            "the tmux socket path {} is too long for a Unix socket; use a shorter target dir",
            socket.display()
        );
        let mut sessions: Vec<&str> = Vec::new();
        for (place, dir, program) in layout {
            let dir = dir.to_str().unwrap();
            if !sessions.contains(&place.session.as_str()) {
                sessions.push(&place.session);
                server.tmux(&[
                    "new-session",
                    "-d",
                    "-s",
                    &place.session,
                    "-x",
                    "250",
                    "-y",
                    "50",
                    "-c",
                    dir,
                    program,
                ]);
                if sessions.len() == 1 {
                    // Windows tmux creates later (a restore's) run the same plain shell.
                    server.tmux(&["set-option", "-g", "default-command", PANE_SHELL]);
                }
                if place.window != 0 {
                    let created = format!("={}:0", place.session);
                    server.tmux(&["move-window", "-s", &created, "-t", &place.window_target()]);
                }
            } else if place.pane == 0 {
                server.tmux(&[
                    "new-window",
                    "-d",
                    "-t",
                    &place.window_target(),
                    "-c",
                    dir,
                    program,
                ]);
            } else {
                let previous = format!("{}.{}", place.window_target(), place.pane - 1);
                server.tmux(&["split-window", "-d", "-t", &previous, "-c", dir, program]);
            }
        }
        let mut wanted: Vec<(String, String)> = layout
            .iter()
            .map(|(place, _, program)| {
                let first_word = program.split_whitespace().next().unwrap_or_default();
                (place.surface(), first_word.to_string())
            })
            .collect();
        wanted.sort();
        wait_until("every pane of the layout to run its program", || {
            (server.panes() == wanted).then_some(())
        });
        for (place, _, program) in layout {
            if *program == PANE_SHELL {
                server.wait_for_idle_shell(&place.target());
            }
        }
        server
    }

    /// Waits until the pane's own process is the plain shell [`PANE_SHELL`] at its prompt. tmux
    /// starts a pane's command through `$SHELL -c`, which shows as `bash` too until it has
    /// replaced itself with the command, and a restore rightly calls a pane whose process is a
    /// `-c` command busy; and a shell that has not shown its prompt yet is busy to a restore
    /// too.
    pub fn wait_for_idle_shell(&self, target: &str) {
        wait_until("the pane to be an idle shell at its prompt", || {
            let pid = self.display(target, "#{pane_pid}").trim().parse().ok()?;
            let arguments = crate::process::command_line(pid)?;
            let arguments: Vec<&str> = arguments.iter().filter_map(|word| word.to_str()).collect();
            let row = self.display(target, "#{cursor_y}");
            let line = self.tmux(&["capture-pane", "-p", "-t", target, "-S", &row, "-E", &row]);
            (arguments.join(" ") == PANE_SHELL && line.trim_end().ends_with(['$', '#']))
                .then_some(())
        });
    }

    /// A client of the server `name` of this sandbox, which need not run (yet): a restore on
    /// an empty server starts it.
    pub fn named(env: &Sandbox, name: &str) -> TmuxServer {
        TmuxServer::named_with(env, name, &[])
    }

    /// [`TmuxServer::named`], its clients (and so a server they start) with `vars` on top of
    /// the agent environment.
    fn named_with(env: &Sandbox, name: &str, vars: &[(&str, &str)]) -> TmuxServer {
        let mut client = agent_command(env, "tmux");
        client.envs(PANE_ENVIRONMENT);
        client.envs(vars.iter().copied());
        TmuxServer {
            name: name.to_string(),
            tmpdir: tmux_tmpdir(env),
            client_env: client
                .get_envs()
                .map(|(name, value)| (name.to_owned(), value.map(ToOwned::to_owned)))
                .collect(),
        }
    }

    /// `tmux:<session>:<window>.<pane>` and the command running there, for every pane, sorted.
    pub fn panes(&self) -> Vec<(String, String)> {
        let mut panes = tmux::list_panes(|args| self.try_tmux(args), "#{pane_current_command}");
        panes.sort();
        panes
    }

    /// The server's socket, as `$TMUX` names it.
    pub fn socket_path(&self) -> PathBuf {
        tmux::socket_path(&self.tmpdir, &self.name)
    }

    /// The surface id of the pane at `place` in this server, as capture records it:
    /// `tmux:<socket path>:<session>:<window>.<pane>`.
    pub fn surface(&self, place: &PanePlace) -> String {
        surface_in(&self.tmpdir, &self.name, place)
    }

    /// A tmux client command for this server, in the sandbox's agent environment.
    fn client(&self) -> Command {
        let mut command = Command::new("tmux");
        for (name, value) in &self.client_env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        command
            .env("TMUX_TMPDIR", &self.tmpdir)
            .env_remove("TMUX")
            .stdin(Stdio::null());
        tmux::private(command, &self.name)
    }

    /// `tmux ARGS` against this server, which must succeed; its stdout, trimmed.
    pub fn tmux(&self, args: &[&str]) -> String {
        self.try_tmux(args)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// `tmux ARGS` against this server; its stdout, trimmed, or what tmux said.
    pub fn try_tmux(&self, args: &[&str]) -> Result<String, String> {
        tmux::run(self.client(), args)
    }

    /// One format of the pane at `target`.
    pub fn display(&self, target: &str, format: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", target, format])
    }

    /// The text of a pane, wrapped lines joined.
    pub fn capture(&self, target: &str) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-t", target])
    }

    /// `$TMUX` as a process inside this server's panes has it.
    pub fn tmux_variable(&self) -> String {
        let pid = self.tmux(&["display-message", "-p", "#{pid}"]);
        format!("{},{pid},0", self.socket_path().display())
    }

    /// Runs the shell line `line` in the pane and waits until it has run. Nothing is typed: the
    /// line is started as the pane's own process (`respawn-pane -k`, as a restore starts an
    /// agent in an idle pane), in the pane's terminal and environment; it signals a `tmux
    /// wait-for` channel when done, and then the plain shell [`PANE_SHELL`] is the pane's
    /// process again.
    pub fn run_in_pane(&self, target: &str, line: &str) {
        static CHANNELS: AtomicUsize = AtomicUsize::new(0);
        let channel = format!("done-{}", CHANNELS.fetch_add(1, Ordering::Relaxed));
        let mut waiter = self
            .client()
            .args(["wait-for", &channel])
            .spawn()
            .expect("spawn tmux wait-for");
        let script = format!("{line}; tmux wait-for -S {channel}; exec {PANE_SHELL}");
        self.tmux(&["respawn-pane", "-k", "-t", target, &script]);
        let status = wait_until(&format!("the line started in {target} to run"), || {
            waiter.try_wait().expect("poll tmux wait-for")
        });
        assert!(status.success(), "tmux wait-for {channel}: {status}");
    }

    /// Runs the shell words `program` in the pane's shell with `stdin` on its stdin; checks
    /// that it exited 0 and printed nothing.
    pub fn run_silently_in_pane(&self, env: &Sandbox, target: &str, program: &str, stdin: &str) {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let file = |suffix: &str| env.root().join(format!("pane-hook-{n}.{suffix}"));
        fs::write(file("json"), stdin).unwrap();
        let path = |suffix: &str| shell_word(file(suffix).to_str().unwrap());
        self.run_in_pane(
            target,
            &format!(
                "{program} < {} > {} 2> {}; echo $? > {}",
                path("json"),
                path("out"),
                path("err"),
                path("rc"),
            ),
        );
        let read = |suffix: &str| fs::read_to_string(file(suffix)).unwrap();
        assert_eq!(read("rc"), "0\n", "{program} in {target} exits 0");
        assert_eq!(
            read("out"),
            "",
            "{program} in {target} prints nothing on stdout"
        );
        assert_eq!(
            read("err"),
            "",
            "{program} in {target} prints nothing on stderr"
        );
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.tmux(&["display-message", "-p", "#{pid}"])
            .parse()
            .expect("the server's pid")
    }

    /// Stops the server (`SIGSTOP`), as a hung server would be, until the guard is dropped
    /// (`SIGCONT`), also when the test fails. Declare the guard after the server, so that it is
    /// dropped first and the server, continued, can then be killed. Returns once it is stopped.
    pub fn stop(&self) -> StoppedServer {
        let pid = self.pid();
        let raw = rustix::process::Pid::from_raw(pid as i32).expect("a pid");
        rustix::process::kill_process(raw, rustix::process::Signal::STOP).expect("SIGSTOP");
        let stopped = StoppedServer(raw);
        wait_until("the tmux server to stop", || {
            (process_state(pid) == Some('T')).then_some(())
        });
        stopped
    }

    /// Kills the server and waits until its process is gone, as a crash would leave it.
    pub fn kill_and_wait(&self) {
        let pid = self.pid();
        self.tmux(&["kill-server"]);
        wait_until("the tmux server to exit", || {
            matches!(process_state(pid), None | Some('Z')).then_some(())
        });
    }
}

/// A stopped tmux server, continued when dropped.
#[derive(Debug)]
pub struct StoppedServer(rustix::process::Pid);

impl Drop for StoppedServer {
    fn drop(&mut self) {
        let _ = rustix::process::kill_process(self.0, rustix::process::Signal::CONT);
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.try_tmux(&["kill-server"]);
    }
}

/// The name of a test's first tmux server: `default`, so that it is the sandbox's default
/// server (each sandbox has a `TMUX_TMPDIR` of its own), which a surface recorded without its
/// server names. A second server at once is [`OTHER_SERVER`].
pub fn server_name(_test: &str) -> String {
    "default".to_string()
}

/// The surface id of the pane at `place` in the sandbox's server `name`, as capture records it
/// (`tmux:<socket path>:<session>:<window>.<pane>`); the server need not run.
pub fn server_surface(env: &Sandbox, name: &str, place: &PanePlace) -> String {
    surface_in(&tmux_tmpdir(env), name, place)
}

/// [`server_surface`], the socket's dir in `tmpdir` (`TMUX_TMPDIR`), resolved as tmux
/// reports it.
fn surface_in(tmpdir: &Path, name: &str, place: &PanePlace) -> String {
    let tmpdir = fs::canonicalize(tmpdir).unwrap_or_else(|_| tmpdir.to_path_buf());
    mux::tmux::TmuxPane {
        server: Some(
            tmux::socket_path(&tmpdir, name)
                .to_string_lossy()
                .into_owned(),
        ),
        session: place.session.clone(),
        window: place.window,
        pane: place.pane,
    }
    .to_string()
}

/// The name of a test's second tmux server, running beside the default one ([`server_name`]).
pub const OTHER_SERVER: &str = "other";
