//! What `cargo xtask bench-cli --only kitty-restore` measures: `restore --apply kitty` of 10
//! surfaces into a live kitty (0.26 under `xvfb-run`, its config and XDG dirs in the sandbox),
//! timed apart from kitty's own start (from spawning it until its socket answers `ls`). Each
//! run starts a kitty of its own, checks that the restore opened one window per surface, and
//! kills that kitty's process group. `bench_cli` prints the figures and holds them to
//! [`BUDGET`].

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use camino::Utf8Path;
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};

/// How many surfaces one restore opens.
pub const SURFACES: usize = 10;

/// The most a restore of [`SURFACES`] may take beyond kitty's own start.
pub const BUDGET: Duration = Duration::from_secs(2);

/// How long kitty may take to answer on its socket.
const START_DEADLINE: Duration = Duration::from_secs(30);

/// What the runs measured: kitty's own start and the restore, per run.
#[derive(Debug, Default)]
pub struct Measured {
    pub starts: Vec<Duration>,
    pub restores: Vec<Duration>,
}

/// `runs` restores of [`SURFACES`] surfaces, each into a kitty of its own.
pub fn measure(binary: &Utf8Path, sandbox: &Utf8Path, runs: usize) -> Result<Measured> {
    let mut measured = Measured::default();
    for run in 0..runs {
        let dir = sandbox.join(format!("kitty-{run}"));
        let (index, work) = index_of_surfaces(&dir)?;
        // A socket path must stay short (108 bytes): the system's temp dir, not the sandbox.
        let socket = std::env::temp_dir().join(format!(
            "crash-resume-bench-kitty-{}-{run}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&socket);
        let started = Instant::now();
        let kitty = KittyUnderXvfb::spawn(&dir, &socket)?;
        wait_for_socket(&socket)?;
        measured.starts.push(started.elapsed());
        let address = format!("unix:{}", socket.display());
        let started = Instant::now();
        let output = Command::new(binary)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", dir.join("home"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("CRASH_RESUME_INDEX_PATH", &index)
            .args(["restore", "--apply", "kitty", "--kitty-socket", &address])
            .current_dir(&work)
            .stdin(Stdio::null())
            .output()
            .context("cannot run crash-resume")?;
        measured.restores.push(started.elapsed());
        if !output.status.success() {
            bail!(
                "restore --apply kitty failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let windows = count_tagged_windows(&socket)?;
        if windows != SURFACES {
            bail!("the restore opened {windows} tagged windows, not {SURFACES}");
        }
        drop(kitty);
        let _ = std::fs::remove_file(&socket);
    }
    Ok(measured)
}

/// An index of [`SURFACES`] kitty windows of an instance that is gone (recorded under pid 1,
/// which is never kitty), each with its Claude Code transcript, so each resumes into a new
/// window. Its path and the working dir.
fn index_of_surfaces(dir: &Utf8Path) -> Result<(camino::Utf8PathBuf, camino::Utf8PathBuf)> {
    let work = dir.join("home/work");
    std::fs::create_dir_all(&work)?;
    let work = work.canonicalize_utf8()?;
    let config = dir.join("home/.claude");
    let index = dir.join("state/crash-resume/index.json");
    let project = preflight::claude::project_dir(&config, &work);
    std::fs::create_dir_all(&project)?;
    let store = Store::open(&index, StoreOptions::default())?;
    store.update(|index| {
        for n in 0..SURFACES {
            let mut record = Record::new(
                SurfaceId::new(format!("kitty:1:{}", n + 2)).expect("valid surface"),
                SessionId::new(session(n)).expect("valid session"),
                Repo::new("repo").expect("valid repo"),
            );
            record.cwd = Some(work.to_string());
            record.config_dir = Some(config.to_string());
            index.record(record, 1_700_000_000_000 + n as u64);
        }
    })?;
    for n in 0..SURFACES {
        std::fs::write(
            project.join(format!("{}.jsonl", session(n))),
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )?;
    }
    Ok((index, work))
}

fn session(n: usize) -> String {
    format!("{n:08x}-6b17-4c1a-9d2b-00c0ffee0000")
}

/// `xvfb-run -a kitty` in a process group of its own, killed with it when dropped.
struct KittyUnderXvfb(Child);

impl KittyUnderXvfb {
    fn spawn(dir: &Utf8Path, socket: &std::path::Path) -> Result<KittyUnderXvfb> {
        for sub in ["home", "config", "cache", "data", "run", "kitty"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        let child = Command::new("xvfb-run")
            .args(["-a", "kitty", "--config", "NONE"])
            .args(["-o", "allow_remote_control=yes"])
            .args(["-o", "shell_integration=disabled"])
            .arg("--listen-on")
            .arg(format!("unix:{}", socket.display()))
            .env("HOME", dir.join("home"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_RUNTIME_DIR", dir.join("run"))
            .env("KITTY_CONFIG_DIRECTORY", dir.join("kitty"))
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context(
                "cannot run xvfb-run: install kitty and Xvfb (apt-get install -y kitty xvfb)",
            )?;
        Ok(KittyUnderXvfb(child))
    }
}

impl Drop for KittyUnderXvfb {
    fn drop(&mut self) {
        if let Some(group) = rustix::process::Pid::from_raw(self.0.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.0.wait();
    }
}

/// Waits until kitty answers `ls` on its socket.
fn wait_for_socket(socket: &std::path::Path) -> Result<()> {
    let started = Instant::now();
    while call(socket, "ls").is_err() {
        if started.elapsed() > START_DEADLINE {
            bail!(
                "kitty did not answer on {} within {START_DEADLINE:?}",
                socket.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// One remote control command without a payload: its `data`.
fn call(socket: &std::path::Path, command: &str) -> Result<serde_json::Value> {
    let mut stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let request = serde_json::json!({"cmd": command, "version": [0, 26, 0]});
    stream.write_all(format!("\x1bP@kitty-cmd{request}\x1b\\").as_bytes())?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 65536];
    while !answer.ends_with(b"\x1b\\") {
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            bail!("kitty closed the socket");
        }
        answer.extend_from_slice(&chunk[..read]);
    }
    let body = answer
        .strip_prefix(b"\x1bP@kitty-cmd")
        .and_then(|rest| rest.strip_suffix(b"\x1b\\"))
        .context("kitty answered outside its protocol")?;
    let mut answer: serde_json::Value = serde_json::from_slice(body)?;
    if answer["ok"] != true {
        bail!("kitty refused `{command}`");
    }
    Ok(answer["data"].take())
}

/// How many windows carry a surface (`CRASH_RESUME_KITTY_WINDOW`); nothing else of their
/// environment is read.
fn count_tagged_windows(socket: &std::path::Path) -> Result<usize> {
    let listing = call(socket, "ls")?;
    let os_windows: serde_json::Value =
        serde_json::from_str(listing.as_str().context("ls answered no text")?)?;
    let mut count = 0;
    for os_window in os_windows.as_array().into_iter().flatten() {
        for tab in os_window["tabs"].as_array().into_iter().flatten() {
            for window in tab["windows"].as_array().into_iter().flatten() {
                if window["env"][mux::kitty::TAG_VARIABLE].is_string() {
                    count += 1;
                }
            }
        }
    }
    Ok(count)
}
