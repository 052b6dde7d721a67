//! What the capture and restore tests share: the hook run through the real binary with a
//! payload on stdin, Claude Code's transcripts where the CLI keeps them, and the test world
//! (`test_support::world`: an agent's environment inside the sandbox, the stand-in `claude`, a
//! private tmux server, polling with a deadline) with the binary under test filled in.

use std::fs;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use test_support::transcript::{ClaudeLine, jsonl};
use test_support::world;
// Some are used only by the modules of the `real-cli` and `live-*` features.
#[allow(unused_imports)]
pub use test_support::world::{
    DEADLINE, OTHER_SERVER, PANE_SHELL, PanePlace, StoppedServer, agent_command, bin_dir,
    claude_dir, claude_runs, claude_runs_path, codex_home, install_claude_stand_in, make_dir,
    server_name, server_surface, shell_word, tmux_tmpdir, wait_until, wait_within,
};

use crate::{BIN, Sandbox};

/// Environment variables a case sets (an empty value removes one).
pub type Vars = &'static [(&'static str, &'static str)];

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
    let mut index = std::ffi::OsString::from("CRASH_RESUME_INDEX_PATH=");
    index.push(env.index_path());
    let is_retry = |environ: &[std::ffi::OsString]| {
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

/// The command `restore` and `resume-cmd` give for a Claude session in `cwd` with the sandbox's
/// config dir.
pub fn claude_resume_command(env: &Sandbox, cwd: &Path, session: &str) -> String {
    format!(
        "cd {} && CLAUDE_CONFIG_DIR={} claude --resume {session}",
        shell_word(cwd.to_str().unwrap()),
        shell_word(claude_dir(env).to_str().unwrap())
    )
}

/// [`world::install_claude_stand_in_that_stays`] with the binary under test as the hook.
pub fn install_claude_stand_in_that_stays(env: &Sandbox) {
    world::install_claude_stand_in_that_stays(env, Path::new(BIN));
}

/// The world's private tmux server ([`world::TmuxServer`], whose methods it has), plus the hook
/// of the binary under test run in a pane.
#[derive(Debug)]
pub struct TmuxServer(world::TmuxServer);

impl Deref for TmuxServer {
    type Target = world::TmuxServer;

    fn deref(&self) -> &world::TmuxServer {
        &self.0
    }
}

impl TmuxServer {
    /// [`world::TmuxServer::start`].
    pub fn start(env: &Sandbox, name: &str, layout: &[(PanePlace, PathBuf, &str)]) -> TmuxServer {
        TmuxServer(world::TmuxServer::start(env, name, layout))
    }

    /// [`world::TmuxServer::start_with`].
    pub fn start_with(
        env: &Sandbox,
        name: &str,
        layout: &[(PanePlace, PathBuf, &str)],
        vars: &[(&str, &str)],
    ) -> TmuxServer {
        TmuxServer(world::TmuxServer::start_with(env, name, layout, vars))
    }

    /// [`world::TmuxServer::named`].
    pub fn named(env: &Sandbox, name: &str) -> TmuxServer {
        TmuxServer(world::TmuxServer::named(env, name))
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
        let hook = format!("{launcher} {} hook claude", shell_word(BIN));
        self.run_silently_in_pane(env, target, &hook, payload);
    }
}
