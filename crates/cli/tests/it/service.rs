//! `crash-resume service install|uninstall|status`: the systemd user unit written under
//! `$XDG_CONFIG_HOME/systemd/user`, checked by `systemd-analyze verify`, enabled through
//! `systemctl --user` (a stand-in here that writes down its calls), installed twice without a
//! change, a unit of someone else's at the path left alone, removed again; the launchd agent
//! written and checked as text; `--policy ask` restores nothing and names the command.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::Sandbox;
use crate::harness::{bin_dir, crash_resume_agent};

/// A stand-in `systemctl` (and `launchctl`) in the sandbox's `bin` that appends its arguments
/// to `manager-calls.log` and succeeds: no test talks to the machine's service manager.
fn install_manager_stand_ins(env: &Sandbox) -> PathBuf {
    let log = env.root().join("manager-calls.log");
    fs::create_dir_all(bin_dir(env)).unwrap();
    for program in ["systemctl", "launchctl"] {
        let path = bin_dir(env).join(program);
        fs::write(
            &path,
            format!("#!/bin/sh\necho \"{program} $*\" >> '{}'\n", log.display()),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    log
}

fn service(env: &Sandbox, args: &[&str]) -> Output {
    crash_resume_agent(env)
        .arg("--json")
        .arg("service")
        .args(args)
        .output()
        .unwrap()
}

fn document(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {output:?}"))
}

fn unit_path(env: &Sandbox) -> PathBuf {
    env.config_home()
        .join("systemd/user/crash-resume-restore.service")
}

/// `systemd-analyze verify` of the unit, in user mode with a private runtime dir.
fn verify(env: &Sandbox, unit: &Path) -> Output {
    let runtime = env.root().join("systemd-runtime");
    fs::create_dir_all(&runtime).unwrap();
    fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).unwrap();
    Command::new("systemd-analyze")
        .args(["verify", "--user"])
        .arg(unit)
        .env("HOME", env.home())
        .env("XDG_CONFIG_HOME", env.config_home())
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .expect("systemd-analyze runs")
}

#[test]
fn service_install_writes_a_unit_systemd_accepts_once_and_uninstall_removes_only_ours() {
    let env = Sandbox::default();
    let calls = install_manager_stand_ins(&env);
    let installed = service(&env, &["install", "--mux", "tmux"]);
    assert!(installed.status.success(), "{installed:?}");
    let said = document(&installed);
    assert_eq!(said["written"], true);
    assert_eq!(said["enabled"], true);
    assert_eq!(said["manager"], "systemd");
    let unit = unit_path(&env);
    assert_eq!(said["unit"], unit.to_str().unwrap());
    let text = fs::read_to_string(&unit).unwrap();
    assert!(
        text.lines().any(|line| line.starts_with("ExecStart=/")
            && line.ends_with(" restore --apply tmux --once-per-boot")),
        "{text}"
    );
    let verified = verify(&env, &unit);
    assert!(
        verified.status.success(),
        "systemd-analyze verify: {verified:?}\n{text}"
    );
    assert_eq!(
        fs::read_to_string(&calls).unwrap(),
        "systemctl --user daemon-reload\nsystemctl --user enable crash-resume-restore.service\n"
    );

    // Again: nothing changes.
    let again = document(&service(&env, &["install", "--mux", "tmux"]));
    assert_eq!(again["written"], false);
    assert_eq!(fs::read_to_string(&unit).unwrap(), text);

    let status = document(&service(&env, &["status"]));
    assert_eq!(status["installed"], true);
    assert_eq!(status["last_run"], Value::Null);

    let removed = service(&env, &["uninstall"]);
    assert!(removed.status.success(), "{removed:?}");
    assert_eq!(document(&removed)["removed"], true);
    assert!(!unit.exists());
    assert_eq!(document(&service(&env, &["status"]))["installed"], false);
    let removed_again = document(&service(&env, &["uninstall"]));
    assert_eq!(removed_again["removed"], false);
}

#[test]
fn a_unit_that_is_not_ours_is_never_replaced_or_removed() {
    let env = Sandbox::default();
    install_manager_stand_ins(&env);
    let unit = unit_path(&env);
    fs::create_dir_all(unit.parent().unwrap()).unwrap();
    let theirs = "[Service]\nExecStart=/usr/bin/true\n";
    fs::write(&unit, theirs).unwrap();
    for args in [&["install"][..], &["uninstall"][..]] {
        let output = service(&env, args);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {output:?}");
        assert!(
            document(&output)["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not crash-resume's"),
            "{output:?}"
        );
        assert_eq!(fs::read_to_string(&unit).unwrap(), theirs);
    }
}

#[test]
fn policy_ask_restores_nothing_and_names_the_command_and_kitty_needs_its_address() {
    let env = Sandbox::default();
    install_manager_stand_ins(&env);
    let installed = service(&env, &["install", "--policy", "ask", "--mux", "zellij"]);
    assert!(installed.status.success(), "{installed:?}");
    let unit = unit_path(&env);
    let text = fs::read_to_string(&unit).unwrap();
    let exec = text
        .lines()
        .find(|line| line.starts_with("ExecStart="))
        .unwrap();
    assert!(exec.ends_with(" restore"), "{text}");
    assert!(text.contains("notify-send"), "{text}");
    assert!(
        text.contains("restore --apply zellij --once-per-boot"),
        "{text}"
    );
    let verified = verify(&env, &unit);
    assert!(
        verified.status.success(),
        "systemd-analyze verify: {verified:?}\n{text}"
    );

    let kitty = service(&env, &["install", "--mux", "kitty"]);
    assert_eq!(kitty.status.code(), Some(2), "{kitty:?}");
    let kitty = service(
        &env,
        &[
            "install",
            "--mux",
            "kitty",
            "--kitty-socket",
            "unix:/tmp/kitty-main",
        ],
    );
    assert!(kitty.status.success(), "{kitty:?}");
    let text = fs::read_to_string(&unit).unwrap();
    assert!(
        text.contains("restore --apply kitty --once-per-boot --kitty-socket unix:/tmp/kitty-main"),
        "{text}"
    );
}

#[test]
fn the_launchd_agent_is_a_property_list_that_runs_the_restore_at_load() {
    let env = Sandbox::default();
    let calls = install_manager_stand_ins(&env);
    let installed = service(&env, &["install", "--manager", "launchd", "--mux", "tmux"]);
    assert!(installed.status.success(), "{installed:?}");
    let plist = env
        .home()
        .join("Library/LaunchAgents/dev.crash-resume.restore.plist");
    let text = fs::read_to_string(&plist).unwrap();
    assert!(
        text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
        "{text}"
    );
    assert!(text.contains("<key>Label</key>\n  <string>dev.crash-resume.restore</string>"));
    assert!(text.contains("<key>RunAtLoad</key>\n  <true/>"));
    let arguments: Vec<&str> = text
        .split("<key>ProgramArguments</key>")
        .nth(1)
        .and_then(|rest| rest.split("</array>").next())
        .unwrap()
        .lines()
        .filter_map(|line| {
            line.trim()
                .strip_prefix("<string>")
                .and_then(|line| line.strip_suffix("</string>"))
        })
        .collect();
    assert_eq!(
        &arguments[arguments.len() - 4..],
        ["restore", "--apply", "tmux", "--once-per-boot"],
        "{text}"
    );
    assert!(Path::new(arguments[0]).is_absolute());
    // Balanced tags: every open tag of the document is closed.
    for tag in ["plist", "dict", "array"] {
        assert_eq!(
            text.matches(&format!("<{tag}")).count(),
            text.matches(&format!("</{tag}>")).count(),
            "{tag}: {text}"
        );
    }
    assert!(
        fs::read_to_string(&calls)
            .unwrap()
            .starts_with(&format!("launchctl load -w {}", plist.display()))
    );
    let removed = document(&service(&env, &["uninstall", "--manager", "launchd"]));
    assert_eq!(removed["removed"], true);
    assert!(!plist.exists());
}
