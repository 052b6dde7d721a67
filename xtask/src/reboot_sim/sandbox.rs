//! The sandbox: one directory under the build dir (never `/tmp`: the index refuses volatile
//! locations) holding a `HOME`, the XDG state and config dirs, a Claude config dir, the
//! binaries the panes run, the work dirs, and the private tmux server's socket dir. Every
//! process the simulation starts gets a clean environment that points only into it.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use test_support::process::{environment, is_alive};
use test_support::stand_in;
pub use test_support::stand_in::sh_quote;

/// The longest socket path a Unix socket address holds (108 bytes with the final NUL on Linux).
const MAX_SOCKET_PATH: usize = 100;

/// What the wrapper named `claude` in the sandbox's bin dir starts.
#[derive(Debug, Clone, Copy)]
pub enum Agent<'a> {
    /// The stand-in agent (test-support's `stand-in-agent`, in its `claude` mode).
    StandIn,
    /// The real Claude Code CLI, driven offline by the stand-in (its `--real-cli` option),
    /// with `env` (`real::offline_env`) exported.
    Real {
        cli: &'a Path,
        env: &'a [(&'static str, String)],
    },
}

#[derive(Debug)]
pub struct Sandbox {
    pub root: PathBuf,
    pub home: PathBuf,
    pub claude_dir: PathBuf,
    pub bin: PathBuf,
    pub work: PathBuf,
    /// What a reboot wipes: the tmux socket dir (`TMUX_TMPDIR`) and `TMPDIR`.
    pub volatile: PathBuf,
    /// The private tmux server's name (`tmux -L`).
    pub socket: String,
}

impl Sandbox {
    /// Creates `<base>/<run id>/` (base: `<target>/reboot-sim`, see
    /// `crate::workspace::sandbox_base`) with
    /// its dirs and binaries: a copy of the release `crash-resume`, a copy of the stand-in
    /// agent, and the `claude` wrapper.
    pub fn create(base: &Path, crash_resume: &Path) -> Result<Sandbox> {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let run_id = format!("{started}-{}", std::process::id());
        let root = base.join(&run_id);
        fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
        let root = root
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", root.display()))?;
        let home = root.join("home");
        let sandbox = Sandbox {
            claude_dir: home.join(".claude-sim"),
            bin: root.join("bin"),
            work: root.join("work"),
            volatile: root.join("run"),
            socket: format!("rs{}", std::process::id()),
            home,
            root,
        };
        for dir in [
            &sandbox.home,
            &sandbox.claude_dir,
            &sandbox.bin,
            &sandbox.work,
            &sandbox.state_dir(),
            &sandbox.config_dir(),
        ] {
            create_dir(dir)?;
        }
        sandbox.create_volatile()?;
        let socket_path = sandbox.socket_path();
        if socket_path.as_os_str().len() > MAX_SOCKET_PATH {
            bail!(
                "the tmux socket path {} is too long for a Unix socket; use a shorter build dir \
                 (CARGO_TARGET_DIR)",
                socket_path.display()
            );
        }
        // Copies, not links: a rebuild during the run cannot swap the binaries under the panes.
        copy_executable(crash_resume, &sandbox.bin.join("crash-resume"))?;
        let agent =
            stand_in::build(&crate::workspace::target_dir()?).map_err(anyhow::Error::msg)?;
        copy_executable(&agent, &sandbox.stand_in())?;
        sandbox.install_agent(Agent::StandIn)?;
        Ok(sandbox)
    }

    pub fn state_dir(&self) -> PathBuf {
        self.home.join(".local").join("state")
    }

    pub fn config_dir(&self) -> PathBuf {
        self.home.join(".config")
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.volatile.join("tmp")
    }

    /// Where the stand-in writes what it did, one JSON line per event.
    pub fn log_path(&self) -> PathBuf {
        self.home.join(stand_in::LOG_FILE)
    }

    /// The copy of the stand-in agent that the `claude` wrapper runs.
    fn stand_in(&self) -> PathBuf {
        self.bin.join("stand-in-claude")
    }

    fn socket_path(&self) -> PathBuf {
        test_support::tmux::socket_path(&self.volatile, &self.socket)
    }

    pub fn create_volatile(&self) -> Result<()> {
        create_dir(&self.tmp_dir())
    }

    /// Writes the `claude` wrapper.
    pub fn install_agent(&self, agent: Agent<'_>) -> Result<()> {
        let stand_in = sh_quote(&self.stand_in().to_string_lossy());
        let line = match agent {
            Agent::StandIn => format!("{stand_in} claude"),
            Agent::Real { cli, env } => {
                let offline = env
                    .iter()
                    .map(|(name, value)| format!("{name}={}", sh_quote(value)))
                    .collect::<Vec<_>>()
                    .join(" ");
                let cli = sh_quote(&cli.to_string_lossy());
                format!("env {offline} {stand_in} claude --real-cli {cli}")
            }
        };
        // (Nothing runs it while it is swapped: the panes are down or idle.)
        stand_in::write_wrapper(&self.bin, &line)
            .with_context(|| format!("cannot write {}", self.bin.join("claude").display()))
    }

    /// The whole environment of every process started here: nothing from the caller's.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            (
                "PATH",
                PathBuf::from(format!(
                    "{}:/usr/local/bin:/usr/bin:/bin",
                    self.bin.display()
                )),
            ),
            ("HOME", self.home.clone()),
            ("XDG_STATE_HOME", self.state_dir()),
            ("XDG_CONFIG_HOME", self.config_dir()),
            ("CLAUDE_CONFIG_DIR", self.claude_dir.clone()),
            ("TMUX_TMPDIR", self.volatile.clone()),
            ("TMPDIR", self.tmp_dir()),
            ("TERM", PathBuf::from("xterm-256color")),
            ("SHELL", PathBuf::from("/bin/bash")),
            ("LANG", PathBuf::from("C.UTF-8")),
            ("PS1", PathBuf::from("$ ")),
            ("GIT_CEILING_DIRECTORIES", self.root.clone()),
        ]
    }

    /// A command with the sandbox's environment only, stdin closed.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        command.env_clear().envs(self.env()).stdin(Stdio::null());
        command
    }

    /// Runs `crash-resume ARGS` (the release copy in the bin dir) to completion.
    pub fn crash_resume(&self, args: &[&str]) -> Result<Output> {
        let mut command = self.command(self.bin.join("crash-resume"));
        command.args(args).current_dir(&self.home);
        command
            .output()
            .with_context(|| format!("cannot run crash-resume {}", args.join(" ")))
    }

    /// `crash-resume ARGS`, which must succeed; its stdout.
    pub fn crash_resume_ok(&self, args: &[&str]) -> Result<String> {
        let output = self.crash_resume(args)?;
        if !output.status.success() {
            bail!(
                "crash-resume {} failed ({}): {}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// `tmux -L <socket> ARGS` against the private server; its stdout, trimmed.
    pub fn tmux(&self, args: &[&str]) -> Result<String> {
        let mut command = self.command("tmux");
        command.current_dir(&self.home);
        run_tmux(command, &self.socket, args)
    }

    /// Ends the private server, whichever generation runs (best effort: it may be gone).
    pub fn kill_server(&self) {
        let _ = self.tmux(&["kill-server"]);
    }

    /// Whether `pid` is alive and was started in this sandbox (its environment names this
    /// `HOME`): the guard that keeps the simulation from signalling anyone else's process.
    pub fn owns_live_process(&self, pid: u32) -> bool {
        if !is_alive(pid) {
            return false;
        }
        let mut needle = std::ffi::OsString::from("HOME=");
        needle.push(&self.home);
        environment(pid).is_some_and(|environ| environ.contains(&needle))
    }

    /// SIGKILLs each of `pids` that is alive and ours, then waits until all are gone.
    pub fn kill_all(&self, pids: &[u32], deadline: Duration) -> Result<()> {
        for &pid in pids {
            if self.owns_live_process(pid) {
                kill(pid);
            }
        }
        super::wait_until(deadline, "the killed processes to be gone", || {
            Ok(pids.iter().all(|&pid| !is_alive(pid)))
        })
    }
}

/// `tmux -L <socket> -f /dev/null ARGS` run from `command` (its environment and dir); its
/// stdout, trimmed.
pub fn run_tmux(command: Command, socket: &str, args: &[&str]) -> Result<String> {
    let client = test_support::tmux::private(command, socket);
    test_support::tmux::run(client, args).map_err(anyhow::Error::msg)
}

/// SIGKILL, by pid (errors ignored: the process may have exited).
pub fn kill(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

pub fn create_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

fn copy_executable(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    set_executable(to)
}

fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}
