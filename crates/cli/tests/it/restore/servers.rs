//! Two tmux servers at once (the sandbox's default one and `tmux -L other`, both with tmux's
//! default first session `0`): each pane keeps its own entry, a restore opens only the surfaces
//! of the server it restores into and says where the others belong, a server started with the
//! installed block restores nothing of another server's, and a restore that inherited a pane's
//! `TMUX_PANE` in another terminal does not take that pane. An entry recorded before surfaces
//! named their server is the default server's, and its pane's next record replaces it.

use std::fs;

use crate::Sandbox;
use crate::harness::{
    OTHER_SERVER, PANE_SHELL, PanePlace, TmuxServer, claude_runs, crash_resume_agent, git_work_dir,
    install_claude_stand_in, plan_by_surface, restore, server_name, session_start, shell_word,
    uuid, wait_until, write_transcript,
};
use crate::restore::tmux::{expected_run, record_session, runs};

const HOUR: std::time::Duration = std::time::Duration::from_secs(3600);

/// The first pane of tmux's default first session, `0`.
fn first_pane() -> PanePlace {
    PanePlace::new("0", 0, 0)
}

#[test]
fn two_servers_keep_an_entry_each_and_a_restore_opens_only_its_servers() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let cwd = git_work_dir(&env, "both", "");
    let place = first_pane();
    let layout = [(place.clone(), cwd.clone(), PANE_SHELL)];
    let default = TmuxServer::start(&env, &server_name("default"), &layout);
    let other = TmuxServer::start(&env, OTHER_SERVER, &layout);
    // The default server's pane was recorded before surfaces named their server.
    record_session(&env, &place.surface(), &uuid(9), "both", &cwd);
    for (server, session) in [(&default, uuid(1)), (&other, uuid(2))] {
        write_transcript(&crate::harness::claude_dir(&env), &cwd, &session, HOUR);
        server.run_hook_in_pane(
            &env,
            &place.target(),
            &session_start(&session, &cwd, "startup"),
        );
    }
    let (in_default, in_other) = (default.surface(&place), other.surface(&place));
    assert_ne!(in_default, in_other);
    // Two entries: the legacy one was replaced by the default server's pane's new record, not
    // kept beside it as a second claim on the pane.
    let entries = env.entries();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(!entries.contains_key(&place.surface()), "{entries:?}");
    assert_eq!(entries[&in_default]["sessionId"], uuid(1), "{entries:?}");
    assert_eq!(entries[&in_other]["sessionId"], uuid(2), "{entries:?}");

    // After a crash of both, a restore into the other server opens only its own pane, and says
    // where the default server's belongs.
    default.kill_and_wait();
    other.kill_and_wait();
    let applied = plan_by_surface(
        &restore(
            &env,
            true,
            &["--apply", "tmux", "--tmux-socket", OTHER_SERVER],
        )
        .stdout,
    );
    assert_eq!(
        applied[&in_other]["applied"],
        "created the session and started in it"
    );
    let said = applied[&in_default]["applied"].as_str().unwrap();
    let socket = default.socket_path();
    assert!(
        said.starts_with("skipped: not this server's: it is in ")
            && said.ends_with(&format!(
                "restore it there with `--apply tmux --tmux-socket {}`",
                socket.display()
            )),
        "{said}"
    );
    assert_eq!(
        applied[&in_default]["outcome"]["reason"]["kind"],
        "other_instance"
    );
    wait_until("the other server's agent to run", || {
        (!claude_runs(&env).is_empty()).then_some(())
    });
    assert_eq!(claude_runs(&env).len(), 1, "{:?}", claude_runs(&env));

    // A surface recorded without its server is the default server's: left alone here too.
    record_session(&env, "tmux:legacy:0.0", &uuid(3), "legacy", &cwd);
    let again = plan_by_surface(
        &restore(
            &env,
            true,
            &["--apply", "tmux", "--tmux-socket", OTHER_SERVER],
        )
        .stdout,
    );
    let said = again["tmux:legacy:0.0"]["applied"].as_str().unwrap();
    assert!(
        said.starts_with("skipped: recorded without its server, so the default server's"),
        "{said}"
    );
    assert_eq!(claude_runs(&env).len(), 1, "{:?}", claude_runs(&env));

    // Restored into the default server by its socket path (`tmux -S PATH`, as the skip said):
    // its own pane and the one recorded without a server.
    let default = TmuxServer::named(&env, &server_name("default"));
    let socket = socket.to_str().unwrap();
    let there =
        plan_by_surface(&restore(&env, true, &["--apply", "tmux", "--tmux-socket", socket]).stdout);
    for surface in [in_default.as_str(), "tmux:legacy:0.0"] {
        assert_eq!(
            there[surface]["applied"], "created the session and started in it",
            "{surface}"
        );
    }
    assert_eq!(
        there[&in_other]["outcome"]["reason"]["kind"],
        "other_instance"
    );
    wait_until("the default server's agents to run", || {
        (claude_runs(&env).len() == 3).then_some(())
    });
    default.kill_and_wait();
    other.kill_and_wait();
}

#[test]
fn a_server_started_with_the_installed_block_restores_nothing_of_another_servers() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let cwd = git_work_dir(&env, "running", "");
    let place = first_pane();
    let default = TmuxServer::start(
        &env,
        &server_name("running"),
        &[(place.clone(), cwd.clone(), PANE_SHELL)],
    );
    write_transcript(&crate::harness::claude_dir(&env), &cwd, &uuid(1), HOUR);
    default.run_hook_in_pane(
        &env,
        &place.target(),
        &session_start(&uuid(1), &cwd, "startup"),
    );
    let config = env.root().join("tmux.conf");
    let installed = crash_resume_agent(&env)
        .args(["hook", "install", "tmux", "--settings"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(installed.status.success(), "{installed:?}");

    // Another tool starts a private server of its own that reads the same config.
    let other = TmuxServer::named(&env, OTHER_SERVER);
    other.tmux(&["-f", config.to_str().unwrap(), "new-session", "-d"]);
    let log = env.index_path().parent().unwrap().join("tmux-start.log");
    let said = wait_until("the restore at the other server's start to finish", || {
        fs::read_to_string(&log)
            .ok()
            .filter(|log| log.contains("not this server's"))
    });
    assert!(
        said.contains(&format!(
            "restoring into tmux at {}",
            other.socket_path().display()
        )),
        "{said}"
    );
    assert_eq!(claude_runs(&env), Vec::<String>::new());
    assert_eq!(
        other.tmux(&["list-sessions", "-F", "#{session_name}"]),
        "0",
        "nothing created in the other server"
    );
    other.kill_and_wait();
    default.kill_and_wait();
}

#[test]
fn a_restore_with_an_inherited_tmux_pane_does_not_take_that_pane() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let home = env.home();
    let cwd = git_work_dir(&env, "inherited", "");
    let place = PanePlace::new("work", 0, 0);
    let elsewhere = PanePlace::new("work", 0, 1);
    record_session(&env, &place.surface(), &uuid(1), "r", &cwd);
    let name = server_name("inherited");
    let server = TmuxServer::start(
        &env,
        &name,
        &[
            (place.clone(), home.clone(), PANE_SHELL),
            (elsewhere.clone(), home, PANE_SHELL),
        ],
    );
    // A terminal started from pane 0 (an editor's, a launcher's) carries pane 0's TMUX_PANE
    // and TMUX, but its terminal is its own: here, pane 1's.
    let pane = server.display(&place.target(), "#{pane_id}");
    let before = server.display(&place.target(), "#{pane_pid}");
    let file = env.root().join("inherited.err");
    server.run_in_pane(
        &elsewhere.target(),
        &format!(
            "TMUX_PANE={pane} {} restore --apply tmux --tmux-socket {name} 2> {}",
            shell_word(crate::BIN),
            shell_word(file.to_str().unwrap())
        ),
    );
    let said = fs::read_to_string(&file).unwrap();
    assert!(!said.contains("its agent starts here now"), "{said}");
    wait_until("the stand-in claude to run", || {
        (!claude_runs(&env).is_empty()).then_some(())
    });
    // Pane 0 itself was opened (its process replaced), not the terminal the restore ran in.
    let screen = server.capture(&elsewhere.target());
    assert!(
        screen.contains("[started in the existing pane]"),
        "{screen}"
    );
    assert_ne!(server.display(&place.target(), "#{pane_pid}"), before);
    assert_eq!(
        runs(&server, &env),
        [expected_run(&env, &place, &cwd, &uuid(1))]
    );
    server.kill_and_wait();
}
