//! `crash-resume resume-cmd` agrees with the preflight and with `restore`: the command it
//! prints is the one `restore` would run, or nothing (exit 4) when there is nothing to resume
//! or the session is open already, so `cmd=$(crash-resume resume-cmd S) && eval "$cmd"` is safe.

use std::process::Output;

use serde_json::Value;

use crate::harness::{
    claude_dir, claude_resume_command, crash_resume_agent, git_work_dir, plan_by_surface, restore,
    uuid, write_transcript,
};
use crate::restore::{bind, fake_claude_process, write_running_session};
use crate::{HOUR, Sandbox};

fn resume_cmd(env: &Sandbox, args: &[&str]) -> Output {
    crash_resume_agent(env)
        .arg("resume-cmd")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const AN_HOUR: std::time::Duration = std::time::Duration::from_millis(HOUR);

#[test]
fn resume_cmd_prints_what_restore_would_run_for_each_verdict() {
    let env = Sandbox::default();
    let config = claude_dir(&env);
    // resume: the recorded transcript is where `claude --resume` looks.
    let plain = git_work_dir(&env, "plain", "");
    write_transcript(&config, &plain, &uuid(1), AN_HOUR);
    bind(&env, "resume", &uuid(1), &plain);
    // recover: the recorded transcript is gone, another conversation of the dir is on disk.
    let deleted = git_work_dir(&env, "deleted", "");
    bind(&env, "recover", &uuid(2), &deleted);
    write_transcript(&config, &deleted, &uuid(3), AN_HOUR);
    // fresh: nothing of the dir is on disk.
    let empty = git_work_dir(&env, "empty", "");
    bind(&env, "fresh", &uuid(4), &empty);

    let plan = plan_by_surface(&restore(&env, true, &["--all"]).stdout);
    assert_eq!(plan["recover"]["verdict"], "recover", "{}", plan["recover"]);
    assert_eq!(plan["fresh"]["verdict"], "fresh", "{}", plan["fresh"]);

    let resumed = resume_cmd(&env, &["resume"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_eq!(
        text(&resumed.stdout),
        format!("{}\n", claude_resume_command(&env, &plain, &uuid(1)))
    );
    assert_eq!(text(&resumed.stderr), "");

    // recover: the conversation that would really be resumed, as `restore` gives it, and a
    // note that it is not the recorded one.
    let recovered = resume_cmd(&env, &["recover"]);
    assert_eq!(
        recovered.status.code(),
        Some(0),
        "{}",
        text(&recovered.stderr)
    );
    let command = claude_resume_command(&env, &deleted, &uuid(3));
    assert_eq!(text(&recovered.stdout), format!("{command}\n"));
    assert_eq!(plan["recover"]["command"], command.as_str());
    assert_eq!(
        text(&recovered.stderr),
        format!(
            "note: the recorded session {} of surface recover is not on disk; this resumes {}, the conversation of the same dir that `crash-resume restore` would resume\n",
            uuid(2),
            uuid(3)
        )
    );

    let output = resume_cmd(&env, &["fresh"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert_eq!(text(&output.stdout), "");
    assert_eq!(
        stderr,
        format!(
            "the session {} of surface fresh cannot be resumed: the preflight says fresh (its conversation is not on disk, or its working dir is gone); `crash-resume preflight fresh` shows each step\n",
            uuid(4)
        )
    );

    // --json: the verdict and the session resumed, beside the one recorded.
    let json = crash_resume_agent(&env)
        .args(["--json", "resume-cmd", "recover"])
        .output()
        .unwrap();
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(document["verdict"], "recover");
    assert_eq!(document["session"], uuid(3));
    assert_eq!(document["held_session"], uuid(2));
    assert_eq!(document["command"], command.as_str());
    let json = crash_resume_agent(&env)
        .args(["--json", "resume-cmd", "fresh"])
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(4));
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(document["verdict"], "fresh");
    assert_eq!(document["command"], Value::Null);
    assert_eq!(document["session"], Value::Null);
}

/// `unknown` (nothing to check against, as for a provider the preflight does not know): the
/// recorded session's command, as before.
#[test]
fn resume_cmd_gives_the_recorded_session_when_nothing_can_be_checked() {
    let env = Sandbox::default();
    crate::record(&env, "elsewhere", "ses-1", "proj");
    let output = resume_cmd(&env, &["elsewhere"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("--resume ses-1"),
        "{}",
        text(&output.stdout)
    );
    let plan = plan_by_surface(&restore(&env, true, &[]).stdout);
    assert_eq!(
        plan["elsewhere"]["verdict"], "unknown",
        "{}",
        plan["elsewhere"]
    );
}

/// A session a running agent holds is never handed out again: nothing on stdout, exit 4, the
/// pid named; once the agent has exited, the command comes back.
#[test]
fn resume_cmd_refuses_a_session_a_running_agent_holds() {
    let env = Sandbox::default();
    let config = claude_dir(&env);
    let cwd = git_work_dir(&env, "proj", "");
    write_transcript(&config, &cwd, &uuid(1), AN_HOUR);
    bind(&env, "held", &uuid(1), &cwd);
    let agent = fake_claude_process();
    write_running_session(&config, agent.pid(), &uuid(1), &cwd);

    let output = resume_cmd(&env, &["held"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert_eq!(text(&output.stdout), "");
    assert!(
        stderr.contains(&format!(
            "the session {} of surface held is held by a running agent (pid {}): it is open already",
            uuid(1),
            agent.pid()
        )),
        "{stderr}"
    );
    let json = crash_resume_agent(&env)
        .args(["--json", "resume-cmd", "held"])
        .output()
        .unwrap();
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        document["held_elsewhere"],
        format!("a running agent (pid {})", agent.pid())
    );
    assert_eq!(document["held_by"]["kind"], "agent", "{document}");
    assert_eq!(document["held_by"]["pid"], agent.pid(), "{document}");
    assert_eq!(document["command"], Value::Null);

    drop(agent);
    let output = resume_cmd(&env, &["held"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        format!("{}\n", claude_resume_command(&env, &cwd, &uuid(1)))
    );
}

/// A mistyped surface names the nearest recorded one; one far from any points at `list`.
#[test]
fn an_unknown_surface_suggests_the_nearest_recorded_one() {
    let env = Sandbox::default();
    crate::record(&env, "tmux:work:0.1", "ses-1", "proj");
    for command in ["resume-cmd", "lookup", "preflight", "touch", "forget"] {
        let output = crash_resume_agent(&env)
            .args([command, "tmux:wrok:0.1"])
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{command}: {stderr}");
        assert!(
            stderr
                .contains("did you mean tmux:work:0.1? (`crash-resume list` shows every surface)"),
            "{command}: {stderr}"
        );
    }
    let output = resume_cmd(&env, &["cmux-pane-42"]);
    let stderr = text(&output.stderr);
    assert_eq!(
        stderr,
        "no session recorded for surface cmux-pane-42; `crash-resume list` shows the recorded surfaces\n"
    );
    let empty = Sandbox::default();
    let output = resume_cmd(&empty, &["tmux:work:0.1"]);
    assert!(
        text(&output.stderr).contains("the index is empty"),
        "{}",
        text(&output.stderr)
    );
}
