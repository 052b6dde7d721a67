//! `restore --apply tmux --once-per-boot` against a real, private tmux server, with a stand-in
//! `claude` that binds itself at once, late, never, or fails: each surface is said started and
//! verified, started but not verified, or failed (its recorded session kept); a second run in
//! the same boot restores nothing; a changed boot id (`CRASH_RESUME_BOOT_ID`) says the panes
//! died of a reboot; `service status` counts the last boot.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use serde_json::Value;

use super::tmux::record_session;
use crate::Sandbox;
use crate::harness::{
    PanePlace, TmuxServer, bin_dir, crash_resume_agent, git_work_dir,
    install_claude_stand_in_that_stays, plan_by_surface, server_name, server_surface, uuid,
};

/// Wraps the stand-in `claude`: the session `never` stays without binding, `fail` exits at
/// once, `late` binds after a second; any other binds at once.
pub(super) fn install_wrapping_stand_in(env: &Sandbox, never: &str, fail: &str, late: &str) {
    install_claude_stand_in_that_stays(env);
    let bin = bin_dir(env);
    fs::copy(bin.join("claude"), bin.join("claude-binding")).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *{never}*) sleep 600; exit 0 ;;\n  *{fail}*) exit 3 ;;\n  *{late}*) sleep 1 ;;\nesac\nexec \"$(dirname \"$0\")/claude-binding\" \"$@\"\n"
    );
    let path = bin.join("claude");
    fs::write(&path, script).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn entries(env: &Sandbox) -> Value {
    let index: Value = serde_json::from_slice(&fs::read(env.index_path()).unwrap()).unwrap();
    index["entries"].clone()
}

fn once_per_boot(
    env: &Sandbox,
    socket: &str,
    boot: &str,
) -> (bool, BTreeMap<String, Value>, Value) {
    let output = crash_resume_agent(env)
        .env("CRASH_RESUME_BOOT_ID", boot)
        .args([
            "--json",
            "restore",
            "--apply",
            "tmux",
            "--once-per-boot",
            "--start-timeout",
            "3s",
            "--tmux-socket",
            socket,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    (
        output.status.success(),
        plan_by_surface(&output.stdout),
        document,
    )
}

#[test]
fn once_per_boot_staggers_verifies_and_never_runs_twice_in_a_boot() {
    let env = Sandbox::default();
    let name = server_name("once");
    let sessions: Vec<String> = (1..=5).map(uuid).collect();
    let [bound, late, never, fail, other] = &sessions[..] else {
        unreachable!()
    };
    install_wrapping_stand_in(&env, never, fail, late);
    let mut surfaces = BTreeMap::new();
    for (n, session) in sessions.iter().enumerate() {
        let place = PanePlace::new("work", n as u32, 0);
        let surface = server_surface(&env, &name, &place);
        let cwd = git_work_dir(&env, &format!("repo-{n}"), "");
        record_session(&env, &surface, session, &format!("repo-{n}"), &cwd);
        surfaces.insert(session.clone(), surface);
    }
    // Every session was recorded in an earlier boot.
    let mut index: Value = serde_json::from_slice(&fs::read(env.index_path()).unwrap()).unwrap();
    for entry in index["entries"].as_object_mut().unwrap().values_mut() {
        assert!(
            entry["boot_id"].is_string(),
            "the record carries the boot id"
        );
        entry["boot_id"] = Value::from("boot-before");
    }
    env.write_index_bytes(&serde_json::to_vec(&index).unwrap());
    let index_before = entries(&env);
    let server = TmuxServer::named(&env, &name);
    let (_, plan, document) = once_per_boot(&env, &name, "boot-after");
    assert_eq!(document.get("already_ran"), None, "{document}");
    let outcome = |session: &str| plan[&surfaces[session]]["outcome"].clone();
    assert_eq!(outcome(bound)["outcome"], "started", "{plan:?}");
    assert_eq!(outcome(bound)["verified"]["kind"], "bound");
    assert_eq!(outcome(late)["verified"]["kind"], "bound");
    assert_eq!(outcome(other)["verified"]["kind"], "bound");
    assert_eq!(outcome(never)["outcome"], "started");
    assert_eq!(outcome(never)["verified"]["kind"], "not_in_time");
    assert_eq!(outcome(fail)["outcome"], "failed");
    assert_eq!(outcome(fail)["reason"], "agent_exited");
    for surface in surfaces.values() {
        assert_eq!(plan[surface]["died"], "reboot", "{surface}");
    }
    // The failed start kept its recorded session.
    let entries = entries(&env);
    assert_eq!(
        entries[&surfaces[fail]]["sessionId"],
        index_before[&surfaces[fail]]["sessionId"]
    );
    // A second run in the same boot restores nothing.
    let (ok, again, document) = once_per_boot(&env, &name, "boot-after");
    assert!(ok);
    assert!(again.is_empty(), "{again:?}");
    let first = &document["already_ran"];
    assert_eq!(first["boot_id"], "boot-after", "{document}");
    assert_eq!(first["multiplexer"], "tmux", "{document}");
    assert_eq!(first["counts"]["verified"], 3, "{document}");
    let status = crash_resume_agent(&env)
        .args(["--json", "service", "status"])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    let counts = &status["last_boot"]["counts"];
    assert_eq!(counts["verified"], 3, "{status}");
    assert_eq!(counts["not_verified"], 1);
    assert_eq!(counts["failed"], 1);
    assert_eq!(counts["died"]["reboot"], 5);
    // The next boot restores again (what still runs is skipped as running).
    let (_, next_boot, document) = once_per_boot(&env, &name, "boot-after-another");
    assert_eq!(document.get("already_ran"), None, "{document}");
    assert!(!next_boot.is_empty(), "{document}");
    // The server crashes in this boot and is started again at the same socket path: another
    // run of the instance, which is restored again; a second run into it restores nothing.
    server.kill_and_wait();
    let server = TmuxServer::named(&env, &name);
    let (_, after_the_crash, document) = once_per_boot(&env, &name, "boot-after-another");
    assert_eq!(document.get("already_ran"), None, "{document}");
    let verified = &after_the_crash[&surfaces[bound]]["outcome"]["verified"]["kind"];
    assert_eq!(verified, "bound", "{after_the_crash:#?}");
    let (_, again, document) = once_per_boot(&env, &name, "boot-after-another");
    assert!(again.is_empty(), "{document}");
    assert_ne!(document["already_ran"], Value::Null, "{document}");
    server.kill_and_wait();
}

/// Twelve panes restored with the default stagger (3 starting at once, 30 s each): every agent
/// verified; with agents that bind a second after they start, the restore takes at least four
/// waves of a second (so no more than 3 were starting at once). The times are printed (run
/// with `--no-capture` to read them).
#[test]
#[allow(clippy::print_stderr)]
fn twelve_panes_with_the_default_stagger_are_all_verified_three_starting_at_once() {
    for (late, waves) in [("none-late", 0), ("7e57-4c1a", 4)] {
        let env = Sandbox::default();
        let name = server_name("twelve");
        install_wrapping_stand_in(&env, "none-never", "none-fail", late);
        let mut surfaces = Vec::new();
        for n in 0..12 {
            let place = PanePlace::new("work", n, 0);
            let surface = server_surface(&env, &name, &place);
            let cwd = git_work_dir(&env, &format!("repo-{n}"), "");
            record_session(&env, &surface, &uuid(n + 1), &format!("repo-{n}"), &cwd);
            surfaces.push(surface);
        }
        let server = TmuxServer::named(&env, &name);
        let started = std::time::Instant::now();
        let output = crash_resume_agent(&env)
            .env("CRASH_RESUME_BOOT_ID", "boot-of-twelve")
            .args([
                "--json",
                "restore",
                "--apply",
                "tmux",
                "--once-per-boot",
                "--tmux-socket",
            ])
            .arg(&name)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let took = started.elapsed();
        eprintln!(
            "12 panes, default stagger, agents binding {}: restore took {took:.2?}",
            if waves == 0 { "at once" } else { "after 1 s" }
        );
        assert!(output.status.success(), "{output:?}");
        let plan = plan_by_surface(&output.stdout);
        for surface in &surfaces {
            assert_eq!(
                plan[surface]["outcome"]["verified"]["kind"], "bound",
                "{surface}: {plan:#?}"
            );
        }
        assert!(
            took >= std::time::Duration::from_secs(waves),
            "{took:?}: at most 3 agents start at once, each binding after a second"
        );
        server.kill_and_wait();
    }
}

/// At login before kitty runs, `restore --apply kitty --once-per-boot` cannot reach it: every
/// surface fails, nothing started, and the run is not counted as the boot's, so the run the user
/// makes once kitty is up restores (here: tries again, as kitty is still not there).
#[test]
fn a_run_that_started_nothing_because_the_multiplexer_is_not_there_is_not_the_boots_run() {
    let env = Sandbox::default();
    install_wrapping_stand_in(&env, "none-never", "none-fail", "none-late");
    let cwd = git_work_dir(&env, "repo-kitty", "");
    record_session(&env, "kitty:4242:1", &uuid(1), "repo-kitty", &cwd);
    let address = format!("unix:{}", env.root().join("no-kitty.sock").display());
    for _ in 0..2 {
        let output = crash_resume_agent(&env)
            .args([
                "--json",
                "restore",
                "--apply",
                "kitty",
                "--once-per-boot",
                "--kitty-socket",
            ])
            .arg(&address)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr
                .contains("not counted as the boot's: it started nothing and 1 surface(s) failed"),
            "{stderr}"
        );
        let plan = plan_by_surface(&output.stdout);
        assert_eq!(
            plan["kitty:4242:1"]["outcome"]["outcome"], "failed",
            "{plan:#?}"
        );
    }
    let status = crash_resume_agent(&env)
        .args(["--json", "service", "status"])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["last_run"], Value::Null, "{status}");
    assert_eq!(
        env.entry("kitty:4242:1").unwrap()["sessionId"],
        uuid(1).as_str(),
        "the session is kept"
    );
}
