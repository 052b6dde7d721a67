//! `crash-resume preflight`: the preflight of one session through the real binary (Gemini's, whose
//! session file is found by its content and a stub is named, and one whose dir Gemini can claim
//! no project for, and a huge one read in bounded memory), a huge sparse transcript judged from
//! its head, and the Gemini layout and Claude binding the restore tests share.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use predicates::prelude::*;
use predicates::str::contains;
use serde_json::{Value, json};

use crate::harness::{claude_dir, git_work_dir, make_dir, uuid};
use crate::hook::copilot::{copilot_home, copilot_session};
use crate::{Sandbox, crash_resume};

/// A Gemini home with one project, `work`, registered as 0.61 registers it, whose sessions are
/// `sessions` (each a header and one prompt).
pub fn gemini_home(env: &Sandbox, work: &Path, sessions: &[&str]) -> PathBuf {
    let home = env.home();
    let root = make_dir(&home.join(".gemini"));
    let work = work.canonicalize().unwrap();
    fs::write(
        root.join("projects.json"),
        json!({ "projects": { work.to_str().unwrap(): "work" } }).to_string(),
    )
    .unwrap();
    let project = make_dir(&root.join("tmp/work"));
    fs::write(project.join(".project_root"), work.to_str().unwrap()).unwrap();
    let chats = make_dir(&project.join("chats"));
    for session in sessions {
        let header = json!({
            "sessionId": session,
            "projectHash": "0".repeat(64),
            "startTime": "2026-12-01T10:00:00.000Z",
            "lastUpdated": "2026-12-01T10:00:00.000Z",
            "kind": "main",
        });
        let prompt = json!({
            "id": format!("m-{session}"),
            "timestamp": "2026-12-01T10:00:01.000Z",
            "type": "user",
            "content": [{ "text": "hello" }],
        });
        fs::write(
            chats.join(format!("session-2026-12-01T10-00-{}.jsonl", &session[..8])),
            format!("{header}\n{prompt}\n"),
        )
        .unwrap();
    }
    home
}

pub const SESSION_A: &str = "aaaaaaaa-0000-4000-8000-000000000001";

pub const SESSION_B: &str = "bbbbbbbb-0000-4000-8000-000000000002";

pub fn record_gemini(env: &Sandbox, surface: &str, session: &str, work: &Path, home: &Path) {
    crash_resume(env)
        .args([
            "record",
            surface,
            session,
            "work",
            "--provider",
            "gemini",
            "--cwd",
        ])
        .arg(work)
        .arg("--config-dir")
        .arg(home)
        .assert()
        .success();
}

#[test]
fn preflight_agent_gemini_finds_the_session_by_its_content_and_names_a_stub() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let home = gemini_home(&env, &work, &[SESSION_A]);
    let preflight = |session: &str| -> Value {
        let output = crash_resume(&env)
            .args([
                "--json",
                "preflight",
                "--provider",
                "gemini",
                "--session",
                session,
            ])
            .arg("--cwd")
            .arg(&work)
            .env("GEMINI_CLI_HOME", &home)
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let outcome = preflight(SESSION_A);
    assert_eq!(outcome["verdict"], "resume", "{outcome}");
    let outcome = preflight(SESSION_B);
    assert_eq!(outcome["verdict"], "fresh", "{outcome}");

    // A stub with A's short id and no prompt: the next start deletes it and A with it.
    let chats = home.join(".gemini/tmp/work/chats");
    let stub = format!("session-2026-12-02T09-00-{}.jsonl", &SESSION_A[..8]);
    let header = json!({ "sessionId": SESSION_A, "projectHash": "0".repeat(64) });
    fs::write(chats.join(&stub), format!("{header}\n")).unwrap();
    let outcome = preflight(SESSION_A);
    assert_eq!(outcome["verdict"], "resume");
    let cleanup = outcome["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|step| step["id"] == "cleanup")
        .unwrap_or_else(|| panic!("a cleanup step: {outcome}"));
    assert!(
        cleanup["detail"].as_str().unwrap().contains(&stub),
        "{cleanup}"
    );
}

#[test]
fn a_gemini_dir_with_no_project_to_claim_is_answered_at_once() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let home = env.home();
    // `history` a file: no slug's marker there can be read, so Gemini can claim none (it gives
    // up after 1000 tries); the preflight once looked for a free one forever.
    let root = make_dir(&home.join(".gemini"));
    fs::write(root.join("history"), "").unwrap();
    record_gemini(&env, "S", SESSION_A, &work, &home);
    crash_resume(&env)
        .args(["preflight", "S"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(4)
        .stdout(contains("Gemini can claim none").and(contains("fresh")));
    crash_resume(&env)
        .arg("list")
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0)
        .stdout(contains("S\t"));
}

#[test]
fn a_huge_gemini_session_file_is_read_in_bounded_memory() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let home = gemini_home(&env, &work, &[SESSION_A]);
    record_gemini(&env, "S", SESSION_A, &work, &home);
    // A's file: its header, a line of 300 MiB of holes, then its one prompt. The long line is
    // skipped, the prompt after it read: within 256 MiB of address space, where the file was
    // once read whole.
    let file = fs::read_dir(home.join(".gemini/tmp/work/chats"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let header = json!({ "sessionId": SESSION_A, "projectHash": "0".repeat(64) });
    let prompt = json!({ "id": "m1", "type": "user", "content": [{ "text": "hello" }] });
    fs::write(&file, format!("{header}\n")).unwrap();
    let mut handle = fs::OpenOptions::new().append(true).open(&file).unwrap();
    handle.set_len(300 << 20).unwrap();
    std::io::Write::write_all(&mut handle, format!("\n{prompt}\n").as_bytes()).unwrap();
    drop(handle);
    let output = test_support::sandbox::sandboxed(&env, "prlimit")
        .args([
            "--as=268435456",
            "--",
            crate::BIN,
            "--json",
            "preflight",
            "S",
        ])
        .output()
        .unwrap();
    let outcome: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(outcome["verdict"], "resume", "{outcome}");
}

/// An index entry for `surface` whose session is `session`, run in `cwd` with Claude's config
/// dir of the sandbox.
pub fn record_claude(env: &Sandbox, surface: &str, session: &str, cwd: &Path) {
    crash_resume(env)
        .args(["record", surface, session, "proj", "--provider", "claude"])
        .arg("--cwd")
        .arg(cwd)
        .arg("--config-dir")
        .arg(claude_dir(env))
        .assert()
        .success();
}

#[test]
fn a_huge_sparse_transcript_is_judged_from_its_head() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let held = uuid(1);
    let other = uuid(2);
    let transcript =
        crate::harness::write_transcript(&claude_dir(&env), &cwd, &held, Duration::ZERO);
    crate::harness::write_transcript(&claude_dir(&env), &cwd, &other, Duration::ZERO);
    // The held session's transcript: 2 GiB of holes, then a message line. Only its first MiB is
    // read, so it holds no conversation; and the recovery scan, which opens the largest file
    // first, goes on to the other one.
    let file = fs::File::create(&transcript).unwrap();
    file.set_len(2 << 30).unwrap();
    drop(file);
    record_claude(&env, "S", &held, &cwd);
    crash_resume(&env)
        .args(["--json", "preflight", "S"])
        .assert()
        .code(0)
        .stdout(contains("\"recover\"").and(contains(&other)));
}

#[test]
fn preflight_provider_copilot_reads_the_home_from_copilot_home_or_config_dir() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let home = copilot_home(&env);
    let session = uuid(7);
    copilot_session(&home, &session, &work);
    let verdict = |config_dir: Option<&Path>, variable: Option<&Path>| -> Value {
        let mut command = crash_resume(&env);
        command.args([
            "--json",
            "preflight",
            "--provider",
            "copilot",
            "--session",
            &session,
        ]);
        command.arg("--cwd").arg(&work);
        if let Some(dir) = config_dir {
            command.arg("--config-dir").arg(dir);
        }
        if let Some(dir) = variable {
            command.env("COPILOT_HOME", dir);
        }
        let output = command.output().unwrap();
        let outcome: Value = serde_json::from_slice(&output.stdout).unwrap();
        outcome["verdict"].clone()
    };
    assert_eq!(verdict(Some(&home), None), "resume");
    assert_eq!(verdict(None, Some(&home)), "resume");
    assert_eq!(verdict(None, None), "fresh", "~/.copilot holds nothing");
}
