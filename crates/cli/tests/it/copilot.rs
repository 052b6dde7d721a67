//! GitHub Copilot CLI without the real CLI: `hook install copilot` (a file of our own in
//! `$COPILOT_HOME/hooks/`, merged, idempotent, backed up, uninstalled), `hook copilot <EVENT>`
//! reading Copilot's camelCase payload, `record`/`preflight --provider copilot`, and `restore`'s
//! command, reason and held rule, over session dirs laid out as Copilot 1.0.102 writes them.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{
    crash_resume_agent, make_dir, plan_by_surface, restore, uuid, wait_until, with_vars,
};
use crate::{Sandbox, crash_resume};

/// `COPILOT_HOME` in the sandbox (not the default `~/.copilot`, so commands carry it).
fn copilot_home(env: &Sandbox) -> PathBuf {
    env.home().join(".copilot-work")
}

fn hooks_file(env: &Sandbox) -> PathBuf {
    copilot_home(env).join("hooks/crash-resume.json")
}

fn hook_command(env: &Sandbox, args: &[&str]) -> std::process::Output {
    crash_resume_agent(env)
        .env("COPILOT_HOME", copilot_home(env))
        .arg("hook")
        .args(args)
        .output()
        .unwrap()
}

fn hooks(env: &Sandbox) -> Value {
    serde_json::from_slice(&fs::read(hooks_file(env)).unwrap()).unwrap()
}

fn backups(env: &Sandbox) -> usize {
    fs::read_dir(copilot_home(env).join("hooks"))
        .unwrap()
        .flatten()
        .filter(|item| {
            item.file_name()
                .to_string_lossy()
                .starts_with("crash-resume.json.crash-resume-")
        })
        .count()
}

#[test]
fn hook_install_copilot_writes_its_own_hooks_file_idempotently_and_uninstalls() {
    let env = Sandbox::default();
    let first = hook_command(&env, &["install", "copilot"]);
    assert!(first.status.success(), "{first:?}");
    let said = String::from_utf8_lossy(&first.stderr);
    assert!(said.contains("at the first prompt"), "{said}");
    let written = hooks(&env);
    assert_eq!(written["version"], 1, "{written}");
    let start = &written["hooks"]["sessionStart"][0];
    let command = start["bash"].as_str().unwrap();
    assert!(command.ends_with(" hook copilot sessionStart"), "{command}");
    assert_eq!(start["type"], "command");
    assert_eq!(start["timeoutSec"], 10);
    let end = written["hooks"]["sessionEnd"][0]["bash"].as_str().unwrap();
    assert_eq!(end, command.replace("sessionStart", "sessionEnd"));

    let again = hook_command(&env, &["install", "copilot"]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("already installed in "));
    assert_eq!(backups(&env), 0, "a new file has nothing to back up");

    // Another hook the user put in our file stays; ours from another binary path is replaced.
    let mut edited = hooks(&env);
    edited["hooks"]["sessionStart"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"type": "command", "bash": "other-tool start"}));
    let mut old = shlex::split(end).unwrap();
    old[0] = "/old/bin/crash-resume".to_string();
    edited["hooks"]["sessionEnd"][0]["bash"] =
        Value::from(shlex::try_join(old.iter().map(String::as_str)).unwrap());
    fs::write(hooks_file(&env), edited.to_string()).unwrap();
    let replaced = hook_command(&env, &["install", "copilot"]);
    assert!(replaced.status.success(), "{replaced:?}");
    let merged = hooks(&env);
    let starts = merged["hooks"]["sessionStart"].as_array().unwrap();
    assert_eq!(starts.len(), 2, "{merged}");
    assert_eq!(starts[0]["bash"], "other-tool start");
    let ends = merged["hooks"]["sessionEnd"].as_array().unwrap();
    assert_eq!(ends.len(), 1, "{merged}");
    assert_eq!(ends[0]["bash"], end);
    assert_eq!(backups(&env), 1);

    let removed = hook_command(&env, &["uninstall", "copilot"]);
    assert!(removed.status.success(), "{removed:?}");
    let left = hooks(&env);
    assert_eq!(
        left["hooks"]["sessionStart"],
        json!([{"type": "command", "bash": "other-tool start"}])
    );
    assert_eq!(left["hooks"].get("sessionEnd"), None, "{left}");
    assert_eq!(backups(&env), 2);
}

/// `sessionStart` and `sessionEnd` payloads as Copilot 1.0.102 sends them: camelCase, no event
/// name.
fn payload(session: &str, cwd: &Path, extra: Value) -> String {
    let mut payload = json!({ "sessionId": session, "timestamp": 1764600000000_u64, "cwd": cwd });
    if let (Some(payload), Value::Object(extra)) = (payload.as_object_mut(), extra) {
        payload.extend(extra);
    }
    payload.to_string()
}

#[test]
fn hook_copilot_takes_the_event_from_its_command_line_and_records_copilots_home() {
    let env = Sandbox::default();
    let work = make_dir(&env.root().join("work"));
    let session = uuid(1);
    let home = copilot_home(&env);
    let vars = [
        ("CMUX_SURFACE_ID", "A"),
        ("COPILOT_HOME", home.to_str().unwrap()),
    ];
    let start = payload(
        &session,
        &work,
        json!({"source": "new", "initialPrompt": "hi"}),
    );
    let mut command = crash_resume_agent(&env);
    command.args(["hook", "copilot", "sessionStart"]);
    test_support::process::run_with_stdin(with_vars(command, &vars), &start)
        .assert_silent_success("sessionStart");
    let entries = env.entries();
    let entry = &entries["cmux:A"];
    assert_eq!(entry["sessionId"], session.as_str(), "{entry}");
    assert_eq!(entry["provider"], "copilot");
    assert_eq!(entry["cwd"], work.to_str().unwrap());
    assert_eq!(entry["config_dir"], copilot_home(&env).to_str().unwrap());

    // From a pane that still exists (the hook can name it), the end is the end.
    let mut command = crash_resume_agent(&env);
    command.args(["hook", "copilot", "sessionEnd"]);
    let end = payload(&session, &work, json!({"reason": "user_exit"}));
    test_support::process::run_with_stdin(with_vars(command, &vars), &end)
        .assert_silent_success("sessionEnd");
    assert!(env.entries()["cmux:A"]["ended_at"].is_number());
}

/// A Copilot home holding `session`'s dir as a prompted session leaves it.
fn copilot_session(home: &Path, session: &str, cwd: &Path) -> PathBuf {
    let dir = make_dir(&home.join("session-state").join(session));
    let start = json!({
        "type": "session.start",
        "data": { "sessionId": session, "copilotVersion": "1.0.102", "context": { "cwd": cwd } },
        "id": "3954ca0e-6638-4d4d-9582-4054d63a68af",
        "timestamp": "2026-12-01T18:45:34.095Z",
        "parentId": null,
    });
    fs::write(
        dir.join("events.jsonl"),
        format!("{start}\n{{\"type\":\"user.message\"}}\n"),
    )
    .unwrap();
    fs::write(
        dir.join("workspace.yaml"),
        format!("id: {session}\ncwd: {}\n", cwd.display()),
    )
    .unwrap();
    dir
}

fn record_copilot(env: &Sandbox, surface: &str, session: &str, work: &Path) {
    crash_resume(env)
        .args([
            "record",
            surface,
            session,
            "work",
            "--provider",
            "copilot",
            "--cwd",
        ])
        .arg(work)
        .arg("--config-dir")
        .arg(copilot_home(env))
        .assert()
        .success();
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
    let mut copilot = std::process::Command::new(bin.join("copilot"))
        .arg("600")
        .spawn()
        .unwrap();
    // Until it has exec'd, its command line is still this test's.
    wait_until("the stand-in copilot to run", || {
        fs::read(format!("/proc/{}/cmdline", copilot.id()))
            .is_ok_and(|cmdline| {
                cmdline.starts_with(bin.join("copilot").to_str().unwrap().as_bytes())
            })
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
    let item = &plan["tmux:w:0.2"];
    assert_eq!(item["verdict"], "fresh", "{item}");
    let why = item["why"].as_str().unwrap();
    assert!(
        why.contains("Copilot cannot resume it") && why.contains("never had a prompt"),
        "{why}"
    );
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
