//! `cargo xtask bench-cli --only zellij-restore`: `restore --apply zellij` of 10 surfaces into
//! the live, pinned zellij, against the budget of 2 s beyond zellij's own start. Two cases: the
//! session is gone (the restore creates it and 10 named panes; zellij's own start, timed apart
//! as `attach --create-background` until its pane list settles, is subtracted), and the session
//! runs with the 10 named panes idle (each replaced in place).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use camino::Utf8Path;
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};
use test_support::zellij::Instance;

/// How many surfaces a restore opens.
const SURFACES: usize = 10;

/// The session the surfaces are in.
const SESSION: &str = "bench";

/// The budget beyond zellij's own start.
const BUDGET: Duration = Duration::from_secs(2);

/// The name of surface `n`'s pane.
fn pane_name(n: usize) -> String {
    format!("cr-{n}-bench")
}

pub fn run(binary: &Utf8Path, sandbox: &Utf8Path, runs: usize) -> Result<()> {
    let executable = crate::zellij::install()?;
    let mut starts = Vec::new();
    let mut created = Vec::new();
    let mut in_place = Vec::new();
    for run in 0..runs {
        let dir = sandbox.join(format!("zellij-{run}"));
        let bench = Setup::new(binary, &dir)?;
        std::os::unix::fs::symlink(&executable, dir.join("bin/zellij"))?;
        let zellij = Instance::new(executable.clone(), dir.join("zellij").as_std_path());

        // zellij's own start, alone.
        let started = Instant::now();
        zellij
            .try_zellij(&["attach", "--create-background", SESSION])
            .map_err(anyhow::Error::msg)?;
        settle(&zellij, 1)?;
        starts.push(started.elapsed());
        zellij
            .try_zellij(&["kill-session", SESSION])
            .map_err(anyhow::Error::msg)?;
        // A killed session is usually gone already; one kept for resurrection is deleted.
        let _ = zellij.try_zellij(&["delete-session", "--force", SESSION]);

        // The session gone: the restore creates it and every pane.
        created.push(bench.restore(&zellij)?);
        settle(&zellij, SURFACES)?;
        zellij
            .try_zellij(&["kill-session", SESSION])
            .map_err(anyhow::Error::msg)?;
        // A killed session is usually gone already; one kept for resurrection is deleted.
        let _ = zellij.try_zellij(&["delete-session", "--force", SESSION]);

        // The session running, the named panes idle shells: each is replaced in place.
        bench.forget_claims()?;
        zellij
            .try_zellij(&["attach", "--create-background", SESSION])
            .map_err(anyhow::Error::msg)?;
        settle(&zellij, 1)?;
        for n in 0..SURFACES {
            zellij
                .try_zellij(&[
                    "--session",
                    SESSION,
                    "action",
                    "new-pane",
                    "--name",
                    &pane_name(n),
                    "--",
                    "bash",
                    "--norc",
                    "--noprofile",
                ])
                .map_err(anyhow::Error::msg)?;
        }
        settle(&zellij, SURFACES + 1)?;
        in_place.push(bench.restore(&zellij)?);
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let start = median(&mut starts);
    let created = median(&mut created);
    let in_place = median(&mut in_place);
    println!(
        "\n`restore --apply zellij` of {SURFACES} surfaces, zellij 0.45.1 ({runs} runs, medians):\n"
    );
    println!("| case | restore | beyond zellij's start | budget |");
    println!("|---|---:|---:|---:|");
    println!(
        "| zellij's own start (`attach --create-background`, until its panes settle) | {} | | |",
        super::ms(start)
    );
    let beyond_created = created.saturating_sub(start);
    println!(
        "| session gone: created, {SURFACES} new panes | {} | {} | {} |",
        super::ms(created),
        super::ms(beyond_created),
        super::ms(BUDGET)
    );
    println!(
        "| session running: {SURFACES} idle named panes replaced in place | {} | {} | {} |",
        super::ms(in_place),
        super::ms(in_place),
        super::ms(BUDGET)
    );
    if beyond_created > BUDGET || in_place > BUDGET {
        bail!(
            "restoring {SURFACES} surfaces into zellij took more than {BUDGET:?} beyond its start"
        );
    }
    Ok(())
}

/// Waits until the session has at least `terminals` terminal panes and its list reads the same
/// twice, 100 ms apart (10 s at most).
fn settle(zellij: &Instance, terminals: usize) -> Result<()> {
    let until = Instant::now() + Duration::from_secs(10);
    let mut last = None;
    loop {
        let panes = zellij.panes(SESSION);
        if panes.len() >= terminals && last.as_ref() == Some(&panes) {
            return Ok(());
        }
        if Instant::now() > until {
            bail!("zellij session {SESSION} did not settle with {terminals} panes: {panes:?}");
        }
        last = Some(panes);
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// An index of the 10 surfaces, each with a transcript, and a stand-in `claude` that stays.
struct Setup {
    binary: camino::Utf8PathBuf,
    dir: camino::Utf8PathBuf,
    index: camino::Utf8PathBuf,
    work: camino::Utf8PathBuf,
    config: camino::Utf8PathBuf,
}

impl Setup {
    fn new(binary: &Utf8Path, dir: &Utf8Path) -> Result<Setup> {
        let work = dir.join("home/work");
        std::fs::create_dir_all(&work)?;
        std::fs::create_dir_all(dir.join("bin"))?;
        let work = work.canonicalize_utf8()?;
        let config = dir.join("home/.claude");
        let index = dir.join("state/crash-resume/index.json");
        let claude = dir.join("bin/claude");
        std::fs::write(&claude, "#!/bin/sh\nexec sleep 600\n")?;
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755))?;
        let project = preflight::claude::project_dir(&config, &work);
        std::fs::create_dir_all(&project)?;
        let setup = Setup {
            binary: binary.to_owned(),
            dir: dir.to_owned(),
            index,
            work,
            config,
        };
        for n in 0..SURFACES {
            std::fs::write(
                project.join(format!("{}.jsonl", super::session(n))),
                "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
            )?;
        }
        setup.forget_claims()?;
        Ok(setup)
    }

    /// The index written anew: every surface recorded, none claimed.
    fn forget_claims(&self) -> Result<()> {
        let _ = std::fs::remove_file(&self.index);
        let _ = std::fs::remove_file(format!("{}.bak", self.index));
        let store = Store::open(&self.index, StoreOptions::default())?;
        store.update(|index| {
            for n in 0..SURFACES {
                let mut record = Record::new(
                    SurfaceId::new(format!("zellij:{SESSION}:{}", pane_name(n)))
                        .expect("valid surface"),
                    SessionId::new(super::session(n)).expect("valid session"),
                    Repo::new("repo").expect("valid repo"),
                );
                record.cwd = Some(self.work.to_string());
                record.config_dir = Some(self.config.to_string());
                index.record(record, 1_700_000_000_000 + n as u64);
            }
        })?;
        Ok(())
    }

    /// `crash-resume restore --apply zellij`, timed; it must start every surface.
    fn restore(&self, zellij: &Instance) -> Result<Duration> {
        let path = format!(
            "{}:{}",
            self.dir.join("bin"),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new(&self.binary);
        command
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.dir.join("home"))
            .env("XDG_CONFIG_HOME", self.dir.join("config"))
            .env("CRASH_RESUME_INDEX_PATH", &self.index)
            .env("SHELL", "/bin/bash")
            .args(["--json", "restore", "--apply", "zellij"])
            .stdin(Stdio::null());
        zellij.confine(&mut command);
        let started = Instant::now();
        let output = command.output().context("cannot run crash-resume")?;
        let took = started.elapsed();
        let document: serde_json::Value = serde_json::from_slice(&output.stdout)
            .with_context(|| String::from_utf8_lossy(&output.stderr).into_owned())?;
        let started_count = document["surfaces"].as_array().map_or(0, |items| {
            items
                .iter()
                .filter(|item| item["outcome"]["outcome"] == "started")
                .count()
        });
        if started_count != SURFACES {
            bail!(
                "the restore started {started_count} of {SURFACES} surfaces: {document}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(took)
    }
}
