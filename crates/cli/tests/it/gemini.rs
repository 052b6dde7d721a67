//! Gemini CLI without the real CLI: `hook install gemini` (merged, idempotent, backed up, what
//! Gemini needs said plainly, `--retention off` only on request), the hook's note when Gemini
//! hid the pane (`GITHUB_SHA`), and the cleanup hazard as `preflight` and `restore` say it, over
//! session files laid out as Gemini 0.61 writes them.

use std::fs;
use std::path::{Path, PathBuf};

use predicates::str::contains;
use serde_json::{Value, json};

use crate::harness::{
    agent_command, crash_resume_agent, hook_log, make_dir, plan_by_surface, restore,
};
use crate::{BIN, Sandbox, crash_resume};

/// Settings a user already has: an unrelated `general` key and another tool's hook.
const EXISTING: &str = r#"{
  "general": { "vimMode": true },
  "hooks": {
    "SessionStart": [ { "hooks": [ { "type": "command", "command": "other-tool start" } ] } ]
  },
  "ui": { "theme": "GitHub" }
}
"#;

fn settings_path(env: &Sandbox) -> PathBuf {
    env.home().join(".gemini/settings.json")
}

fn install(env: &Sandbox, args: &[&str]) -> std::process::Output {
    crash_resume_agent(env)
        .args(["hook", "install", "gemini"])
        .args(args)
        .output()
        .unwrap()
}

fn settings(env: &Sandbox) -> Value {
    serde_json::from_slice(&fs::read(settings_path(env)).unwrap()).unwrap()
}

fn backups(env: &Sandbox) -> usize {
    fs::read_dir(env.home().join(".gemini"))
        .unwrap()
        .flatten()
        .filter(|item| {
            item.file_name()
                .to_string_lossy()
                .starts_with("settings.json.crash-resume-")
        })
        .count()
}

#[test]
fn hook_install_gemini_merges_idempotently_and_says_what_gemini_needs() {
    let env = Sandbox::default();
    make_dir(&env.home().join(".gemini"));
    fs::write(settings_path(&env), EXISTING).unwrap();

    let first = install(&env, &[]);
    assert!(first.status.success(), "{first:?}");
    let said = String::from_utf8_lossy(&first.stderr);
    for words in [
        "no hook in an untrusted folder",
        "GITHUB_SHA",
        "TMUX_PANE",
        "general.sessionRetention",
        "--retention off",
    ] {
        assert!(said.contains(words), "the install says {words:?}: {said}");
    }
    let merged = settings(&env);
    assert_eq!(
        merged["general"],
        json!({ "vimMode": true }),
        "never silently"
    );
    assert_eq!(merged["ui"]["theme"], "GitHub");
    let starts = merged["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(starts[0]["hooks"][0]["command"], "other-tool start");
    let command = starts[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.ends_with(" hook gemini"), "{command}");
    assert_eq!(
        merged["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
        command
    );
    assert_eq!(backups(&env), 1);

    let again = install(&env, &[]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("already installed in "));
    assert_eq!(backups(&env), 1);

    // On request only: the cleanup off, every other `general` key kept.
    let off = install(&env, &["--retention", "off"]);
    assert!(off.status.success(), "{off:?}");
    let said = String::from_utf8_lossy(&off.stderr);
    assert!(
        said.contains("set general.sessionRetention.enabled = false in "),
        "{said}"
    );
    assert!(said.contains("cleanup is off in this file"), "{said}");
    let merged = settings(&env);
    assert_eq!(
        merged["general"],
        json!({ "vimMode": true, "sessionRetention": { "enabled": false } })
    );
    assert_eq!(backups(&env), 2);
    let again = install(&env, &["--retention", "off"]);
    assert!(again.status.success());
    assert_eq!(backups(&env), 2, "nothing left to change");
}

#[test]
fn retention_is_geminis_setting_alone() {
    let env = Sandbox::default();
    crash_resume(&env)
        .args(["hook", "install", "claude", "--retention", "off"])
        .assert()
        .code(2)
        .stderr(contains("--retention is Gemini's setting"));
    assert!(!env.home().join(".claude").exists());
}

#[test]
fn the_hook_says_when_gemini_hid_the_pane_because_of_github_sha() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let payload = json!({
        "session_id": "0b5e7a1c-0000-4000-8000-000000000001",
        "cwd": work,
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
    .to_string();
    // Gemini started with GITHUB_SHA set and ran the hook without it (nor TMUX_PANE): the
    // shell between them is the ancestor that still has it.
    let script = format!(
        "printf '%s' \"$1\" | env -u GITHUB_SHA -u TMUX_PANE -u TMUX {} hook gemini",
        shlex::try_quote(BIN).unwrap()
    );
    let output = agent_command(&env, "sh")
        .env("GITHUB_SHA", "0123abc")
        .args(["-c", &script, "sh", &payload])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let log = hook_log(&env);
    assert!(
        log.contains("because GITHUB_SHA (or SURFACE=Github) is set in its environment"),
        "{log}"
    );
    assert!(
        log.contains("security.environmentVariableRedaction.allowed"),
        "{log}"
    );
}

/// A Gemini home with one project, `work`, registered as 0.61 registers it, whose sessions are
/// `sessions` (each a header and one prompt).
fn gemini_home(env: &Sandbox, work: &Path, sessions: &[&str]) -> PathBuf {
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

const SESSION_A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
const SESSION_B: &str = "bbbbbbbb-0000-4000-8000-000000000002";

fn record_gemini(env: &Sandbox, surface: &str, session: &str, work: &Path, home: &Path) {
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
fn preflight_provider_gemini_finds_the_session_by_its_content_and_names_a_stub() {
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
