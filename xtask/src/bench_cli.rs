//! `cargo xtask bench-cli [--runs N]`: times the real release binary end to end, as an agent
//! start pays for it: `resume-cmd`, `lookup`, `record`, `hook claude` and `preflight` at 1k and
//! 10k entries (median and 95th percentile over repeated runs), `preflight` when the held
//! transcript is a 2 GiB sparse file (time, and peak memory through Python's `resource`), 100
//! concurrent `record` processes (wall time until all are done), the `restore` plan as the
//! index grows (1k to 10k entries over 50 working dirs of 20 transcripts each), and `hook
//! claude` as an agent in a real tmux pane runs it (the hook asks a private tmux server for the
//! pane's name) for each SessionStart source, `startup`, `clear` and `resume`, and for
//! `/clear`'s SessionEnd and SessionStart started together, and `restore --apply kitty` of 10
//! surfaces into a live kitty (`bench_kitty`). Prints Markdown tables for BENCHMARKS.md.
//!
//! Every measurement runs in a sandbox of its own with its own HOME and config dirs (the test
//! world's, `test_support::sandbox`, under the build dir), the hooks in a pane of the test
//! world's private tmux server; zellij runs under `target/bench-cli/`.

mod growth;
mod zellij_restore;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use camino::{Utf8Path, Utf8PathBuf};
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};
use test_support::sandbox::Sandbox;
use test_support::world::{PanePlace, TmuxServer};

const USAGE: &str = "usage: cargo xtask bench-cli [--runs N] [--binary PATH] [--plan | --check | --picture | --record-floor [--against PATH] | --only tmux-hook | --only kitty-restore | --only zellij-restore]";

pub fn run(args: &[String]) -> Result<()> {
    // The floor `--check` times `record` against, run by it as a process of its own.
    if let Some((first, rest)) = args.split_first()
        && first == growth::DURABLE_WRITE
    {
        return growth::durable_write(rest);
    }
    let mut runs = 50;
    let mut plan_only = false;
    let mut check = false;
    let mut picture = false;
    let mut record_floor = false;
    // With `--record-floor`: a build timed beside the other, in the same run.
    let mut against = None;
    // Another build to time instead of this tree's (an earlier commit's, for a before and after).
    let mut other_binary = None;
    let mut only_tmux_hook = false;
    let mut only_kitty_restore = false;
    let mut only_zellij = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match (word.as_str(), words.clone().next()) {
            ("--runs", Some(n)) => {
                runs = n.parse().context("--runs takes a number")?;
                words.next();
            }
            ("--binary", Some(path)) => {
                other_binary = Some(Utf8PathBuf::from(path));
                words.next();
            }
            ("--plan", _) => plan_only = true,
            ("--check", _) => check = true,
            ("--picture", _) => picture = true,
            ("--record-floor", _) => record_floor = true,
            ("--against", Some(path)) => {
                against = Some(Utf8PathBuf::from(path));
                words.next();
            }
            ("--only", Some(what)) if what == "tmux-hook" => {
                only_tmux_hook = true;
                words.next();
            }
            ("--only", Some(what)) if what == "kitty-restore" => {
                only_kitty_restore = true;
                words.next();
            }
            ("--only", Some(what)) if what == "zellij-restore" => {
                only_zellij = true;
                words.next();
            }
            _ => bail!(USAGE),
        }
    }
    let binary = match other_binary {
        Some(binary) => binary,
        None => Utf8PathBuf::from_path_buf(crate::workspace::build_release()?)
            .map_err(|path| anyhow::anyhow!("the build dir {} is not UTF-8", path.display()))?,
    };
    let sandbox = utf8(crate::workspace::sandbox_base("bench-cli")?)?;
    let _ = std::fs::remove_dir_all(&sandbox);
    std::fs::create_dir_all(&sandbox)?;
    if plan_only {
        return plan_growth(&binary, runs.clamp(1, 10));
    }
    if check {
        return growth::check(&binary, runs.clamp(1, 5));
    }
    if record_floor {
        let mut binaries = vec![binary];
        binaries.extend(against);
        return growth::record_floor(&binaries, runs.clamp(1, 10));
    }
    if picture {
        let out = crate::workspace::root()?.join("docs/growth.svg");
        return growth::picture(&binary, runs.clamp(1, 10), &out);
    }
    if only_tmux_hook {
        return tmux_hooks(&binary, runs);
    }
    if only_kitty_restore {
        return kitty_restore(&binary, runs.clamp(1, 10));
    }
    if only_zellij {
        return zellij_restore::run(&binary, &sandbox, runs.clamp(1, 5));
    }

    println!("| command | entries | median | p95 |");
    println!("|---|---:|---:|---:|");
    for size in [1_000usize, 10_000] {
        let bench = Bench::new(&binary, size)?;
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
    let bench = Bench::new(&binary, 1_000)?;
    let transcript = bench.sparse_transcript(1_000, 2 << 30)?;
    let args = vec!["preflight".to_string(), surface(1_000 / 2)];
    let times = bench.time_allowing(&args, runs, &[0, 4])?;
    let (median, p95) = percentiles(&times);
    println!(
        "| `preflight`, held transcript a 2 GiB sparse file | 1000 | {} | {} |",
        ms(median),
        ms(p95)
    );
    println!(
        "\npeak memory of that `preflight`: {} KiB",
        bench.peak_memory_kib(&args)?
    );
    std::fs::remove_file(&transcript)?;

    let bench = Bench::new(&binary, 1_000)?;
    let wall = bench.concurrent_records(100)?;
    println!(
        "\n100 concurrent `record` processes on a 1,000-entry index: all done in {}",
        ms(wall)
    );
    plan_growth(&binary, runs.clamp(1, 10))?;
    tmux_hooks(&binary, runs)?;
    kitty_restore(&binary, runs.clamp(1, 10))
}

/// `restore --apply kitty` into a live kitty (`bench_kitty`), held to its budget beyond
/// kitty's own start.
fn kitty_restore(binary: &Utf8Path, runs: usize) -> Result<()> {
    use crate::bench_kitty::{BUDGET, SURFACES};
    let load = load_average();
    let measured = crate::bench_kitty::measure(binary, runs)?;
    println!(
        "\n`restore --apply kitty` of {SURFACES} surfaces into a live kitty ({runs} runs; load average before: {load}):\n"
    );
    println!("| what | surfaces | median | p95 | max |");
    println!("|---|---:|---:|---:|---:|");
    print_row(
        "kitty's own start (spawned until its socket answers)",
        0,
        &measured.starts,
    );
    print_row("`restore --apply kitty`", SURFACES, &measured.restores);
    let slowest = measured.restores.iter().max().copied().unwrap_or_default();
    if slowest > BUDGET {
        bail!(
            "a restore of {SURFACES} surfaces into kitty took {} beyond kitty's start, over the {BUDGET:?} budget",
            ms(slowest)
        );
    }
    Ok(())
}

/// The `restore` plan (no `--apply`) as the index grows: every entry's working dir is one of
/// 50, each dir's project folder holds 20 transcripts (the sessions of its first 20 entries),
/// so at 1,000 entries every entry resumes and beyond that the rest run the recovery scan.
fn plan_growth(binary: &Utf8Path, runs: usize) -> Result<()> {
    println!("\n| `restore` plan: entries | median | p95 | per entry |");
    println!("|---:|---:|---:|---:|");
    for size in [1_000usize, 2_000, 5_000, 10_000] {
        let bench = growth::plan_bench(binary, size, 50, 20)?;
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

/// `hook claude` through a real tmux pane: `TMUX` and `TMUX_PANE` name a pane of a private
/// tmux server, so the hook asks tmux for `tmux:<socket path>:<session>:<window>.<pane>` as it
/// does in use.
/// Each SessionStart source as Claude Code sends it (`startup`: a new session in the pane;
/// `clear`: the new session after `/clear`; `resume`: the held session again), then `/clear`'s
/// SessionEnd and SessionStart started at the same instant (the start's time is reported).
/// The hook is started by this process, not from the pane: it is named by `TMUX_PANE` only
/// because it has a terminal (this one's); without a terminal a hook trusts `TMUX_PANE` only for
/// a pane whose process is its ancestor, and would record nothing here.
fn tmux_hooks(binary: &Utf8Path, runs: usize) -> Result<()> {
    use std::io::IsTerminal as _;
    if !std::io::stdin().is_terminal() {
        bail!(
            "the hook through a tmux pane needs a terminal: run `cargo xtask bench-cli` from one \
             (a hook without a terminal does not trust the TMUX_PANE of a pane it does not run in)"
        );
    }
    let tmux_sandbox = Sandbox::default();
    let tmux = TmuxServer::start(
        &tmux_sandbox,
        &format!("bench-{}", std::process::id()),
        &[(PanePlace::new("bench", 0, 0), tmux_sandbox.home(), "sh")],
    );
    let tmux = Pane {
        variable: tmux.tmux_variable(),
        pane: tmux.display("=bench:0.0", "#{pane_id}"),
        _server: tmux,
    };
    println!(
        "\n`hook claude` in a real tmux pane ({runs} runs each; load average before: {}):\n",
        load_average()
    );
    println!("| event | entries | median | p95 | max |");
    println!("|---|---:|---:|---:|---:|");
    for size in [10usize, 1_000] {
        let bench = Bench::new(binary, size)?;
        let hook = |event: &str, session: &str, extra: &str| -> Vec<String> {
            vec![format!(
                r#"{{"session_id":"{session}","cwd":"{}","hook_event_name":"{event}",{extra}}}"#,
                bench.work
            )]
        };
        let mut next = size + 1;
        let mut fresh = || {
            next += 1;
            session(next)
        };
        let startup: Vec<_> = (0..runs)
            .map(|_| hook("SessionStart", &fresh(), r#""source":"startup""#))
            .collect();
        let clear: Vec<_> = (0..runs)
            .map(|_| hook("SessionStart", &fresh(), r#""source":"clear""#))
            .collect();
        let held = fresh();
        bench.hook_in_pane(
            &tmux,
            &hook("SessionStart", &held, r#""source":"startup""#)[0],
        )?;
        let resume: Vec<_> = (0..runs)
            .map(|_| hook("SessionStart", &held, r#""source":"resume""#))
            .collect();
        for (name, payloads) in [
            ("SessionStart `startup`", startup),
            ("SessionStart `clear`", clear),
            ("SessionStart `resume`", resume),
        ] {
            let mut times = Vec::with_capacity(runs);
            for payload in &payloads {
                times.push(bench.hook_in_pane(&tmux, &payload[0])?);
            }
            print_row(name, size, &times);
        }
        let mut together = Vec::with_capacity(runs);
        let mut previous = held;
        for _ in 0..runs {
            let next_session = fresh();
            let end = hook("SessionEnd", &previous, r#""reason":"clear""#);
            let start = hook("SessionStart", &next_session, r#""source":"clear""#);
            together.push(bench.clear_pair_in_pane(&tmux, &end[0], &start[0])?);
            previous = next_session;
        }
        print_row(
            "`/clear`: SessionEnd + SessionStart at once (the start)",
            size,
            &together,
        );
    }
    drop(tmux);
    println!("\n(load average after: {})", load_average());
    Ok(())
}

/// The 1, 5 and 15 minute load averages (Linux), which every figure here depends on.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn print_row(name: &str, size: usize, times: &[Duration]) {
    let (median, p95) = percentiles(times);
    let max = times.iter().max().copied().unwrap_or_default();
    println!(
        "| {name} | {size} | {} | {} | {} |",
        ms(median),
        ms(p95),
        ms(max)
    );
}

/// The one pane of the test world's private tmux server (`test_support::world`) that the
/// hooks are named by; the server is killed when dropped.
struct Pane {
    /// `$TMUX` as tmux sets it in its panes: socket, server pid, session index.
    variable: String,
    pane: String,
    _server: TmuxServer,
}

impl Bench {
    /// The hook as it runs in the pane: no surface variable, the pane's `TMUX` and `TMUX_PANE`.
    fn hook_command(&self, tmux: &Pane) -> Command {
        let mut command = self.command(&["hook".to_string(), "claude".to_string()]);
        command
            .env_remove("CRASH_RESUME_SURFACE")
            .env("TMUX", &tmux.variable)
            .env("TMUX_PANE", &tmux.pane)
            .stdin(Stdio::piped());
        command
    }

    fn spawn_hook(&self, tmux: &Pane, payload: &str) -> Result<std::process::Child> {
        let mut child = self.hook_command(tmux).spawn()?;
        if let Some(mut pipe) = child.stdin.take() {
            use std::io::Write;
            pipe.write_all(payload.as_bytes())?;
        }
        Ok(child)
    }

    fn hook_in_pane(&self, tmux: &Pane, payload: &str) -> Result<Duration> {
        let started = Instant::now();
        let status = self.spawn_hook(tmux, payload)?.wait()?;
        let elapsed = started.elapsed();
        self.check_hook(status)?;
        Ok(elapsed)
    }

    /// `/clear`'s two hooks started together; the time until the SessionStart's is done.
    fn clear_pair_in_pane(&self, tmux: &Pane, end: &str, start: &str) -> Result<Duration> {
        let mut ending = self.spawn_hook(tmux, end)?;
        let started = Instant::now();
        let status = self.spawn_hook(tmux, start)?.wait()?;
        let elapsed = started.elapsed();
        self.check_hook(status)?;
        self.check_hook(ending.wait()?)?;
        Ok(elapsed)
    }

    /// A hook exits 0 whatever happens; what went wrong is in `hook.log`, which must be empty
    /// of errors for the figures to count.
    fn check_hook(&self, status: std::process::ExitStatus) -> Result<()> {
        if !status.success() {
            bail!("the hook failed: {status}");
        }
        let log = self.index.with_file_name("hook.log");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("): error:") {
            bail!("the hook logged an error in {log}:\n{text}");
        }
        Ok(())
    }
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

/// One measurement's index and agent dirs, in a sandbox of the test world.
struct Bench {
    binary: Utf8PathBuf,
    env: Sandbox,
    /// The sandbox's dir.
    dir: Utf8PathBuf,
    index: Utf8PathBuf,
    work: Utf8PathBuf,
}

impl Bench {
    /// A sandbox with an index of `size` entries and a project folder holding the transcript of
    /// the probed surface's session.
    fn new(binary: &Utf8Path, size: usize) -> Result<Bench> {
        let env = Sandbox::default();
        let dir = utf8(env.root().to_path_buf())?;
        let work = dir.join("home/work");
        std::fs::create_dir_all(&work)?;
        let work = work.canonicalize_utf8()?;
        let config = dir.join("home/.claude");
        let index = utf8(env.index_path())?;
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
            env,
            dir,
            index,
            work,
        })
    }

    fn command(&self, args: &[String]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.env.home())
            .env("XDG_CONFIG_HOME", self.env.config_home())
            .env("CRASH_RESUME_INDEX_PATH", &self.index)
            .env("CRASH_RESUME_SURFACE", surface(0))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// Replaces the probed session's transcript with a sparse file of `size` bytes (holes, then
    /// one user line), as a huge or damaged transcript would be.
    fn sparse_transcript(&self, entries: usize, size: u64) -> Result<Utf8PathBuf> {
        let config = self.dir.join("home/.claude");
        let project = preflight::claude::project_dir(&config, &self.work);
        let path = project.join(format!("{}.jsonl", session(entries / 2)));
        let file = std::fs::File::create(&path)?;
        file.set_len(size)?;
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(&path)?;
        file.write_all(
            b"\n{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )?;
        Ok(path)
    }

    /// Peak resident memory of one run, from `getrusage(RUSAGE_CHILDREN)` in a Python parent
    /// that runs only it.
    fn peak_memory_kib(&self, args: &[String]) -> Result<u64> {
        let script = "import resource, subprocess, sys\n\
                      subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n\
                      print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)";
        let template = self.command(args);
        let mut command = Command::new("python3");
        command.args(["-c", script]).arg(&self.binary).args(args);
        for (key, value) in template.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        let output = command
            .output()
            .context("run python3 to measure peak memory")?;
        if !output.status.success() {
            bail!(
                "python3 failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .context("python3 printed no ru_maxrss")
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

    /// Times `runs` runs that may exit with any of `codes` (a preflight's `fresh` is 4).
    fn time_allowing(&self, args: &[String], runs: usize, codes: &[i32]) -> Result<Vec<Duration>> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            let status = self.command(args).stdin(Stdio::null()).status()?;
            times.push(started.elapsed());
            if !status.code().is_some_and(|code| codes.contains(&code)) {
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

fn utf8(path: std::path::PathBuf) -> Result<Utf8PathBuf> {
    Utf8PathBuf::from_path_buf(path)
        .map_err(|path| anyhow::anyhow!("the sandbox dir {} is not UTF-8", path.display()))
}
