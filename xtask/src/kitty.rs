//! A kitty for the xtasks that restore into one (`bench_kitty`, `reboot-sim --mux kitty`):
//! `xvfb-run -a kitty` with no config and remote control on a unix socket, in a process group
//! of its own that is killed when dropped, and a client of its remote control protocol written
//! to the socket directly. A window's environment (which `ls` shows, and which can hold
//! secrets) is never kept, beyond the surface a restore tags it with.

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// How long kitty may take to answer on its socket once spawned.
const START_DEADLINE: Duration = Duration::from_secs(30);

/// How long one command may take to answer.
const CALL_DEADLINE: Duration = Duration::from_secs(5);

/// A running kitty under its own Xvfb.
#[derive(Debug)]
pub struct Kitty {
    runner: Child,
    socket: PathBuf,
}

/// A window of `ls`, as far as the xtasks look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub id: u64,
    /// The process kitty started in it.
    pub pid: u32,
    pub tab: u64,
    /// The surface a restore opened it for (`mux::kitty::TAG_VARIABLE`, when the tag was made
    /// for this window of this kitty).
    pub tag: Option<String>,
    /// The base names of its foreground processes.
    pub foreground: Vec<String>,
}

impl Kitty {
    /// Runs `xvfb_run` (a `Command` of `xvfb-run` with the environment kitty is to have)
    /// as `xvfb-run -a kitty --config NONE` listening on `socket`, and waits until it answers.
    /// A socket file left there (by a kitty that was killed) is removed first: kitty cannot
    /// listen on it.
    pub fn start(mut xvfb_run: Command, socket: &Path, shell: Option<&str>) -> Result<Kitty> {
        let _ = std::fs::remove_file(socket);
        xvfb_run
            .args(["-a", "kitty", "--config", "NONE"])
            .args(["-o", "allow_remote_control=yes"])
            .args(["-o", "shell_integration=disabled"]);
        if let Some(shell) = shell {
            xvfb_run.args(["-o", &format!("shell={shell}")]);
        }
        let runner = xvfb_run
            .arg("--listen-on")
            .arg(format!("unix:{}", socket.display()))
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context(
                "cannot run xvfb-run: install kitty and Xvfb (apt-get install -y kitty xvfb)",
            )?;
        let kitty = Kitty {
            runner,
            socket: socket.to_path_buf(),
        };
        let started = Instant::now();
        while kitty.call("ls", &json!({})).is_err() {
            if started.elapsed() > START_DEADLINE {
                bail!(
                    "kitty did not answer on {} within {START_DEADLINE:?}",
                    socket.display()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(kitty)
    }

    /// The address `--kitty-socket` takes.
    pub fn address(&self) -> String {
        format!("unix:{}", self.socket.display())
    }

    /// One remote control command: its `data` (`Null` when it has none).
    pub fn call(&self, command: &str, payload: &Value) -> Result<Value> {
        let mut stream = UnixStream::connect(&self.socket)?;
        stream.set_read_timeout(Some(CALL_DEADLINE))?;
        stream.set_write_timeout(Some(CALL_DEADLINE))?;
        let request = json!({"cmd": command, "version": [0, 26, 0], "payload": payload});
        stream.write_all(format!("\x1bP@kitty-cmd{request}\x1b\\").as_bytes())?;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 65536];
        while !answer.ends_with(b"\x1b\\") {
            let read = stream.read(&mut chunk)?;
            if read == 0 {
                bail!("kitty closed the socket before answering `{command}`");
            }
            answer.extend_from_slice(&chunk[..read]);
        }
        let body = answer
            .strip_prefix(b"\x1bP@kitty-cmd")
            .and_then(|rest| rest.strip_suffix(b"\x1b\\"))
            .context("kitty answered outside its protocol")?;
        let mut answer: Value = serde_json::from_slice(body)?;
        if answer["ok"] != true {
            bail!(
                "kitty refused `{command}`: {}",
                answer["error"].as_str().unwrap_or("no message")
            );
        }
        Ok(answer["data"].take())
    }

    /// Every window of every tab (`ls` asked for every variable: by default it leaves out the
    /// ones all windows share).
    pub fn windows(&self) -> Result<Vec<Window>> {
        let listing = self.call("ls", &json!({"all_env_vars": true}))?;
        let os_windows: Value =
            serde_json::from_str(listing.as_str().context("ls answered no text")?)?;
        let mut windows = Vec::new();
        for os_window in os_windows.as_array().into_iter().flatten() {
            for tab in os_window["tabs"].as_array().into_iter().flatten() {
                for window in tab["windows"].as_array().into_iter().flatten() {
                    let foreground = window["foreground_processes"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|process| process["cmdline"].as_array()?.first()?.as_str())
                        .map(|program| program.rsplit('/').next().unwrap_or(program).to_string())
                        .collect();
                    let id = window["id"].as_u64().unwrap_or_default();
                    let tag = window["env"][mux::kitty::TAG_VARIABLE]
                        .as_str()
                        .zip(window["env"]["KITTY_PID"].as_str())
                        .and_then(|(tag, kitty)| {
                            mux::kitty::bound_surface(tag, kitty, &id.to_string())
                        })
                        .map(|surface| surface.to_string());
                    windows.push(Window {
                        id,
                        pid: window["pid"].as_u64().unwrap_or_default() as u32,
                        tab: tab["id"].as_u64().unwrap_or_default(),
                        tag,
                        foreground,
                    });
                }
            }
        }
        Ok(windows)
    }

    /// Opens a window running `args` in `cwd`; its id.
    pub fn launch(&self, cwd: &Path, args: &[&str]) -> Result<u64> {
        let id = self.call(
            "launch",
            &json!({"args": args, "cwd": cwd, "type": "window", "keep_focus": true}),
        )?;
        id.as_str()
            .and_then(|id| id.parse().ok())
            .context("kitty's launch answered no window id")
    }

    /// kitty's own pid: the parent of its windows' processes.
    pub fn pid(&self) -> Result<u32> {
        let window = self.windows()?.first().context("kitty has no window")?.pid;
        test_support::process::parent_of(window).context("the parent of a kitty window")
    }
}

impl Drop for Kitty {
    fn drop(&mut self) {
        if let Some(group) = rustix::process::Pid::from_raw(self.runner.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.runner.wait();
    }
}
