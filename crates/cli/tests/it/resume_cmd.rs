//! `crash-resume resume-cmd` agrees with the preflight and with `restore`: the command it
//! prints is the one `restore` would run, or nothing (exit 4) when there is nothing to resume
//! or the session is open already, so `cmd=$(crash-resume resume-cmd S) && eval "$cmd"` is safe.
//! The command per launcher profile; a max age (here and in `restore --max-age`) is measured from
//! the later of the entry's `last_active` and its transcript's modification time, since typing
//! prompts runs no hook that records. Every launcher-config error is one plain line with its
//! cause once.

use std::fs;
use std::process::Output;
use std::time::Duration;

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use serde_json::Value;

use crate::harness::{
    claude_dir, claude_resume_command, crash_resume_agent, git_work_dir, plan_by_surface, restore,
    uuid, write_transcript,
};
use crate::messages::{once, plain, refused};
use crate::restore::{
    bind, fake_claude_process, run_as_agent, three_surfaces, write_running_session,
};
use crate::snapshot::assert_cli_snapshot;
use crate::{DAY, HOUR, Sandbox, check, crash_resume, entry, now_millis, record, sandbox_with};

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

const AN_HOUR: Duration = Duration::from_millis(HOUR);

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

/// `unknown` (nothing to check against, as for an agent the preflight does not know): the
/// recorded session's command, as before.
#[test]
fn resume_cmd_gives_the_recorded_session_when_nothing_can_be_checked() {
    let env = Sandbox::default();
    record(&env, "elsewhere", "ses-1", "proj");
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
    record(&env, "tmux:work:0.1", "ses-1", "proj");
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

#[test]
fn resume_commands_per_profile() {
    let env = sandbox_with(&[
        ("orc", "sid-orc", "orchestrator"),
        ("golem", "sid-golem", "golems"),
        ("mixed", "sid-mixed", "MyRepo"),
    ]);

    // (how the profile is chosen, surface, expected command)
    let cases: [(Option<&str>, Option<&str>, &str, &str); 8] = [
        (Some("golems"), None, "orc", "orcClaude --resume sid-orc"),
        (
            Some("golems"),
            None,
            "golem",
            "golemsClaude --resume sid-golem",
        ),
        (
            Some("golems"),
            None,
            "mixed",
            "myrepoClaude --resume sid-mixed",
        ),
        (None, Some("golems"), "orc", "orcClaude --resume sid-orc"),
        (
            None,
            Some("golems"),
            "golem",
            "golemsClaude --resume sid-golem",
        ),
        (None, None, "orc", "claude --resume sid-orc"),
        (None, None, "golem", "claude --resume sid-golem"),
        (None, None, "mixed", "claude --resume sid-mixed"),
    ];
    for (flag, variable, surface, expected) in cases {
        let mut command = crash_resume(&env);
        if let Some(profile) = flag {
            command.args(["--profile", profile]);
        }
        if let Some(profile) = variable {
            command.env("CRASH_RESUME_PROFILE", profile);
        }
        command
            .args(["resume-cmd", surface])
            .assert()
            .code(0)
            .stdout(format!("{expected}\n"))
            .stderr("");
    }
}

#[test]
fn default_launcher_runs_in_the_sessions_dir_with_its_config_dir() {
    let env = Sandbox::default();
    let cwd = crate::harness::make_dir(&env.root().join("my proj"));
    let config = env.root().join(".claude-work");
    let session = uuid(1);
    write_transcript(&config, &cwd, &session, Duration::ZERO);
    let (cwd, config) = (cwd.to_str().unwrap(), config.to_str().unwrap());
    crash_resume(&env)
        .args(["record", "S", &session, "proj", "--cwd", cwd])
        .args(["--config-dir", config])
        .assert()
        .success();
    check(
        &env,
        &["resume-cmd", "S"],
        0,
        predicate::eq(format!(
            "cd '{cwd}' && CLAUDE_CONFIG_DIR={config} claude --resume {session}\n"
        )),
        is_empty(),
    );
    let stored = env.entry("S").unwrap();
    assert_eq!(stored["cwd"], cwd);
    assert_eq!(stored["config_dir"], config);

    // The default config dir is not spelled out; a session without a dir runs where it is.
    record(&env, "T", "sid-2", "proj");
    check(
        &env,
        &["resume-cmd", "T"],
        0,
        predicate::eq("claude --resume sid-2\n"),
        is_empty(),
    );

    // A relative --cwd is recorded as an absolute dir (against the current dir).
    crash_resume(&env)
        .args(["record", "U", "sid-3", "proj", "--cwd", "sub dir"])
        .assert()
        .success();
    let expected_cwd = env.root().join("sub dir");
    assert_eq!(
        env.entry("U").unwrap()["cwd"],
        expected_cwd.to_str().unwrap()
    );
}

#[test]
fn no_max_age_never_denies() {
    let env = Sandbox::default();
    let years_ago = now_millis() - 3 * 365 * DAY;
    env.write_index(&[entry("S", "sid-ancient", "golems", years_ago, years_ago)]);
    let before = env.index_bytes();
    check(
        &env,
        &["resume-cmd", "S"],
        0,
        predicate::eq("claude --resume sid-ancient\n"),
        is_empty(),
    );
    check(
        &env,
        &["--profile", "golems", "resume-cmd", "S"],
        0,
        predicate::eq("golemsClaude --resume sid-ancient\n"),
        is_empty(),
    );
    assert_eq!(env.index_bytes(), before, "resume-cmd writes nothing");
}

#[test]
fn stale_session_past_max_age_is_not_offered() {
    let env = Sandbox::default();
    let three_hours_ago = now_millis() - 3 * HOUR;
    env.write_index(&[entry(
        "S",
        "sid-stale",
        "REPO",
        three_hours_ago,
        three_hours_ago,
    )]);

    let cases: [(&str, i32); 6] = [
        ("2h", 4),
        ("7200000", 4),
        ("90m", 4),
        ("4h", 0),
        ("14400000", 0),
        ("1d", 0),
    ];
    for (max_age, code) in cases {
        let expected_stdout = if code == 0 {
            "claude --resume sid-stale\n"
        } else {
            ""
        };
        let assert = crash_resume(&env)
            .args(["resume-cmd", "S", max_age])
            .assert()
            .code(code)
            .stdout(expected_stdout.to_string());
        if code == 4 {
            assert.stderr(contains("last active").and(contains("max age")));
        } else {
            assert.stderr("");
        }
    }
    // Without a max age the stale session is still offered: staleness is opt-in.
    check(
        &env,
        &["resume-cmd", "S"],
        0,
        predicate::eq("claude --resume sid-stale\n"),
        is_empty(),
    );
}

#[test]
fn resume_cmd_counts_a_recent_transcript_as_activity() {
    let env = three_surfaces();
    let busy = run_as_agent(&env, &["resume-cmd", "busy", "2h"]);
    assert_eq!(
        busy.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&busy.stderr)
    );
    assert!(String::from_utf8_lossy(&busy.stdout).contains(&uuid(1)));
    for surface in ["idle", "gone"] {
        let output = run_as_agent(&env, &["resume-cmd", surface, "2h"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{surface}: {stderr}");
        assert!(stderr.contains("was last active 3h"), "{surface}: {stderr}");
    }
    // No max age: staleness is opt-in, every one is resumable.
    assert_eq!(
        run_as_agent(&env, &["resume-cmd", "idle"]).status.code(),
        Some(0)
    );
}

/// A plain number is milliseconds: `restore` says it back with its unit, and a number under
/// 1000 but 0 (`90`, meant as minutes) gets a warning, for every command that takes a max age.
#[test]
fn a_plain_number_max_age_is_said_back_as_milliseconds() {
    let env = three_surfaces();
    let output = run_as_agent(&env, &["restore", "--max-age", "90"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: the max age 90 is 90 milliseconds (a plain number is milliseconds); write 90s, 90m, 90h or 90d for longer"),
        "{stderr}"
    );
    assert!(stderr.contains("was active within 90ms"), "{stderr}");
    // 1000 and more, or a unit, or 0 (the same in every unit): no warning.
    for max_age in ["1000", "90m", "0"] {
        let output = run_as_agent(&env, &["restore", "--max-age", max_age]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("warning"), "{max_age}: {stderr}");
    }
    let output = run_as_agent(&env, &["restore", "--max-age", "7200000"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("busy\t"), "{text}");
    // The other commands that take a max age warn the same way (prune last: it drops them).
    for (args, said) in [
        (
            &["resume-cmd", "busy", "5"][..],
            "the max age 5 is 5 milliseconds",
        ),
        (&["prune", "999"], "the max age 999 is 999 milliseconds"),
    ] {
        let output = run_as_agent(&env, args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}

/// The age `resume-cmd` says an entry is past its max age: never one that is within it, even
/// when the age is under a second or a few hundred milliseconds past a whole second.
#[test]
fn an_age_past_the_max_age_is_said_precisely_enough_to_be_past_it() {
    for (ago, max_age) in [(5, "1"), (1500, "1s"), (1500, "1"), (3 * HOUR + 10, "3h")] {
        let env = Sandbox::default();
        let last_active = now_millis() - ago;
        env.write_index(&[entry("m1", "sid-m1", "REPO", last_active, last_active)]);
        let output = crash_resume(&env)
            .args(["resume-cmd", "m1", max_age])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(4),
            "{ago} ms, {max_age}: {stderr}"
        );
        let said = stderr
            .split_once("last active ")
            .and_then(|(_, rest)| rest.split_once(" ago"))
            .map(|(age, _)| age)
            .unwrap_or_else(|| panic!("an age in: {stderr}"));
        let said = humantime::parse_duration(said).unwrap();
        let limit = humantime::parse_duration(max_age)
            .unwrap_or_else(|_| Duration::from_millis(max_age.parse().unwrap()));
        assert!(said > limit, "{said:?} is not past {limit:?}: {stderr}");
    }
    // A just-recorded entry, as the review ran it: resumed, or an age past 1 ms.
    let env = Sandbox::default();
    crash_resume(&env)
        .args(["record", "m1", "s1-zz", "r", "--provider", "claude"])
        .assert()
        .success();
    let output = crash_resume(&env)
        .args(["resume-cmd", "m1", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(" 0s ago"), "{stderr}");
}

fn write_launchers(env: &Sandbox, text: &str) -> String {
    let dir = env.config_home().join("crash-resume");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("launchers.toml");
    fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

pub fn resume_cmd_of_s(env: &Sandbox) -> assert_cmd::Command {
    let mut command = crash_resume(env);
    command.args(["resume-cmd", "S"]);
    command
}

#[test]
fn every_launcher_config_error_is_one_plain_line_with_its_cause_once() {
    // (the snapshot's name, launchers.toml, exit code)
    let cases: &[(&str, &str, i32)] = &[
        ("launchers_unknown_field", "nope = 1", 2),
        (
            "launchers_unknown_placeholder",
            "[repos.api]\ncommand = \"apiClaude {nope} {session}\"",
            2,
        ),
        (
            "launchers_without_session",
            "[repos.api]\ncommand = \"apiClaude --continue\"",
            2,
        ),
        ("launchers_newer_version", "version = 2", 2),
        ("launchers_unknown_profile", "profile = \"nope\"", 2),
    ];
    for (name, text, code) in cases {
        let env = Sandbox::default();
        record(&env, "S", "SID", "api");
        let path = write_launchers(&env, text);
        let stderr = refused(resume_cmd_of_s(&env), *code);
        once(&stderr, &path);
        plain(&stderr);
        assert_cli_snapshot!(&env, *name, &stderr);
    }
}

#[test]
fn an_unreadable_launcher_config_is_a_failure_with_its_cause_once() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "api");
    fs::create_dir_all(env.config_home().join("crash-resume/launchers.toml")).unwrap();
    let stderr = refused(resume_cmd_of_s(&env), 1);
    plain(&stderr);
    assert_cli_snapshot!(&env, "launchers_a_directory", &stderr);
}

#[test]
fn an_unknown_profile_reads_the_same_from_the_flag_and_from_the_file() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "api");
    let mut from_flag = resume_cmd_of_s(&env);
    from_flag.args(["--profile", "nope"]);
    let from_flag = refused(from_flag, 2);
    let path = write_launchers(&env, "profile = \"nope\"");
    let from_file = refused(resume_cmd_of_s(&env), 2);
    assert_eq!(
        from_file.replace(&format!(" (chosen by `profile` in {path})"), ""),
        from_flag
    );
}
