//! `crash-resume restore --apply tmux` against a real, private tmux server: panes bound through
//! the real hook run in them, the server killed, a new server with the same layout, then the
//! resume command started as the process of the right panes (a stand-in `claude` writes down
//! where and how it was started), nothing started twice by two restores at once, a busy pane
//! left alone (another program, a script waiting on `read`, a shell running a command), text
//! half-typed at a prompt never run, a missing pane, window or session created in the
//! recorded working dir, and 2 and 3 restores at once on an empty server; entries no capture
//! records (a crafted working dir, an option-like session id, a session name tmux rewrites)
//! start and create nothing.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::Sandbox;
use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, claude_dir, claude_resume_command, claude_runs,
    crash_resume_agent, git_work_dir, install_claude_stand_in, install_claude_stand_in_that_stays,
    plan_by_surface, restore, restore_apply, server_name, server_surface, session_start,
    shell_word, uuid, wait_until, write_transcript,
};

const HOUR: Duration = Duration::from_secs(3600);

/// The surfaces of a `--json` restore's output, by id.
fn surfaces(output: &Output) -> BTreeMap<String, Value> {
    plan_by_surface(&output.stdout)
}

/// One run of the stand-in `claude`: where it ran and how it was started.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClaudeRun {
    surface: String,
    pwd: PathBuf,
    oldpwd: PathBuf,
    config: PathBuf,
    /// `CRASH_RESUME_SURFACE` as the agent got it.
    named: String,
    args: String,
}

/// The stand-in's runs so far, each pane id turned into its surface by asking tmux.
pub fn runs(server: &TmuxServer, env: &Sandbox) -> Vec<ClaudeRun> {
    let mut runs: Vec<ClaudeRun> = claude_runs(env)
        .iter()
        .map(|line| {
            let field = |name: &str, next: Option<&str>| {
                let start = line.find(&format!("{name}=")).unwrap() + name.len() + 1;
                let end = next.map_or(line.len(), |next| line.find(&format!(" {next}=")).unwrap());
                line[start..end].to_string()
            };
            let pane = field("pane", Some("pwd"));
            ClaudeRun {
                surface: format!(
                    "tmux:{}",
                    server.display(&pane, "#{session_name}:#{window_index}.#{pane_index}")
                ),
                pwd: field("pwd", Some("oldpwd")).into(),
                oldpwd: field("oldpwd", Some("config")).into(),
                config: field("config", Some("surface")).into(),
                named: field("surface", Some("args")),
                args: field("args", None),
            }
        })
        .collect();
    runs.sort();
    runs
}

/// A run of the stand-in in the pane at `place`, started in `cwd` (the pane is respawned in
/// the recorded dir, so the `cd` of the command leaves `OLDPWD` there too), with the surface
/// named in its environment.
pub fn expected_run(env: &Sandbox, place: &PanePlace, cwd: &Path, session: &str) -> ClaudeRun {
    ClaudeRun {
        surface: place.surface(),
        pwd: cwd.to_path_buf(),
        oldpwd: cwd.to_path_buf(),
        config: claude_dir(env),
        named: full(env, place),
        args: format!("--resume {session}"),
    }
}

/// The surface id of the pane at `place` in the test's (default) server, as capture records
/// it.
pub fn full(env: &Sandbox, place: &PanePlace) -> String {
    server_surface(env, &server_name("tmux"), place)
}

/// Records `surface` → `session` of Claude Code in `cwd` with `record`, its transcript written
/// an hour old where the CLI keeps it.
pub fn record_session(env: &Sandbox, surface: &str, session: &str, repo: &str, cwd: &Path) {
    let config = claude_dir(env);
    write_transcript(&config, cwd, session, HOUR);
    let recorded = crash_resume_agent(env)
        .args([
            "record",
            surface,
            session,
            repo,
            "--provider",
            "claude",
            "--cwd",
        ])
        .arg(cwd)
        .arg("--config-dir")
        .arg(&config)
        .output()
        .unwrap();
    assert!(recorded.status.success(), "record {surface}: {recorded:?}");
}

/// The process tmux started in each pane (`pane_pid`), by surface: a restore that re-opens a
/// pane replaces it.
fn pane_pids(server: &TmuxServer) -> BTreeMap<String, String> {
    test_support::tmux::list_panes(|args| server.try_tmux(args), "#{pane_pid}")
        .into_iter()
        .collect()
}

/// Waits until the pane at `place` is the user's shell again, in `dir`: where a re-opened pane
/// leaves the user once the agent exits.
fn wait_for_shell_in(server: &TmuxServer, place: &PanePlace, dir: &Path) {
    wait_until(
        &format!("{} to be a shell in {}", place.target(), dir.display()),
        || {
            (server.display(
                &place.target(),
                "#{pane_current_command} #{pane_current_path}",
            ) == format!("bash {}", dir.display()))
            .then_some(())
        },
    );
}

/// A pane of a test's layout: its place, its working dir, the session its agent runs, and
/// whether that session's transcript exists.
type RecordedPane = (PanePlace, PathBuf, String, bool);

/// Three panes of tmux session `work` at `places` (window, pane), in the git work dirs `dirs`
/// (repo, sub dir), running sessions `uuid(1)` to `uuid(3)`; the third's agent never got a
/// prompt, so it has no transcript.
fn three_panes(
    env: &Sandbox,
    places: [(u32, u32); 3],
    dirs: [(&str, &str); 3],
) -> Vec<RecordedPane> {
    places
        .into_iter()
        .zip(dirs)
        .zip(1..)
        .map(|(((window, pane), (repo, sub)), n)| {
            (
                PanePlace::new("work", window, pane),
                git_work_dir(env, repo, sub),
                uuid(n),
                n < 3,
            )
        })
        .collect()
}

/// The layout of `panes` (place, working dir, session, what the test knows of it): each an idle
/// shell in its working dir.
fn layout_of<T>(
    panes: &[(PanePlace, PathBuf, String, T)],
) -> Vec<(PanePlace, PathBuf, &'static str)> {
    panes
        .iter()
        .map(|(place, cwd, _, _)| (place.clone(), cwd.clone(), PANE_SHELL))
        .collect()
}

/// Before the crash: each pane's agent fires its SessionStart hook, its transcript (where it
/// has one) written first.
fn start_sessions(env: &Sandbox, server: &TmuxServer, config: &Path, panes: &[RecordedPane]) {
    for (place, cwd, session, has_transcript) in panes {
        start_session(env, server, config, (place, cwd, session, *has_transcript));
    }
}

/// Before the crash: the agent in the pane at `place` (working dir `cwd`) fires the
/// SessionStart hook of `session`, its transcript in `config` written first where it has one.
fn start_session(
    env: &Sandbox,
    server: &TmuxServer,
    config: &Path,
    (place, cwd, session, has_transcript): (&PanePlace, &Path, &str, bool),
) {
    if has_transcript {
        write_transcript(config, cwd, session, HOUR);
    }
    server.run_hook_in_pane(
        env,
        &place.target(),
        &session_start(session, cwd, "startup"),
    );
}

#[test]
fn restore_after_a_tmux_crash_starts_each_command_in_its_pane_once() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let panes = three_panes(
        &env,
        [(0, 0), (0, 1), (1, 0)],
        [("alpha", ""), ("beta", "my dir"), ("gamma", "")],
    );
    let name = server_name("restore");

    // Before the crash: each pane's agent fired its SessionStart hook.
    let server = TmuxServer::start(&env, &name, &layout_of(&panes));
    start_sessions(&env, &server, &config, &panes);
    let entries = env.entries();
    let recorded: Vec<String> = panes.iter().map(|pane| full(&env, &pane.0)).collect();
    assert_eq!(entries.keys().cloned().collect::<Vec<_>>(), recorded);
    server.kill_and_wait();
    drop(server);

    // After the reboot: the same layout, every pane an idle shell in the home dir.
    let home = env.home();
    let layout: Vec<(PanePlace, PathBuf, &str)> = panes
        .iter()
        .map(|(place, _, _, _)| (place.clone(), home.clone(), PANE_SHELL))
        .collect();
    let server = TmuxServer::start(&env, &name, &layout);

    let plan = surfaces(&restore(&env, true, &[]));
    assert_eq!(plan.keys().cloned().collect::<Vec<_>>(), recorded);
    for (place, cwd, session, has_transcript) in &panes {
        let item = &plan[&full(&env, place)];
        assert_eq!(item["held_session"], *session, "{item}");
        assert_eq!(item["held_elsewhere"], Value::Null, "{item}");
        assert_eq!(item["applied"], Value::Null, "{item}");
        if *has_transcript {
            assert_eq!(item["verdict"], "resume", "{item}");
            assert_eq!(item["session_id"], *session, "{item}");
            assert_eq!(
                item["command"],
                claude_resume_command(&env, cwd, session),
                "{item}"
            );
        } else {
            assert_eq!(item["verdict"], "fresh", "{item}");
            assert_eq!(item["command"], Value::Null, "{item}");
        }
    }
    assert_eq!(
        claude_runs(&env),
        Vec::<String>::new(),
        "the plan alone runs nothing"
    );

    let output = restore(&env, true, &["--apply", "tmux", "--tmux-socket", &name]);
    // It says which server it restored into, for people and in the plan.
    let socket = server.socket_path();
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["restored_into"], socket.to_str().unwrap());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "restoring into tmux at {} (check it with `tmux -L {name} list-sessions`)",
            socket.display()
        )),
        "{stderr}"
    );
    let applied = surfaces(&output);
    for (place, _, _, has_transcript) in &panes {
        let item = &applied[&full(&env, place)];
        let expected = if *has_transcript {
            Value::from("started in the existing pane")
        } else {
            Value::Null
        };
        assert_eq!(item["applied"], expected, "{item}");
    }
    wait_until("the stand-in claude to run twice", || {
        (claude_runs(&env).len() >= 2).then_some(())
    });
    let expected: Vec<ClaudeRun> = panes
        .iter()
        .filter(|pane| pane.3)
        .map(|(place, cwd, session, _)| expected_run(&env, place, cwd, session))
        .collect();
    assert_eq!(runs(&server, &env), expected);
    // Once the agent exits, the user is at their shell in the session's dir; the fresh pane
    // was not touched.
    for (place, cwd, _, _) in panes.iter().filter(|pane| pane.3) {
        wait_for_shell_in(&server, place, cwd);
    }
    wait_for_shell_in(&server, &panes[2].0, &home);
    let before = pane_pids(&server);

    // Two restores at once: both find every surface claimed, and neither types anything.
    let children: Vec<std::process::Child> = (0..2)
        .map(|_| restore_apply(&env, &name).spawn().unwrap())
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let again = surfaces(&output);
        for (place, _, _, has_transcript) in &panes {
            let item = &again[&full(&env, place)];
            let expected = if *has_transcript {
                Value::from("skipped: another restore claimed it")
            } else {
                Value::Null
            };
            assert_eq!(item["applied"], expected, "{item}");
        }
    }
    // Neither restore replaced any pane's process (a restore never types: it respawns).
    assert_eq!(pane_pids(&server), before);
    assert_eq!(runs(&server, &env), expected, "no second run");
    server.kill_and_wait();
}

#[test]
fn restore_creates_what_is_missing_and_leaves_a_busy_pane_alone() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let home = env.home();
    // (place, working dir, session, what the restore finds there)
    let panes = [
        (
            PanePlace::new("work", 0, 0),
            git_work_dir(&env, "idle", ""),
            uuid(1),
            "started in the existing pane",
        ),
        (
            PanePlace::new("work", 0, 1),
            git_work_dir(&env, "split", ""),
            uuid(2),
            "created the pane and started in it",
        ),
        (
            PanePlace::new("work", 1, 0),
            git_work_dir(&env, "busy", ""),
            uuid(3),
            "skipped: the pane is busy running sleep",
        ),
        (
            PanePlace::new("work", 2, 0),
            git_work_dir(&env, "window", "sub dir"),
            uuid(4),
            "created the window and started in it",
        ),
        (
            PanePlace::new("other", 3, 0),
            git_work_dir(&env, "session", ""),
            uuid(5),
            "created the session and started in it",
        ),
    ];
    let name = server_name("missing");
    let server = TmuxServer::start(&env, &name, &layout_of(&panes));
    for (place, cwd, session, _) in &panes {
        start_session(&env, &server, &config, (place, cwd, session, true));
    }
    assert_eq!(env.entries().len(), 5);
    server.kill_and_wait();
    drop(server);

    // The new server has only window 0 with one pane, and window 1 running something.
    let server = TmuxServer::start(
        &env,
        &name,
        &[
            (panes[0].0.clone(), home.clone(), PANE_SHELL),
            (panes[2].0.clone(), home, "sleep 1000"),
        ],
    );
    let output = restore(&env, false, &["--apply", "tmux", "--tmux-socket", &name]);
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: BTreeMap<&str, &str> = text
        .lines()
        .map(|line| (line.split_once('\t').unwrap().0, line))
        .collect();
    assert_eq!(lines.len(), 5, "{text}");
    for (place, cwd, session, applied) in &panes {
        let line = lines[full(&env, place).as_str()];
        assert!(line.ends_with(&format!("\t[{applied}]")), "{line}");
        assert!(
            line.contains(&claude_resume_command(&env, cwd, session)),
            "{line}"
        );
    }

    wait_until("the stand-in claude to run in four panes", || {
        (claude_runs(&env).len() >= 4).then_some(())
    });
    // Every pane, existing or created, is (re)started in the recorded dir.
    let mut expected: Vec<ClaudeRun> = panes
        .iter()
        .filter(|pane| !pane.3.starts_with("skipped"))
        .map(|(place, cwd, session, _)| expected_run(&env, place, cwd, session))
        .collect();
    expected.sort();
    assert_eq!(runs(&server, &env), expected);

    let busy = &panes[2].0;
    assert_eq!(
        server.display(&busy.target(), "#{pane_current_command}"),
        "sleep"
    );
    assert_eq!(
        server.capture(&busy.target()).trim(),
        "",
        "nothing typed into the busy pane"
    );
    let mut present: Vec<String> = server
        .panes()
        .into_iter()
        .map(|(surface, _)| surface)
        .collect();
    present.sort();
    let mut wanted: Vec<String> = panes.iter().map(|pane| pane.0.surface()).collect();
    wanted.sort();
    assert_eq!(present, wanted, "every recorded pane exists again");
    server.kill_and_wait();
}

/// A pane busy at the first restore, freed by the user, is restored by the next one: skipping a
/// busy pane must not leave the surface claimed.
#[test]
fn a_pane_busy_at_the_first_restore_is_restored_by_the_next() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let place = PanePlace::new("work", 0, 0);
    let cwd = git_work_dir(&env, "later", "");
    let session = uuid(1);
    let name = server_name("busy");
    let server = TmuxServer::start(&env, &name, &[(place.clone(), cwd.clone(), PANE_SHELL)]);
    start_session(
        &env,
        &server,
        &claude_dir(&env),
        (&place, &cwd, &session, true),
    );
    server.kill_and_wait();
    drop(server);

    let server = TmuxServer::start(&env, &name, &[(place.clone(), env.home(), "sleep 1000")]);
    let first = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    assert_eq!(
        first[&full(&env, &place)]["applied"],
        "skipped: the pane is busy running sleep"
    );

    // The user ends what ran there; the pane is an idle shell now.
    server.tmux(&["respawn-pane", "-k", "-t", &place.target(), PANE_SHELL]);
    server.wait_for_idle_shell(&place.target());
    let second = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    assert_eq!(
        second[&full(&env, &place)]["applied"],
        "started in the existing pane"
    );
    wait_until("the stand-in claude to run", || {
        (claude_runs(&env).len() == 1).then_some(())
    });
    assert_eq!(
        runs(&server, &env),
        [expected_run(&env, &place, &cwd, &session)]
    );
    server.kill_and_wait();
}

/// Panes a restore must not take over, each skipped as busy with its reason and left running
/// what it ran: a script waiting on `read` (a child of the pane's shell), a pane whose own
/// process is a `sh -c` waiting on `read`, half-typed text at a prompt (which never runs), the
/// shell in the `read` builtin, in a `while read` loop and in a `select` menu, a heredoc half
/// typed and a quote left open (continuation prompts). A shell idle at its prompt is taken over.
#[test]
fn restore_leaves_busy_panes_alone_and_never_runs_typed_text() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let home = env.home();
    let answer = env.root().join("answer");
    let half = env.root().join("half-typed");
    let reading = format!("sh -c 'read line; echo \"$line\" > {}'", answer.display());
    let half_typed = format!("touch {}", half.display());
    // Each case: the pane, what its process is after the reboot, the lines typed into its
    // shell (the last one without Enter when it is `half`), what the screen shows once they
    // are taken, and what the restore says. Only the idle prompt is taken over.
    struct Case<'a> {
        place: PanePlace,
        program: &'a str,
        lines: Vec<&'a str>,
        enter_last: bool,
        shows: &'a str,
        said: &'a str,
    }
    let case = |window, pane, program, lines, shows, said| Case {
        place: PanePlace::new("work", window, pane),
        program,
        lines,
        enter_last: true,
        shows,
        said,
    };
    let cases = vec![
        case(
            0,
            0,
            PANE_SHELL,
            vec![reading.as_str()],
            "",
            "skipped: the pane is busy: its shell runs a program (pid ",
        ),
        case(
            0,
            1,
            &reading,
            vec![],
            "",
            "skipped: the pane is busy: its shell runs a script or command",
        ),
        Case {
            enter_last: false,
            ..case(
                0,
                2,
                PANE_SHELL,
                vec![half_typed.as_str()],
                "touch ",
                "skipped: the pane is busy: text is typed at its prompt (",
            )
        },
        case(
            1,
            0,
            PANE_SHELL,
            vec!["read -p 'really delete? ' x"],
            "really delete? ",
            "skipped: the pane is busy: its shell reads a line",
        ),
        case(
            1,
            1,
            PANE_SHELL,
            vec!["while :; do read -t 1 l; done"],
            "done",
            "skipped: the pane is busy: its shell reads a line",
        ),
        case(
            1,
            2,
            PANE_SHELL,
            vec!["select x in a b; do break; done"],
            "#? ",
            "skipped: the pane is busy: its shell reads a line",
        ),
        case(
            2,
            0,
            PANE_SHELL,
            vec!["cat <<'EOF'", "half a heredoc"],
            "> ",
            "skipped: the pane is busy: its shell waits for the rest of a command",
        ),
        case(
            2,
            1,
            PANE_SHELL,
            vec!["echo \"abc"],
            "> ",
            "skipped: the pane is busy: its shell waits for the rest of a command",
        ),
        case(2, 2, PANE_SHELL, vec![], "", "started in the existing pane"),
    ];
    let sessions: Vec<(PathBuf, String)> = (0..cases.len())
        .map(|n| {
            (
                git_work_dir(&env, &format!("pane{n}"), ""),
                uuid(n as u32 + 1),
            )
        })
        .collect();
    let layout: Vec<(PanePlace, PathBuf, &str)> = cases
        .iter()
        .zip(&sessions)
        .map(|(case, (cwd, _))| (case.place.clone(), cwd.clone(), PANE_SHELL))
        .collect();
    let name = server_name("typed");
    let server = TmuxServer::start(&env, &name, &layout);
    for (case, (cwd, session)) in cases.iter().zip(&sessions) {
        start_session(&env, &server, &config, (&case.place, cwd, session, true));
    }
    server.kill_and_wait();
    drop(server);

    let layout: Vec<(PanePlace, PathBuf, &str)> = cases
        .iter()
        .map(|case| (case.place.clone(), home.clone(), case.program))
        .collect();
    let server = TmuxServer::start(&env, &name, &layout);
    for case in &cases {
        let target = case.place.target();
        for (n, line) in case.lines.iter().enumerate() {
            person_types(
                &server,
                &target,
                line,
                case.enter_last || n + 1 < case.lines.len(),
            );
        }
        // The shell has taken the lines once the cursor's line shows what it should: the
        // prompt of the `read` or of the continuation, or the cursor on a line of its own.
        wait_until(&format!("{target} to show {:?}", case.shows), || {
            let row = server.display(&target, "#{cursor_y}");
            let line = server.tmux(&["capture-pane", "-p", "-t", &target, "-S", &row, "-E", &row]);
            let ready = match case.shows {
                "done" => line.trim().is_empty() && row != "0",
                "" => true,
                shows => line.ends_with(shows.trim_end()) || line.contains(shows),
            };
            ready.then_some(())
        });
    }
    wait_until("the script to wait on read", || {
        (server.display(&cases[0].place.target(), "#{pane_current_command}") == "sh").then_some(())
    });
    let before = pane_pids(&server);

    let applied = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    for case in &cases {
        let said = applied[&full(&env, &case.place)]["applied"]
            .as_str()
            .unwrap();
        assert!(
            said.starts_with(case.said),
            "{}: {said}",
            full(&env, &case.place)
        );
    }
    let idle = cases.len() - 1;
    wait_until("the stand-in claude to run", || {
        (claude_runs(&env).len() == 1).then_some(())
    });
    assert_eq!(
        runs(&server, &env),
        [expected_run(
            &env,
            &cases[idle].place,
            &sessions[idle].0,
            &sessions[idle].1
        )]
    );
    // Every busy pane still runs what it ran: nothing was killed or replaced.
    let after = pane_pids(&server);
    for case in &cases[..idle] {
        let surface = case.place.surface();
        assert_eq!(before[&surface], after[&surface], "{surface} was replaced");
    }
    wait_for_shell_in(&server, &cases[idle].place, &sessions[idle].0);

    // The scripts still wait for their input, and got none: end them with a line of ours.
    for case in &cases[..2] {
        person_types(&server, &case.place.target(), "mine", true);
        wait_until("the script to take our line", || {
            fs::read_to_string(&answer)
                .ok()
                .filter(|text| text == "mine\n")
        });
        fs::remove_file(&answer).unwrap();
    }
    assert!(!half.exists(), "the half-typed command never ran");
    server.kill_and_wait();
}

/// Values no capture records, written into the index by another tool beside a good entry: a
/// working dir holding readline's kill-line, a command and a newline, and an option-like session
/// id, each with an idle shell at its surface. `restore --apply tmux` plans the first as refused
/// with no command, leaves the second out as not usable, starts nothing in either pane and runs
/// nothing; the good entry is restored into its pane. (What `record` and the hook say of the
/// same values: `bad_input`, `hook`.)
#[test]
fn refused_entries_start_nothing_in_their_idle_panes() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let ran = env.root().join("ran");
    let crafted = format!("{}/x\u{15}touch {}\n", env.root().display(), ran.display());
    let option_like = "--dangerously-skip-permissions";
    let good_dir = git_work_dir(&env, "good", "");
    let good_session = uuid(2);
    write_transcript(&config, &good_dir, &good_session, HOUR);
    let now = crate::now_millis();
    let entry = |surface: &str, session: &str, cwd: &str| {
        json!({
            "surfaceId": surface,
            "sessionId": session,
            "repo": "hostile",
            "role": null,
            "captured_at": now,
            "last_active": now,
            "provider": "claude",
            "cwd": cwd,
            "config_dir": config,
        })
    };
    let good = good_dir.to_str().unwrap();
    env.write_index(&[
        entry("tmux:hx:0.0", &uuid(1), &crafted),
        entry("tmux:hx:0.1", option_like, good),
        entry("tmux:hx:0.2", &good_session, good),
    ]);
    let places: Vec<PanePlace> = (0..3).map(|pane| PanePlace::new("hx", 0, pane)).collect();
    let layout: Vec<(PanePlace, PathBuf, &str)> = places
        .iter()
        .map(|place| (place.clone(), env.home(), PANE_SHELL))
        .collect();
    let name = server_name("refused");
    let server = TmuxServer::start(&env, &name, &layout);
    for place in &places {
        wait_for_shell_in(&server, place, &env.home());
    }
    let before = pane_pids(&server);

    let output = restore(&env, true, &["--apply", "tmux", "--tmux-socket", &name]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let applied = surfaces(&output);
    let crafted_item = &applied["tmux:hx:0.0"];
    assert!(crafted_item["refused"].is_string(), "{crafted_item}");
    assert_eq!(
        crafted_item["refusal"]["kind"], "control_character",
        "{crafted_item}"
    );
    assert_eq!(crafted_item["command"], Value::Null, "{crafted_item}");
    assert_eq!(crafted_item["applied"], Value::Null, "{crafted_item}");
    assert!(!applied.contains_key("tmux:hx:0.1"), "{applied:?}");
    assert!(
        stderr.contains("entry tmux:hx:0.1 is not usable"),
        "{stderr}"
    );
    assert_eq!(
        applied["tmux:hx:0.2"]["applied"], "started in the existing pane",
        "{applied:?}"
    );
    wait_until("the stand-in claude to run", || {
        (claude_runs(&env).len() == 1).then_some(())
    });
    assert_eq!(
        runs(&server, &env),
        [expected_run(&env, &places[2], &good_dir, &good_session)]
    );
    wait_for_shell_in(&server, &places[2], &good_dir);
    let after = pane_pids(&server);
    for place in &places[..2] {
        let surface = place.surface();
        assert_eq!(before[&surface], after[&surface], "{surface} was acted on");
    }
    assert!(!ran.exists(), "the crafted dir's command ran");
    server.kill_and_wait();
}

/// 2 and 3 restores at once against an empty tmux server, 20 times each: 9 surfaces over 2
/// sessions, with several panes per window and a gap in the window indexes. Every surface's
/// session ends in the pane at its recorded address (the stand-in agent stays there, as
/// `sleep`), started once, with its surface in its environment; its SessionStart hook keeps the
/// index as it was; exactly one restore opened each surface, and none failed.
#[test]
fn concurrent_restores_on_an_empty_server_rebuild_every_pane_once() {
    let env = Sandbox::default();
    install_claude_stand_in_that_stays(&env);
    let places = [
        PanePlace::new("alpha", 0, 0),
        PanePlace::new("alpha", 0, 1),
        PanePlace::new("alpha", 0, 2),
        PanePlace::new("alpha", 1, 0),
        PanePlace::new("alpha", 1, 1),
        PanePlace::new("beta", 0, 0),
        PanePlace::new("beta", 0, 1),
        PanePlace::new("beta", 2, 0),
        PanePlace::new("beta", 2, 1),
    ];
    let mut sessions = BTreeMap::new();
    for (n, place) in places.iter().enumerate() {
        let cwd = git_work_dir(&env, &format!("repo-{n}"), "");
        let session = uuid(n as u32 + 1);
        record_session(
            &env,
            &full(&env, place),
            &session,
            &format!("repo-{n}"),
            &cwd,
        );
        sessions.insert(full(&env, place), (session, cwd));
    }
    let index_before = fs::read(env.index_path()).unwrap();
    let name = server_name("empty");
    let server = TmuxServer::named(&env, &name);

    for restores in [2, 3] {
        for round in 0..20 {
            let what = format!("{restores} restores, round {round}");
            env.write_index_bytes(&index_before);
            let _ = fs::remove_file(crate::harness::claude_runs_path(&env));
            assert_eq!(server.panes(), Vec::new(), "{what}: the server is empty");
            let children: Vec<std::process::Child> = (0..restores)
                .map(|_| restore_apply(&env, &name).spawn().unwrap())
                .collect();
            let mut opened: BTreeMap<String, usize> = BTreeMap::new();
            for child in children {
                let output = child.wait_with_output().unwrap();
                assert!(output.status.success(), "{what}: {output:?}");
                for (surface, item) in surfaces(&output) {
                    let applied = item["applied"].as_str().unwrap_or_default().to_string();
                    assert!(
                        !applied.starts_with("failed"),
                        "{what}: {surface}: {applied}"
                    );
                    if !applied.starts_with("skipped") {
                        *opened.entry(surface).or_default() += 1;
                    }
                }
            }
            let once: BTreeMap<String, usize> = sessions
                .keys()
                .map(|surface| (surface.clone(), 1))
                .collect();
            assert_eq!(opened, once, "{what}: each surface opened by one restore");

            let mut wanted: Vec<(String, String)> = places
                .iter()
                .map(|place| (place.surface(), "sleep".to_string()))
                .collect();
            wanted.sort();
            let mut last = Vec::new();
            let waited = std::time::Instant::now();
            while last != wanted && waited.elapsed() < crate::harness::DEADLINE {
                last = server.panes();
                std::thread::sleep(Duration::from_millis(20));
            }
            assert_eq!(
                last,
                wanted,
                "{what}: every pane runs the agent; runs: {:?}",
                claude_runs(&env)
            );
            let mut expected: Vec<ClaudeRun> = places
                .iter()
                .map(|place| {
                    let (session, cwd) = &sessions[&full(&env, place)];
                    expected_run(&env, place, cwd, session)
                })
                .collect();
            expected.sort();
            assert_eq!(runs(&server, &env), expected, "{what}");
            let entries = env.entries();
            assert_eq!(entries.len(), places.len(), "{what}");
            for (surface, (session, cwd)) in &sessions {
                let entry = &entries[surface];
                assert_eq!(entry["sessionId"], *session, "{what}: {entry}");
                assert_eq!(entry["cwd"], cwd.to_str().unwrap(), "{what}: {entry}");
                // The agent's own record keeps the claim: whether it holds is the next
                // restore's to judge.
                assert!(entry["restore_claimed_at"].is_number(), "{what}: {entry}");
            }
            server.kill_and_wait();
        }
    }
}

/// A surface recorded by hand whose tmux session name tmux would rewrite (`.` and `:`, which
/// tmux does not allow in a session name, renaming `a.b` to `a_b`; `$`) fails with the reason
/// and creates nothing; a surface beside it is opened as usual.
#[test]
fn a_session_name_tmux_cannot_hold_fails_and_creates_nothing() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let cwd = git_work_dir(&env, "proj", "");
    for (n, surface) in [
        (1, "tmux:a.b:0.0"),
        (2, "tmux:c:d:0.0"),
        (3, "tmux:ok:0.0"),
        (4, "tmux:h$x:0.0"),
    ] {
        record_session(&env, surface, &uuid(n), "r", &cwd);
    }
    let name = server_name("unnameable");
    let server = TmuxServer::named(&env, &name);
    let output = restore_apply(&env, &name).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let plan = surfaces(&output);
    for (surface, session) in [
        ("tmux:a.b:0.0", "session a.b "),
        ("tmux:c:d:0.0", "session c:d "),
        ("tmux:h$x:0.0", "session h$x "),
    ] {
        let applied = plan[surface]["applied"].as_str().unwrap();
        assert!(
            applied.starts_with("failed: tmux cannot name a session")
                && applied.contains(session)
                && applied.contains("nothing was created"),
            "{surface}: {applied}"
        );
    }
    assert!(
        plan["tmux:ok:0.0"]["applied"]
            .as_str()
            .unwrap()
            .starts_with("created the session"),
        "{plan:?}"
    );
    assert_eq!(
        server.tmux(&["list-sessions", "-F", "#{session_name}"]),
        "ok",
        "no session but the one that could be named"
    );
    // Nothing claimed: a second restore fails the same way, not skipped as claimed.
    let again = restore_apply(&env, &name).output().unwrap();
    let applied = surfaces(&again)["tmux:a.b:0.0"]["applied"].clone();
    assert!(
        applied
            .as_str()
            .unwrap()
            .starts_with("failed: tmux cannot name"),
        "{applied}"
    );
}

/// The files under `dir` (at any depth) whose name ends in `suffix`.
fn files_ending_in(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            found.extend(files_ending_in(&path, suffix));
        } else if entry.file_name().to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
    found
}

/// tmux expands formats (`#(...)` runs a shell command) in the values of `-c` and of
/// `new-session -s`: recorded working dirs and a session name holding `#(cd; touch X-ran)` reach
/// tmux as inert text where it creates a session, a window and a pane and where it re-uses an
/// idle pane. The dirs are recorded by the real hook run in a pane; each agent starts in its dir
/// and the session named so is created under exactly that name.
#[test]
fn recorded_values_reach_tmux_as_inert_text() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let home = env.home();
    let crafted = |what: &str| git_work_dir(&env, &format!("#(cd; touch {what}-ran)"), "");
    let hooked = [
        (PanePlace::new("fmt", 0, 0), crafted("new-session"), uuid(1)),
        (PanePlace::new("fmt", 1, 0), crafted("new-window"), uuid(2)),
        (
            PanePlace::new("fmt", 1, 1),
            crafted("split-window"),
            uuid(3),
        ),
        (
            PanePlace::new("idle", 0, 0),
            crafted("respawn-pane"),
            uuid(4),
        ),
    ];
    let layout: Vec<(PanePlace, PathBuf, &str)> = hooked
        .iter()
        .map(|(place, _, _)| (place.clone(), home.clone(), PANE_SHELL))
        .collect();
    let name = server_name("inert");
    let server = TmuxServer::start(&env, &name, &layout);
    for (place, cwd, session) in &hooked {
        start_session(&env, &server, &config, (place, cwd, session, true));
    }
    server.kill_and_wait();
    drop(server);
    let named = PanePlace::new("#(cd; touch session-name-ran)", 0, 0);
    let named_dir = git_work_dir(&env, "plain", "");
    record_session(&env, &full(&env, &named), &uuid(5), "plain", &named_dir);

    // After the reboot only the idle pane's session is there.
    let server = TmuxServer::start(
        &env,
        &name,
        &[(hooked[3].0.clone(), home.clone(), PANE_SHELL)],
    );
    let output = restore_apply(&env, &name)
        .current_dir(&home)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let plan = surfaces(&output);
    let applied = |place: &PanePlace| {
        plan[&full(&env, place)]["applied"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        applied(&hooked[0].0),
        "created the session and started in it"
    );
    assert_eq!(
        applied(&hooked[1].0),
        "created the window and started in it"
    );
    assert_eq!(applied(&hooked[2].0), "created the pane and started in it");
    assert_eq!(applied(&hooked[3].0), "started in the existing pane");
    assert_eq!(applied(&named), "created the session and started in it");
    wait_until("the five stand-in agents to run", || {
        (claude_runs(&env).len() == 5).then_some(())
    });
    let mut expected: Vec<ClaudeRun> = hooked
        .iter()
        .map(|(place, cwd, session)| expected_run(&env, place, cwd, session))
        .collect();
    expected.push(expected_run(&env, &named, &named_dir, &uuid(5)));
    expected.sort();
    assert_eq!(runs(&server, &env), expected);
    let sessions = server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    let mut sessions: Vec<&str> = sessions.lines().collect();
    sessions.sort_unstable();
    assert_eq!(sessions, ["#(cd; touch session-name-ran)", "fmt", "idle"]);
    assert_eq!(files_ending_in(env.root(), "-ran"), Vec::<PathBuf>::new());
    server.kill_and_wait();
}

/// What a restore creates is what the recorded address needs and no more, at tmux's own
/// numbering (`base-index` 1 and `pane-base-index` 1 here), and a surface it cannot make leaves
/// nothing behind: a pane below the window's pane-base-index, a pane far past the last one, a
/// window too small for the panes it needs, a session name tmux would rewrite, and a surface id
/// that spells its indexes another way (`record` refuses it; another tool wrote it).
#[test]
fn creation_is_bounded_exact_and_undone_when_a_surface_fails() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let cwd = git_work_dir(&env, "proj", "");
    let cases = [
        (
            "tmux:below:0.0",
            "failed: tmux numbers this window's panes from 1",
        ),
        (
            "tmux:far:1.5000",
            "failed: tmux:far:1.5000 would need 4999 new panes",
        ),
        ("tmux:tiny:1.9", "failed: tmux split-window"),
        (
            "tmux:a$b:1.1",
            "failed: tmux cannot name a session a$b (it rewrites $)",
        ),
        (
            "tmux:canon:00.01",
            "failed: surface \"tmux:canon:00.01\" is not a tmux pane's address",
        ),
        (
            "tmux:exact:3.2",
            "created the session, the pane and started in it",
        ),
        ("tmux:   :1.1", "created the session and started in it"),
    ];
    let refused = crash_resume_agent(&env)
        .args(["record", "tmux:canon:00.01", &uuid(9), "r"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("tmux:<socket path>:<session>:<window>.<pane>"),
        "{refused:?}"
    );
    let entries: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(n, (surface, _))| {
            let session = uuid(n as u32 + 1);
            write_transcript(&config, &cwd, &session, HOUR);
            serde_json::json!({
                "surfaceId": surface, "sessionId": session, "repo": "proj", "role": null,
                "captured_at": 1, "last_active": 1, "provider": "claude",
                "cwd": cwd.to_str().unwrap(), "config_dir": config.to_str().unwrap(),
            })
        })
        .collect();
    env.write_index(&entries);
    let name = server_name("bounded");
    let server = TmuxServer::start(
        &env,
        &name,
        &[(PanePlace::new("keep", 0, 0), env.home(), PANE_SHELL)],
    );
    for (option, value) in [("base-index", "1"), ("pane-base-index", "1")] {
        server.tmux(&["set-option", "-g", option, value]);
    }
    // New sessions of this server are 20x6: no room for ten panes even tiled.
    server.tmux(&["set-option", "-g", "default-size", "20x6"]);
    let output = restore_apply(&env, &name).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let plan = surfaces(&output);
    for (surface, said) in cases {
        let applied = plan[surface]["applied"].as_str().unwrap();
        assert!(applied.starts_with(said), "{surface}: {applied}");
    }
    let mut panes: Vec<String> = server
        .panes()
        .into_iter()
        .map(|(surface, _)| surface)
        .collect();
    panes.sort();
    assert_eq!(
        panes,
        // (The pane of `keep` is 0.1 since pane-base-index became 1: tmux renumbers.)
        [
            "tmux:   :1.1",
            "tmux:exact:3.1",
            "tmux:exact:3.2",
            "tmux:keep:0.1"
        ],
        "the failed surfaces left nothing; the others got exactly their panes"
    );
    wait_until("the two stand-in agents to run", || {
        (claude_runs(&env).len() == 2).then_some(())
    });
    server.kill_and_wait();
}

/// A tmux server that does not answer (stopped with `SIGSTOP`): restore gives up on it after
/// one call's deadline (not one per surface), says which server did not answer and what to do,
/// exits 1, and leaves no surface claimed, so that once the server runs again the next restore
/// opens every one.
#[test]
fn a_stopped_tmux_server_fails_restore_once_and_claims_nothing() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let cwd = git_work_dir(&env, "proj", "");
    let surfaces_recorded = ["tmux:a:0.0", "tmux:b:0.0", "tmux:c:0.0"];
    for (n, surface) in (1..).zip(surfaces_recorded) {
        record_session(&env, surface, &uuid(n), "r", &cwd);
    }
    let name = server_name("stopped");
    let layout = [(PanePlace::new("dev", 0, 0), cwd, PANE_SHELL)];
    let server = TmuxServer::start(&env, &name, &layout);
    let stopped = server.stop();
    let started = std::time::Instant::now();
    let output = restore_apply(&env, &name).output().unwrap();
    let took = started.elapsed();
    drop(stopped);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    // One deadline (5 s) and the margin of a loaded machine; a deadline per surface and per
    // call would be 15 s and more, and without one restore waited as long as the server slept.
    assert!(took < Duration::from_secs(12), "restore took {took:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let silent = format!("tmux did not answer within 5s (`tmux -L {name} list-panes`)");
    for piece in [
        silent.as_str(),
        "the server may be stopped or hung",
        "1 surface(s) failed and 2 were not tried, and none of them is claimed",
        &format!("`tmux -L {name} list-sessions`"),
        "kill -CONT",
        "then run restore again",
    ] {
        assert!(stderr.contains(piece), "{piece:?} in {stderr}");
    }
    let plan = surfaces(&output);
    let applied = |surface: &str| plan[surface]["applied"].as_str().unwrap().to_string();
    assert_eq!(applied("tmux:a:0.0"), format!("failed: {silent}"));
    for surface in ["tmux:b:0.0", "tmux:c:0.0"] {
        assert_eq!(applied(surface), format!("not tried: {silent}"));
    }
    for (surface, entry) in env.entries() {
        assert_eq!(entry.get("restore_claimed_at"), None, "{surface}: {entry}");
    }
    assert_eq!(
        server.tmux(&["list-sessions", "-F", "#{session_name}"]),
        "dev",
        "nothing created"
    );

    // The server runs again: nothing was left claimed, so every surface is opened.
    let again = restore_apply(&env, &name).output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    let plan = surfaces(&again);
    for surface in surfaces_recorded {
        let applied = plan[surface]["applied"].as_str().unwrap();
        assert!(
            applied.starts_with("created the session"),
            "{surface}: {applied}"
        );
    }
}

/// Each pane of a window by index: its left, top, width and height.
fn geometry(server: &TmuxServer, window: &str) -> Vec<String> {
    server
        .tmux(&[
            "list-panes",
            "-t",
            window,
            "-F",
            "#{pane_index} #{pane_left} #{pane_top} #{pane_width} #{pane_height}",
        ])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_window_comes_back_whole_with_its_layout_and_a_shell_where_nothing_resumes() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let config = claude_dir(&env);
    // Pane 0 left, panes 1 and 2 stacked on the right; pane 2's agent never got a prompt.
    let panes = three_panes(
        &env,
        [(0, 0), (0, 1), (0, 2)],
        [("left", ""), ("top", "a dir"), ("bottom", "é")],
    );
    let name = server_name("window");
    let server = TmuxServer::start(&env, &name, &layout_of(&panes));
    server.tmux(&["resize-window", "-t", "=work:0", "-x", "200", "-y", "50"]);
    server.tmux(&["select-layout", "-t", "=work:0", "main-vertical"]);
    let recorded_layout = server.display("=work:0.0", "#{window_layout}");
    let before = geometry(&server, "=work:0");
    start_sessions(&env, &server, &config, &panes);
    // Capture recorded the window's layout (its size first) with each pane.
    for (place, _, _, _) in &panes {
        let entry = env.entry(&full(&env, place)).unwrap();
        assert_eq!(entry["window_layout"], recorded_layout.as_str(), "{entry}");
    }
    assert!(
        recorded_layout.contains(",200x50,0,0{"),
        "{recorded_layout}"
    );
    server.kill_and_wait();
    drop(server);

    // The plan names the pane without a conversation as nothing to resume, not as an action.
    let text = String::from_utf8(restore(&env, false, &[]).stdout).unwrap();
    let bottom = text
        .lines()
        .find(|line| line.starts_with(&format!("{}\t", full(&env, &panes[2].0))))
        .unwrap();
    let fields: Vec<&str> = bottom.split('\t').collect();
    assert_eq!(fields[1..4], ["fresh", "-", "nothing to resume"], "{text}");

    // After the reboot, tmux is not running: the restore makes the whole window.
    let server = TmuxServer::named(&env, &name);
    let output = restore(&env, true, &["--apply", "tmux", "--tmux-socket", &name]);
    let applied = surfaces(&output);
    let said = |surface: &str| applied[surface]["applied"].as_str().unwrap().to_string();
    assert_eq!(
        said(&full(&env, &panes[0].0)),
        "created the session and started in it"
    );
    assert_eq!(
        said(&full(&env, &panes[1].0)),
        "created the pane and started in it"
    );
    assert_eq!(
        said(&full(&env, &panes[2].0)),
        "nothing to resume: created the pane with a shell in its dir"
    );
    assert_eq!(
        applied[&full(&env, &panes[2].0)]["outcome"],
        serde_json::json!({"outcome": "shell", "created": [{"what": "panes", "count": 1}]})
    );
    assert_eq!(
        applied[&full(&env, &panes[2].0)]["window_layout"],
        recorded_layout.as_str()
    );
    // The window has its recorded size and each pane its place in it.
    assert_eq!(
        server.display("=work:0.0", "#{window_width}x#{window_height}"),
        "200x50"
    );
    assert_eq!(geometry(&server, "=work:0"), before);
    // Each agent ran once in its own pane; the pane without one is a shell in its dir.
    wait_until("the stand-in claude to run twice", || {
        (claude_runs(&env).len() >= 2).then_some(())
    });
    let expected: Vec<ClaudeRun> = panes
        .iter()
        .filter(|pane| pane.3)
        .map(|(place, cwd, session, _)| expected_run(&env, place, cwd, session))
        .collect();
    assert_eq!(runs(&server, &env), expected);
    wait_for_shell_in(&server, &panes[2].0, &panes[2].1);

    // A second restore makes nothing and leaves the window as it is.
    let pids = pane_pids(&server);
    let again = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    assert_eq!(again[&full(&env, &panes[2].0)]["applied"], Value::Null);
    assert_eq!(pane_pids(&server), pids);
    assert_eq!(geometry(&server, "=work:0"), before);
    server.kill_and_wait();
}

#[test]
fn a_restore_run_in_a_pane_it_restores_opens_the_others_then_becomes_that_agent() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let home = env.home();
    let panes = [
        (
            PanePlace::new("work", 0, 0),
            git_work_dir(&env, "here", ""),
            uuid(1),
        ),
        (
            PanePlace::new("work", 0, 1),
            git_work_dir(&env, "there", ""),
            uuid(2),
        ),
    ];
    for (place, cwd, session) in &panes {
        record_session(&env, &full(&env, place), session, "r", cwd);
    }
    // After the reboot the user made the session by hand and runs restore in its one pane.
    let here = &panes[0].0;
    let name = server_name("here");
    let server = TmuxServer::start(&env, &name, &[(here.clone(), home.clone(), PANE_SHELL)]);
    let file = |what: &str| env.root().join(format!("here.{what}"));
    let path = |what: &str| shell_word(file(what).to_str().unwrap());

    // The plan alone says that it runs in a pane it plans for.
    server.run_in_pane(
        &here.target(),
        &format!(
            "{} restore > {} 2> {}",
            shell_word(crate::BIN),
            path("plan"),
            path("plan-err")
        ),
    );
    let said = fs::read_to_string(file("plan-err")).unwrap();
    assert!(
        said.contains(&format!(
            "note: this restore runs in {}, which the plan resumes; \
                 `crash-resume restore --apply tmux` run here opens the others, then starts \
                 its agent in this pane",
            full(&env, here)
        )),
        "{said}"
    );
    assert_eq!(claude_runs(&env), Vec::<String>::new());

    // Applied from there: the other pane is opened, then this process becomes the pane's agent;
    // once that exits, the user is back at the shell they ran restore from.
    server.run_in_pane(
        &here.target(),
        &format!(
            "{} restore --apply tmux --tmux-socket {name} 2> {}; echo restore-exit=$?",
            shell_word(crate::BIN),
            path("apply-err")
        ),
    );
    let said = fs::read_to_string(file("apply-err")).unwrap();
    assert!(
        said.contains(&format!(
            "this restore runs in {}: its agent starts here now",
            full(&env, here)
        )),
        "{said}"
    );
    let screen = server.capture(&here.target());
    assert!(
        screen.contains("[starts in this pane, where the restore runs, once the others are done]")
            && screen.contains("[created the pane and started in it]")
            && screen.contains("restore-exit=0"),
        "{screen}"
    );
    wait_until("the stand-in claude to run twice", || {
        (claude_runs(&env).len() >= 2).then_some(())
    });
    let expected: Vec<ClaudeRun> = panes
        .iter()
        .map(|(place, cwd, session)| expected_run(&env, place, cwd, session))
        .collect();
    assert_eq!(runs(&server, &env), expected);
    // Back at the shell the restore was typed into, in the dir it was typed in.
    assert_eq!(
        server.display(
            &here.target(),
            "#{pane_current_command} #{pane_current_path}"
        ),
        format!("bash {}", home.display())
    );
    // The pane the restore opened is claimed: its agent was started moments ago, so another
    // restore does not start it again. This pane's claim named the restore's own process, which
    // became its agent and has exited since (without an end): the next restore takes it.
    let again = surfaces(&restore(
        &env,
        true,
        &["--apply", "tmux", "--tmux-socket", &name],
    ));
    assert_eq!(
        again[&full(&env, &panes[1].0)]["applied"],
        "skipped: another restore claimed it"
    );
    assert_eq!(
        again[&full(&env, here)]["applied"],
        "started in the existing pane"
    );
    wait_until("the stand-in claude to run in this pane again", || {
        (claude_runs(&env).len() >= 3).then_some(())
    });
    let mut again = expected.clone();
    again.push(expected[0].clone());
    again.sort();
    assert_eq!(runs(&server, &env), again, "a second run here only");
    server.kill_and_wait();
}

/// What the person at the pane types (`text`, then Enter when `enter`): these tests play the
/// user whose half-typed text or waiting `read` a restore must leave alone. The product never
/// types into a pane; only this test of it does, as the user.
fn person_types(server: &TmuxServer, target: &str, text: &str, enter: bool) {
    server.tmux(&["send-keys", "-t", target, "-l", text]);
    if enter {
        server.tmux(&["send-keys", "-t", target, "Enter"]);
    }
}
