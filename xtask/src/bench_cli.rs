//! `cargo xtask bench-cli [--runs N]`: times the real release binary end to end, as an agent
//! start pays for it: `resume-cmd`, `lookup`, `record`, `hook claude` and `preflight` at 1k and
//! 10k entries (median and 95th percentile over repeated runs), 100 concurrent `record`
//! processes (wall time until all are done), and the `restore` plan as the index grows (1k to
//! 10k entries over 50 working dirs of 20 transcripts each). Prints Markdown tables for
//! BENCHMARKS.md.
//!
//! Everything runs in a sandbox under `target/bench-cli/` with its own HOME and config dirs.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use camino::{Utf8Path, Utf8PathBuf};
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};

pub fn run(args: &[String]) -> Result<()> {
    let mut runs = 50;
    let mut plan_only = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match (word.as_str(), words.clone().next()) {
            ("--runs", Some(n)) => {
                runs = n.parse().context("--runs takes a number")?;
                words.next();
            }
            ("--plan", _) => plan_only = true,
            _ => bail!("usage: cargo xtask bench-cli [--runs N] [--plan]"),
        }
    }
    let binary = Utf8PathBuf::from_path_buf(crate::workspace::build_release()?)
        .map_err(|path| anyhow::anyhow!("the build dir {} is not UTF-8", path.display()))?;
    let sandbox = Utf8PathBuf::from_path_buf(crate::workspace::sandbox_base("bench-cli")?)
        .map_err(|path| anyhow::anyhow!("the sandbox dir {} is not UTF-8", path.display()))?;
    let _ = std::fs::remove_dir_all(&sandbox);
    std::fs::create_dir_all(&sandbox)?;
    if plan_only {
        return plan_growth(&binary, &sandbox, runs.clamp(1, 10));
    }

    println!("| command | entries | median | p95 |");
    println!("|---|---:|---:|---:|");
    for size in [1_000usize, 10_000] {
        let bench = Bench::new(&binary, &sandbox.join(format!("n{size}")), size)?;
        let surface = surface(size / 2);
        let cases: [(&str, Vec<String>, Option<String>); 5] = [
            (
                "resume-cmd",
                vec!["resume-cmd".into(), surface.clone()],
                None,
            ),
            ("lookup", vec!["lookup".into(), surface.clone()], None),
            (
                "record",
                vec![
                    "record".into(),
                    surface.clone(),
                    session(size + 1),
                    "repo".into(),
                ],
                None,
            ),
            (
                "hook claude",
                vec!["hook".into(), "claude".into()],
                Some(format!(
                    r#"{{"session_id":"{}","cwd":"{}","hook_event_name":"SessionStart","source":"startup"}}"#,
                    // The hook's surface (CRASH_RESUME_SURFACE) is surface 0: its own session,
                    // so the probed surface keeps its entry.
                    session(0),
                    bench.work
                )),
            ),
            ("preflight", vec!["preflight".into(), surface.clone()], None),
        ];
        for (name, args, stdin) in cases {
            let times = bench.time(&args, stdin.as_deref(), runs)?;
            let (median, p95) = percentiles(&times);
            println!("| `{name}` | {size} | {} | {} |", ms(median), ms(p95));
        }
    }
    let bench = Bench::new(&binary, &sandbox.join("concurrent"), 1_000)?;
    let wall = bench.concurrent_records(100)?;
    println!(
        "\n100 concurrent `record` processes on a 1,000-entry index: all done in {}",
        ms(wall)
    );
    plan_growth(&binary, &sandbox, runs.clamp(1, 10))
}

/// The `restore` plan (no `--apply`) as the index grows: every entry's working dir is one of
/// 50, each dir's project folder holds 20 transcripts (the sessions of its first 20 entries),
/// so at 1,000 entries every entry resumes and beyond that the rest run the recovery scan.
fn plan_growth(binary: &Utf8Path, sandbox: &Utf8Path, runs: usize) -> Result<()> {
    const DIRS: usize = 50;
    const TRANSCRIPTS_PER_DIR: usize = 20;
    println!("\n| `restore` plan: entries | median | p95 | per entry |");
    println!("|---:|---:|---:|---:|");
    for size in [1_000usize, 2_000, 5_000, 10_000] {
        let dir = sandbox.join(format!("plan{size}"));
        let bench = Bench::new(binary, &dir, 0)?;
        let config = dir.join("home/.claude");
        let works: Vec<Utf8PathBuf> = (0..DIRS)
            .map(|n| {
                let work = dir.join(format!("home/work-{n}"));
                std::fs::create_dir_all(&work)?;
                Ok(work.canonicalize_utf8()?)
            })
            .collect::<Result<_>>()?;
        let store = Store::open(&bench.index, StoreOptions::default())?;
        store.update(|index| {
            for n in 0..size {
                let mut record = Record::new(
                    SurfaceId::new(surface(n)).expect("valid surface"),
                    SessionId::new(uuid(n)).expect("valid session"),
                    Repo::new(format!("repo-{}", n % DIRS)).expect("valid repo"),
                );
                record.cwd = Some(works[n % DIRS].to_string());
                record.config_dir = Some(config.to_string());
                index.record(record, 1_700_000_000_000 + n as u64);
            }
        })?;
        for n in 0..(DIRS * TRANSCRIPTS_PER_DIR).min(size) {
            let project = preflight::claude::project_dir(&config, &works[n % DIRS]);
            std::fs::create_dir_all(&project)?;
            std::fs::write(
                project.join(format!("{}.jsonl", uuid(n))),
                "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
            )?;
        }
        let times = bench.time(&["restore".to_string()], None, runs)?;
        let (median, p95) = percentiles(&times);
        println!(
            "| {size} | {} | {} | {:.1} µs |",
            ms(median),
            ms(p95),
            median.as_secs_f64() * 1e6 / size as f64
        );
    }
    Ok(())
}

fn surface(n: usize) -> String {
    format!("tmux:work:{}.{}", n / 8, n % 8)
}

fn session(n: usize) -> String {
    format!("4f6c2a1e-{n:012x}-4d7b-9a55-0b1c2d3e4f50")
}

/// A UUID session id, as Claude Code gives (the CLI looks a missing UUID up in every project
/// folder, so the plan pays for that too).
fn uuid(n: usize) -> String {
    format!("{n:08x}-7e57-4c1a-9d2b-00c0ffee0000")
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

fn percentiles(times: &[Duration]) -> (Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let at = |fraction: f64| sorted[((sorted.len() - 1) as f64 * fraction).round() as usize];
    (at(0.5), at(0.95))
}

struct Bench {
    binary: Utf8PathBuf,
    dir: Utf8PathBuf,
    index: Utf8PathBuf,
    work: Utf8PathBuf,
}

impl Bench {
    /// A sandbox with an index of `size` entries and a project folder holding the transcript of
    /// the probed surface's session.
    fn new(binary: &Utf8Path, dir: &Utf8Path, size: usize) -> Result<Bench> {
        let work = dir.join("home/work");
        std::fs::create_dir_all(&work)?;
        let work = work.canonicalize_utf8()?;
        let config = dir.join("home/.claude");
        let index = dir.join("state/crash-resume/index.json");
        let store = Store::open(&index, StoreOptions::default())?;
        store.update(|index| {
            for n in 0..size {
                let mut record = Record::new(
                    SurfaceId::new(surface(n)).expect("valid surface"),
                    SessionId::new(session(n)).expect("valid session"),
                    Repo::new(format!("repo-{}", n % 50)).expect("valid repo"),
                );
                record.cwd = Some(work.to_string());
                record.config_dir = Some(config.to_string());
                index.record(record, 1_700_000_000_000 + n as u64);
            }
        })?;
        let project = preflight::claude::project_dir(&config, &work);
        std::fs::create_dir_all(&project)?;
        std::fs::write(
            project.join(format!("{}.jsonl", session(size / 2))),
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )?;
        Ok(Bench {
            binary: binary.to_owned(),
            dir: dir.to_owned(),
            index,
            work,
        })
    }

    fn command(&self, args: &[String]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.join("home"))
            .env("XDG_CONFIG_HOME", self.dir.join("config"))
            .env("CRASH_RESUME_INDEX_PATH", &self.index)
            .env("CRASH_RESUME_SURFACE", surface(0))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    fn time(&self, args: &[String], stdin: Option<&str>, runs: usize) -> Result<Vec<Duration>> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let mut command = self.command(args);
            command.stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
            let started = Instant::now();
            let mut child = command.spawn()?;
            if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
                use std::io::Write;
                pipe.write_all(text.as_bytes())?;
            }
            let status = child.wait()?;
            times.push(started.elapsed());
            // resume-cmd and preflight answer 0 here; anything else is a broken benchmark.
            if !status.success() {
                bail!("crash-resume {} failed: {status}", args.join(" "));
            }
        }
        Ok(times)
    }

    fn concurrent_records(&self, count: usize) -> Result<Duration> {
        let started = Instant::now();
        let children: Vec<_> = (0..count)
            .map(|n| {
                let args = [
                    "record".to_string(),
                    format!("burst-{n}"),
                    format!("burst-session-{n}"),
                    "repo".into(),
                ];
                self.command(&args)
                    .env("CRASH_RESUME_LOCK_TIMEOUT", "30s")
                    .spawn()
            })
            .collect::<std::io::Result<_>>()?;
        for mut child in children {
            if !child.wait()?.success() {
                bail!("a concurrent record failed");
            }
        }
        Ok(started.elapsed())
    }
}
