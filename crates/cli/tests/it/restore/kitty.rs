//! `crash-resume restore --apply kitty` against a real kitty (0.26, under `xvfb-run`, its
//! config and every XDG dir in the sandbox, remote control on a socket of the sandbox): agents
//! bound through the real hook in kitty windows, one window closed, kitty killed with SIGKILL
//! and started again (its window ids start at 1 again), then each session back in a window of
//! its own exactly once, a busy window untouched, and a second restore that starts nothing; in
//! a kitty still running, an idle shell's window replaced by the agent, a busy one left alone,
//! and a surface recorded without its instance opened in a new window with its hostile dir
//! reaching kitty inert; a second kitty started from a restored window's shell (with its
//! environment, the tag among it), each of whose agents is recorded under its own window and
//! none started twice by a restore there. Compiled with the `live-kitty` feature (`cargo xtask test` enables
//! it); they fail, never skip, when kitty or xvfb-run is missing.
//!
//! The tests talk to kitty through its socket protocol themselves, and never print a window's
//! environment (`ls` shows it).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal};
use serde_json::{Value, json};

use crate::Sandbox;
use crate::harness::{
    PANE_SHELL, agent_command, claude_dir, claude_runs, crash_resume_agent,
    install_claude_stand_in_that_stays, make_dir, plan_by_surface, session_start, shell_word, uuid,
    wait_until, write_transcript,
};
use crate::{BIN, process_state};

const HOUR: Duration = Duration::from_secs(3600);

/// A kitty under its own `xvfb-run`, in its own process group (killed with it at the end).
struct Kitty {
    runner: Option<Child>,
    socket: PathBuf,
}

impl Kitty {
    /// Starts kitty listening on `socket` and waits until it answers. A socket file left by a
    /// kitty that was killed is removed first: kitty cannot bind over it.
    fn start(env: &Sandbox, socket: &Path) -> Kitty {
        let mut runner = agent_command(env, "xvfb-run");
        runner.args(["-a", "kitty"]);
        Kitty::spawn(env, runner, socket, "kitty.log")
    }

    /// Starts a kitty as a shell in a window would, with `environ` (the window's process's
    /// environment) as its whole environment: on the first kitty's X display, carrying every
    /// variable of the window, the window's tag and kitty's own among them.
    fn start_from(env: &Sandbox, socket: &Path, environ: Vec<(OsString, OsString)>) -> Kitty {
        let mut runner = std::process::Command::new("kitty");
        runner.env_clear().envs(environ);
        Kitty::spawn(env, runner, socket, "kitty-from-window.log")
    }

    fn spawn(env: &Sandbox, mut runner: std::process::Command, socket: &Path, log: &str) -> Kitty {
        assert!(
            socket.as_os_str().len() < 100,
            "the socket path is too long for a unix socket: {}",
            socket.display()
        );
        let _ = fs::remove_file(socket);
        let log = fs::File::create(env.root().join(log)).unwrap();
        let runner = runner
            .args(["--config", "NONE"])
            .args(["-o", "allow_remote_control=yes"])
            .args(["-o", "shell_integration=disabled"])
            .args(["-o", &format!("shell={PANE_SHELL}")])
            .arg("--listen-on")
            .arg(format!("unix:{}", socket.display()))
            .env("KITTY_CONFIG_DIRECTORY", env.config_home().join("kitty"))
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| {
                panic!("cannot run kitty ({error}): install kitty and Xvfb (apt-get install -y kitty xvfb)")
            });
        let kitty = Kitty {
            runner: Some(runner),
            socket: socket.to_path_buf(),
        };
        wait_until("kitty to answer on its socket", || {
            kitty.call("ls", &json!({})).ok()
        });
        kitty
    }

    fn address(&self) -> String {
        format!("unix:{}", self.socket.display())
    }

    /// One remote control command: its `data`, or its error.
    fn call(&self, command: &str, payload: &Value) -> Result<Value, String> {
        let mut stream = UnixStream::connect(&self.socket).map_err(|error| error.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let request = json!({"cmd": command, "version": [0, 26, 0], "payload": payload});
        let message = format!("\x1bP@kitty-cmd{request}\x1b\\");
        stream
            .write_all(message.as_bytes())
            .map_err(|error| error.to_string())?;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 65536];
        while !answer.ends_with(b"\x1b\\") {
            let read = stream.read(&mut chunk).map_err(|error| error.to_string())?;
            if read == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..read]);
        }
        let body = answer
            .strip_prefix(b"\x1bP@kitty-cmd")
            .and_then(|rest| rest.strip_suffix(b"\x1b\\"))
            .ok_or_else(|| format!("not kitty's protocol ({} bytes)", answer.len()))?;
        let mut answer: Value = serde_json::from_slice(body).map_err(|error| error.to_string())?;
        if answer["ok"] == true {
            Ok(answer["data"].take())
        } else {
            Err(answer["error"].as_str().unwrap_or("no message").to_string())
        }
    }

    /// Every window: its id, the process kitty started in it, what runs in its foreground,
    /// the surface its tag (`CRASH_RESUME_KITTY_WINDOW`) names when the tag was made for this
    /// window of this kitty, and its tab. Nothing else of its environment is kept.
    fn windows(&self) -> Vec<Window> {
        // Every variable: `ls` leaves out the ones every window shares otherwise.
        let listing = self
            .call("ls", &json!({"all_env_vars": true}))
            .expect("kitty ls");
        let os_windows: Value = serde_json::from_str(listing.as_str().unwrap()).unwrap();
        let mut windows = Vec::new();
        for os_window in os_windows.as_array().unwrap() {
            for tab in os_window["tabs"].as_array().unwrap() {
                for window in tab["windows"].as_array().unwrap() {
                    let foreground = window["foreground_processes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|process| process["cmdline"].as_array()?.first()?.as_str())
                        .map(|program| program.rsplit('/').next().unwrap().to_string())
                        .collect();
                    let id = window["id"].as_u64().unwrap();
                    let tag = window["env"]["CRASH_RESUME_KITTY_WINDOW"]
                        .as_str()
                        .zip(window["env"]["KITTY_PID"].as_str())
                        .and_then(|(tag, kitty)| {
                            mux::kitty::bound_surface(tag, kitty, &id.to_string())
                        })
                        .map(|surface| surface.to_string());
                    windows.push(Window {
                        id,
                        pid: window["pid"].as_u64().unwrap() as u32,
                        foreground,
                        tag,
                        tab: tab["id"].as_u64().unwrap(),
                    });
                }
            }
        }
        windows
    }

    /// Opens a window running `args` in `cwd`; its id.
    fn launch(&self, cwd: &Path, args: &[&str]) -> u64 {
        let id = self
            .call(
                "launch",
                &json!({"args": args, "cwd": cwd, "type": "window", "keep_focus": true}),
            )
            .expect("kitty launch");
        id.as_str().unwrap().parse().unwrap()
    }

    /// kitty's own pid: the parent of its windows' processes.
    fn pid(&self) -> u32 {
        let window = self.windows()[0].pid;
        test_support::process::parent_of(window).expect("the parent of a kitty window")
    }

    /// Kills kitty with SIGKILL and waits until it is gone.
    fn kill_kitty(&self) {
        let pid = self.pid();
        rustix::process::kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::KILL).unwrap();
        wait_until("the killed kitty to be gone", || {
            matches!(process_state(pid), None | Some('Z')).then_some(())
        });
    }

    /// Waits until window `id` shows an idle prompt (a line ends in `$ `, or `# ` for root).
    fn wait_for_prompt(&self, id: u64) {
        wait_until(&format!("window {id} to show its prompt"), || {
            let text = self
                .call("get-text", &json!({"match": format!("id:{id}")}))
                .ok()?;
            text.as_str()?
                .lines()
                .any(|line| line.ends_with("$ ") || line.ends_with("# "))
                .then_some(())
        });
    }
}

impl Drop for Kitty {
    fn drop(&mut self) {
        if let Some(mut runner) = self.runner.take() {
            let group = Pid::from_raw(runner.id() as i32).unwrap();
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
            let _ = runner.wait();
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Window {
    id: u64,
    pid: u32,
    foreground: Vec<String>,
    tag: Option<String>,
    tab: u64,
}

/// The socket of the sandbox's kitty (short enough for a unix socket path).
fn socket(env: &Sandbox) -> PathBuf {
    env.root().join("kitty.sock")
}

/// `crash-resume --json restore --apply kitty --kitty-socket ADDR`: its exit code and plan.
fn restore_apply(env: &Sandbox, kitty: &Kitty) -> (i32, BTreeMap<String, Value>) {
    let output = crash_resume_agent(env)
        .args(["--json", "restore", "--apply", "kitty", "--kitty-socket"])
        .arg(kitty.address())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        plan_by_surface(&output.stdout),
    )
}

/// One run of the stand-in `claude`: the surface its environment named, where it ran, its
/// arguments.
fn runs(env: &Sandbox) -> Vec<(String, PathBuf, String)> {
    let mut runs: Vec<_> = claude_runs(env)
        .iter()
        .map(|line| {
            let field = |name: &str, next: Option<&str>| {
                let start = line.find(&format!("{name}=")).unwrap() + name.len() + 1;
                let end = next.map_or(line.len(), |next| line.find(&format!(" {next}=")).unwrap());
                line[start..end].to_string()
            };
            (
                field("surface", Some("args")),
                PathBuf::from(field("pwd", Some("oldpwd"))),
                field("args", None),
            )
        })
        .collect();
    runs.sort();
    runs
}

/// Records `surface` → `session` of Claude Code in `cwd`, its transcript an hour old.
fn record_session(env: &Sandbox, surface: &str, session: &str, cwd: &Path) {
    write_transcript(&claude_dir(env), cwd, session, HOUR);
    let recorded = crash_resume_agent(env)
        .args([
            "record",
            surface,
            session,
            "repo",
            "--provider",
            "claude",
            "--cwd",
        ])
        .arg(cwd)
        .arg("--config-dir")
        .arg(claude_dir(env))
        .output()
        .unwrap();
    assert!(recorded.status.success(), "record {surface}: {recorded:?}");
}

/// Agent `n`: a window of `kitty` (whose pid is `kitty_pid`) in which the real hook records
/// its session (as Claude Code's SessionStart runs it), then stays; its surface, dir, session
/// and window id, once the hook has recorded it.
fn hooked_agent(
    env: &Sandbox,
    kitty: &Kitty,
    kitty_pid: u32,
    n: u32,
) -> (String, PathBuf, String, u64) {
    let dir = make_dir(&env.root().join(format!("work/agent-{n}")));
    let session = uuid(n);
    write_transcript(&claude_dir(env), &dir, &session, HOUR);
    let hook = format!(
        "printf '%s' {} | {} hook claude; exec sleep 600",
        shell_word(&session_start(&session, &dir, "startup")),
        shell_word(BIN)
    );
    let id = kitty.launch(&dir, &["/bin/sh", "-c", &hook]);
    let surface = format!("kitty:{kitty_pid}:{id}");
    wait_until(&format!("the hook to record {surface}"), || {
        env.index_bytes()?;
        env.entry(&surface)
    });
    (surface, dir, session, id)
}

/// The environment of process `pid`, as it was started (`/proc/PID/environ`).
fn environ_of(pid: u32) -> Vec<(OsString, OsString)> {
    use std::os::unix::ffi::OsStrExt as _;
    let block = fs::read(format!("/proc/{pid}/environ")).unwrap();
    block
        .split(|byte| *byte == 0)
        .filter_map(|entry| {
            let at = entry.iter().position(|byte| *byte == b'=')?;
            let (name, value) = (&entry[..at], &entry[at + 1..]);
            Some((
                std::ffi::OsStr::from_bytes(name).to_os_string(),
                std::ffi::OsStr::from_bytes(value).to_os_string(),
            ))
        })
        .collect()
}

/// Every window a restore opens carries its tag, which everything started from the window
/// inherits: a kitty started from its shell passes it on to each of its windows. The tag
/// counts only in the window it was made for, so each agent in that kitty is recorded under
/// its own window (not all under the restored window's surface, all but one lost), and a
/// restore at that kitty (asking `ls` for every variable, which by default leaves out the ones
/// all its windows share) finds each of them busy and starts nothing twice. Two kittys run at
/// once, the second on the first one's display.
#[test]
fn a_kitty_started_from_a_restored_window_records_each_agent_under_its_own_window() {
    let env = Sandbox::default();
    install_claude_stand_in_that_stays(&env);
    let first = Kitty::start(&env, &socket(&env));
    let first_pid = first.pid();
    // A session of a kitty that is gone, restored into a new window of this one.
    let restored = "kitty:41:3".to_string();
    let restored_dir = make_dir(&env.root().join("work/restored"));
    record_session(&env, &restored, &uuid(9), &restored_dir);
    let (code, plan) = restore_apply(&env, &first);
    assert_eq!(code, 0, "{plan:#?}");
    assert_eq!(
        plan[&restored]["outcome"],
        json!({"outcome": "started", "created": [{"what": "window"}]})
    );
    let window = wait_until("the restored window to carry its tag", || {
        first
            .windows()
            .into_iter()
            .find(|window| window.tag.as_deref() == Some(restored.as_str()))
    });
    wait_until("the restored agent to start", || {
        (claude_runs(&env).len() == 1).then_some(())
    });

    // A kitty started from that window's shell, with its environment.
    let second = Kitty::start_from(
        &env,
        &env.root().join("kitty-2.sock"),
        environ_of(window.pid),
    );
    let second_pid = second.pid();
    assert_ne!(second_pid, first_pid);
    let agents: Vec<_> = (1..=2)
        .map(|n| hooked_agent(&env, &second, second_pid, n))
        .collect();
    // Each agent under its own window, and the restored window's entry still its own.
    for (surface, _, session, _) in &agents {
        assert_eq!(env.entry(surface).unwrap()["sessionId"], session.as_str());
    }
    assert_eq!(env.entry(&restored).unwrap()["sessionId"], uuid(9).as_str());
    assert_eq!(env.entries().len(), 3, "{:?}", env.entries());

    // The restored window's agent runs in the first kitty, which a restore at the second one
    // does not reach: its entry is forgotten, so what is left to restore is the second kitty's.
    let forgotten = crash_resume_agent(&env)
        .args(["forget", &restored])
        .output()
        .unwrap();
    assert!(forgotten.status.success(), "{forgotten:?}");
    let windows = second.windows();
    let (code, plan) = restore_apply(&env, &second);
    assert_eq!(code, 0, "{plan:#?}");
    for (surface, ..) in &agents {
        assert_eq!(
            plan[surface]["outcome"],
            json!({"outcome": "skipped", "reason": {"kind": "busy", "busy": {"kind": "program", "detail": "sleep"}}}),
            "{surface}: {plan:#?}"
        );
    }
    assert_eq!(claude_runs(&env).len(), 1, "nothing started twice");
    assert_eq!(second.windows().len(), windows.len(), "no window opened");
    drop(second);
}

#[test]
fn restore_after_a_kitty_crash_starts_each_agent_in_a_window_of_its_own_once() {
    let env = Sandbox::default();
    install_claude_stand_in_that_stays(&env);
    let first = Kitty::start(&env, &socket(&env));
    let first_pid = first.pid();
    // Four agents, each bound by the real hook run in its own window (as Claude Code's
    // SessionStart runs it), then staying.
    let agents: Vec<_> = (1..=4)
        .map(|n| hooked_agent(&env, &first, first_pid, n))
        .collect();
    // One window closed (its agent killed with it, its session not ended), then kitty killed.
    first
        .call(
            "close-window",
            &json!({"match": format!("id:{}", agents[1].3)}),
        )
        .unwrap();
    first.kill_kitty();
    drop(first);

    // kitty again: its window ids start at 1, and window 2 (an agent's id before) is busy.
    let second = Kitty::start(&env, &socket(&env));
    assert_ne!(second.pid(), first_pid);
    let busy = second.launch(env.root(), &["sleep", "600"]);
    assert_eq!(busy, 2, "kitty numbers its windows from 1 again");
    let busy_before = second
        .windows()
        .into_iter()
        .find(|window| window.id == busy);
    // Untouched: the same window, the same process in it (what its foreground shows may be
    // read half-way through kitty's look at /proc).
    let place = |window: Option<&Window>| window.map(|window| (window.id, window.pid, window.tab));

    let (code, plan) = restore_apply(&env, &second);
    assert_eq!(code, 0, "{plan:#?}");
    for (surface, ..) in &agents {
        assert_eq!(
            plan[surface]["outcome"],
            json!({"outcome": "started", "created": [{"what": "window"}]}),
            "{surface}"
        );
    }
    let expected: Vec<_> = {
        let mut expected: Vec<_> = agents
            .iter()
            .map(|(surface, dir, session, _)| {
                (surface.clone(), dir.clone(), format!("--resume {session}"))
            })
            .collect();
        expected.sort();
        expected
    };
    wait_until("each agent to start once", || {
        (claude_runs(&env).len() >= agents.len()).then_some(())
    });
    assert_eq!(runs(&env), expected);
    let windows = second.windows();
    for (surface, ..) in &agents {
        let tagged = windows
            .iter()
            .filter(|window| window.tag.as_deref() == Some(surface.as_str()))
            .count();
        assert_eq!(tagged, 1, "one window carries {surface}: {windows:#?}");
    }
    assert_eq!(
        place(windows.iter().find(|window| window.id == busy)),
        place(busy_before.as_ref()),
        "the busy window is untouched"
    );

    // A second restore starts nothing: each agent's window is busy with it.
    for (surface, ..) in &agents {
        wait_until(&format!("the agent of {surface} to run"), || {
            second
                .windows()
                .into_iter()
                .find(|window| window.tag.as_deref() == Some(surface.as_str()))?
                .foreground
                .contains(&"sleep".to_string())
                .then_some(())
        });
    }
    let (code, plan) = restore_apply(&env, &second);
    assert_eq!(code, 0, "{plan:#?}");
    for (surface, ..) in &agents {
        assert_eq!(plan[surface]["outcome"]["outcome"], "skipped", "{plan:#?}");
    }
    assert_eq!(runs(&env), expected, "nothing started twice");
    assert_eq!(second.windows().len(), windows.len(), "no window opened");
}

#[test]
fn in_a_running_kitty_an_idle_window_is_replaced_a_busy_one_left_and_an_old_id_opens_anew() {
    let env = Sandbox::default();
    install_claude_stand_in_that_stays(&env);
    let kitty = Kitty::start(&env, &socket(&env));
    let pid = kitty.pid();
    kitty.wait_for_prompt(1);
    let busy = kitty.launch(env.root(), &["sleep", "600"]);
    let idle_dir = make_dir(&env.root().join("work/idle"));
    let busy_dir = make_dir(&env.root().join("work/busy"));
    // A dir kitty or a shell would run something of, were it not passed inert.
    let hostile_dir = make_dir(&env.root().join("work/it's $(touch ran) `touch ran`; x"));
    let idle = format!("kitty:{pid}:1");
    let busy_surface = format!("kitty:{pid}:{busy}");
    record_session(&env, &idle, &uuid(1), &idle_dir);
    record_session(&env, &busy_surface, &uuid(2), &busy_dir);
    // Recorded before the instance was: window 1 may be another kitty's, so it is not taken.
    record_session(&env, "kitty:1", &uuid(3), &hostile_dir);
    let before = kitty.windows();
    let busy_before = before.iter().find(|window| window.id == busy).cloned();
    let place = |window: Option<&Window>| window.map(|window| (window.id, window.pid, window.tab));

    let (code, plan) = restore_apply(&env, &kitty);
    assert_eq!(code, 0, "{plan:#?}");
    assert_eq!(
        plan[&idle]["outcome"],
        json!({"outcome": "started", "created": []})
    );
    assert_eq!(
        plan[&busy_surface]["outcome"],
        json!({"outcome": "skipped", "reason": {"kind": "busy", "busy": {"kind": "program", "detail": "sleep"}}})
    );
    assert_eq!(
        plan["kitty:1"]["outcome"],
        json!({"outcome": "started", "created": [{"what": "window"}]})
    );
    wait_until("both agents to start", || {
        (claude_runs(&env).len() >= 2).then_some(())
    });
    let mut expected = vec![
        (idle.clone(), idle_dir, format!("--resume {}", uuid(1))),
        (
            "kitty:1".to_string(),
            hostile_dir.clone(),
            format!("--resume {}", uuid(3)),
        ),
    ];
    expected.sort();
    assert_eq!(runs(&env), expected);
    let after = kitty.windows();
    assert!(
        after.iter().all(|window| window.id != 1),
        "the idle window was replaced: {after:#?}"
    );
    let replacement = after
        .iter()
        .find(|window| window.tag.as_deref() == Some(idle.as_str()))
        .expect("the idle window's replacement carries its surface");
    assert_eq!(replacement.tab, before[0].tab, "in the idle window's tab");
    assert_eq!(
        place(after.iter().find(|window| window.id == busy)),
        place(busy_before.as_ref()),
        "the busy window is untouched"
    );
    assert!(
        !env.root().join("ran").exists() && !hostile_dir.join("ran").exists(),
        "nothing of the dir ran"
    );
}

/// `restore --apply kitty --once-per-boot` after kitty crashed in another boot: the stand-in
/// binds itself in one window, never in another, fails in the third; each is said so, the
/// failed one keeps its recorded session, every pane died of the reboot, and a second run in the
/// same boot restores nothing.
#[test]
fn once_per_boot_in_kitty_verifies_each_start_and_runs_once_per_boot() {
    let env = Sandbox::default();
    install_claude_stand_in_that_stays(&env);
    let first = Kitty::start(&env, &socket(&env));
    let first_pid = first.pid();
    let agents: Vec<_> = (1..=3)
        .map(|n| hooked_agent(&env, &first, first_pid, n))
        .collect();
    first.kill_kitty();
    drop(first);
    let second = Kitty::start(&env, &socket(&env));
    super::once_per_boot::install_wrapping_stand_in(&env, &agents[1].2, &agents[2].2, "none-late");
    let address = second.address();
    let once_into = |kitty: &Kitty, boot: &str| {
        let output = crash_resume_agent(&env)
            .env("CRASH_RESUME_BOOT_ID", boot)
            .args([
                "--json",
                "restore",
                "--apply",
                "kitty",
                "--once-per-boot",
                "--start-timeout",
                "3s",
                "--kitty-socket",
            ])
            .arg(kitty.address())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (output.status.code(), plan_by_surface(&output.stdout))
    };
    let once = |boot: &str| once_into(&second, boot);
    let (code, plan) = once("boot-after-the-crash");
    assert_eq!(code, Some(1), "one start failed: {plan:#?}");
    let outcome = |n: usize| plan[&agents[n].0]["outcome"].clone();
    assert_eq!(outcome(0)["verified"]["kind"], "bound", "{plan:#?}");
    assert_eq!(outcome(1)["outcome"], "started", "{plan:#?}");
    assert_eq!(outcome(1)["verified"]["kind"], "not_in_time", "{plan:#?}");
    assert_eq!(outcome(2)["outcome"], "failed", "{plan:#?}");
    assert_eq!(outcome(2)["reason"], "agent_exited", "{plan:#?}");
    for (surface, ..) in &agents {
        assert_eq!(plan[surface]["died"], "reboot", "{surface}");
    }
    assert_eq!(
        env.entry(&agents[2].0).unwrap()["sessionId"],
        agents[2].2.as_str(),
        "the failed start kept its session"
    );
    let (code, again) = once("boot-after-the-crash");
    assert_eq!(code, Some(0));
    assert!(again.is_empty(), "{again:#?}");
    // kitty crashes in this boot and is started again at the same address: another run of it,
    // which is restored again.
    second.kill_kitty();
    drop(second);
    let third = Kitty::start(&env, &socket(&env));
    assert_eq!(third.address(), address, "the same address");
    let (_, after_the_crash) = once_into(&third, "boot-after-the-crash");
    assert_eq!(
        after_the_crash[&agents[0].0]["outcome"]["verified"]["kind"], "bound",
        "{after_the_crash:#?}"
    );
}
