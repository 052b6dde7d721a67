//! `crash-resume restore --apply tmux` against a real, private tmux server: panes bound through
//! the real hook run in them, the server killed, a new server with the same layout, then the
//! resume command typed into the right panes (a stand-in `claude` writes down where and how it
//! was started), nothing typed twice by two restores at once, a busy pane left alone, and a
//! missing pane, window or session created in the recorded working dir.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::Sandbox;
use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, claude_dir, claude_resume_command, claude_runs,
    crash_resume_agent, git_work_dir, install_claude_stand_in, server_name, session_start, uuid,
    wait_until, write_transcript,
};

const HOUR: Duration = Duration::from_secs(3600);

/// `crash-resume [--json] restore ARGS`, which must succeed.
fn restore(env: &Sandbox, json: bool, args: &[&str]) -> Output {
    let mut command = crash_resume_agent(env);
    if json {
        command.arg("--json");
    }
    let output = command
        .arg("restore")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "restore {args:?} ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The surfaces of a `--json` restore's output, by id.
fn surfaces(output: &Output) -> BTreeMap<String, Value> {
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["version"], 1, "{document}");
    document["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["surface"].as_str().unwrap().to_string(), item.clone()))
        .collect()
}

/// One run of the stand-in `claude`: where it ran and how it was started.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ClaudeRun {
    surface: String,
    pwd: PathBuf,
    oldpwd: PathBuf,
    config: PathBuf,
    args: String,
}

/// The stand-in's runs so far, each pane id turned into its surface by asking tmux.
fn runs(server: &TmuxServer, env: &Sandbox) -> Vec<ClaudeRun> {
    let mut runs: Vec<ClaudeRun> = claude_runs(env)
        .iter()
        .map(|line| {
            let field = |name: &str, next: Option<&str>| {
                let start = line.find(&format!("{name}=")).unwrap() + name.len() + 1;
                let end = next.map_or(line.len(), |next| line.find(&format!(" {next}=")).unwrap());
                line[start..end].to_string()
            };
            let pane = field("pane", Some("pwd"));
            ClaudeRun {
                surface: format!(
                    "tmux:{}",
                    server.display(&pane, "#{session_name}:#{window_index}.#{pane_index}")
                ),
                pwd: field("pwd", Some("oldpwd")).into(),
                oldpwd: field("oldpwd", Some("config")).into(),
                config: field("config", Some("args")).into(),
                args: field("args", None),
            }
        })
        .collect();
    runs.sort();
    runs
}

fn expected_run(
    env: &Sandbox,
    place: &PanePlace,
    cwd: &Path,
    started_in: &Path,
    session: &str,
) -> ClaudeRun {
    ClaudeRun {
        surface: place.surface(),
        pwd: cwd.to_path_buf(),
        oldpwd: started_in.to_path_buf(),
        config: claude_dir(env),
        args: format!("--resume {session}"),
    }
}

/// How many times the pane shows a typed resume command.
fn resume_lines(server: &TmuxServer, place: &PanePlace) -> usize {
    server
        .capture(&place.target())
        .lines()
        .filter(|line| line.contains("claude --resume"))
        .count()
}

#[test]
fn restore_after_a_tmux_crash_types_each_command_into_its_pane_once() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    // (place, working dir, session, whether its transcript exists)
    let panes = [
        (
            PanePlace::new("work", 0, 0),
            git_work_dir(&env, "alpha", ""),
            uuid(1),
            true,
        ),
        (
            PanePlace::new("work", 0, 1),
            git_work_dir(&env, "beta", "my dir"),
            uuid(2),
            true,
        ),
        (
            PanePlace::new("work", 1, 0),
            git_work_dir(&env, "gamma", ""),
            uuid(3),
            false,
        ),
    ];
    let layout: Vec<(PanePlace, PathBuf, &str)> = panes
        .iter()
        .map(|(place, cwd, _, _)| (place.clone(), cwd.clone(), PANE_SHELL))
        .collect();
    let name = server_name("restore");

    // Before the crash: each pane's agent fired its SessionStart hook.
    let server = TmuxServer::start(&env, &name, &layout);
    for (place, cwd, session, has_transcript) in &panes {
        if *has_transcript {
            write_transcript(&config, cwd, session, HOUR);
        }
        server.run_hook_in_pane(
            &env,
            &place.target(),
            &session_start(session, cwd, "startup"),
        );
    }
    let entries = env.entries();
    assert_eq!(
        entries.keys().collect::<Vec<_>>(),
        ["tmux:work:0.0", "tmux:work:0.1", "tmux:work:1.0"]
    );
    server.kill_and_wait();
    drop(server);

    // After the reboot: the same layout, every pane an idle shell in the home dir.
    let home = env.home();
    let layout: Vec<(PanePlace, PathBuf, &str)> = panes
        .iter()
        .map(|(place, _, _, _)| (place.clone(), home.clone(), PANE_SHELL))
        .collect();
    let server = TmuxServer::start(&env, &name, &layout);

    let plan = surfaces(&restore(&env, true, &[]));
    assert_eq!(
        plan.keys().collect::<Vec<_>>(),
        ["tmux:work:0.0", "tmux:work:0.1", "tmux:work:1.0"]
    );
    for (place, cwd, session, has_transcript) in &panes {
        let item = &plan[&place.surface()];
        assert_eq!(item["held_session"], *session, "{item}");
        assert_eq!(item["held_elsewhere"], Value::Null, "{item}");
        assert_eq!(item["applied"], Value::Null, "{item}");
        if *has_transcript {
            assert_eq!(item["verdict"], "resume", "{item}");
            assert_eq!(item["session_id"], *session, "{item}");
            assert_eq!(
                item["command"],
                claude_resume_command(&env, cwd, session),
                "{item}"
            );
        } else {
            assert_eq!(item["verdict"], "fresh", "{item}");
            assert_eq!(item["command"], Value::Null, "{item}");
        }
    }
    assert_eq!(
        claude_runs(&env),
        Vec::<String>::new(),
        "the plan alone runs nothing"
    );

    let applied = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    for (place, _, _, has_transcript) in &panes {
        let item = &applied[&place.surface()];
        let expected = if *has_transcript {
            Value::from("typed into the existing pane")
        } else {
            Value::Null
        };
        assert_eq!(item["applied"], expected, "{item}");
    }
    for (place, cwd, session, _) in panes.iter().filter(|pane| pane.3) {
        let command = claude_resume_command(&env, cwd, session);
        wait_until(&format!("{command} in {}", place.target()), || {
            server
                .capture(&place.target())
                .contains(&command)
                .then_some(())
        });
    }
    wait_until("the stand-in claude to run twice", || {
        (claude_runs(&env).len() >= 2).then_some(())
    });
    let expected: Vec<ClaudeRun> = panes
        .iter()
        .filter(|pane| pane.3)
        .map(|(place, cwd, session, _)| expected_run(&env, place, cwd, &home, session))
        .collect();
    assert_eq!(runs(&server, &env), expected);
    let fresh = &panes[2].0;
    assert_eq!(
        resume_lines(&server, fresh),
        0,
        "nothing typed into the fresh pane"
    );

    // Two restores at once: both find every surface claimed, and neither types anything.
    let children: Vec<std::process::Child> = (0..2)
        .map(|_| {
            crash_resume_agent(&env)
                .args([
                    "--json",
                    "restore",
                    "--apply",
                    "tmux",
                    "--tmux-socket",
                    &name,
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let again = surfaces(&output);
        for (place, _, _, has_transcript) in &panes {
            let item = &again[&place.surface()];
            let expected = if *has_transcript {
                Value::from("skipped: another restore claimed it")
            } else {
                Value::Null
            };
            assert_eq!(item["applied"], expected, "{item}");
        }
    }
    // Whatever either had typed would run before this marker does.
    for (n, (place, _, _, _)) in panes.iter().enumerate() {
        server.barrier(&place.target(), &format!("BARRIER-{n}"));
    }
    assert_eq!(runs(&server, &env), expected, "no second run");
    for (place, _, _, has_transcript) in &panes {
        assert_eq!(
            resume_lines(&server, place),
            usize::from(*has_transcript),
            "{place:?}: {}",
            server.capture(&place.target())
        );
    }
    server.kill_and_wait();
}

#[test]
fn restore_creates_what_is_missing_and_leaves_a_busy_pane_alone() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let home = env.home();
    // (place, working dir, session, what the restore finds there)
    let panes = [
        (
            PanePlace::new("work", 0, 0),
            git_work_dir(&env, "idle", ""),
            uuid(1),
            "typed into the existing pane",
        ),
        (
            PanePlace::new("work", 0, 1),
            git_work_dir(&env, "split", ""),
            uuid(2),
            "split the window and typed into the new pane",
        ),
        (
            PanePlace::new("work", 1, 0),
            git_work_dir(&env, "busy", ""),
            uuid(3),
            "skipped: the pane is busy running sleep",
        ),
        (
            PanePlace::new("work", 2, 0),
            git_work_dir(&env, "window", "sub dir"),
            uuid(4),
            "created the window and typed into it",
        ),
        (
            PanePlace::new("other", 3, 0),
            git_work_dir(&env, "session", ""),
            uuid(5),
            "created the session and typed into it",
        ),
    ];
    let layout: Vec<(PanePlace, PathBuf, &str)> = panes
        .iter()
        .map(|(place, cwd, _, _)| (place.clone(), cwd.clone(), PANE_SHELL))
        .collect();
    let name = server_name("missing");
    let server = TmuxServer::start(&env, &name, &layout);
    for (place, cwd, session, _) in &panes {
        write_transcript(&config, cwd, session, HOUR);
        server.run_hook_in_pane(
            &env,
            &place.target(),
            &session_start(session, cwd, "startup"),
        );
    }
    assert_eq!(env.entries().len(), 5);
    server.kill_and_wait();
    drop(server);

    // The new server has only window 0 with one pane, and window 1 running something.
    let server = TmuxServer::start(
        &env,
        &name,
        &[
            (panes[0].0.clone(), home.clone(), PANE_SHELL),
            (panes[2].0.clone(), home.clone(), "sleep 1000"),
        ],
    );
    let output = restore(&env, false, &["--apply", "tmux", "--tmux-socket", &name]);
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: BTreeMap<&str, &str> = text
        .lines()
        .map(|line| (line.split_once('\t').unwrap().0, line))
        .collect();
    assert_eq!(lines.len(), 5, "{text}");
    for (place, cwd, session, applied) in &panes {
        let line = lines[place.surface().as_str()];
        assert!(line.ends_with(&format!("\t[{applied}]")), "{line}");
        assert!(
            line.contains(&claude_resume_command(&env, cwd, session)),
            "{line}"
        );
    }

    wait_until("the stand-in claude to run in four panes", || {
        (claude_runs(&env).len() >= 4).then_some(())
    });
    // The existing pane's shell was in the home dir; the created ones start in the recorded dir.
    let mut expected: Vec<ClaudeRun> = panes
        .iter()
        .filter(|pane| !pane.3.starts_with("skipped"))
        .map(|(place, cwd, session, applied)| {
            let started_in = if applied.starts_with("typed into the existing") {
                home.as_path()
            } else {
                cwd.as_path()
            };
            expected_run(&env, place, cwd, started_in, session)
        })
        .collect();
    expected.sort();
    assert_eq!(runs(&server, &env), expected);

    let busy = &panes[2].0;
    assert_eq!(
        server.display(&busy.target(), "#{pane_current_command}"),
        "sleep"
    );
    assert_eq!(
        resume_lines(&server, busy),
        0,
        "nothing typed into the busy pane"
    );
    let mut present: Vec<String> = server
        .panes()
        .into_iter()
        .map(|(surface, _)| surface)
        .collect();
    present.sort();
    let mut wanted: Vec<String> = panes.iter().map(|pane| pane.0.surface()).collect();
    wanted.sort();
    assert_eq!(present, wanted, "every recorded pane exists again");
    server.kill_and_wait();
}

/// A pane busy at the first restore, freed by the user, is restored by the next one: skipping a
/// busy pane must not leave the surface claimed.
#[test]
fn a_pane_busy_at_the_first_restore_is_restored_by_the_next() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let place = PanePlace::new("work", 0, 0);
    let cwd = git_work_dir(&env, "later", "");
    let session = uuid(1);
    let name = server_name("busy");
    let server = TmuxServer::start(&env, &name, &[(place.clone(), cwd.clone(), PANE_SHELL)]);
    write_transcript(&claude_dir(&env), &cwd, &session, HOUR);
    server.run_hook_in_pane(
        &env,
        &place.target(),
        &session_start(&session, &cwd, "startup"),
    );
    server.kill_and_wait();
    drop(server);

    let server = TmuxServer::start(&env, &name, &[(place.clone(), env.home(), "sleep 1000")]);
    let first = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    assert_eq!(
        first[&place.surface()]["applied"],
        "skipped: the pane is busy running sleep"
    );

    // The user ends what ran there; the pane is an idle shell now.
    server.tmux(&["respawn-pane", "-k", "-t", &place.target(), PANE_SHELL]);
    wait_until("the pane to be an idle shell", || {
        (server.display(&place.target(), "#{pane_current_command}") == "bash").then_some(())
    });
    let second = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    assert_eq!(
        second[&place.surface()]["applied"],
        "typed into the existing pane"
    );
    wait_until("the stand-in claude to run", || {
        (claude_runs(&env).len() == 1).then_some(())
    });
    assert_eq!(
        runs(&server, &env),
        [expected_run(&env, &place, &cwd, &env.home(), &session)]
    );
    server.kill_and_wait();
}
