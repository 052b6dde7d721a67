//! `crash-resume hook install|uninstall tmux`: a restore at tmux server start, written into the
//! tmux config with the user's lines kept, idempotent; a server that starts reads it and restores
//! into itself once; uninstall takes it out again.

use std::fs;

use crate::Sandbox;
use crate::harness::{
    PanePlace, TmuxServer, claude_runs, crash_resume_agent, git_work_dir, install_claude_stand_in,
    server_name, uuid, wait_until,
};
use crate::restore::tmux::{expected_run, record_session, runs};

#[test]
fn hook_install_tmux_restores_once_when_a_tmux_server_starts_and_uninstalls() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let cwd = git_work_dir(&env, "saved", "");
    let place = PanePlace::new("saved", 0, 0);
    record_session(&env, &place.surface(), &uuid(1), "saved", &cwd);
    let config = env.root().join("tmux.conf");
    let user = "set -g mouse on\n";
    fs::write(&config, user).unwrap();
    let hook = |verb: &str| {
        let output = crash_resume_agent(&env)
            .args(["hook", verb, "tmux", "--settings"])
            .arg(&config)
            .output()
            .unwrap();
        assert!(output.status.success(), "hook {verb} tmux: {output:?}");
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };

    let (said, next) = hook("install");
    assert!(
        said.starts_with(&format!(
            "installed a restore at tmux server start into {}",
            config.display()
        )),
        "{said}"
    );
    assert!(
        next.starts_with("next: the next tmux server that starts"),
        "{next}"
    );
    let installed = fs::read_to_string(&config).unwrap();
    assert!(installed.starts_with(user), "{installed}");
    assert!(
        installed.contains(&format!(" && {} ", crate::BIN))
            && installed.contains(
                " restore --apply tmux --once-per-boot --tmux-socket #{q:socket_path} >> "
            ),
        "{installed}"
    );
    // Idempotent.
    let (said, _) = hook("install");
    assert!(said.starts_with("already installed in"), "{said}");
    assert_eq!(fs::read_to_string(&config).unwrap(), installed);

    // A tmux server starts (after a reboot) reading that config: it restores into itself.
    let name = server_name("onstart");
    let server = TmuxServer::named(&env, &name);
    server.tmux(&[
        "-f",
        config.to_str().unwrap(),
        "new-session",
        "-d",
        "-s",
        "work",
    ]);
    wait_until("the restore at server start to run the agent", || {
        (!claude_runs(&env).is_empty()).then_some(())
    });
    assert_eq!(
        runs(&server, &env),
        [expected_run(&env, &place, &cwd, &uuid(1))]
    );
    assert_eq!(server.tmux(&["show-options", "-gv", "mouse"]), "on");
    assert_eq!(
        server.tmux(&["show-options", "-gv", "@crash-resume-restored"]),
        "1"
    );
    let log = env.index_path().parent().unwrap().join("tmux-start.log");
    wait_until("the restore's log to say where it restored", || {
        fs::read_to_string(&log).ok().filter(|log| {
            log.contains(&format!(
                "restoring into tmux at {}",
                server.socket_path().display()
            ))
        })
    });
    // Reading the config again (`source-file`) does not restore again: the server is marked.
    server.tmux(&["source-file", config.to_str().unwrap()]);
    assert_eq!(
        server.tmux(&["show-options", "-gv", "@crash-resume-restored"]),
        "1"
    );

    // Uninstall takes the block out and keeps the rest; again, it changes nothing.
    let (said, _) = hook("uninstall");
    assert!(
        said.starts_with("removed crash-resume's restore at tmux server start from"),
        "{said}"
    );
    assert_eq!(fs::read_to_string(&config).unwrap(), user);
    let (_, said) = hook("uninstall");
    assert!(said.contains("nothing to remove"), "{said}");
    assert_eq!(fs::read_to_string(&config).unwrap(), user);
    server.kill_and_wait();
}

/// `hook install|uninstall tmux` with `args`, in the sandbox.
fn hook_tmux(env: &Sandbox, verb: &str, args: &[&str]) -> std::process::Output {
    crash_resume_agent(env)
        .args(["hook", verb, "tmux"])
        .args(args)
        .output()
        .unwrap()
}

/// The files in `dir` whose name begins with `name`: the file, and any backup or temp file.
fn files_named(dir: &std::path::Path, name: &str) -> Vec<String> {
    let mut found: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|item| item.starts_with(name))
        .collect();
    found.sort();
    found
}

/// A line that begins our block with no end line after it: the lines after it are the user's,
/// so nothing is taken out; install, uninstall and their dry runs refuse the file (exit 1),
/// naming the line, and write nothing.
#[test]
fn a_begin_marker_without_its_end_keeps_every_line_and_says_which() {
    let env = Sandbox::default();
    let config = env.root().join("tmux.conf");
    let user = "set -g mouse on\n# >>> crash-resume: restore after a crash\nset -g status off\nbind r source-file ~/.tmux.conf\n";
    fs::write(&config, user).unwrap();
    let settings = config.to_str().unwrap();
    let mut said = String::new();
    for (verb, dry_run) in [
        ("install", false),
        ("install", true),
        ("uninstall", false),
        ("uninstall", true),
    ] {
        let mut args = vec!["--settings", settings];
        if dry_run {
            args.push("--dry-run");
        }
        let output = hook_tmux(&env, verb, &args);
        assert_eq!(output.status.code(), Some(1), "{verb}: {output:?}");
        assert!(output.stdout.is_empty(), "{verb}: {output:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        said += &format!(
            "hook {verb} tmux{}\n{stderr}\n",
            if dry_run { " --dry-run" } else { "" }
        );
        assert_eq!(fs::read_to_string(&config).unwrap(), user, "{verb}");
        assert_eq!(
            files_named(env.root(), "tmux.conf"),
            ["tmux.conf"],
            "{verb}: no backup"
        );
    }
    crate::snapshot::assert_cli_snapshot!(&env, "tmux_begin_without_end", said);
}

/// A dotfile manager keeps `~/.tmux.conf` as a symlink into its repository: install and
/// uninstall edit the file it leads to, and the link stays a link.
#[test]
fn a_symlinked_tmux_conf_is_edited_through_the_link() {
    let env = Sandbox::default();
    let dotfiles = env.root().join("dotfiles");
    fs::create_dir(&dotfiles).unwrap();
    let real = dotfiles.join("tmux.conf");
    let user = "set -g mouse on\n";
    fs::write(&real, user).unwrap();
    let home = env.home();
    fs::create_dir_all(&home).unwrap();
    let link = home.join(".tmux.conf");
    std::os::unix::fs::symlink(&real, &link).unwrap();

    let output = hook_tmux(&env, "install", &[]);
    assert!(output.status.success(), "{output:?}");
    let said = String::from_utf8(output.stdout).unwrap();
    assert!(said.contains(real.to_str().unwrap()), "{said}");
    assert!(
        fs::symlink_metadata(&link).unwrap().is_symlink(),
        "still a link"
    );
    let installed = fs::read_to_string(&real).unwrap();
    assert!(
        installed.starts_with(user) && installed.contains("# <<< crash-resume\n"),
        "{installed}"
    );

    let output = hook_tmux(&env, "uninstall", &[]);
    assert!(output.status.success(), "{output:?}");
    assert!(
        fs::symlink_metadata(&link).unwrap().is_symlink(),
        "still a link"
    );
    assert_eq!(fs::read_to_string(&real).unwrap(), user);
}

/// Whether a `crash-resume restore` of this sandbox's index still runs (`/proc`'s command
/// lines).
fn a_restore_runs(env: &Sandbox) -> bool {
    let index = env.index_path();
    let index = index.to_str().unwrap();
    fs::read_dir("/proc").unwrap().flatten().any(|process| {
        fs::read(process.path().join("cmdline")).is_ok_and(|line| {
            let line = String::from_utf8_lossy(&line).replace('\0', " ");
            line.contains(" restore --apply tmux") && line.contains(index)
        })
    })
}

/// Installed before anything was recorded (the index's dir does not exist yet), the block makes
/// the log's dir; and a restore that fails (an index it refuses) leaves the new server's pane
/// as it is, not in view mode showing `'…' returned 1`.
#[test]
fn the_block_makes_its_log_dir_and_a_failing_restore_leaves_the_pane_alone() {
    let env = Sandbox::default();
    let config = env.root().join("tmux.conf");
    fs::write(&config, "set -g mouse on\n").unwrap();
    let output = hook_tmux(&env, "install", &["--settings", config.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let log = env.index_path().parent().unwrap().join("tmux-start.log");
    assert!(!log.parent().unwrap().exists(), "nothing recorded yet");
    for (round, index) in [(1, None), (2, Some("not an index\n"))] {
        if let Some(index) = index {
            fs::write(env.index_path(), index).unwrap();
        }
        // A server other than the sandbox's default one, whose hint must say how to reach it.
        let name = format!("startlog{round}");
        let server = TmuxServer::named(&env, &name);
        server.tmux(&[
            "-f",
            config.to_str().unwrap(),
            "new-session",
            "-d",
            "-s",
            "work",
        ]);
        wait_until("the restore at server start to write its log", || {
            fs::read_to_string(&log)
                .ok()
                .filter(|log| index.is_none() || log.contains("error:"))
        });
        wait_until("the restore to exit", || {
            (!a_restore_runs(&env)).then_some(())
        });
        // Its hint names the server it restored into, which is not the default one.
        let said = fs::read_to_string(&log).unwrap();
        let hint = format!("`tmux -S {} list-sessions`", server.socket_path().display());
        assert!(round == 2 || said.contains(&hint), "{hint}: {said}");
        // A command through the server's job queue after the restore's job ended.
        server.tmux(&["run-shell", "true"]);
        assert_eq!(
            server.tmux(&["display-message", "-p", "-t", "work", "#{pane_in_mode}"]),
            "0",
            "round {round}: {}",
            fs::read_to_string(&log).unwrap()
        );
        server.kill_and_wait();
    }
}
