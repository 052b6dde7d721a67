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
    assert!(exec.ends_with(" restore --notify zellij"), "{text}");
    assert!(!text.contains("--apply"), "{text}");
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

/// A stand-in `notify-send` in the sandbox's `bin` that appends its words to a file, whose
/// path it returns; it takes the options' end (`--`) as the real one does, and only there.
fn install_notify_send(env: &Sandbox) -> PathBuf {
    let notified = env.root().join("notified.txt");
    fs::create_dir_all(bin_dir(env)).unwrap();
    let notify_send = bin_dir(env).join("notify-send");
    fs::write(
        &notify_send,
        format!(
            "#!/bin/sh\n[ \"$1\" = -- ] || exit 3\nshift\necho \"$*\" >> '{}'\n",
            notified.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&notify_send, fs::Permissions::from_mode(0o755)).unwrap();
    notified
}

/// `restore --notify MUX` (what the unit of policy ask runs) restores nothing; with a session
/// to resume it says so on stderr with the command that restores it, and calls `notify-send`
/// with that line; with nothing to resume it says nothing and calls nothing.
#[test]
fn restore_notify_names_the_command_only_when_something_can_be_resumed() {
    let env = Sandbox::default();
    crate::harness::install_claude_stand_in_that_stays(&env);
    let notified = install_notify_send(&env);
    let notify = |multiplexer: &[&str]| {
        crash_resume_agent(&env)
            .args(["restore", "--notify"])
            .args(multiplexer)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let nothing = notify(&["tmux"]);
    assert!(nothing.status.success(), "{nothing:?}");
    assert!(!String::from_utf8_lossy(&nothing.stderr).contains("may need restoring"));
    assert!(!notified.exists());
    let cwd = crate::harness::git_work_dir(&env, "repo-notify", "");
    crate::restore::tmux::record_session(
        &env,
        "kitty:77:1",
        &crate::harness::uuid(9),
        "repo-notify",
        &cwd,
    );
    let said = notify(&["kitty", "--kitty-socket", "unix:/tmp/kitty-main"]);
    assert!(said.status.success(), "{said:?}");
    let stderr = String::from_utf8_lossy(&said.stderr);
    let line = stderr
        .lines()
        .find(|line| line.starts_with("crash-resume: 1 session may need restoring; run /"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.ends_with(
            " restore --apply kitty --once-per-boot --kitty-socket unix:/tmp/kitty-main"
        ),
        "{line}"
    );
    assert_eq!(
        fs::read_to_string(&notified).unwrap(),
        format!("crash-resume {line}\n")
    );
    assert!(
        crate::harness::claude_runs(&env).is_empty(),
        "nothing started"
    );
    let both = notify(&["tmux", "--apply", "tmux"]);
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}

/// A real `systemd --user` runs the unit (the `live-systemd` feature: root, `unshare` and
/// systemd's own programs; `cargo xtask test` enables it).
#[cfg(feature = "live-systemd")]
mod user_manager {
    use super::*;

    /// The script that runs a real `systemd --user` for [`a_real_user_manager_runs_the_unit_at_login_and_it_restores_into_tmux`],
    /// inside `unshare -m` (a private mount namespace): `/run` is a fresh tmpfs holding
    /// `/run/systemd/system` (the manager starts only where systemd booted the machine), `/root`
    /// (the home the manager gives its units, from the password database) is the sandbox's home,
    /// and the manager runs in a cgroup of its own in the unified hierarchy (which holds no
    /// controller here), remade and removed by the script, so that it moves no other process of
    /// the machine. It starts the manager, installs the service with the real `systemctl`, stops the
    /// manager (a logout), starts it again (a login: `default.target` wants the unit) and waits for
    /// the unit to have run; the words after `$3` are `service install`'s. The manager's `PATH` is the short one of a real user manager, so the
    /// stand-in agent is found only through the `PATH` the unit carries. `$1` is the crash-resume binary, `$2` the sandbox's home, `$3` where
    /// the manager's log and what `systemctl` said go.
    const USER_MANAGER_SCRIPT: &str = r#"
set -eu
bin=$1 home=$2 out=$3
shift 3
if [ -d /sys/fs/cgroup/unified ]; then root=/sys/fs/cgroup/unified; else root=/sys/fs/cgroup; fi
cg=$root/crash-resume-test-$$
mkdir "$cg"
echo $$ > "$cg/cgroup.procs"
manager=
stop() {
    if [ -n "$manager" ]; then kill "$manager" 2>/dev/null || true; wait "$manager" 2>/dev/null || true; fi
    manager=
}
finish() {
    stop
    # What the unit left running (the tmux server and its agents, which outlive it) moves out
    # with this shell, so that the cgroups can be removed.
    for procs in $(find "$cg" -name cgroup.procs); do
        for pid in $(cat "$procs"); do echo "$pid" > "$root/cgroup.procs" 2>/dev/null || true; done
    done
    echo $$ > "$root/cgroup.procs"
    find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
}
trap finish EXIT
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/system
mount --bind "$home" /root
if [ "$root" = /sys/fs/cgroup/unified ]; then
    mount -t cgroup2 none /sys/fs/cgroup
    root=/sys/fs/cgroup cg=/sys/fs/cgroup/crash-resume-test-$$
fi
start() {
    # The PATH a user manager has: the stand-in agent is found only through the unit's own.
    PATH=/usr/local/bin:/usr/bin:/bin /usr/lib/systemd/systemd --user --log-target=console \
        >> "$out/manager.log" 2>&1 &
    manager=$!
    n=0
    until systemctl --user show-environment > /dev/null 2>&1; do
        n=$((n + 1)); [ $n -lt 200 ] || { echo "the user manager did not answer" >&2; exit 1; }
        sleep 0.1
    done
}
start
systemctl --user show-environment > "$out/environment.txt"
"$bin" --json service install "$@" > "$out/install.json"
stop
start
n=0
until [ "$(systemctl --user show -p ActiveState --value crash-resume-restore.service)" = inactive ] \
    && [ -n "$(systemctl --user show -p ExecMainExitTimestamp --value crash-resume-restore.service)" ]; do
    n=$((n + 1)); [ $n -lt 600 ] || { echo "the unit did not run" >&2; break; }
    sleep 0.1
done
systemctl --user show -p Result -p ExecMainStatus -p UnitFileState crash-resume-restore.service > "$out/show.txt"
"$bin" --json service status > "$out/status.json"
"#;

    /// Runs [`USER_MANAGER_SCRIPT`] with `install` as `service install`'s words; the dir of what
    /// it wrote, and the story for a failure message (the run, the manager's log and environment,
    /// the service's log). Fails the test when the script failed.
    fn run_user_manager(env: &Sandbox, install: &[&str]) -> (PathBuf, String) {
        let out = env.root().join("user-manager");
        fs::create_dir_all(&out).unwrap();
        let ran = crate::harness::agent_command(env, "unshare")
            .args([
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                USER_MANAGER_SCRIPT,
                "sh",
            ])
            .arg(crate::BIN)
            .arg(env.home())
            .arg(&out)
            .args(install)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("unshare runs");
        let said = |name: &str| fs::read_to_string(out.join(name)).unwrap_or_default();
        let story = format!(
            "{ran:?}\nmanager: {}\nits environment: {}\nservice.log: {}",
            said("manager.log"),
            said("environment.txt"),
            fs::read_to_string(env.index_path().with_file_name("service.log")).unwrap_or_default()
        );
        assert!(ran.status.success(), "{story}");
        (out, story)
    }

    /// A real `systemd --user` (systemd 252 here) runs the unit `service install` wrote and
    /// enabled, at the manager's next start (a login): the restore resumes the recorded tmux pane,
    /// its agent binds itself again, the ledger holds the run, and `service status` says so.
    #[test]
    fn a_real_user_manager_runs_the_unit_at_login_and_it_restores_into_tmux() {
        let env = Sandbox::default();
        crate::harness::install_claude_stand_in_that_stays(&env);
        let place = crate::harness::PanePlace::new("work", 0, 0);
        let surface =
            crate::harness::server_surface(&env, &crate::harness::server_name("login"), &place);
        let session = crate::harness::uuid(7);
        let cwd = crate::harness::git_work_dir(&env, "repo-login", "");
        crate::restore::tmux::record_session(&env, &surface, &session, "repo-login", &cwd);
        let (out, story) = run_user_manager(&env, &["--mux", "tmux"]);
        let said = |name: &str| fs::read_to_string(out.join(name)).unwrap_or_default();
        let installed: Value = serde_json::from_str(&said("install.json")).expect("install said");
        assert_eq!(
            installed["enabled"], true,
            "the real systemctl enabled it: {installed}"
        );
        let unit = fs::read_to_string(unit_path(&env)).unwrap();
        let path_line = format!("Environment=PATH={}:", bin_dir(&env).display());
        assert!(
            unit.lines().any(|line| line.starts_with(&path_line)),
            "the unit carries the installer's PATH: {unit}"
        );
        let show = said("show.txt");
        for line in [
            "Result=success",
            "ExecMainStatus=0",
            "UnitFileState=enabled",
        ] {
            assert!(
                show.lines().any(|shown| shown == line),
                "{line}: {show}\n{story}"
            );
        }
        // The restore resumed the pane, and its agent bound itself there again.
        let runs = crate::harness::claude_runs(&env);
        assert_eq!(runs.len(), 1, "{runs:?}\n{story}");
        assert!(runs[0].contains(&session), "{runs:?}");
        let status: Value = serde_json::from_str(&said("status.json")).expect("status said");
        assert_eq!(status["installed"], true, "{status}");
        assert_eq!(status["last_run"]["multiplexer"], "tmux", "{status}");
        assert_eq!(
            status["last_boot"]["counts"]["verified"], 1,
            "{status}\n{story}"
        );
        let server = crate::harness::TmuxServer::named(&env, &crate::harness::server_name("login"));
        server.kill_and_wait();
    }

    /// With `--policy ask`, the unit a real `systemd --user` runs at login restores nothing: the
    /// plan and the command to run are in the service's log, and `notify-send` (a stand-in that
    /// writes down its words) is called with that command.
    #[test]
    fn a_real_user_manager_runs_the_ask_unit_which_restores_nothing_and_notifies() {
        let env = Sandbox::default();
        crate::harness::install_claude_stand_in_that_stays(&env);
        let notified = install_notify_send(&env);
        // A login with nothing to restore says nothing.
        let (out, story) = run_user_manager(&env, &["--mux", "tmux", "--policy", "ask"]);
        let show = fs::read_to_string(out.join("show.txt")).unwrap();
        assert!(
            show.lines().any(|line| line == "Result=success"),
            "{show}\n{story}"
        );
        assert!(
            !notified.exists(),
            "nothing to restore, no notification: {story}"
        );
        let place = crate::harness::PanePlace::new("work", 0, 0);
        let surface =
            crate::harness::server_surface(&env, &crate::harness::server_name("ask"), &place);
        let session = crate::harness::uuid(8);
        let cwd = crate::harness::git_work_dir(&env, "repo-ask", "");
        crate::restore::tmux::record_session(&env, &surface, &session, "repo-ask", &cwd);
        // A login with a session to restore: the plan, the line and the notification.
        let (out, story) = run_user_manager(&env, &["--mux", "tmux", "--policy", "ask"]);
        let show = fs::read_to_string(out.join("show.txt")).unwrap();
        assert!(
            show.lines().any(|line| line == "Result=success"),
            "{show}\n{story}"
        );
        assert!(
            crate::harness::claude_runs(&env).is_empty(),
            "nothing started: {story}"
        );
        let log = fs::read_to_string(env.index_path().with_file_name("service.log")).unwrap();
        assert!(log.contains(&surface), "the plan is in the log: {log}");
        let said = "crash-resume: 1 session may need restoring; run ";
        let command = " restore --apply tmux --once-per-boot";
        assert!(
            log.lines()
                .any(|line| line.starts_with(said) && line.ends_with(command)),
            "the log names the command: {log}"
        );
        let notified = fs::read_to_string(&notified).unwrap_or_default();
        assert!(
            notified.starts_with(&format!("crash-resume {said}"))
                && notified.trim_end().ends_with(command),
            "{notified}\n{story}"
        );
        let status: Value =
            serde_json::from_str(&fs::read_to_string(out.join("status.json")).unwrap()).unwrap();
        assert_eq!(status["last_run"], Value::Null, "no restore ran: {status}");
    }
}
