//! What the capture and restore tests share: an agent's environment inside the sandbox, the
//! hook run through the real binary with a payload on stdin, Claude Code's transcripts where the
//! CLI keeps them, a stand-in `claude` that only writes down how it was started, a private tmux
//! server, and polling with a deadline.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use test_support::tmux;
use test_support::transcript::{ClaudeLine, jsonl};

use crate::{BIN, Sandbox, sandboxed};

/// Environment variables a case sets (an empty value removes one).
pub type Vars = &'static [(&'static str, &'static str)];

/// How long a test waits for something another process does before it fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Variables of the caller's environment that would change what a hook or a restore does, on
/// top of those [`sandboxed`] removes.
///
/// `CI` and `CONTINUOUS_INTEGRATION` too: an agent run under them behaves as in a CI job (Gemini
/// CLI then runs without its interface, as if piped), not as in a user's pane.
const AGENT_REMOVED_VARIABLES: [&str; 4] = [
    "CRASH_RESUME_ROLE",
    "CRASH_RESUME_TMUX_SOCKET",
    "CI",
    "CONTINUOUS_INTEGRATION",
];

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

/// The binary under test in an agent's environment.
pub fn crash_resume_agent(env: &Sandbox) -> Command {
    agent_command(env, BIN)
}

/// `crash-resume --json restore --apply tmux --tmux-socket SOCKET` in an agent's environment,
/// stdin closed, stdout and stderr piped.
pub fn restore_apply(env: &Sandbox, socket: &str) -> Command {
    let mut command = crash_resume_agent(env);
    command
        .args(test_support::restore_apply_args(socket))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// `crash-resume [--json] restore ARGS`, which must succeed.
pub fn restore(env: &Sandbox, json: bool, args: &[&str]) -> Output {
    let mut command = crash_resume_agent(env);
    if json {
        command.arg("--json");
    }
    let output = command
        .arg("restore")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "restore {args:?} ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The surfaces of a `crash-resume --json restore` output (`stdout`), by id; checks that it is
/// a version 1 plan.
pub fn plan_by_surface(stdout: &[u8]) -> std::collections::BTreeMap<String, Value> {
    let document: Value = serde_json::from_slice(stdout).unwrap();
    assert_eq!(document["version"], 1, "{document}");
    document["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["surface"].as_str().unwrap().to_string(), item.clone()))
        .collect()
}

/// What one run of the hook did.
pub use test_support::process::{Ran as HookRun, run_with_stdin, spawn_piped};
pub use test_support::sandbox::mkfifo;

/// Runs `crash-resume hook <agent>` with `payload` on stdin (closed after it) and the extra
/// variables `vars` (an empty value removes the variable).
pub fn run_hook(env: &Sandbox, agent: &str, vars: &[(&str, &str)], payload: &str) -> HookRun {
    let mut command = crash_resume_agent(env);
    command.args(["hook", agent]);
    run_with_stdin(with_vars(command, vars), payload)
}

/// Sets each of `vars` on `command`, or removes it when its value is empty.
pub fn with_vars(mut command: Command, vars: &[(&str, &str)]) -> Command {
    for (name, value) in vars {
        if value.is_empty() {
            command.env_remove(name);
        } else {
            command.env(name, value);
        }
    }
    command
}

/// A Claude Code hook payload: the fields every event carries, plus `extra` (`source`,
/// `reason`, `prompt`, ...).
pub fn claude_payload(event: &str, session: &str, cwd: &Path, extra: Value) -> String {
    let mut payload = json!({
        "session_id": session,
        "transcript_path": format!("/unused/projects/x/{session}.jsonl"),
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
    });
    if let (Some(payload), Value::Object(extra)) = (payload.as_object_mut(), extra) {
        payload.extend(extra);
    }
    payload.to_string()
}

/// `SessionStart` with `source`.
pub fn session_start(session: &str, cwd: &Path, source: &str) -> String {
    claude_payload("SessionStart", session, cwd, json!({ "source": source }))
}

/// `SessionEnd` with `reason`.
pub fn session_end(session: &str, cwd: &Path, reason: &str) -> String {
    claude_payload("SessionEnd", session, cwd, json!({ "reason": reason }))
}

/// `hook.log` beside the sandbox's index ("" when there is none).
pub fn hook_log(env: &Sandbox) -> String {
    fs::read_to_string(env.index_dir().join("hook.log")).unwrap_or_default()
}

/// A session id in the form Claude Code gives them (a v4 UUID), distinct per `n`.
pub fn uuid(n: u32) -> String {
    format!(
        "{n:08x}-7e57-4c1a-9d2b-{:012x}",
        0x00c0_ffee_0000_u64 + u64::from(n)
    )
}

/// Waits until no hook's background retry on this sandbox's index runs (a hook that did not get
/// the lock within its 2 s hands its record to one): the processes whose environment marks
/// them as a retry (`CRASH_RESUME_HOOK_RETRY`) on this index.
pub fn wait_for_hook_retries(env: &Sandbox) {
    let mut index = OsString::from("CRASH_RESUME_INDEX_PATH=");
    index.push(env.index_path());
    let is_retry = |environ: &[OsString]| {
        environ
            .iter()
            .any(|variable| variable == "CRASH_RESUME_HOOK_RETRY=1")
            && environ.contains(&index)
    };
    wait_until("the hooks' background retries to finish", || {
        let running = test_support::process::all_pids().into_iter().any(|pid| {
            test_support::process::environment(pid).is_some_and(|environ| is_retry(&environ))
        });
        (!running).then_some(())
    });
}

/// Makes `dir` (and its parents).
pub fn make_dir(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap_or_else(|error| panic!("create {}: {error}", dir.display()));
    dir.to_path_buf()
}

/// A working dir `<sandbox>/work/<repo>/<sub>` inside a git checkout named `repo` (a `.git`
/// dir at `<sandbox>/work/<repo>`, close to the working dir, so that a git repo the sandbox
/// itself may sit in does not count).
pub fn git_work_dir(env: &Sandbox, repo: &str, sub: &str) -> PathBuf {
    let top = env.root().join("work").join(repo);
    make_dir(&top.join(".git"));
    if sub.is_empty() {
        top
    } else {
        make_dir(&top.join(sub))
    }
}

/// Writes a transcript for `session` where Claude Code keeps it for `cwd` under `config_dir`,
/// with a user and an assistant line, last modified `age` ago. Returns its path.
pub fn write_transcript(config_dir: &Path, cwd: &Path, session: &str, age: Duration) -> PathBuf {
    let path = preflight::claude_transcript_path(
        config_dir.to_str().unwrap(),
        cwd.to_str().unwrap(),
        session,
        None,
    )
    .expect("a UUID session has a transcript path");
    let path = PathBuf::from(path.into_string());
    make_dir(path.parent().unwrap());
    let user_uuid = "5a1e0000-0000-4000-8000-000000000001";
    let user = ClaudeLine {
        session,
        cwd,
        uuid: user_uuid,
        parent: None,
        timestamp: "2026-11-30T10:00:00.000Z",
    };
    let assistant = ClaudeLine {
        uuid: "5a1e0000-0000-4000-8000-000000000002",
        parent: Some(user_uuid),
        timestamp: "2026-11-30T10:00:02.000Z",
        ..user
    };
    let lines = [
        user.user("hi"),
        assistant.assistant("msg_01", "Hello! What shall we work on?"),
    ];
    fs::write(&path, jsonl(&lines)).expect("write the transcript");
    let file = fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - age)
        .expect("set the transcript's mtime");
    path
}

/// The file the stand-in `claude` appends one line to each time it runs.
pub fn claude_runs_path(env: &Sandbox) -> PathBuf {
    env.root().join("claude-runs.log")
}

/// Installs a stand-in `claude` in the sandbox's `bin`: it appends the pane it runs in, its
/// working dir, the dir the shell was in before (`OLDPWD`), its config dir, the surface its
/// environment names (`CRASH_RESUME_SURFACE`) and its arguments to [`claude_runs_path`], and
/// exits.
pub fn install_claude_stand_in(env: &Sandbox) {
    write_claude_stand_in(env, "");
}

/// Like [`install_claude_stand_in`], but the stand-in then fires the real SessionStart hook for
/// the session it was asked to resume, as Claude Code does, and stays (as `sleep`), so the
/// pane's process shows that it runs.
pub fn install_claude_stand_in_that_stays(env: &Sandbox) {
    write_claude_stand_in(
        env,
        &format!(
            "[ \"$1\" = --resume ] && printf '{{\"session_id\":\"%s\",\"cwd\":\"%s\",\
             \"hook_event_name\":\"SessionStart\",\"source\":\"resume\"}}' \"$2\" \"$PWD\" \
             | {} hook claude\nexec sleep 600\n",
            shell_word(BIN)
        ),
    );
}

fn write_claude_stand_in(env: &Sandbox, then: &str) {
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"pane=${{TMUX_PANE-}} pwd=$PWD oldpwd=${{OLDPWD-}} \
         config=${{CLAUDE_CONFIG_DIR-}} surface=${{CRASH_RESUME_SURFACE-}} args=$*\" >> '{}'\n{then}",
        claude_runs_path(env).display()
    );
    let path = bin_dir(env).join("claude");
    make_dir(&bin_dir(env));
    fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
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
    let started = Instant::now();
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(
            started.elapsed() < deadline,
            "gave up after {deadline:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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

/// The command `restore` and `resume-cmd` give for a Claude session in `cwd` with the sandbox's
/// config dir.
pub fn claude_resume_command(env: &Sandbox, cwd: &Path, session: &str) -> String {
    format!(
        "cd {} && CLAUDE_CONFIG_DIR={} claude --resume {session}",
        shell_word(cwd.to_str().unwrap()),
        shell_word(claude_dir(env).to_str().unwrap())
    )
}

/// One pane of a tmux layout: `tmux:<session>:<window>.<pane>`, started in `dir`.
#[derive(Debug, Clone)]
pub struct PanePlace {
    pub session: String,
    pub window: u32,
    pub pane: u32,
}

impl PanePlace {
    pub fn new(session: &str, window: u32, pane: u32) -> PanePlace {
        PanePlace {
            session: session.to_string(),
            window,
            pane,
        }
    }

    pub fn surface(&self) -> String {
        mux::tmux::TmuxPane {
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
            let arguments = test_support::process::command_line(pid)?;
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
        self.tmpdir
            .join(format!("tmux-{}", rustix::process::getuid().as_raw()))
            .join(&self.name)
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
            .args(["-L", &self.name, "-f", "/dev/null"])
            .stdin(Stdio::null());
        command
    }

    /// `tmux ARGS` against this server, which must succeed; its stdout, trimmed.
    pub fn tmux(&self, args: &[&str]) -> String {
        self.try_tmux(args)
            .unwrap_or_else(|error| panic!("{error}"))
    }

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

    /// Types `line` into the pane's shell and waits until it has run: the line signals a
    /// `tmux wait-for` channel when done.
    pub fn run_in_pane(&self, target: &str, line: &str) {
        static CHANNELS: AtomicUsize = AtomicUsize::new(0);
        let channel = format!("done-{}", CHANNELS.fetch_add(1, Ordering::Relaxed));
        let mut waiter = self
            .client()
            .args(["wait-for", &channel])
            .spawn()
            .expect("spawn tmux wait-for");
        self.type_line(target, &format!("{line}; tmux wait-for -S {channel}"));
        let status = wait_until(&format!("the line typed into {target} to run"), || {
            waiter.try_wait().expect("poll tmux wait-for")
        });
        assert!(status.success(), "tmux wait-for {channel}: {status}");
    }

    /// Runs `crash-resume hook claude` in the pane's shell, as Claude Code runs it there, with
    /// `payload` on stdin; checks that it exited 0 and printed nothing.
    pub fn run_hook_in_pane(&self, env: &Sandbox, target: &str, payload: &str) {
        self.run_hook_in_pane_under(env, target, "", payload);
    }

    /// [`TmuxServer::run_hook_in_pane`], the hook started by the shell words `launcher` (a
    /// program that runs its arguments as a child; none when empty).
    pub fn run_hook_in_pane_under(
        &self,
        env: &Sandbox,
        target: &str,
        launcher: &str,
        payload: &str,
    ) {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let file = |suffix: &str| env.root().join(format!("pane-hook-{n}.{suffix}"));
        fs::write(file("json"), payload).unwrap();
        let path = |suffix: &str| shell_word(file(suffix).to_str().unwrap());
        self.run_in_pane(
            target,
            &format!(
                "{launcher} {} hook claude < {} > {} 2> {}; echo $? > {}",
                shell_word(BIN),
                path("json"),
                path("out"),
                path("err"),
                path("rc"),
            ),
        );
        let read = |suffix: &str| fs::read_to_string(file(suffix)).unwrap();
        assert_eq!(read("rc"), "0\n", "the hook in {target} exits 0");
        assert_eq!(
            read("out"),
            "",
            "the hook in {target} prints nothing on stdout"
        );
        assert_eq!(
            read("err"),
            "",
            "the hook in {target} prints nothing on stderr"
        );
    }

    /// Types `line` and Enter into the pane.
    pub fn type_line(&self, target: &str, line: &str) {
        self.tmux(&["send-keys", "-t", target, "-l", line]);
        self.tmux(&["send-keys", "-t", target, "Enter"]);
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
            (crate::process_state(pid) == Some('T')).then_some(())
        });
        stopped
    }

    /// Kills the server and waits until its process is gone, as a crash would leave it.
    pub fn kill_and_wait(&self) {
        let pid = self.pid();
        self.tmux(&["kill-server"]);
        wait_until("the tmux server to exit", || {
            matches!(crate::process_state(pid), None | Some('Z')).then_some(())
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

/// A unique server name for this test process.
pub fn server_name(test: &str) -> String {
    format!("cr-{test}-{}", std::process::id())
}
