//! `crash-resume restore`: the plan after a reboot, from surfaces the real hook bound. A cleanly
//! ended surface is left out unless `--all`; a session a live agent process still holds is reported
//! as held elsewhere and never resumed; a transcript close to Claude Code's retention cut-off is
//! flagged; a max age counts the transcript's activity; the plan is a table on a terminal and TSV
//! when piped; two Gemini panes in one dir with the cleanup on are said before anything starts;
//! FIFOs in the agents' dirs never hang it; a working dir gone since the crash (`gone_dir`).
//! `--apply` per multiplexer: `tmux`, `kitty` (feature `live-kitty`), `zellij` (feature
//! `live-zellij`), `wezterm` and `cmux` (through fakes that start what they are asked to).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use serde_json::{Value, json};

use crate::harness::{
    claude_dir, claude_resume_command, codex_home, crash_resume_agent, git_work_dir, make_dir,
    mkfifo, plan_by_surface, restore, run_hook, session_end, session_start, uuid, wait_until,
    write_transcript,
};
use crate::hook::copilot::{copilot_home, copilot_session, record_copilot};
use crate::list::{check_aligned, on_terminal, piped};
use crate::preflight::{SESSION_A, SESSION_B, gemini_home, record_claude, record_gemini};
use crate::snapshot::assert_cli_snapshot;
use crate::{Reaped, Sandbox, crash_resume, now_millis};

mod gone_dir;
#[cfg(feature = "live-kitty")]
mod kitty;
#[cfg(target_os = "linux")]
mod once_per_boot;
mod servers;
mod socket_deadline;
pub mod tmux;
mod wezterm;
#[cfg(feature = "live-zellij")]
mod zellij;

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);

/// Binds `surface` to `session` in `cwd` through the real hook.
pub fn bind(env: &Sandbox, surface: &str, session: &str, cwd: &Path) {
    run_hook(
        env,
        "claude",
        &[("CRASH_RESUME_SURFACE", surface)],
        &session_start(session, cwd, "startup"),
    )
    .assert_silent_success(surface);
}

/// Ends `surface`'s `session` with `reason` through the real hook.
fn end(env: &Sandbox, surface: &str, session: &str, cwd: &Path, reason: &str) {
    run_hook(
        env,
        "claude",
        &[("CRASH_RESUME_SURFACE", surface)],
        &session_end(session, cwd, reason),
    )
    .assert_silent_success(surface);
}

/// `crash-resume --json restore ARGS`, which must succeed; its surfaces by id.
fn restore_json(env: &Sandbox, args: &[&str]) -> BTreeMap<String, Value> {
    plan_by_surface(&restore(env, true, args).stdout)
}

/// `crash-resume restore ARGS` in text, which must succeed; its lines by surface.
fn restore_text(env: &Sandbox, args: &[&str]) -> Vec<(String, String)> {
    String::from_utf8(restore(env, false, args).stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (surface, _) = line.split_once('\t').expect("surface<TAB>...");
            (surface.to_string(), line.to_string())
        })
        .collect()
}

fn surfaces(plan: &BTreeMap<String, Value>) -> Vec<&str> {
    plan.keys().map(String::as_str).collect()
}

#[test]
fn a_cleanly_ended_surface_is_left_out_unless_all() {
    let env = Sandbox::default();
    let config = claude_dir(&env);
    let cwd = git_work_dir(&env, "proj", "");
    let sessions = [
        ("crashed", uuid(1)),
        ("exited", uuid(2)),
        ("logged-out", uuid(3)),
        ("cleared", uuid(4)),
        ("other-end", uuid(5)),
    ];
    for (surface, session) in &sessions {
        write_transcript(&config, &cwd, session, HOUR);
        bind(&env, surface, session, &cwd);
    }
    end(&env, "exited", &sessions[1].1, &cwd, "prompt_input_exit");
    end(&env, "logged-out", &sessions[2].1, &cwd, "logout");
    end(&env, "cleared", &sessions[3].1, &cwd, "clear");
    end(&env, "other-end", &sessions[4].1, &cwd, "other");

    let crashed = restore_json(&env, &[]);
    assert_eq!(surfaces(&crashed), ["cleared", "crashed", "other-end"]);
    let all = restore_json(&env, &["--all"]);
    assert_eq!(
        surfaces(&all),
        ["cleared", "crashed", "exited", "logged-out", "other-end"]
    );
    for (surface, session) in &sessions {
        let item = &all[*surface];
        let ended = ["exited", "logged-out"].contains(surface);
        assert_eq!(item["ended_cleanly"], ended, "{item}");
        assert_eq!(item["verdict"], "resume", "{item}");
        assert_eq!(item["session_id"], *session, "{item}");
        assert_eq!(item["held_session"], *session, "{item}");
        assert_eq!(item["provider"], "claude", "{item}");
        assert_eq!(item["repo"], "proj", "{item}");
        assert_eq!(item["cwd"], json!(cwd), "{item}");
        assert_eq!(
            item["command"],
            claude_resume_command(&env, &cwd, session),
            "{item}"
        );
        assert_eq!(item["held_elsewhere"], Value::Null, "{item}");
        assert_eq!(item["retention"], Value::Null, "{item}");
        assert_eq!(item["applied"], Value::Null, "{item}");
        if !ended {
            assert_eq!(&crashed[*surface], item);
        }
    }

    let text = restore_text(&env, &["--all"]);
    let exited = &text
        .iter()
        .find(|(surface, _)| surface == "exited")
        .unwrap()
        .1;
    assert!(exited.ends_with("\t(ended cleanly)"), "{exited}");
    assert_eq!(
        restore_text(&env, &[])
            .iter()
            .map(|(surface, _)| surface.as_str())
            .collect::<Vec<_>>(),
        ["cleared", "crashed", "other-end"]
    );
}

#[test]
fn nothing_to_restore_when_every_session_ended_cleanly() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    bind(&env, "done", &uuid(1), &cwd);
    end(&env, "done", &uuid(1), &cwd, "logout");
    assert_cmd::Command::from_std(crash_resume_agent(&env))
        .arg("restore")
        .assert()
        .success()
        .stdout(is_empty())
        .stderr(contains(
            "nothing to restore: no surface in the index whose session did not end cleanly",
        ));
    let all = restore_json(&env, &["--all"]);
    assert_eq!(surfaces(&all), ["done"]);
}

#[test]
fn a_session_without_transcript_has_nothing_to_resume_and_no_command() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    bind(&env, "fresh", &uuid(1), &cwd);
    let plan = restore_json(&env, &[]);
    let item = &plan["fresh"];
    assert_eq!(item["verdict"], "fresh", "{item}");
    assert_eq!(item["session_id"], Value::Null, "{item}");
    assert_eq!(item["command"], Value::Null, "{item}");
    let text = restore_text(&env, &[]);
    // surface, verdict, session, what happens, how long ago it was last active.
    let fields: Vec<&str> = text[0].1.split('\t').collect();
    assert_eq!(
        fields[1..4],
        ["fresh", "-", "nothing to resume"],
        "{text:?}"
    );
    assert!(fields[4].ends_with("s ago"), "{text:?}");
}

/// A process whose command line names `claude` (as Claude Code's does), doing nothing.
pub fn fake_claude_process() -> Reaped {
    let process = Reaped::new(
        Command::new("sleep")
            .arg0("claude")
            .arg("1000")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sleep"),
    );
    // Right after the spawn, under load, the kernel may not show the new command line yet.
    wait_until("the fake agent's command line", || {
        test_support::process::command_line(process.pid())
            .filter(|words| words.first().is_some_and(|first| first == "claude"))
    });
    process
}

/// Writes Claude Code's `<config dir>/sessions/<pid>.json` for a running process.
pub fn write_running_session(config: &Path, pid: u32, session: &str, cwd: &Path) -> PathBuf {
    let dir = config.join("sessions");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{pid}.json"));
    let record = json!({
        "pid": pid,
        "sessionId": session,
        "cwd": cwd,
        "startedAt": 1_796_000_000_000_u64,
        "kind": "interactive",
        "entrypoint": "cli",
    });
    fs::write(&path, record.to_string()).unwrap();
    path
}

/// Linux never hands out a pid above this (`PID_MAX_LIMIT`), so it names no process.
const NO_SUCH_PID: u32 = (1 << 22) + 1;

#[test]
fn a_session_held_by_a_live_agent_process_is_not_resumed() {
    let env = Sandbox::default();
    let config = claude_dir(&env);
    let cwd = git_work_dir(&env, "proj", "");
    let held = uuid(1);
    let by_other_process = uuid(2);
    let by_dead_process = uuid(3);
    for (surface, session) in [
        ("held", &held),
        ("not-claude", &by_other_process),
        ("dead", &by_dead_process),
    ] {
        write_transcript(&config, &cwd, session, HOUR);
        bind(&env, surface, session, &cwd);
    }
    let agent = fake_claude_process();
    write_running_session(&config, agent.pid(), &held, &cwd);
    // A live process that is not an agent (after a reboot, a stale pid may name anything).
    let other = Reaped::new(
        Command::new("sleep")
            .arg("1000")
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    write_running_session(&config, other.pid(), &by_other_process, &cwd);
    write_running_session(&config, NO_SUCH_PID, &by_dead_process, &cwd);

    let plan = restore_json(&env, &[]);
    assert_eq!(surfaces(&plan), ["dead", "held", "not-claude"]);
    let item = &plan["held"];
    assert_eq!(
        item["held_elsewhere"],
        format!("a running agent (pid {})", agent.pid()),
        "{item}"
    );
    assert_eq!(
        item["held_by"],
        serde_json::json!({"kind": "agent", "pid": agent.pid()}),
        "{item}"
    );
    assert_eq!(item["verdict"], "resume", "{item}");
    for surface in ["dead", "not-claude"] {
        assert_eq!(plan[surface]["held_elsewhere"], Value::Null, "{surface}");
    }
    let text = restore_text(&env, &[]);
    let line = &text
        .iter()
        .find(|(surface, _)| surface == "held")
        .unwrap()
        .1;
    assert!(
        line.contains(&format!(
            "not resumed: held by a running agent (pid {})",
            agent.pid()
        )) && !line.contains("--resume"),
        "{line}"
    );

    // Applying the plan leaves the held one alone; the others are tried (and are not tmux
    // surfaces here).
    let applied = restore_json(&env, &["--apply", "tmux", "--tmux-socket", "none"]);
    assert_eq!(
        applied["held"]["applied"],
        Value::Null,
        "{}",
        applied["held"]
    );
    for surface in ["dead", "not-claude"] {
        assert_eq!(
            applied[surface]["applied"], "skipped: not a tmux surface",
            "{surface}"
        );
    }

    // Once the agent has exited, the session is free to resume.
    drop(agent);
    let plan = restore_json(&env, &[]);
    assert_eq!(plan["held"]["held_elsewhere"], Value::Null);
}

/// The retention flag expected: (age in days, cut-off in days).
type Flag = Option<(u64, u64)>;

/// (`cleanupPeriodDays` in the settings, the transcript's age in days, the flag expected)
#[rustfmt::skip]
const RETENTION: &[(Option<u64>, u64, Flag)] = &[
    (None,      1,  None),
    (None,      24, None),
    (None,      25, Some((25, 30))),
    (None,      28, Some((28, 30))),
    (None,      40, Some((40, 30))),
    (Some(90),  28, None),
    (Some(12),  8,  Some((8, 12))),
];

#[test]
fn a_transcript_close_to_the_retention_cut_off_is_flagged() {
    for &(cleanup, age_days, expected) in RETENTION {
        let env = Sandbox::default();
        let config = claude_dir(&env);
        let cwd = git_work_dir(&env, "proj", "");
        let session = uuid(1);
        // An hour more than whole days, so that the age is not read a moment short of them.
        write_transcript(&config, &cwd, &session, DAY * age_days as u32 + HOUR);
        if let Some(days) = cleanup {
            fs::write(
                config.join("settings.json"),
                json!({ "model": "opus", "cleanupPeriodDays": days }).to_string(),
            )
            .unwrap();
        }
        bind(&env, "old", &session, &cwd);
        let plan = restore_json(&env, &[]);
        let item = &plan["old"];
        let what = format!("cleanup {cleanup:?}, {age_days} days");
        assert_eq!(item["verdict"], "resume", "{what}: {item}");
        match expected {
            None => assert_eq!(item["retention"], Value::Null, "{what}: {item}"),
            Some((age, cut_off)) => {
                assert_eq!(
                    item["retention"],
                    json!({ "age_days": age, "cleanup_period_days": cut_off }),
                    "{what}: {item}"
                );
                let text = restore_text(&env, &[]);
                assert!(
                    text[0].1.contains(&format!(
                        "(transcript {age} days old; Claude Code deletes transcripts after \
                         {cut_off} days)"
                    )),
                    "{what}: {text:?}"
                );
            }
        }
    }
}

/// `restore --apply` that cannot open a surface (no tmux here) exits 1, says `failed`, and takes
/// back its claim: the next restore tries the surface again instead of skipping it as claimed.
#[test]
fn a_surface_that_failed_to_open_is_tried_again_by_the_next_restore() {
    let env = Sandbox::default();
    crate::record(&env, "tmux:work:0.0", "sid-1", "repo");
    let no_tmux = env.root().join("no-bin");
    fs::create_dir_all(&no_tmux).unwrap();
    for attempt in 0..2 {
        let output = crate::harness::restore_apply(&env, "default")
            .env("PATH", &no_tmux)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "attempt {attempt}: {stderr}");
        assert!(
            stderr.contains("1 of the surfaces tried could not be opened"),
            "{stderr}"
        );
        let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
        let applied = plan["surfaces"][0]["applied"].as_str().unwrap();
        assert!(
            applied.starts_with("failed: cannot run tmux"),
            "attempt {attempt}: {applied}"
        );
        assert_eq!(
            env.entries()["tmux:work:0.0"].get("restore_claimed_at"),
            None,
            "attempt {attempt}: the claim was taken back"
        );
    }
}

/// Codex writing its state database (held locked past the reader's busy timeout) while a
/// restore plans 20 Codex sessions: the plan is made, each session found by the search by id
/// and saying the database could not be read. The plan waits for the lock once, not once per
/// session (the time is in BENCHMARKS.md, not asserted here).
#[test]
fn a_locked_codex_state_database_is_reported_for_every_session_and_the_plan_is_made() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let home = codex_home(&env);
    let day = home.join("sessions/2026/12/01");
    fs::create_dir_all(&day).unwrap();
    let sessions: Vec<String> = (1..=20).map(uuid).collect();
    for (n, session) in sessions.iter().enumerate() {
        let meta = json!({
            "timestamp": "2026-12-01T07:40:15.000Z",
            "type": "session_meta",
            "payload": { "id": session, "cwd": cwd },
        });
        fs::write(
            day.join(format!("rollout-2026-12-01T07-40-15-{session}.jsonl")),
            format!("{meta}\n"),
        )
        .unwrap();
        run_hook(
            &env,
            "codex",
            &[("CRASH_RESUME_SURFACE", &format!("codex-{n}"))],
            &json!({
                "session_id": session,
                "cwd": cwd,
                "hook_event_name": "SessionStart",
                "source": "startup",
            })
            .to_string(),
        )
        .assert_silent_success(session);
    }
    // A rollback-journal database (the default mode), held by an exclusive transaction: a
    // reader waits its busy timeout, then gets `database is locked`.
    let db = rusqlite::Connection::open(home.join("state_5.sqlite")).unwrap();
    db.execute_batch(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, \
         cwd TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0); BEGIN EXCLUSIVE",
    )
    .unwrap();
    let plan = restore_json(&env, &[]);
    db.execute_batch("ROLLBACK").unwrap();
    assert_eq!(plan.len(), sessions.len(), "{plan:#?}");
    for (n, session) in sessions.iter().enumerate() {
        let item = &plan[&format!("codex-{n}")];
        assert_eq!(item["verdict"], "resume", "{item:#}");
        assert_eq!(item["session_id"], json!(session), "{item:#}");
        let said = item.to_string();
        assert!(
            said.contains("search by id; state_5.sqlite could not be read: database is locked"),
            "{item:#}"
        );
    }
}

/// `--apply` takes its backend from the registry: with cmux not running, its surface fails with
/// a typed outcome and its claim taken back, a tmux surface is skipped as another
/// multiplexer's, and a multiplexer without a backend is a usage error.
#[test]
fn apply_takes_its_backend_from_the_registry_and_says_the_outcome_typed() {
    let env = Sandbox::default();
    crate::record(&env, "cmux:5F0C7A4E", "sid-1", "repo");
    crate::record(&env, "tmux:work:0.0", "sid-2", "repo");
    let socket = env.root().join("no-cmux.sock");
    let output = crash_resume_agent(&env)
        .args(["--json", "restore", "--apply", "cmux", "--cmux-socket"])
        .arg(&socket)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let plan = plan_by_surface(&output.stdout);
    let cmux = &plan["cmux:5F0C7A4E"];
    assert_eq!(cmux["outcome"]["outcome"], "failed", "{cmux}");
    assert_eq!(cmux["outcome"]["reason"], "multiplexer", "{cmux}");
    let message = cmux["outcome"]["message"].as_str().unwrap();
    assert!(message.contains("is cmux running"), "{message}");
    assert_eq!(cmux["applied"], format!("failed: {message}"));
    assert_eq!(
        env.entries()["cmux:5F0C7A4E"].get("restore_claimed_at"),
        None
    );
    assert_eq!(
        plan["tmux:work:0.0"]["outcome"],
        json!({"outcome": "skipped", "reason": {"kind": "other_multiplexer", "applied_to": "cmux"}})
    );
    assert_eq!(
        plan["tmux:work:0.0"]["applied"],
        "skipped: not a cmux surface"
    );

    // Every multiplexer the hook names has a backend now; one it does not know is a usage error
    // that lists them.
    let refused = crash_resume_agent(&env)
        .args(["restore", "--apply", "screen"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("tmux, zellij, wezterm, cmux, kitty"),
        "{stderr}"
    );
}

#[test]
fn apply_kitty_without_a_socket_is_a_usage_error_and_claims_nothing() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    bind(&env, "kitty:1:2", &uuid(1), &cwd);
    let before = env.index_bytes();
    assert_cmd::Command::from_std(crash_resume_agent(&env))
        .args(["restore", "--apply", "kitty"])
        .env_remove("KITTY_LISTEN_ON")
        .assert()
        .code(2)
        .stderr(contains("give --kitty-socket unix:PATH"));
    assert_eq!(env.index_bytes(), before, "nothing claimed");
}

#[test]
fn restore_with_a_max_age_keeps_the_surfaces_active_within_it() {
    let env = three_surfaces();
    let within = json_list(
        &env,
        &["--json", "restore", "--max-age", "2h"],
        "surfaces",
        "surface",
    );
    assert_eq!(within, ["busy"]);
    let everything = json_list(&env, &["--json", "restore"], "surfaces", "surface");
    assert_eq!(everything.len(), 3);

    let none = run_as_agent(&env, &["restore", "--max-age", "1s"]);
    assert!(none.status.success());
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("was active within 1s"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
    let bad = run_as_agent(&env, &["restore", "--max-age", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Binds `surface` to `session` in `cwd` through the real hook, then makes the entry look as
/// if the hook last ran three hours ago.
pub fn bind_three_hours_ago(env: &Sandbox, surface: &str, session: &str, cwd: &Path) {
    bind(env, surface, session, cwd);
    let mut index = env.index();
    let entry = &mut index["entries"][surface];
    let three_hours_ago = now_millis() - 3 * crate::HOUR;
    entry["captured_at"] = three_hours_ago.into();
    entry["last_active"] = three_hours_ago.into();
    env.write_index_bytes(&serde_json::to_vec_pretty(&index).unwrap());
}

/// Three surfaces that started three hours ago: `busy` (its transcript changed a minute ago),
/// `idle` (its transcript last changed three hours ago) and `gone` (no transcript).
pub fn three_surfaces() -> Sandbox {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    for (n, surface, transcript_age) in [
        (1, "busy", Some(Duration::from_secs(60))),
        (2, "idle", Some(Duration::from_secs(3 * 3600))),
        (3, "gone", None),
    ] {
        let session = uuid(n);
        bind_three_hours_ago(&env, surface, &session, &cwd);
        if let Some(age) = transcript_age {
            write_transcript(&claude_dir(&env), &cwd, &session, age);
        }
    }
    env
}

/// The JSON document `args` print, which must succeed; the `field` of each item of `list`.
pub fn json_list(env: &Sandbox, args: &[&str], list: &str, field: &str) -> Vec<String> {
    let output = run_as_agent(env, args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    document[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item[field].as_str().unwrap().to_string())
        .collect()
}

/// `crash-resume ARGS` in the agent's environment, stdin closed.
pub fn run_as_agent(env: &Sandbox, args: &[&str]) -> std::process::Output {
    crash_resume_agent(env)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn restore_is_a_table_on_a_terminal_and_tsv_when_piped() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    for (n, surface) in [(1, "tmux:main:0.0"), (2, "tmux:ワーク:1.0")] {
        run_hook(
            &env,
            "claude",
            &[("CRASH_RESUME_SURFACE", surface)],
            &session_start(&uuid(n), &cwd, "startup"),
        )
        .assert_silent_success(surface);
    }
    let mut restore = crash_resume_agent(&env);
    restore.arg("restore");
    let table = on_terminal(restore);
    assert_cli_snapshot!(&env, ages, "table_on_a_terminal", &table);
    check_aligned(
        &table,
        &["SURFACE", "VERDICT", "SESSION", "ACTIVE", "COMMAND"],
    );

    let mut restore = crash_resume_agent(&env);
    restore.arg("restore");
    assert_cli_snapshot!(&env, ages, "tsv_when_piped", piped(restore));
}

#[test]
fn restore_says_before_it_starts_two_gemini_panes_in_one_dir_with_the_cleanup_on() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let home = gemini_home(&env, &work, &[SESSION_A, SESSION_B]);
    record_gemini(&env, "tmux:w:0.0", SESSION_A, &work, &home);
    record_gemini(&env, "tmux:w:0.1", SESSION_B, &work, &home);

    let output = restore(&env, true, &[]);
    let warned = String::from_utf8_lossy(&output.stderr);
    assert!(
        warned.contains("resumes 2 Gemini sessions in")
            && warned.contains("tmux:w:0.0, tmux:w:0.1")
            && warned.contains("--retention off"),
        "{warned}"
    );
    let plan = plan_by_surface(&output.stdout);
    for (surface, session) in [("tmux:w:0.0", SESSION_A), ("tmux:w:0.1", SESSION_B)] {
        let item = &plan[surface];
        assert_eq!(item["verdict"], "resume", "{item}");
        let command = item["command"].as_str().unwrap();
        assert!(
            command.ends_with(&format!("gemini --resume {session}")),
            "{item}"
        );
        assert!(
            item["cleanup"].as_str().unwrap().contains(&session[..8]),
            "{item}"
        );
        assert!(
            item["why"].as_str().unwrap().starts_with("offered"),
            "{item}"
        );
    }

    // The cleanup off: nothing to say.
    fs::write(
        home.join(".gemini/settings.json"),
        r#"{"general":{"sessionRetention":{"enabled":false}}}"#,
    )
    .unwrap();
    let output = restore(&env, true, &[]);
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("Gemini sessions in"),
        "{output:?}"
    );
    let plan = plan_by_surface(&output.stdout);
    assert_eq!(plan["tmux:w:0.0"].get("cleanup"), None);
}

#[test]
fn fifos_in_the_agents_dirs_never_hang_restore_or_preflight() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let session = uuid(1);
    let transcript = write_transcript(&claude_dir(&env), &cwd, &session, Duration::ZERO);
    record_claude(&env, "S", &session, &cwd);
    // A running session's file and the settings as FIFOs.
    make_dir(&claude_dir(&env).join("sessions"));
    mkfifo(&claude_dir(&env).join("sessions").join("4242.json"));
    mkfifo(&claude_dir(&env).join("settings.json"));
    crash_resume(&env)
        .args(["restore"])
        .assert()
        .success()
        .stdout(contains("S").and(contains(&session)));
    // The transcript continues in a session whose transcript is a FIFO.
    let next = uuid(2);
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(
        file,
        "{{\"type\":\"system\",\"continuedInSessionId\":\"{next}\"}}"
    )
    .unwrap();
    mkfifo(&transcript.with_file_name(format!("{next}.jsonl")));
    crash_resume(&env)
        .args(["preflight", "S"])
        .assert()
        .code(4)
        .stdout(contains(format!("moved on to {next}")).and(contains("not a regular file")));
}

#[test]
fn restore_offers_a_copilot_session_with_its_home_says_why_and_not_one_a_running_copilot_holds() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("my work"));
    let home = copilot_home(&env);
    let (free, held, never) = (uuid(1), uuid(2), uuid(3));
    copilot_session(&home, &free, &work);
    let held_dir = copilot_session(&home, &held, &work);
    make_dir(&home.join("session-state").join(&never));
    record_copilot(&env, "tmux:w:0.0", &free, &work);
    record_copilot(&env, "tmux:w:0.1", &held, &work);
    record_copilot(&env, "tmux:w:0.2", &never, &work);

    // A running Copilot holds `held` (its lock names its pid); a SIGKILLed one's lock stays
    // behind and holds nothing.
    let bin = make_dir(&env.root().join("bin"));
    std::os::unix::fs::symlink("/bin/sleep", bin.join("copilot")).unwrap();
    let mut copilot = Command::new(bin.join("copilot"))
        .arg("600")
        .spawn()
        .unwrap();
    // Until it has exec'd, its command line is still this test's.
    wait_until("the stand-in copilot to run", || {
        test_support::process::command_line(copilot.id())
            .is_some_and(|words| words.first() == Some(&bin.join("copilot").into_os_string()))
            .then_some(())
    });
    fs::write(held_dir.join(format!("inuse.{}.lock", copilot.id())), "").unwrap();
    fs::write(
        home.join(format!("session-state/{free}/inuse.999999999.lock")),
        "",
    )
    .unwrap();

    let output = restore(&env, true, &[]);
    let _ = copilot.kill();
    let _ = copilot.wait();
    let plan = plan_by_surface(&output.stdout);
    let item = &plan["tmux:w:0.0"];
    assert_eq!(item["verdict"], "resume", "{item}");
    // The template's word `--resume={session}` is quoted whole (`=` is quoted by shlex).
    let expected = format!(
        "cd {} && COPILOT_HOME={} copilot '--resume={free}'",
        shlex::try_quote(work.to_str().unwrap()).unwrap(),
        shlex::try_quote(home.to_str().unwrap()).unwrap()
    );
    assert_eq!(item["command"], expected.as_str(), "{item}");
    assert!(
        item["why"]
            .as_str()
            .unwrap()
            .starts_with("offered: no end was reported from its pane"),
        "{item}"
    );
    let item = &plan["tmux:w:0.1"];
    assert_eq!(
        item["held_elsewhere"],
        format!("a running agent (pid {})", copilot.id()).as_str(),
        "{item}"
    );
    assert_eq!(
        item["why"],
        Value::Null,
        "held, so not said to be offered: {item}"
    );
    let item = &plan["tmux:w:0.2"];
    assert_eq!(item["verdict"], "fresh", "{item}");
    let why = item["why"].as_str().unwrap();
    assert!(
        why.contains("Copilot cannot resume it") && why.contains("never had a prompt"),
        "{why}"
    );
}

/// A Copilot resumed by hand in another terminal takes its `inuse.<pid>.lock` only at its first
/// prompt; until then its command line (`--resume=<id>`) is what says it holds the session, and
/// `restore` does not resume it a second time.
#[test]
fn a_copilot_resumed_elsewhere_holds_its_session_before_its_first_prompt() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let home = copilot_home(&env);
    let session = uuid(4);
    copilot_session(&home, &session, &work);
    record_copilot(&env, "tmux:w:0.0", &session, &work);
    let bin = make_dir(&env.root().join("bin"));
    let stand_in = bin.join("copilot");
    fs::write(&stand_in, "#!/bin/sh\nwhile :; do sleep 1; done\n").unwrap();
    fs::set_permissions(
        &stand_in,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let resume = format!("--resume={session}");
    // Its output goes nowhere: the `sleep` it leaves behind must not hold the test's pipes.
    let mut copilot = Command::new(&stand_in)
        .arg(&resume)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the stand-in copilot to run", || {
        test_support::process::command_line(copilot.id())
            .is_some_and(|words| words.iter().any(|word| *word == *resume))
            .then_some(())
    });
    let output = restore(&env, true, &[]);
    let _ = copilot.kill();
    let _ = copilot.wait();
    let item = &plan_by_surface(&output.stdout)["tmux:w:0.0"];
    assert_eq!(
        item["held_elsewhere"],
        format!("a running agent (pid {})", copilot.id()).as_str(),
        "{item}"
    );
    assert_eq!(item["why"], Value::Null, "{item}");
}
