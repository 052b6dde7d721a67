//! `cargo xtask reboot-sim --mux zellij`: the crash-and-resume story in the real, pinned zellij
//! (`test_support::zellij::Story`, which the live test plays too), judged row by row: each
//! agent captured under a pane name of its own, the panes renumbered by the resurrection, each
//! agent started once in its own named pane, the busy pane untouched, a second restore that
//! starts nothing. A client is attached through a pane of the sandbox's private tmux server.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;
use test_support::zellij::{Instance, Observed, Story};

use super::checks::Row;
use super::sandbox::{Sandbox, create_dir, run_tmux};

/// The tmux pane the zellij clients run in.
const CLIENT: &str = "=client:0.0";

/// A session id of the story.
fn session(n: usize) -> String {
    format!("5a1e{n:04x}-0000-4000-8000-000000000000")
}

pub fn simulate(sandbox: &Sandbox, executable: &Path) -> Result<Vec<Row>> {
    let zellij = Instance::new(executable.to_path_buf(), &sandbox.root.join("zellij"));
    let mut tmux = sandbox.command("tmux");
    zellij.confine(&mut tmux);
    run_tmux(
        tmux,
        &sandbox.socket,
        &[
            "new-session",
            "-d",
            "-s",
            "client",
            "-x",
            "200",
            "-y",
            "60",
            "bash --norc --noprofile",
        ],
    )?;
    // The client exits when its server is killed: the tmux pane stays for the next one.
    sandbox.tmux(&["set-option", "-g", "remain-on-exit", "on"])?;
    let attach = |line: &str| {
        if let Err(error) = sandbox.tmux(&["respawn-pane", "-k", "-t", CLIENT, line]) {
            eprintln!("reboot-sim: {error:#}");
        }
    };
    let mut agents: Vec<(PathBuf, String)> = Vec::new();
    for (n, repo) in ["alpha", "beta", "gamma", "delta"].iter().enumerate() {
        let dir = sandbox.work.join(format!("zellij-{repo}"));
        create_dir(&dir)?;
        let project = preflight::claude::project_dir(
            camino::Utf8Path::new(sandbox.claude_dir.to_str().context("a UTF-8 config dir")?),
            camino::Utf8Path::new(dir.to_str().context("a UTF-8 work dir")?),
        );
        std::fs::create_dir_all(&project)?;
        std::fs::write(
            project.join(format!("{}.jsonl", session(n))),
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )?;
        agents.push((dir, session(n)));
    }
    let agents: [(PathBuf, String); 4] = agents
        .try_into()
        .map_err(|_| anyhow::anyhow!("four agents"))?;
    let surfaces = || -> Vec<(String, String)> {
        let listing = sandbox
            .crash_resume_ok(&["--json", "list"])
            .unwrap_or_default();
        let document: Value = serde_json::from_str(&listing).unwrap_or_default();
        document["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                Some((
                    entry["surfaceId"].as_str()?.to_string(),
                    entry["sessionId"].as_str()?.to_string(),
                ))
            })
            .collect()
    };
    let crash_resume = sandbox.bin.join("crash-resume");
    let command = || {
        let mut command = sandbox.command(&crash_resume);
        command.current_dir(&sandbox.home);
        command
    };
    let scratch = sandbox.root.join("zellij-story");
    create_dir(&scratch)?;
    let story = Story {
        zellij: &zellij,
        attach: &attach,
        crash_resume: &crash_resume,
        command: &command,
        bin: &sandbox.bin,
        scratch: &scratch,
        surfaces: &surfaces,
        agents: agents.clone(),
    };
    eprintln!(
        "reboot-sim: the zellij story, zellij {}",
        executable.display()
    );
    let seen = story.play().map_err(anyhow::Error::msg)?;
    Ok(rows(&seen, &agents))
}

/// The table: one row per agent, the busy pane, the renumbering and the second restore.
fn rows(seen: &Observed, agents: &[(PathBuf, String); 4]) -> Vec<Row> {
    let mut rows = Vec::new();
    // Of the two restores at once, exactly one starts each agent.
    let first_stderr = format!("{}\n{}", seen.first[0].stderr, seen.first[1].stderr);
    let outcomes = |surface: &str| -> Vec<String> {
        seen.first
            .iter()
            .map(|restore| {
                restore
                    .applied
                    .get(surface)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    for (n, surface) in seen.surfaces.iter().enumerate().take(3) {
        let (name, bore) = &seen.named[n];
        let runs: Vec<_> = seen
            .runs
            .iter()
            .filter(|run| run.surface == *surface)
            .collect();
        let mut problems = Vec::new();
        if !mux::zellij::is_pane_name(name) || !bore {
            problems.push(format!(
                "{surface} is not a pane name of ours that a pane bore"
            ));
        }
        if runs.len() != 1 {
            problems.push(format!("{} runs: {runs:?}", runs.len()));
        }
        let in_pane = seen.story_after.get(name).map(u64::to_string);
        for run in &runs {
            if Some(&run.pane) != in_pane.as_ref() {
                problems.push(format!(
                    "ran in pane {}, not {name}'s ({in_pane:?})",
                    run.pane
                ));
            }
            if run.dir != agents[n].0.to_string_lossy() || !run.args.ends_with(&agents[n].1) {
                problems.push(format!("ran as {run:?}"));
            }
        }
        let started = outcomes(surface)
            .iter()
            .filter(|applied| {
                *applied == "started in the existing pane"
                    || *applied == "created the session from its saved layout and started in it"
            })
            .count();
        if started != 1 {
            problems.push(format!(
                "started by {started} of the two restores ({:?}): {first_stderr}",
                outcomes(surface)
            ));
        }
        rows.push(Row {
            surface: surface.clone(),
            case: "SIGKILL, resurrected, 2 restores".to_string(),
            expected: format!("resume {} in its pane", &agents[n].1[..8]),
            got: match runs.as_slice() {
                [run] => format!("resume {} in pane {}", &agents[n].1[..8], run.pane),
                _ => format!("{} runs", runs.len()),
            },
            problems,
        });
    }
    let busy = &seen.surfaces[3];
    let applied = outcomes(busy).join("; ");
    let mut problems = Vec::new();
    if !outcomes(busy)
        .iter()
        .all(|applied| applied.starts_with("skipped: the pane is busy"))
    {
        problems.push(format!("applied {applied:?}"));
    }
    if seen.busy_pane.0 != seen.busy_pane.1 {
        problems.push(format!("the busy pane changed: {:?}", seen.busy_pane));
    }
    rows.push(Row {
        surface: busy.clone(),
        case: "busy pane".to_string(),
        expected: "skipped, untouched".to_string(),
        got: applied,
        problems,
    });
    let (before, after) = &seen.renumbered;
    let side = &seen.named[3].0;
    let renumbered = before.get(side) != after.get(side);
    rows.push(Row {
        surface: busy.clone(),
        case: "pane id after resurrection".to_string(),
        expected: "renumbered, found by name".to_string(),
        got: format!("{:?} then {:?}", before.get(side), after.get(side)),
        problems: if renumbered {
            Vec::new()
        } else {
            vec![format!("{before:?} then {after:?}")]
        },
    });
    let (code, second, second_stderr) =
        (&seen.second.code, &seen.second.applied, &seen.second.stderr);
    let claimed = seen.surfaces[..3].iter().all(|surface| {
        second.get(surface).and_then(Value::as_str)
            == Some("skipped: the pane is busy running sleep")
    });
    rows.push(Row {
        surface: "(all panes)".to_string(),
        case: "second restore".to_string(),
        expected: "starts nothing".to_string(),
        got: format!("{} runs in all", seen.runs_in_all),
        problems: if seen.runs_in_all == 3 && claimed && *code == Some(0) {
            Vec::new()
        } else {
            vec![format!("exit {code:?}, {second:?}: {second_stderr}")]
        },
    });
    rows
}
