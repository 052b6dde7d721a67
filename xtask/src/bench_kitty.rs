//! What `cargo xtask bench-cli --only kitty-restore` measures: `restore --apply kitty` of 10
//! surfaces into a live kitty (0.26 under `xvfb-run`, its config and XDG dirs in the sandbox),
//! timed apart from kitty's own start (from spawning it until its socket answers `ls`). Each
//! run starts a kitty of its own, checks that the restore opened one window per surface, and
//! kills that kitty's process group. `bench_cli` prints the figures and holds them to
//! [`BUDGET`].

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use camino::{Utf8Path, Utf8PathBuf};
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};
use test_support::sandbox::Sandbox;
use test_support::world::poll_until;

use crate::kitty::Kitty;

/// How many surfaces one restore opens.
pub const SURFACES: usize = 10;

/// The most a restore of [`SURFACES`] may take beyond kitty's own start.
pub const BUDGET: Duration = Duration::from_secs(2);

/// What the runs measured: kitty's own start and the restore, per run.
#[derive(Debug, Default)]
pub struct Measured {
    pub starts: Vec<Duration>,
    pub restores: Vec<Duration>,
}

/// `runs` restores of [`SURFACES`] surfaces, each into a kitty of its own, in a sandbox of the
/// test world of its own.
pub fn measure(binary: &Utf8Path, runs: usize) -> Result<Measured> {
    let mut measured = Measured::default();
    for run in 0..runs {
        let sandbox = Sandbox::default();
        let dir = Utf8PathBuf::from_path_buf(sandbox.root().to_path_buf())
            .map_err(|path| anyhow::anyhow!("the sandbox dir {} is not UTF-8", path.display()))?;
        let (index, work) = index_of_surfaces(&dir)?;
        // A socket path must stay short (108 bytes): the system's temp dir, not the sandbox.
        let socket = std::env::temp_dir().join(format!(
            "crash-resume-bench-kitty-{}-{run}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&socket);
        for sub in ["home", "config", "cache", "data", "run", "kitty"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        let mut xvfb_run = Command::new("xvfb-run");
        xvfb_run
            .env("HOME", dir.join("home"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_RUNTIME_DIR", dir.join("run"))
            .env("KITTY_CONFIG_DIRECTORY", dir.join("kitty"));
        let started = Instant::now();
        let kitty = Kitty::start(xvfb_run, &socket, None)?;
        measured.starts.push(started.elapsed());
        let address = kitty.address();
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
        // kitty shows a new window's environment once its process has started (`ls` reads
        // it from /proc), a few milliseconds after `launch` answered.
        poll_until(
            Duration::from_secs(10),
            &format!("the restore's {SURFACES} tagged windows"),
            || {
                let tagged = kitty
                    .windows()?
                    .iter()
                    .filter(|window| window.tag.is_some())
                    .count();
                if tagged > SURFACES {
                    bail!("the restore opened {tagged} tagged windows, not {SURFACES}");
                }
                Ok(tagged == SURFACES)
            },
        )?;
        drop(kitty);
        let _ = std::fs::remove_file(&socket);
    }
    Ok(measured)
}

/// An index of [`SURFACES`] kitty windows of an instance that is gone (recorded under pid 1,
/// which is never kitty), each with its Claude Code transcript, so each resumes into a new
/// window. Its path and the working dir.
fn index_of_surfaces(dir: &Utf8Path) -> Result<(Utf8PathBuf, Utf8PathBuf)> {
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
