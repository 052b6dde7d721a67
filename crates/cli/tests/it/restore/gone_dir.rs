//! A session whose recorded working dir is gone (deleted or renamed since the crash): the
//! preflight judges what the agent does started in the home dir, the plan's command has no
//! `cd` (which could only fail) and says where the agent starts, `resume-cmd` prints the same
//! command, and `restore --apply` starts the agent in the home dir. A relative working dir
//! (another tool's entry) counts as gone wherever the command runs.

use std::fs;
use std::path::PathBuf;
use std::process::Stdio;

use serde_json::Value;

use crate::Sandbox;
use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, claude_dir, claude_runs, crash_resume_agent, git_work_dir,
    install_claude_stand_in, plan_by_surface, restore, run_hook, server_name, session_start,
    shell_word, uuid, wait_until, write_transcript,
};

const AN_HOUR: std::time::Duration = std::time::Duration::from_millis(crate::HOUR);

/// A Claude Code session recorded in `tmux:work:0.0`, in a working dir deleted since: its
/// transcript stays in the config dir, and its id is a UUID, which Claude Code started in the
/// home dir finds in the other project folder.
fn gone_dir_session(env: &Sandbox) -> (PanePlace, PathBuf, String) {
    let place = PanePlace::new("work", 0, 0);
    let cwd = git_work_dir(env, "gone", "");
    let session = uuid(1);
    write_transcript(&claude_dir(env), &cwd, &session, AN_HOUR);
    run_hook(
        env,
        "claude",
        &[("CRASH_RESUME_SURFACE", &place.surface())],
        &session_start(&session, &cwd, "startup"),
    )
    .assert_silent_success("the session start");
    fs::remove_dir_all(&cwd).unwrap();
    (place, cwd, session)
}

/// The command that resumes `session` without a `cd`.
fn command_without_cd(env: &Sandbox, session: &str) -> String {
    format!(
        "CLAUDE_CONFIG_DIR={} claude --resume {session}",
        shell_word(claude_dir(env).to_str().unwrap())
    )
}

#[test]
fn the_plan_preflight_and_resume_cmd_start_the_agent_in_the_home_dir() {
    let env = Sandbox::default();
    let (place, cwd, session) = gone_dir_session(&env);
    let surface = place.surface();
    let home = env.home();
    let expected = command_without_cd(&env, &session);

    let plan = plan_by_surface(&restore(&env, true, &[]).stdout);
    let item = &plan[&surface];
    assert_eq!(item["verdict"], "resume", "{item}");
    assert_eq!(item["session_id"], session.as_str(), "{item}");
    assert_eq!(item["command"], expected.as_str(), "{item}");
    assert_eq!(item["cwd"], cwd.to_str().unwrap(), "{item}");
    assert_eq!(item["starts_in"], home.to_str().unwrap(), "{item}");

    let text = restore(&env, false, &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!(
            "(working dir {} is gone: starts in {})",
            cwd.display(),
            home.display()
        )),
        "{text}"
    );

    let preflight = crash_resume_agent(&env)
        .args(["--json", "preflight", &surface])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(preflight.status.code(), Some(0), "{preflight:?}");
    let document: Value = serde_json::from_slice(&preflight.stdout).unwrap();
    assert_eq!(document["verdict"], "resume", "{document}");
    let step = document["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|step| step["id"] == "working-dir")
        .unwrap_or_else(|| panic!("no working-dir step: {document}"));
    assert_eq!(step["ok"], false, "{step}");
    let detail = step["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{} is gone", cwd.display()))
            && detail.contains(&format!("in the home dir {}", home.display())),
        "{detail}"
    );

    let resume_cmd = crash_resume_agent(&env)
        .args(["resume-cmd", &surface])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(resume_cmd.status.code(), Some(0), "{resume_cmd:?}");
    assert_eq!(
        String::from_utf8_lossy(&resume_cmd.stdout),
        format!("{expected}\n")
    );
    let stderr = String::from_utf8_lossy(&resume_cmd.stderr);
    assert!(
        stderr.contains(&format!(
            "note: the working dir {} of surface {surface} is gone; the command has no `cd`: \
             run it from the home dir {}, where `crash-resume restore --apply` starts it",
            cwd.display(),
            home.display()
        )),
        "{stderr}"
    );
}

/// An entry another tool wrote with a relative working dir: it names no one dir, so it is
/// gone wherever `resume-cmd` and `restore` run, even beside a dir of that name.
#[test]
fn a_relative_working_dir_is_gone_wherever_the_command_runs() {
    let env = Sandbox::default();
    let copilot = crate::hook::copilot::copilot_home(&env);
    let session = uuid(7);
    let beside = crate::harness::make_dir(&env.root().join("proj"));
    crate::hook::copilot::copilot_session(&copilot, &session, &beside);
    let mut entry = crate::entry(
        "S",
        &session,
        "proj",
        crate::now_millis(),
        crate::now_millis(),
    );
    entry["provider"] = "copilot".into();
    entry["cwd"] = "proj".into();
    entry["config_dir"] = copilot.to_str().unwrap().into();
    env.write_index(&[entry]);
    for run_in in [env.root(), beside.as_path()] {
        let resume_cmd = crate::crash_resume(&env)
            .args(["resume-cmd", "S"])
            .current_dir(run_in)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&resume_cmd.stdout);
        let stderr = String::from_utf8_lossy(&resume_cmd.stderr);
        assert!(resume_cmd.status.success(), "{stderr}");
        assert!(
            !stdout.contains("cd "),
            "run in {}: {stdout}",
            run_in.display()
        );
        assert!(
            stderr.contains("the working dir proj of surface S is gone"),
            "{stderr}"
        );
        let plan = crate::crash_resume(&env)
            .args(["--json", "restore"])
            .current_dir(run_in)
            .output()
            .unwrap();
        let item = &plan_by_surface(&plan.stdout)["S"];
        assert_eq!(item["verdict"], "resume", "{item}");
        assert!(!item["command"].as_str().unwrap().contains("cd "), "{item}");
    }
}

#[test]
fn restore_apply_starts_the_agent_in_the_home_dir() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let (place, _cwd, session) = gone_dir_session(&env);
    let home = env.home();
    let name = server_name("gone-dir");
    let server = TmuxServer::start(&env, &name, &[(place.clone(), home.clone(), PANE_SHELL)]);

    let output = restore(&env, true, &["--apply", "tmux", "--tmux-socket", &name]);
    let applied = plan_by_surface(&output.stdout);
    assert_eq!(
        applied[&place.surface()]["applied"],
        "started in the existing pane",
        "{}",
        applied[&place.surface()]
    );
    let run = wait_until("the stand-in claude to run", || {
        claude_runs(&env).into_iter().next()
    });
    assert!(
        run.contains(&format!(" pwd={} ", home.display())),
        "the agent starts in the home dir: {run}"
    );
    assert!(run.ends_with(&format!("args=--resume {session}")), "{run}");
    server.kill_and_wait();
}
