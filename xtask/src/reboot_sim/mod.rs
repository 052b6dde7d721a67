//! `cargo xtask reboot-sim [--panes N] [--real-claude | --real-codex | --real-gemini |
//! --real-copilot | --real-qwen] [--seed N] [--keep]`: the whole crash-and-resume story, end to end, against
//! the release `crash-resume`.
//!
//! 1. A sandbox under the build dir (`sandbox`): its own `HOME`, XDG dirs, Claude config dir
//!    with crash-resume's hooks installed by `crash-resume hook install claude`, and a private
//!    tmux server. Every process gets a clean environment that points only into it.
//! 2. N panes (default 8) play the cases users hit (`cases`) through a stand-in agent that
//!    behaves like Claude Code wherever crash-resume looks (test-support's `stand-in-agent`).
//! 3. The crash (`crash`): `crash-resume record` writers SIGKILLed while they run, the tmux
//!    server SIGKILLed in the middle of them.
//! 4. The reboot: everything volatile dropped, the same tmux layout brought back with idle
//!    shells, then `crash-resume restore` (text and `--json`) and two `restore --apply tmux` at
//!    once.
//! 5. The checks (`checks`): every pane against the ground truth, no conversation resumed
//!    twice, nothing acknowledged before the crash lost; a table and `N passed, M failed`.
//!
//! The hostile cases (crafted values in the index, busy panes, names tmux rewrites, restores
//! racing on an empty server) are the CLI's tests (`crates/cli/tests/it/restore/tmux.rs`), each
//! against its own tmux server; this plays the one end-to-end story.
//!
//! With `--real-claude` the resumed process is the real Claude Code CLI, run offline (`real`).
//! `--real-codex` plays the Codex story instead, with the real Codex CLI in every pane, offline
//! in a network namespace of its own (`codex`); `--real-gemini` the Gemini story, the same way
//! with the real Gemini CLI (`gemini`); `--real-copilot` the Copilot story, with the real GitHub
//! Copilot CLI (`copilot`); `--real-qwen` the Qwen Code story, with the real Qwen Code (`qwen`).
//! What they share is in `offline`.
//! `--mux kitty` plays the story in a real kitty under Xvfb instead of tmux (`kitty`).
//! `--mux zellij` plays it in the real, pinned zellij (`zellij`).

mod cases;
mod checks;
mod codex;
mod copilot;
mod crash;
mod gemini;
mod kitty;
mod offline;
mod qwen;
mod real;
mod sandbox;
mod zellij;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;
use test_support::process::all_pids;
use test_support::random::{XorShift, clock_seed};
use test_support::stand_in::{self, Kind};
use test_support::world::{poll_for, poll_until};

use self::cases::{Expect, Slot, Truth};
use self::checks::{Observed, PlanItem, Row};
use self::sandbox::{Agent, Sandbox};

const USAGE: &str = "usage: cargo xtask reboot-sim [--panes N]
                             [--real-claude | --real-codex | --real-gemini | --real-copilot |
                              --real-qwen]
                             [--mux tmux|kitty|zellij] [--seed N] [--keep] [--crash-resume FILE]

  --panes N            how many tmux panes to run (default 8, one per case; more are plain sessions)
  --real-claude        resume with the real Claude Code CLI (the pinned npm package), offline
  --real-codex         the Codex story: the real Codex CLI (the pinned npm package) in every pane,
                       offline in a network namespace (needs root or unprivileged user namespaces)
  --real-gemini        the Gemini story: the real Gemini CLI (the pinned npm package) in every
                       pane, offline in a network namespace, as --real-codex
  --real-copilot       the Copilot story: the real GitHub Copilot CLI (the pinned npm package) in
                       every pane, offline in a network namespace, as --real-codex
  --real-qwen          the Qwen Code story: the real Qwen Code (the pinned npm package) in every
                       pane, offline in a network namespace, as --real-codex
  --mux kitty          the story in a real kitty under Xvfb (apt-get install -y kitty xvfb)
  --mux zellij         the story in the real, pinned zellij (`cargo xtask zellij install`)
  --seed N             replay the random kill moments of an earlier run
  --keep               keep the sandbox dir after a passing run
  --crash-resume FILE  check this crash-resume binary instead of building the release one";

/// How long an agent may take to come up in a pane after the restore started it.
const STAND_IN_DEADLINE: Duration = Duration::from_secs(20);
const REAL_CLI_DEADLINE: Duration = Duration::from_secs(90);

/// Writers of the crash: waves of concurrent `crash-resume record`; the server dies in `WAVE_OF_SERVER_KILL`.
const WRITER_WAVES: usize = 4;
const WRITERS_PER_WAVE: usize = 6;
const WAVE_OF_SERVER_KILL: usize = 1;

#[derive(Debug)]
struct Options {
    panes: usize,
    real_claude: bool,
    real_codex: bool,
    real_gemini: bool,
    real_copilot: bool,
    real_qwen: bool,
    kitty: bool,
    /// `--mux zellij`: the story in zellij.
    zellij: bool,
    seed: u64,
    keep: bool,
    crash_resume: Option<PathBuf>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options {
            panes: cases::CASES.len(),
            real_claude: false,
            real_codex: false,
            real_gemini: false,
            real_copilot: false,
            real_qwen: false,
            kitty: false,
            zellij: false,
            seed: clock_seed(),
            keep: false,
            crash_resume: None,
        };
        let mut words = args.iter();
        while let Some(word) = words.next() {
            let mut value = |name: &str| {
                words
                    .next()
                    .with_context(|| format!("{name} needs a value\n\n{USAGE}"))
            };
            match word.as_str() {
                "--panes" => {
                    options.panes = value("--panes")?
                        .parse()
                        .ok()
                        .filter(|panes| *panes > 0)
                        .with_context(|| format!("--panes takes a number above 0\n\n{USAGE}"))?;
                }
                "--seed" => {
                    options.seed = value("--seed")?
                        .parse()
                        .with_context(|| format!("--seed takes a number\n\n{USAGE}"))?;
                }
                "--crash-resume" => {
                    options.crash_resume = Some(PathBuf::from(value("--crash-resume")?));
                }
                "--mux" => match value("--mux")?.as_str() {
                    "tmux" => (options.kitty, options.zellij) = (false, false),
                    "kitty" => (options.kitty, options.zellij) = (true, false),
                    "zellij" => (options.kitty, options.zellij) = (false, true),
                    other => bail!("--mux takes tmux, kitty or zellij, not {other:?}\n\n{USAGE}"),
                },
                "--real-claude" => options.real_claude = true,
                "--real-codex" => options.real_codex = true,
                "--real-gemini" => options.real_gemini = true,
                "--real-copilot" => options.real_copilot = true,
                "--real-qwen" => options.real_qwen = true,
                "--keep" => options.keep = true,
                "-h" | "--help" => {
                    eprintln!("{USAGE}");
                    std::process::exit(0);
                }
                other => bail!("unknown argument {other:?}\n\n{USAGE}"),
            }
        }
        let stories = [
            options.real_claude,
            options.real_codex,
            options.real_gemini,
            options.real_copilot,
            options.real_qwen,
        ];
        if stories.iter().filter(|chosen| **chosen).count() > 1 {
            bail!(
                "--real-claude, --real-codex, --real-gemini, --real-copilot and --real-qwen are \
                 different stories; run one at a time\n\n{USAGE}"
            );
        }
        if (options.kitty || options.zellij) && stories.contains(&true) {
            bail!(
                "--mux kitty and --mux zellij play the story with the stand-in agent only\n\n{USAGE}"
            );
        }
        Ok(options)
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let options = Options::parse(args)?;
    let crash_resume = match &options.crash_resume {
        Some(binary) => binary.clone(),
        None => crate::workspace::build_release()?,
    };
    let real_cli = options
        .real_claude
        .then(crate::claude_cli::install)
        .transpose()?;
    let codex_cli = options
        .real_codex
        .then(crate::codex_cli::install)
        .transpose()?;
    let gemini_cli = options
        .real_gemini
        .then(crate::gemini_cli::install)
        .transpose()?;
    let copilot_cli = options
        .real_copilot
        .then(crate::copilot_cli::install)
        .transpose()?;
    let qwen_cli = options
        .real_qwen
        .then(crate::qwen_cli::install)
        .transpose()?;
    let zellij = options.zellij.then(crate::zellij::install).transpose()?;

    let started = Instant::now();
    let sandbox = Sandbox::create(
        &crate::workspace::sandbox_base("reboot-sim")?,
        &crash_resume,
    )?;
    eprintln!(
        "reboot-sim: sandbox {}, tmux -L {}, seed {}",
        sandbox.root.display(),
        sandbox.socket,
        options.seed
    );
    let outcome = {
        let _shut_down = ShutDown(&sandbox);
        match (&codex_cli, &gemini_cli, &copilot_cli, &zellij) {
            _ if qwen_cli.is_some() => {
                qwen::simulate(&sandbox, qwen_cli.as_deref().expect("checked just above"))
            }
            (Some(cli), _, _, _) => codex::simulate(&sandbox, cli),
            (None, Some(cli), _, _) => gemini::simulate(&sandbox, cli),
            (None, None, Some(cli), _) => copilot::simulate(&sandbox, cli),
            (None, None, None, Some(zellij)) => zellij::simulate(&sandbox, zellij),
            (None, None, None, None) if options.kitty => kitty::simulate(&sandbox),
            (None, None, None, None) => simulate(&sandbox, &options, real_cli.as_deref()),
        }
    };
    let elapsed = started.elapsed();
    let rows = match outcome {
        Ok(rows) => rows,
        Err(error) => {
            eprintln!(
                "reboot-sim: the sandbox is kept at {}",
                sandbox.root.display()
            );
            return Err(error);
        }
    };
    print!("{}", checks::render(&rows));
    let panes = if options.real_codex {
        codex::PANES
    } else if options.real_gemini {
        gemini::PANES
    } else if options.real_copilot {
        copilot::PANES
    } else if options.real_qwen {
        qwen::PANES
    } else if options.kitty {
        kitty::WINDOWS
    } else if options.zellij {
        test_support::zellij::STORY_PANES
    } else {
        options.panes
    };
    println!(
        "reboot-sim: {} pane{}{} in {:.1}s (not counting the release build), seed {}",
        panes,
        if panes == 1 { "" } else { "s" },
        if options.real_claude {
            ", real Claude Code CLI"
        } else if options.kitty {
            " (kitty windows)"
        } else if options.real_codex {
            ", real Codex CLI"
        } else if options.real_gemini {
            ", real Gemini CLI"
        } else if options.real_copilot {
            ", real GitHub Copilot CLI"
        } else if options.real_qwen {
            ", real Qwen Code"
        } else if options.zellij {
            ", zellij"
        } else {
            ""
        },
        elapsed.as_secs_f64(),
        options.seed
    );
    let failed = rows.iter().filter(|row| !row.problems.is_empty()).count();
    if failed > 0 {
        eprintln!(
            "reboot-sim: the sandbox is kept at {}",
            sandbox.root.display()
        );
        bail!("{failed} checks failed");
    }
    if options.keep {
        eprintln!(
            "reboot-sim: the sandbox is kept at {}",
            sandbox.root.display()
        );
    } else {
        std::fs::remove_dir_all(&sandbox.root)
            .with_context(|| format!("cannot remove {}", sandbox.root.display()))?;
    }
    Ok(())
}

fn simulate(sandbox: &Sandbox, options: &Options, real_cli: Option<&Path>) -> Result<Vec<Row>> {
    let installed = sandbox.crash_resume_ok(&["hook", "install", "claude"])?;
    eprintln!("reboot-sim: {}", installed.trim());
    let panes = cases::layout(options.panes, &sandbox.work);
    cases::prepare_dirs(&sandbox.work, &panes)?;
    let slots: Vec<Slot> = panes.iter().map(|pane| pane.slot.clone()).collect();
    cases::start_server(sandbox, &slots)?;

    let mut driver = cases::Driver::new(sandbox);
    let truths = panes
        .iter()
        .map(|pane| driver.drive(pane))
        .collect::<Result<Vec<Truth>>>()?;
    eprintln!(
        "reboot-sim: {} panes played their cases; crashing",
        truths.len()
    );
    let (before_crash, _) = list_index(sandbox)?;
    // What tmux-resurrect saved: each pane's place and current path.
    let mut resurrect: Vec<Slot> = cases::list_panes(sandbox)?
        .into_iter()
        .map(|pane| pane.slot)
        .collect();
    resurrect.sort_by(|a, b| (&a.session, a.window, a.pane).cmp(&(&b.session, b.window, b.pane)));
    let mut doomed: Vec<u32> = stand_in::read_events(&sandbox.log_path(), 0)?
        .iter()
        .filter(|event| event.kind == Kind::Start)
        .map(|event| event.pid)
        .collect();

    let mut rng = XorShift::new(options.seed);
    let writers = crash::storm(sandbox, &mut rng, WRITER_WAVES, WRITERS_PER_WAVE, |wave| {
        if wave == WAVE_OF_SERVER_KILL {
            doomed.extend(crash::kill_server(sandbox)?);
        }
        Ok(())
    })?;
    crash::reboot(sandbox, &resurrect, &doomed)?;
    eprintln!("reboot-sim: rebooted; restoring");
    let (after_reboot, after_reboot_stderr) = list_index(sandbox)?;

    let port = real::closed_port()?;
    if let Some(cli) = real_cli {
        sandbox.install_agent(Agent::Real {
            cli,
            env: &real::offline_env(port),
        })?;
    }
    let log = sandbox.log_path();
    let offset = std::fs::metadata(&log).map_or(0, |metadata| metadata.len());
    eprint!(
        "reboot-sim: crash-resume restore says:\n{}",
        sandbox.crash_resume_ok(&["restore"])?
    );
    let plan = parse_plan(&sandbox.crash_resume_ok(&["--json", "restore"])?)?;
    let plan_all = parse_plan(&sandbox.crash_resume_ok(&["--json", "restore", "--all"])?)?;
    let applies = two_restores_at_once(sandbox)?;

    let deadline = match real_cli {
        Some(_) => REAL_CLI_DEADLINE,
        None => STAND_IN_DEADLINE,
    };
    let (screens, barrier_problems) =
        settle(sandbox, &truths, offset, deadline, real_cli.is_some())?;
    let events = stand_in::read_events(&log, offset)?;
    let real_fresh = real_cli.map(|cli| ask_real_cli(sandbox, cli, port, &truths));
    let observed = Observed {
        before_crash,
        after_reboot,
        after_reboot_stderr,
        plan,
        plan_all,
        applies,
        events,
        screens,
        barrier_problems,
        writers,
        real_fresh,
        claude_dir: sandbox.claude_dir.to_string_lossy().into_owned(),
    };
    Ok(checks::rows(&truths, &observed, real_cli.is_some()))
}

/// `crash-resume --json list`: the index as the CLI shows it, and what it said on stderr.
fn list_index(sandbox: &Sandbox) -> Result<(Value, String)> {
    let output = sandbox.crash_resume(&["--json", "list"])?;
    if !output.status.success() {
        bail!(
            "crash-resume list failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let list =
        serde_json::from_slice(&output.stdout).context("crash-resume list printed no JSON")?;
    Ok((list, String::from_utf8_lossy(&output.stderr).into_owned()))
}

fn parse_plan(text: &str) -> Result<Vec<PlanItem>> {
    let plan: resume_plan::Plan =
        serde_json::from_str(text).with_context(|| format!("not a restore plan: {text}"))?;
    Ok(plan.surfaces)
}

/// Two `crash-resume --json restore --apply tmux` started together; each one's plan (with what
/// it did), or why it failed.
fn two_restores_at_once(sandbox: &Sandbox) -> Result<Vec<Result<Vec<PlanItem>, String>>> {
    let args = test_support::restore_apply_args(&sandbox.socket);
    let children = (0..2)
        .map(|_| {
            sandbox
                .command(sandbox.bin.join("crash-resume"))
                .args(args)
                .current_dir(&sandbox.home)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .context("cannot start crash-resume restore --apply tmux")
        })
        .collect::<Result<Vec<_>>>()?;
    children
        .into_iter()
        .enumerate()
        .map(|(number, child)| {
            let output = child.wait_with_output()?;
            // Kept for whoever reads a failed run's sandbox.
            let saved = sandbox.root.join(format!("restore-apply-{number}.json"));
            std::fs::write(&saved, &output.stdout)
                .with_context(|| format!("cannot write {}", saved.display()))?;
            let stderr = String::from_utf8_lossy(&output.stderr);
            if !output.status.success() {
                return Ok(Err(format!(
                    "restore --apply tmux failed ({}): {}",
                    output.status,
                    stderr.trim()
                )));
            }
            Ok(parse_plan(&String::from_utf8_lossy(&output.stdout))
                .map_err(|error| format!("{error:#}")))
        })
        .collect()
}

/// Waits until every pane has done what the restores made it do, then puts a barrier line
/// through each pane (a shell comment, or a prompt to an agent) and waits until it comes out
/// the other side: past that, nothing typed earlier can still be on its way. Returns each
/// pane's screen, and for each pane what went wrong while waiting. All the waiting shares one
/// deadline, so a broken restore cannot make the run take long.
fn settle(
    sandbox: &Sandbox,
    truths: &[Truth],
    offset: u64,
    deadline: Duration,
    real: bool,
) -> Result<(HashMap<String, String>, HashMap<String, String>)> {
    let log = sandbox.log_path();
    let until = Instant::now() + deadline;
    let left = || until.saturating_duration_since(Instant::now());
    let mut problems = HashMap::new();
    for truth in truths {
        if !matches!(truth.expect, Expect::Resume(_) | Expect::Recover(_)) {
            continue;
        }
        let surface = truth.pane.slot.surface();
        let started = wait_for(left(), &format!("an agent to run in {surface}"), || {
            let events = stand_in::read_events(&log, offset)?;
            let start = events.iter().find(|event| {
                event.kind == Kind::Start && event.surface.as_deref() == Some(surface.as_str())
            });
            // The real CLI's answer comes before the agent reads its terminal.
            let answered = start.is_some_and(|start| {
                !real
                    || events
                        .iter()
                        .any(|event| event.pid == start.pid && event.kind == Kind::Real)
            });
            Ok(answered.then_some(()))
        });
        if let Err(error) = started {
            problems.insert(surface, format!("{error:#}"));
        }
    }
    let barrier = |number: usize| format!("# reboot-sim barrier {number}");
    for (number, truth) in truths.iter().enumerate() {
        cases::type_line(sandbox, &truth.pane.slot, &barrier(number))?;
    }
    let mut screens = HashMap::new();
    for (number, truth) in truths.iter().enumerate() {
        let slot = &truth.pane.slot;
        let surface = slot.surface();
        let barrier = barrier(number);
        let through = wait_for(left(), &format!("the barrier to pass {surface}"), || {
            let agent_took_it = stand_in::read_events(&log, offset)?.iter().any(|event| {
                event.kind == Kind::Prompt
                    && event.surface.as_deref() == Some(surface.as_str())
                    && event.text.as_deref() == Some(barrier.as_str())
            });
            if agent_took_it {
                return Ok(Some(()));
            }
            let idle_shell = cases::list_panes(sandbox)?
                .iter()
                .any(|pane| pane.slot.surface() == surface && pane.command == "bash");
            Ok((idle_shell && screen(sandbox, slot)?.contains(&barrier)).then_some(()))
        });
        if let Err(error) = through {
            problems
                .entry(surface.clone())
                .or_insert_with(|| format!("{error:#}"));
        }
        screens.insert(surface, screen(sandbox, slot)?);
    }
    Ok((screens, problems))
}

/// The pane's screen and scroll-back, wrapped lines joined.
fn screen(sandbox: &Sandbox, slot: &Slot) -> Result<String> {
    sandbox.tmux(&[
        "capture-pane",
        "-p",
        "-J",
        "-S",
        "-500",
        "-t",
        &slot.target(),
    ])
}

/// For each fresh pane, the real CLI's answer to `--resume <held id>`, asked in parallel.
fn ask_real_cli(
    sandbox: &Sandbox,
    cli: &Path,
    port: u16,
    truths: &[Truth],
) -> HashMap<String, String> {
    std::thread::scope(|scope| {
        let asked: Vec<_> = truths
            .iter()
            .filter(|truth| truth.expect == Expect::Fresh)
            .map(|truth| {
                let surface = truth.pane.slot.surface();
                let answer = scope.spawn(move || {
                    real::answer_to_resume(sandbox, cli, port, Path::new(&truth.cwd), &truth.held)
                });
                (surface, answer)
            })
            .collect();
        asked
            .into_iter()
            .map(|(surface, answer)| {
                let answer = match answer.join() {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(error)) => format!("{error:#}"),
                    Err(_) => "the probe panicked".to_string(),
                };
                (surface, answer)
            })
            .collect()
    })
}

/// On drop, even when the simulation fails or panics: ends the private tmux server and every
/// process still running with the sandbox's `HOME` (agents, the real CLI), by pid.
#[derive(Debug)]
struct ShutDown<'a>(&'a Sandbox);

impl Drop for ShutDown<'_> {
    fn drop(&mut self) {
        shut_down(self.0);
    }
}

fn shut_down(sandbox: &Sandbox) {
    sandbox.kill_server();
    let ours: Vec<u32> = all_pids()
        .into_iter()
        .filter(|pid| *pid != std::process::id() && sandbox.owns_live_process(*pid))
        .collect();
    if let Err(error) = sandbox.kill_all(&ours, Duration::from_secs(5)) {
        eprintln!("reboot-sim: {error:#}");
    }
}

/// Polls `check` until it finds something, at most `deadline` (the test world's wait, its
/// errors anyhow's).
fn wait_for<T>(
    deadline: Duration,
    what: &str,
    check: impl FnMut() -> Result<Option<T>>,
) -> Result<T> {
    poll_for(deadline, what, check)
}

/// Polls `check` until it holds, at most `deadline`.
fn wait_until(deadline: Duration, what: &str, check: impl FnMut() -> Result<bool>) -> Result<()> {
    poll_until(deadline, what, check)
}
