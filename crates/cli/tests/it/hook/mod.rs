//! `crash-resume hook claude|codex|gemini|copilot` through the real binary: recorded payloads of every
//! SessionStart source and SessionEnd reason, with each multiplexer's environment, judged by
//! the index file on disk; the fields a record takes from the environment and the working dir;
//! 50 hooks at once; and every way a hook can go wrong, which still exits 0, prints nothing on
//! stdout and says why in `hook.log`. Per agent: `codex`, `gemini` and `copilot`,
//! and their real TUIs in tmux, `codex_tui`, `gemini_tui` and `copilot_tui` (feature `real-cli`); the log itself: `log`.

#[cfg(feature = "real-cli")]
mod agent_tui;
mod codex;
#[cfg(feature = "real-cli")]
mod codex_tui;
pub mod copilot;
#[cfg(feature = "real-cli")]
mod copilot_tui;
mod gemini;
#[cfg(feature = "real-cli")]
mod gemini_tui;
mod launch;
#[cfg(feature = "real-cli")]
mod launch_cli;
mod log;
mod qwen;
#[cfg(feature = "real-cli")]
mod qwen_tui;

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::process::Signal;
use serde_json::{Value, json};

use crate::harness::{
    HookRun, PANE_SHELL, PanePlace, TmuxServer, Vars, bin_dir, claude_dir, claude_payload,
    codex_home, crash_resume_agent, git_work_dir, hook_log, make_dir, run_hook, run_with_stdin,
    server_name, session_end, session_start, shell_word, spawn_piped, uuid, wait_until, with_vars,
};
use crate::{HOUR, Reaped, Sandbox, now_millis, stopped_lock_holder};

/// One hook event of a Claude Code session's life, and the entry it leaves:
/// (event, its `source` or `reason`, the payload's session, the session the surface holds
/// after it, the surface's earlier sessions after it, whether it is marked as ended cleanly).
/// Sessions are letters, each a UUID.
#[rustfmt::skip]
const LIFE_OF_A_SURFACE: &[(&str, &str, char, char, &str, bool)] = &[
    ("SessionStart",     "startup",           'A', 'A', "",   false),
    ("UserPromptSubmit", "",                  'A', 'A', "",   false),
    ("Stop",             "",                  'A', 'A', "",   false),
    ("SessionStart",     "compact",           'A', 'A', "",   false),
    // `/clear`: the old session ends (not cleanly), a new one starts on the same surface.
    ("SessionEnd",       "clear",             'A', 'A', "",   false),
    ("SessionStart",     "clear",             'B', 'B', "A",  false),
    ("SessionStart",     "resume",            'B', 'B', "A",  false),
    ("SessionStart",     "fork",              'C', 'C', "AB", false),
    ("UserPromptSubmit", "",                  'C', 'C', "AB", false),
    ("SessionEnd",       "other",             'C', 'C', "AB", false),
    ("SessionEnd",       "logout",            'C', 'C', "AB", true),
    // Resumed after a clean exit: resumable again until the next clean exit.
    ("SessionStart",     "resume",            'C', 'C', "AB", false),
    ("Stop",             "",                  'C', 'C', "AB", false),
    ("SessionEnd",       "prompt_input_exit", 'C', 'C', "AB", true),
];

fn session_of(letter: char) -> String {
    uuid(u32::from(letter))
}

/// The payload of one step of [`LIFE_OF_A_SURFACE`].
fn step_payload(event: &str, detail: &str, session: &str, cwd: &Path) -> String {
    let extra = match event {
        "SessionStart" => json!({ "source": detail }),
        "SessionEnd" => json!({ "reason": detail }),
        "UserPromptSubmit" => json!({ "prompt": "fix the failing test" }),
        "Stop" => json!({ "stop_hook_active": false }),
        other => panic!("no payload for {other}"),
    };
    claude_payload(event, session, cwd, extra)
}

/// Moves every timestamp of the surface's entry an hour back in the index file, so that the
/// next step shows whether it bumped `last_active` (and kept `captured_at`).
fn age_entry(env: &Sandbox, surface: &str) {
    let mut index = env.index();
    let entry = index["entries"][surface].as_object_mut().unwrap();
    for field in ["captured_at", "last_active", "ended_at"] {
        if let Some(Value::Number(time)) = entry.get(field) {
            let aged = time.as_u64().unwrap() - HOUR;
            entry.insert(field.to_string(), json!(aged));
        }
    }
    env.write_index_bytes(&serde_json::to_vec_pretty(&index).unwrap());
}

/// Runs [`LIFE_OF_A_SURFACE`] through `crash-resume hook claude` with `vars` naming the surface,
/// and checks the index file after every step.
fn check_life_of_a_surface(env: &Sandbox, vars: &[(&str, &str)], surface: &str) {
    let vars: Vec<(&str, &str)> = vars
        .iter()
        .copied()
        .chain([("CRASH_RESUME_ROLE", "reviewer")])
        .collect();
    check_life_of_a_surface_with(env, surface, |what, payload| {
        run_hook(env, "claude", &vars, payload).assert_silent_success(what);
    });
}

/// [`check_life_of_a_surface`], each step's hook run by `run_hook(what, payload)` with the role
/// `reviewer`.
fn check_life_of_a_surface_with(env: &Sandbox, surface: &str, run_hook: impl Fn(&str, &str)) {
    let cwd = git_work_dir(env, "proj", "crates/core");
    let mut captured_at = None;
    for (step, &(event, detail, session, held, chain, ended)) in
        LIFE_OF_A_SURFACE.iter().enumerate()
    {
        let what = format!("{surface}: step {step} {event} {detail} {session}");
        let payload = step_payload(event, detail, &session_of(session), &cwd);
        let before = now_millis();
        run_hook(&what, &payload);
        let after = now_millis();
        assert!(
            !hook_log(env).contains("error"),
            "{what}: hook.log: {}",
            hook_log(env)
        );

        let entries = env.entries();
        assert_eq!(
            entries.keys().collect::<Vec<_>>(),
            [surface],
            "{what}: one entry"
        );
        let entry = &entries[surface];
        let previous: Vec<String> = chain.chars().map(session_of).collect();
        let expected = json!({
            "surfaceId": surface,
            "sessionId": session_of(held),
            "repo": "proj",
            "role": "reviewer",
            "provider": "claude",
            "cwd": cwd,
            "config_dir": claude_dir(env),
        });
        for (field, value) in expected.as_object().unwrap() {
            assert_eq!(&entry[field], value, "{what}: {field} in {entry}");
        }
        if previous.is_empty() {
            assert_eq!(entry.get("previous_sessions"), None, "{what}: {entry}");
        } else {
            assert_eq!(
                entry["previous_sessions"],
                json!(previous),
                "{what}: {entry}"
            );
        }
        let last_active = entry["last_active"].as_u64().unwrap();
        assert!(
            (before..=after).contains(&last_active),
            "{what}: last_active {last_active} bumped into {before}..={after}"
        );
        let captured = entry["captured_at"].as_u64().unwrap();
        match captured_at {
            None => assert_eq!(captured, last_active, "{what}: first sight"),
            Some(kept) => assert_eq!(captured, kept, "{what}: captured_at is kept"),
        }
        match (ended, entry.get("ended_at")) {
            (false, None) => {}
            (true, Some(at)) => assert!(
                (before..=after).contains(&at.as_u64().unwrap()),
                "{what}: ended_at {at} in {before}..={after}"
            ),
            (_, found) => panic!("{what}: ended cleanly expected {ended}, ended_at is {found:?}"),
        }
        age_entry(env, surface);
        captured_at = Some(captured - HOUR);
    }
}

/// Each multiplexer's variables and the surface id they name (tmux has its own tests below).
#[rustfmt::skip]
const MULTIPLEXERS: &[(Vars, &str)] = &[
    (&[("CRASH_RESUME_SURFACE", "my pane/1 é")],                          "my pane/1 é"),
    (&[("CMUX_SURFACE_ID", "abc")],                                       "cmux:abc"),
    (&[("ZELLIJ_PANE_ID", "3"), ("ZELLIJ_SESSION_NAME", "s")],            "zellij:s:3"),
    (&[("WEZTERM_PANE", "7")],                                            "wezterm:7"),
    (&[("KITTY_WINDOW_ID", "2")],                                         "kitty:2"),
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4242")],                  "kitty:4242:2"),
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4242"), ("CRASH_RESUME_KITTY_WINDOW", "4242:2:kitty:9:3")], "kitty:9:3"),
    (&[("KITTY_WINDOW_ID", "2"), ("KITTY_PID", "4243"), ("CRASH_RESUME_KITTY_WINDOW", "4242:2:kitty:9:3")], "kitty:4243:2"),
];

#[test]
fn every_source_and_reason_with_each_multiplexer() {
    for (vars, surface) in MULTIPLEXERS {
        let env = Sandbox::default();
        check_life_of_a_surface(&env, vars, surface);
    }
}

/// The hook run in the second pane of a later window, as an agent there runs it.
#[test]
fn every_source_and_reason_in_a_tmux_pane() {
    let env = Sandbox::default();
    let layout = [
        (PanePlace::new("dev", 0, 0), env.home(), PANE_SHELL),
        (PanePlace::new("dev", 2, 0), env.home(), PANE_SHELL),
        (PanePlace::new("dev", 2, 1), env.home(), PANE_SHELL),
    ];
    let server = TmuxServer::start(&env, &server_name("lifecycle"), &layout);
    let target = layout[2].0.target();
    check_life_of_a_surface_with(&env, &server.surface(&layout[2].0), |_, payload| {
        server.run_hook_in_pane_under(&env, &target, "CRASH_RESUME_ROLE=reviewer", payload);
    });
    server.kill_and_wait();
}

/// Without a controlling terminal (`setsid`), `TMUX_PANE` alone is not trusted: run in pane 0
/// with pane 1's id, the hook records nothing (the process of pane 1 is not among its
/// ancestors) and logs why; run in pane 1 itself, with its own id, it records pane 1.
#[test]
fn without_a_terminal_tmux_pane_counts_only_for_the_hooks_own_pane() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "detached", "");
    let layout = [
        (PanePlace::new("dev", 0, 0), cwd.clone(), PANE_SHELL),
        (PanePlace::new("dev", 0, 1), cwd.clone(), PANE_SHELL),
    ];
    let server = TmuxServer::start(&env, &server_name("setsid"), &layout);
    let other_pane = server.display(&layout[1].0.target(), "#{pane_id}");
    let other_pid = server.display(&layout[1].0.target(), "#{pane_pid}");
    // `setsid -w` runs the hook in a new session, with no terminal, and waits for it.
    server.run_hook_in_pane_under(
        &env,
        &layout[0].0.target(),
        &format!("TMUX_PANE={other_pane} setsid -w"),
        &session_start(&uuid(1), &cwd, "startup"),
    );
    assert!(!env.index_path().exists() || env.entries().is_empty());
    let log = hook_log(&env);
    for piece in [
        "error:",
        &format!(
            "the agent has no terminal and the process of tmux pane {other_pane} (pid {other_pid}) is not among its ancestors"
        ),
        "TMUX_PANE (inherited from elsewhere or set by hand) is not trusted",
        &format!("session {} not recorded", uuid(1)),
        "set CRASH_RESUME_SURFACE",
    ] {
        assert!(log.contains(piece), "{piece:?} in {log}");
    }

    server.run_hook_in_pane_under(
        &env,
        &layout[1].0.target(),
        "setsid -w",
        &session_start(&uuid(2), &cwd, "startup"),
    );
    let entries = env.entries();
    let surface = server.surface(&layout[1].0);
    assert_eq!(entries.keys().collect::<Vec<_>>(), [&surface]);
    assert_eq!(entries[&surface]["sessionId"], uuid(2));
    // Nothing more to tell: a hook that went as it should is logged only when it was slow (as
    // one may be on a loaded machine), and then as info.
    let more = hook_log(&env)[log.len()..].to_string();
    assert!(
        more.lines()
            .all(|line| line.contains(": info: recorded tmux:dev:0.1 → ")),
        "nothing more to log: {more}"
    );
    server.kill_and_wait();
}

/// A tmux server that does not answer (stopped with `SIGSTOP`): the hook gives up on tmux
/// within its budget, records nothing, logs that tmux did not answer, and exits 0.
#[test]
fn a_stopped_tmux_server_holds_the_hook_no_longer_than_its_budget() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "stopped", "");
    let layout = [(PanePlace::new("dev", 0, 0), cwd.clone(), PANE_SHELL)];
    let server = TmuxServer::start(&env, &server_name("stopped-hook"), &layout);
    let pane = server.display(&layout[0].0.target(), "#{pane_id}");
    let tmux = server.tmux_variable();
    let stopped = server.stop();
    let started = std::time::Instant::now();
    let run = run_hook(
        &env,
        "claude",
        &[("TMUX", &tmux), ("TMUX_PANE", &pane)],
        &session_start(&uuid(1), &cwd, "startup"),
    );
    let took = started.elapsed();
    drop(stopped);
    run.assert_silent_success("a stopped tmux server");
    // The budget is 2 s; the margin is for starting the binary on a loaded machine. Unbounded,
    // the hook waited for as long as the server stayed stopped.
    assert!(took < Duration::from_secs(6), "the hook took {took:?}");
    assert!(!env.index_path().exists() || env.entries().is_empty());
    let log = hook_log(&env);
    for piece in [
        "error:",
        "tmux did not answer within ",
        &format!("when asked to name pane {pane}: is its server stopped or hung?"),
    ] {
        assert!(log.contains(piece), "{piece:?} in {log}");
    }
    server.kill_and_wait();
}

/// The hook run as an agent runs it: from the shell of a tmux pane, which sets `TMUX` and
/// `TMUX_PANE` itself.
#[test]
fn hook_inside_a_tmux_pane_records_the_pane_by_its_indexes() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "inside", "src");
    let layout = [
        (PanePlace::new("main", 1, 0), cwd.clone(), PANE_SHELL),
        (PanePlace::new("main", 1, 1), cwd.clone(), PANE_SHELL),
        (PanePlace::new("side", 4, 0), cwd.clone(), PANE_SHELL),
    ];
    let server = TmuxServer::start(&env, &server_name("inside"), &layout);
    for (n, (place, _, _)) in layout.iter().enumerate() {
        server.run_hook_in_pane(
            &env,
            &place.target(),
            &session_start(&uuid(n as u32), &cwd, "startup"),
        );
    }
    let entries = env.entries();
    let surfaces: Vec<String> = layout
        .iter()
        .map(|(place, _, _)| server.surface(place))
        .collect();
    assert_eq!(entries.keys().cloned().collect::<Vec<_>>(), surfaces);
    for (n, (place, _, _)) in layout.iter().enumerate() {
        let entry = &entries[&server.surface(place)];
        assert_eq!(entry["sessionId"], uuid(n as u32), "{entry}");
        assert_eq!(entry["repo"], "inside", "{entry}");
        assert_eq!(entry["config_dir"], json!(claude_dir(&env)), "{entry}");
    }
    assert!(!hook_log(&env).contains("error"), "{}", hook_log(&env));
    server.kill_and_wait();
}

/// The outer pane's variable that a tmux server started inside cmux, kitty or wezterm passes on
/// to every one of its panes.
#[rustfmt::skip]
const OUTER_PANES: &[(&str, &str)] = &[
    ("CMUX_SURFACE_ID", "A"),
    ("KITTY_WINDOW_ID", "1"),
    ("WEZTERM_PANE",    "5"),
];

/// tmux inside another multiplexer: every tmux pane inherits the outer pane's id, so the
/// variables' order would put every session on that one surface, each record overwriting the
/// last. The innermost multiplexer, tmux, names each pane.
#[test]
fn tmux_inside_another_multiplexer_records_each_tmux_pane() {
    for (variable, value) in OUTER_PANES {
        let env = Sandbox::default();
        let cwd = git_work_dir(&env, "nested", "");
        let layout = [
            (PanePlace::new("work", 0, 0), cwd.clone(), PANE_SHELL),
            (PanePlace::new("work", 0, 1), cwd.clone(), PANE_SHELL),
            (PanePlace::new("work", 1, 0), cwd.clone(), PANE_SHELL),
        ];
        let server =
            TmuxServer::start_with(&env, &server_name("outer"), &layout, &[(variable, value)]);
        let seen = env.root().join("seen");
        for (n, (place, _, _)) in layout.iter().enumerate() {
            server.run_in_pane(
                &place.target(),
                &format!(
                    "printenv {variable} >> {}",
                    shell_word(seen.to_str().unwrap())
                ),
            );
            server.run_hook_in_pane(
                &env,
                &place.target(),
                &session_start(&uuid(n as u32), &cwd, "startup"),
            );
        }
        assert_eq!(
            fs::read_to_string(&seen).unwrap(),
            format!("{value}\n").repeat(3),
            "every tmux pane has the outer {variable}"
        );
        let entries = env.entries();
        let surfaces: Vec<String> = layout
            .iter()
            .map(|(place, _, _)| server.surface(place))
            .collect();
        assert_eq!(
            entries.keys().cloned().collect::<Vec<_>>(),
            surfaces,
            "{variable}"
        );
        for (n, (place, _, _)) in layout.iter().enumerate() {
            assert_eq!(entries[&server.surface(place)]["sessionId"], uuid(n as u32));
        }
        assert!(!hook_log(&env).contains("error"), "{}", hook_log(&env));
        server.kill_and_wait();
    }
}

/// A stand-in zellij: runs its arguments as a child (not in its place, so it stays the agent's
/// parent, as zellij's server is its panes' parent) with a zellij pane's variables. Asked by the
/// hook (`zellij --session S action ...`), it lists panes 0 to 2 and writes down each
/// `rename-pane` beside itself.
const ZELLIJ_STAND_IN: &str = "#!/bin/sh\n\
    if [ \"$1\" = --session ]; then\n\
      case \"$4\" in\n\
        list-panes) for id in 0 1 2; do printf '%s{\"id\":%s,\"is_plugin\":false,\"title\":\"bash\",\"tab_id\":0}' \"${sep-[}\" $id; sep=,; done; echo ']';;\n\
        rename-pane) printf '%s %s\\n' \"$6\" \"$7\" >> \"$0.renamed\";;\n\
      esac\n\
      exit 0\n\
    fi\n\
    export ZELLIJ=0 ZELLIJ_SESSION_NAME=inner ZELLIJ_PANE_ID=\"$1\"\n\
    shift\n\
    \"$@\"\n\
    exit $?\n";

/// zellij inside a tmux pane: every zellij pane inherits that one `TMUX_PANE`, which the
/// variables' order would prefer. The agent's nearest multiplexer process is zellij.
#[test]
fn zellij_inside_a_tmux_pane_records_each_zellij_pane() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "inner", "");
    let zellij = bin_dir(&env).join("zellij");
    fs::create_dir_all(bin_dir(&env)).unwrap();
    fs::write(&zellij, ZELLIJ_STAND_IN).unwrap();
    fs::set_permissions(&zellij, fs::Permissions::from_mode(0o755)).unwrap();
    let layout = [(PanePlace::new("outer", 0, 0), cwd.clone(), PANE_SHELL)];
    let server = TmuxServer::start(&env, &server_name("zellij"), &layout);
    for pane in 0..3 {
        server.run_hook_in_pane_under(
            &env,
            &layout[0].0.target(),
            &format!("zellij {pane}"),
            &session_start(&uuid(pane), &cwd, "startup"),
        );
    }
    // Each pane got a name of ours (zellij renumbers pane ids when it resurrects a session),
    // and is recorded under it.
    let renamed = fs::read_to_string(bin_dir(&env).join("zellij.renamed")).unwrap();
    let names: Vec<(&str, &str)> = renamed
        .lines()
        .map(|line| line.split_once(' ').unwrap())
        .collect();
    let entries = env.entries();
    assert_eq!(entries.len(), 3, "{entries:?}");
    for (pane, (target, name)) in names.iter().enumerate() {
        assert_eq!(*target, format!("terminal_{pane}"));
        assert!(mux::zellij::is_pane_name(name), "{name}");
        assert!(name.starts_with(&format!("cr-{pane}-")), "{name}");
        assert_eq!(
            entries[&format!("zellij:inner:{name}")]["sessionId"],
            uuid(pane as u32)
        );
    }
    assert!(!hook_log(&env).contains("error"), "{}", hook_log(&env));
    server.kill_and_wait();
}

/// Runs a SessionStart hook of session 1, started by the shell words `launcher`, in the one
/// pane of a tmux server started inside a cmux surface and a kitty window (both variables in
/// every pane). Returns the sandbox, the server gone.
fn hook_in_a_nested_tmux_pane(name: &str, launcher: &str) -> Sandbox {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, name, "");
    let layout = [(PanePlace::new("work", 0, 0), cwd.clone(), PANE_SHELL)];
    let server = TmuxServer::start_with(
        &env,
        &server_name(name),
        &layout,
        &[("CMUX_SURFACE_ID", "A"), ("KITTY_WINDOW_ID", "1")],
    );
    server.run_hook_in_pane_under(
        &env,
        &layout[0].0.target(),
        launcher,
        &session_start(&uuid(1), &cwd, "startup"),
    );
    server.kill_and_wait();
    env
}

/// `CRASH_RESUME_SURFACE`, set explicitly, wins over every multiplexer, nested or not.
#[test]
fn an_explicit_surface_wins_inside_nested_multiplexers() {
    let env = hook_in_a_nested_tmux_pane(
        "explicit",
        "CRASH_RESUME_SURFACE='my pane' ZELLIJ_PANE_ID=3",
    );
    assert_eq!(env.entries().keys().collect::<Vec<_>>(), ["my pane"]);
}

/// Two outer panes' variables and no multiplexer of theirs among the agent's ancestors (here a
/// tmux pane whose own variable is gone): which pane is unknown, so nothing is recorded, and
/// the log says why.
#[test]
fn ambiguous_evidence_records_nothing_and_logs_why() {
    let env = hook_in_a_nested_tmux_pane("unsure", "env -u TMUX_PANE");
    assert_not_recorded(
        &env,
        &[
            "CMUX_SURFACE_ID, KITTY_WINDOW_ID are all set",
            "none of their programs is among the agent's ancestors",
        ],
    );
}

/// Session 1 was not recorded, and `hook.log` says so with each of `reasons` and the way out.
fn assert_not_recorded(env: &Sandbox, reasons: &[&str]) {
    assert!(!env.index_path().exists() || env.entries().is_empty());
    let log = hook_log(env);
    let not_recorded = format!("session {} not recorded", uuid(1));
    for piece in ["error:", &not_recorded, "set CRASH_RESUME_SURFACE"]
        .iter()
        .chain(reasons)
    {
        assert!(log.contains(piece), "{piece:?} in {log}");
    }
}

/// A program with a terminal of its own between the tmux pane and the agent (`script` here;
/// GNU screen, dtach alike): the tmux server is an ancestor, but the agent's terminal is not its
/// pane, so the pane may be shared by whatever that program multiplexes. Nothing is recorded.
#[test]
fn a_terminal_of_its_own_inside_a_tmux_pane_records_nothing_and_logs_why() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "wrapped", "");
    let layout = [(PanePlace::new("work", 0, 0), cwd.clone(), PANE_SHELL)];
    let server = TmuxServer::start(&env, &server_name("wrapped"), &layout);
    let payload = env.root().join("payload.json");
    fs::write(&payload, session_start(&uuid(1), &cwd, "startup")).unwrap();
    let hook = format!(
        "{} hook claude < {}",
        shell_word(crate::BIN),
        shell_word(payload.to_str().unwrap())
    );
    server.run_in_pane(
        &layout[0].0.target(),
        &format!("script -q -e -c {} /dev/null", shell_word(&hook)),
    );
    server.kill_and_wait();
    assert_not_recorded(
        &env,
        &[
            "runs under the tmux server of TMUX_PANE",
            "its terminal is not that pane's",
        ],
    );
}

/// One multiplexer's variables, or an explicit surface with others; an empty or blank value
/// does not count. (Run outside any multiplexer of the table, as far as the variables go.)
#[rustfmt::skip]
const PRECEDENCE: &[(Vars, &str)] = &[
    (&[("CRASH_RESUME_SURFACE", "mine"), ("CMUX_SURFACE_ID", "abc"), ("TMUX_PANE", "%9"), ("KITTY_WINDOW_ID", "2")], "mine"),
    (&[("CRASH_RESUME_SURFACE", "  "), ("CMUX_SURFACE_ID", " "), ("KITTY_WINDOW_ID", "2")], "kitty:2"),
    (&[("ZELLIJ_PANE_ID", "3"), ("ZELLIJ_SESSION_NAME", "s"), ("WEZTERM_PANE", " ")], "zellij:s:3"),
];

#[test]
fn an_explicit_surface_or_the_one_multiplexer_set_names_the_surface() {
    for (vars, surface) in PRECEDENCE {
        let env = Sandbox::default();
        let cwd = git_work_dir(&env, "proj", "");
        run_hook(
            &env,
            "claude",
            vars,
            &session_start(&uuid(1), &cwd, "startup"),
        )
        .assert_silent_success(surface);
        let entries = env.entries();
        assert_eq!(entries.keys().collect::<Vec<_>>(), [surface], "{vars:?}");
    }
}

/// Where the working dir is, relative to a git checkout (`.git` dir or, for a worktree, file).
#[derive(Debug, Clone, Copy)]
enum Checkout {
    /// `<sandbox>/work/<name>/.git` and the working dir `<sandbox>/work/<name>/<sub>`.
    Below(&'static str, &'static str),
    /// `<sandbox>/work/<name>/.git` is a file (a worktree); the working dir is that dir.
    Worktree(&'static str),
    /// A working dir outside any checkout (it need not exist).
    Outside(&'static str),
}

/// (checkout, extra variables, the repo, role and config dir the entry gets; `$HOME` and
/// `$CLAUDE` stand for the sandbox's home and Claude config dir)
#[rustfmt::skip]
const RECORDED_FIELDS: &[(Checkout, Vars, &str, Option<&str>, &str)] = &[
    (Checkout::Below("alpha", "crates/deep/er"), &[],                                   "alpha",        None,           "$CLAUDE"),
    (Checkout::Below("beta", ""),                &[("CRASH_RESUME_ROLE", "lead")],      "beta",         Some("lead"),   "$CLAUDE"),
    (Checkout::Below("gamma", "src"),            &[("CRASH_RESUME_ROLE", "   ")],       "gamma",        None,           "$CLAUDE"),
    (Checkout::Worktree("delta-feature"),        &[("CLAUDE_CONFIG_DIR", "")],          "delta-feature", None,          "$HOME/.claude"),
    (Checkout::Outside("plain-folder"),          &[("CLAUDE_CONFIG_DIR", " ")],         "plain-folder", None,           "$HOME/.claude"),
];

#[test]
fn the_entry_takes_repo_role_and_config_dir_from_the_working_dir_and_environment() {
    assert!(
        !Path::new("/.git").exists(),
        "a git checkout at / would make every dir a repo"
    );
    for &(checkout, vars, repo, role, config_dir) in RECORDED_FIELDS {
        let env = Sandbox::default();
        let cwd = match checkout {
            Checkout::Below(name, sub) => git_work_dir(&env, name, sub),
            Checkout::Worktree(name) => {
                let dir = make_dir(&env.root().join("work").join(name));
                fs::write(dir.join(".git"), "gitdir: /elsewhere/.git/worktrees/x\n").unwrap();
                dir
            }
            Checkout::Outside(name) => PathBuf::from("/crash-resume-tests-no-such-dir").join(name),
        };
        let vars: Vec<(&str, &str)> = vars
            .iter()
            .copied()
            .chain([("KITTY_WINDOW_ID", "1")])
            .collect();
        run_hook(
            &env,
            "claude",
            &vars,
            &session_start(&uuid(1), &cwd, "startup"),
        )
        .assert_silent_success(repo);
        let entry = env.entry("kitty:1").expect("recorded");
        let config_dir = config_dir
            .replace("$CLAUDE", claude_dir(&env).to_str().unwrap())
            .replace("$HOME", env.home().to_str().unwrap());
        assert_eq!(entry["repo"], repo, "{checkout:?}: {entry}");
        assert_eq!(entry["role"], json!(role), "{checkout:?}: {entry}");
        assert_eq!(entry["config_dir"], config_dir, "{checkout:?}: {entry}");
        assert_eq!(entry["cwd"], json!(cwd), "{checkout:?}: {entry}");
        assert_eq!(entry["provider"], "claude", "{checkout:?}: {entry}");
    }
}

#[test]
fn a_payload_without_cwd_records_the_hooks_working_dir() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "from-process", "lib");
    let payload =
        json!({ "session_id": uuid(1), "hook_event_name": "SessionStart", "source": "startup" });
    let mut command = crash_resume_agent(&env);
    command
        .args(["hook", "claude"])
        .current_dir(&cwd)
        .env("WEZTERM_PANE", "4");
    run_with_stdin(command, &payload.to_string()).assert_silent_success("no cwd");
    let entry = env.entry("wezterm:4").expect("recorded");
    assert_eq!(entry["cwd"], json!(cwd));
    assert_eq!(entry["repo"], "from-process");
}

/// Every payload value is taken byte for byte: a dir whose name begins or ends with a space is
/// another dir than the trimmed one, and a session id may hold spaces too. A `cwd` that is not
/// absolute (one that only a trim would make absolute, or an empty one) is refused, not
/// replaced by the hook's own dir.
#[test]
fn payload_values_are_recorded_byte_for_byte_and_a_relative_cwd_is_refused() {
    let env = Sandbox::default();
    let spaced = make_dir(&env.root().join(" proj "));
    let trimmed = make_dir(&env.root().join("proj"));
    let session = format!(" {} ", uuid(1));
    run_hook(
        &env,
        "claude",
        &[("KITTY_WINDOW_ID", "1")],
        &session_start(&session, &spaced, "startup"),
    )
    .assert_silent_success("spaces around the dir and the session");
    let entry = env.entry("kitty:1").expect("recorded");
    assert_eq!(entry["cwd"], json!(spaced), "{entry}");
    assert_ne!(entry["cwd"], json!(trimmed), "{entry}");
    assert_eq!(entry["sessionId"], json!(session), "{entry}");

    let absolute_once_trimmed = format!(" {}", trimmed.display());
    for (case, cwd) in [
        ("a leading space", json!(absolute_once_trimmed)),
        ("empty", json!("")),
        ("relative", json!("proj")),
    ] {
        let payload = json!({
            "session_id": uuid(2),
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": cwd,
        });
        let mut command = crash_resume_agent(&env);
        command
            .args(["hook", "claude"])
            .current_dir(&trimmed)
            .env("KITTY_WINDOW_ID", "2");
        run_with_stdin(command, &payload.to_string()).assert_silent_success(case);
        assert_eq!(env.entry("kitty:2"), None, "{case}: nothing recorded");
        let log = hook_log(&env);
        assert!(
            log.contains("error:") && log.contains("working dir is a relative path"),
            "{case}: {log}"
        );
    }
}

/// A clean end of a session the surface no longer holds (the surface moved on) changes nothing.
#[test]
fn a_clean_end_of_a_superseded_session_leaves_the_entry_alone() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let vars = [("CMUX_SURFACE_ID", "abc")];
    run_hook(
        &env,
        "claude",
        &vars,
        &session_start(&uuid(1), &cwd, "startup"),
    )
    .assert_silent_success("start A");
    run_hook(
        &env,
        "claude",
        &vars,
        &session_start(&uuid(2), &cwd, "clear"),
    )
    .assert_silent_success("start B");
    let before = env.index_bytes().unwrap();
    run_hook(
        &env,
        "claude",
        &vars,
        &session_end(&uuid(1), &cwd, "logout"),
    )
    .assert_silent_success("end A");
    assert_eq!(env.index_bytes().unwrap(), before, "the index is unchanged");
}

#[test]
fn codex_session_start_records_a_codex_entry() {
    for (codex_home_var, expected_home) in [(true, "$CODEX"), (false, "$HOME/.codex")] {
        let env = Sandbox::default();
        let cwd = git_work_dir(&env, "codex-proj", "src");
        let session = "019a4c7e-3b1f-7d20-9c55-0a1b2c3d4e5f";
        let payload = json!({
            "session_id": session,
            "transcript_path": null,
            "cwd": cwd,
            "hook_event_name": "SessionStart",
            "model": "gpt-5-codex",
            "source": "startup",
        });
        let unset = if codex_home_var {
            vec![]
        } else {
            vec![("CODEX_HOME", "")]
        };
        let vars: Vec<(&str, &str)> = unset
            .into_iter()
            .chain([("CRASH_RESUME_SURFACE", "codex-pane")])
            .collect();
        run_hook(&env, "codex", &vars, &payload.to_string()).assert_silent_success("codex");
        let entry = env.entry("codex-pane").expect("recorded");
        let config_dir = expected_home
            .replace("$CODEX", codex_home(&env).to_str().unwrap())
            .replace("$HOME", env.home().to_str().unwrap());
        assert_eq!(entry["provider"], "codex", "{entry}");
        assert_eq!(entry["sessionId"], session, "{entry}");
        assert_eq!(entry["cwd"], json!(cwd), "{entry}");
        assert_eq!(entry["repo"], "codex-proj", "{entry}");
        assert_eq!(entry["config_dir"], config_dir, "{entry}");
        assert!(!hook_log(&env).contains("error"), "{}", hook_log(&env));
    }
}

/// Codex's `notify` passes its JSON as the last argument and leaves stdin alone: the hook must
/// not wait for stdin (kept open here).
#[test]
fn codex_notify_payload_as_an_argument_with_thread_id() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "notify-proj", "");
    let thread = "019a4c7e-aaaa-7d20-9c55-0a1b2c3d4e5f";
    let payload = json!({
        "type": "agent-turn-complete",
        "thread-id": thread,
        "turn-id": "12",
        "cwd": cwd,
        "input-messages": ["rename the module"],
        "last-assistant-message": "Done.",
    });
    let (mut child, stdin_kept_open) = spawn_piped(
        crash_resume_agent(&env)
            .args(["hook", "codex", &payload.to_string()])
            .env("CRASH_RESUME_SURFACE", "notify-pane"),
    );
    let status = wait_until("the codex hook to exit", || child.try_wait().unwrap());
    drop(stdin_kept_open);
    HookRun {
        status,
        ..HookRun::from(child.wait_with_output().unwrap())
    }
    .assert_silent_success("notify");
    let entry = env.entry("notify-pane").expect("recorded");
    assert_eq!(entry["sessionId"], thread);
    assert_eq!(entry["provider"], "codex");
    assert_eq!(entry["config_dir"], json!(codex_home(&env)));
    assert_eq!(entry["repo"], "notify-proj");
    // With its rollout on disk, as Codex writes it, the thread resumes in its dir.
    codex::write_rollout(
        &codex_home(&env),
        thread,
        r#"{"timestamp":"2026-12-01T07:49:08.000Z","type":"session_meta","payload":{}}"#,
    );
    crate::check(
        &env,
        &["resume-cmd", "notify-pane"],
        0,
        predicates::ord::eq(format!(
            "cd {} && CODEX_HOME={} codex resume {thread}\n",
            shell_word(cwd.to_str().unwrap()),
            shell_word(codex_home(&env).to_str().unwrap())
        )),
        predicates::str::is_empty(),
    );
}

#[test]
fn fifty_hooks_at_once_for_fifty_surfaces() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let hooks: Vec<(usize, std::process::Child, std::process::ChildStdin)> = (0..50)
        .map(|n| {
            // A hook holds its agent up for 2 s at most, whatever CRASH_RESUME_LOCK_TIMEOUT
            // says; 50 durable writes in a row can take longer than that on a loaded test
            // machine, and a hook that gives up hands its record to a background retry. This
            // test is about every write landing, directly or through a retry.
            let (child, stdin) = spawn_piped(
                crash_resume_agent(&env)
                    .args(["hook", "claude"])
                    .env("CRASH_RESUME_LOCK_TIMEOUT", "30s")
                    .env("CRASH_RESUME_SURFACE", format!("surface-{n}")),
            );
            (n, child, stdin)
        })
        .collect();
    // Every hook runs before any gets its payload: they all start reading, then race for the
    // lock.
    let hooks: Vec<(usize, std::process::Child)> = hooks
        .into_iter()
        .map(|(n, child, mut stdin)| {
            stdin
                .write_all(session_start(&uuid(n as u32), &cwd, "startup").as_bytes())
                .unwrap();
            (n, child)
        })
        .collect();
    for (n, child) in hooks {
        HookRun::from(child.wait_with_output().unwrap())
            .assert_silent_success(&format!("hook {n}"));
    }
    let entries = wait_until(
        "every record, directly or through a background retry",
        || {
            let entries = env.entries();
            (entries.len() == 50).then_some(entries)
        },
    );
    for n in 0..50 {
        assert_eq!(
            entries[&format!("surface-{n}")]["sessionId"],
            uuid(n as u32)
        );
    }
    assert!(!hook_log(&env).contains("error"), "{}", hook_log(&env));
    assert!(env.temp_files().is_empty(), "{:?}", env.index_dir_files());
}

/// (what, variables, stdin, pieces of the line in hook.log). The surface is `CMUX_SURFACE_ID`
/// unless the case removes it.
#[rustfmt::skip]
const FAILURES: &[(&str, Vars, &str, &[&str])] = &[
    ("truncated JSON",      &[], r#"{"session_id": "s-1", "hook_event_name": "#, &["error:", "not valid JSON"]),
    ("not JSON",            &[], "SessionStart s-1\n",                          &["error:", "not valid JSON"]),
    ("empty stdin",         &[], "",                                            &["error:", "no hook payload on stdin"]),
    ("blank stdin",         &[], " \n\t\n",                                     &["error:", "no hook payload on stdin"]),
    ("not an object",       &[], r#"["s-1"]"#,                                  &["error:", "not a JSON object"]),
    ("no session_id",       &[], r#"{"hook_event_name":"SessionStart","cwd":"/x/p","source":"startup"}"#, &["error:", "has no session_id"]),
    ("blank session_id",    &[], r#"{"session_id":"  ","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "session id is only whitespace"]),
    ("control character",   &[], r#"{"session_id":"s\u0007x","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "session id contains a control character"]),
    ("option-like session", &[], r#"{"session_id":"--dangerously-skip-permissions","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "session id begins with '-'"]),
    ("control in cwd",      &[], r#"{"session_id":"s-1","hook_event_name":"SessionStart","cwd":"/x/\u0015touch X\n"}"#, &["error:", "working dir contains a control character (U+0015)"]),
    ("C1 in cwd",           &[], r#"{"session_id":"s-1","hook_event_name":"SessionStart","cwd":"/x/\u009b2J"}"#, &["error:", "working dir contains a control character (U+009B)"]),
    ("relative cwd",        &[], r#"{"session_id":"x4","hook_event_name":"SessionStart","cwd":"relative/dir"}"#, &["error:", "working dir is a relative path; give an absolute one"]),
    ("control in config",   &[("CLAUDE_CONFIG_DIR", "/c/\u{1b}[2J")], r#"{"session_id":"s-1","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "config dir contains a control character (U+001B)"]),
    ("escape in session",   &[("CMUX_SURFACE_ID", "")], r#"{"session_id":"s\u001b]0;x","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "no surface in the environment", r#"session "s\e]0;x" not recorded"#]),
    ("no surface",          &[("CMUX_SURFACE_ID", "")], r#"{"session_id":"s-1","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "no surface in the environment", "CRASH_RESUME_SURFACE", "session s-1 not recorded"]),
    ("misspelt tmux pane",  &[("CRASH_RESUME_SURFACE", "tmux:w:00.1")], r#"{"session_id":"s-1","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "CRASH_RESUME_SURFACE", "is not a tmux pane's address", "session s-1 not recorded"]),
    ("empty kitty window",  &[("CRASH_RESUME_SURFACE", "kitty:")], r#"{"session_id":"s-1","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "CRASH_RESUME_SURFACE", "is not a kitty surface's address"]),
    ("tmux not reachable",  &[("CMUX_SURFACE_ID", ""), ("TMUX_PANE", "%5"), ("TMUX", "/crash-resume-tests-no-such-dir/socket,1,0")], r#"{"session_id":"s-1","hook_event_name":"SessionStart","cwd":"/x/p"}"#, &["error:", "tmux could not name pane %5"]),
];

#[test]
fn a_hook_that_cannot_record_exits_0_silently_and_logs_why() {
    for (what, vars, stdin, pieces) in FAILURES {
        let env = Sandbox::default();
        let vars: Vec<(&str, &str)> = [("CMUX_SURFACE_ID", "abc")]
            .into_iter()
            .chain(vars.iter().copied())
            .collect();
        let run = run_hook(&env, "claude", &vars, stdin);
        run.assert_silent_success(what);
        assert_eq!(run.stderr, "", "{what}: the log has it");
        let log = hook_log(&env);
        assert_eq!(log.lines().count(), 1, "{what}: one line: {log}");
        assert!(log.contains("hook claude ("), "{what}: {log}");
        for piece in *pieces {
            assert!(
                log.contains(piece),
                "{what}: hook.log lacks {piece:?}: {log}"
            );
        }
        assert_eq!(env.index_bytes(), None, "{what}: nothing recorded");
    }
}

/// A payload no agent sends (17 MiB: a valid payload with a long padding field) is read no
/// further than 16 MiB and not parsed: the agent is not held up on it.
#[test]
fn a_hook_payload_too_large_to_be_real_is_not_read_whole() {
    let env = Sandbox::default();
    let payload = format!(
        r#"{{"session_id":"{}","hook_event_name":"SessionStart","cwd":"/x/p","source":"startup","pad":"{}"}}"#,
        uuid(1),
        "x".repeat(17 << 20)
    );
    let run = run_hook(&env, "claude", &[("CMUX_SURFACE_ID", "abc")], &payload);
    run.assert_silent_success("a huge payload");
    let log = hook_log(&env);
    assert!(
        log.contains("error: the hook payload on stdin is larger than 16777216 bytes"),
        "{log}"
    );
    assert_eq!(env.index_bytes(), None, "nothing recorded");
}

#[test]
fn a_hook_with_an_unusable_index_path_exits_0_and_says_why() {
    let payload = |env: &Sandbox| session_start(&uuid(1), &env.root().join("p"), "startup");

    // The index path is a directory: the log beside it says so.
    let env = Sandbox::default();
    make_dir(&env.index_path());
    let run = run_hook(
        &env,
        "claude",
        &[("CMUX_SURFACE_ID", "abc")],
        &payload(&env),
    );
    run.assert_silent_success("index is a directory");
    let log = hook_log(&env);
    assert!(
        log.contains("error:") && log.contains("is a directory"),
        "{log}"
    );
    assert!(log.contains(env.index_path().to_str().unwrap()), "{log}");

    // The index dir is a regular file: no log can go beside the index, so stderr has it.
    let env = Sandbox::default();
    fs::write(env.index_dir(), "not a dir\n").unwrap();
    let run = run_hook(
        &env,
        "claude",
        &[("CMUX_SURFACE_ID", "abc")],
        &payload(&env),
    );
    run.assert_silent_success("index dir is a file");
    assert!(
        run.stderr.contains("hook claude (")
            && run.stderr.contains("error:")
            && run.stderr.contains(env.index_dir().to_str().unwrap()),
        "stderr: {}",
        run.stderr
    );
    assert_eq!(
        fs::read_to_string(env.index_dir()).unwrap(),
        "not a dir\n",
        "the file in the way is left alone"
    );
}

/// A corrupt index is set aside and the hook still records; the log has the warning.
#[test]
fn a_hook_over_a_corrupt_index_records_and_logs_the_repair() {
    let env = Sandbox::default();
    env.write_index_bytes(b"{\"version\": 1, \"entries\": {");
    let cwd = git_work_dir(&env, "proj", "");
    run_hook(
        &env,
        "claude",
        &[("CMUX_SURFACE_ID", "abc")],
        &session_start(&uuid(1), &cwd, "startup"),
    )
    .assert_silent_success("corrupt index");
    assert_eq!(env.entry("cmux:abc").unwrap()["sessionId"], uuid(1));
    let log = hook_log(&env);
    assert!(
        log.contains("warning:") && log.contains("moved it aside"),
        "{log}"
    );
    assert!(
        env.index_dir_files()
            .iter()
            .any(|name| name.starts_with("index.json.corrupt-")),
        "{:?}",
        env.index_dir_files()
    );
}

/// A writer stopped while it holds the lock: the hook gives up on the lock within its own
/// deadline (2 s at most, whatever CRASH_RESUME_LOCK_TIMEOUT asks for), exits 0, logs who holds
/// it, and hands the record to a detached retry that lands it once the lock is free, so nothing
/// is lost.
#[test]
fn a_hook_blocked_by_a_stopped_lock_holder_hands_off_and_the_record_lands_later() {
    let env = Sandbox::default();
    let holder = stopped_lock_holder(&env);
    let cwd = git_work_dir(&env, "proj", "");
    run_hook(
        &env,
        "claude",
        &[
            ("CMUX_SURFACE_ID", "abc"),
            ("CRASH_RESUME_LOCK_TIMEOUT", "20s"),
        ],
        &session_start(&uuid(1), &cwd, "startup"),
    )
    .assert_silent_success("lock held, 20 s asked for");
    let log = hook_log(&env);
    assert!(
        logged_wait(&log) <= Duration::from_secs(2),
        "the wait is capped: {log}"
    );
    assert!(
        log.contains("locked by another process")
            && log.contains(&format!("pid {}", holder.pid()))
            && log.contains("handed to a background retry")
            && log.contains("): warning: "),
        "{log}"
    );
    assert!(
        env.index_bytes().is_none(),
        "nothing written while the lock is held"
    );
    let entry = release_and_wait_for_retry(&env, holder, "cmux:abc");
    assert_eq!(entry["sessionId"], uuid(1));
    assert!(
        env.entry("held").is_some(),
        "the holder's own record landed too"
    );
}

/// Claude Code may never close the hook's stdin: one complete JSON value is enough.
#[test]
fn a_hook_whose_stdin_stays_open_records_after_one_json_value() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let payload = session_start(&uuid(1), &cwd, "startup");
    let (first, rest) = payload.split_at(payload.len() / 2);
    for (case, chunks) in [
        ("in one write", vec![payload.as_str()]),
        ("in two writes", vec![first, rest]),
        ("followed by a newline", vec![payload.as_str(), "\n"]),
    ] {
        let surface = format!("open-{}", case.replace(' ', "-"));
        let (mut child, mut stdin) = spawn_piped(
            crash_resume_agent(&env)
                .args(["hook", "claude"])
                .env("CRASH_RESUME_SURFACE", &surface),
        );
        for chunk in chunks {
            // Once the hook has its value it may exit before a later chunk: a broken pipe then.
            let _ = stdin.write_all(chunk.as_bytes());
        }
        // The write end stays open until the hook has exited.
        let status = wait_until("the hook to exit with its stdin open", || {
            child.try_wait().unwrap()
        });
        drop(stdin);
        HookRun {
            status,
            ..HookRun::from(child.wait_with_output().unwrap())
        }
        .assert_silent_success(case);
        // Had it waited for EOF, it would have given up at its stdin deadline, recording nothing.
        assert_eq!(
            env.entry(&surface).map(|entry| entry["sessionId"].clone()),
            Some(json!(uuid(1))),
            "{case}"
        );
        assert!(
            !hook_log(&env).contains("error"),
            "{case}: {}",
            hook_log(&env)
        );
        // The next case binds the same session elsewhere; start from an empty index.
        fs::remove_file(env.index_path()).unwrap();
    }
}

/// An 8 MiB payload (a long prompt) on a stdin that stays open is read in one pass, not parsed
/// again after every chunk: it is recorded well within the stdin deadline.
#[test]
fn a_hook_reads_an_eight_mib_payload_on_an_open_stdin_and_records_it() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let prompt = "a prompt the user typed, long ".repeat(8 * 1024 * 1024 / 30 + 1);
    let payload = claude_payload(
        "UserPromptSubmit",
        &uuid(1),
        &cwd,
        json!({ "prompt": prompt }),
    );
    assert!(payload.len() > 8 * 1024 * 1024);
    let (mut child, mut stdin) = spawn_piped(
        crash_resume_agent(&env)
            .args(["hook", "claude"])
            .env("CRASH_RESUME_SURFACE", "big"),
    );
    stdin.write_all(payload.as_bytes()).unwrap();
    let status = wait_until("the hook to exit with its stdin open", || {
        child.try_wait().unwrap()
    });
    drop(stdin);
    HookRun {
        status,
        ..HookRun::from(child.wait_with_output().unwrap())
    }
    .assert_silent_success("8 MiB payload");
    assert_eq!(
        env.entry("big").map(|entry| entry["sessionId"].clone()),
        Some(json!(uuid(1))),
        "{}",
        hook_log(&env)
    );
    assert!(!hook_log(&env).contains("error"), "{}", hook_log(&env));
}

/// Stdin open and silent: the hook gives up at its stdin deadline, exits 0 and logs it.
#[test]
fn a_hook_whose_stdin_stays_open_and_empty_gives_up_and_logs_it() {
    let env = Sandbox::default();
    let (mut child, stdin_kept_open) = spawn_piped(
        crash_resume_agent(&env)
            .args(["hook", "claude"])
            .env("CMUX_SURFACE_ID", "abc"),
    );
    let status = wait_until("the hook to give up on stdin", || child.try_wait().unwrap());
    drop(stdin_kept_open);
    HookRun {
        status,
        ..HookRun::from(child.wait_with_output().unwrap())
    }
    .assert_silent_success("stdin open and empty");
    let log = hook_log(&env);
    assert!(
        log.contains("error:") && log.contains("no complete hook payload on stdin within"),
        "{log}"
    );
    assert_eq!(env.index_bytes(), None);
}

/// `TMUX_PANE` naming a pane the server does not have (inherited by a process that outlived
/// its pane): tmux answers `display-message` for it with empty fields, not an error. The hook
/// must not record a made-up surface such as `tmux::.`.
#[test]
fn a_stale_tmux_pane_is_not_recorded() {
    let env = Sandbox::default();
    let layout = [(PanePlace::new("dev", 0, 0), env.home(), PANE_SHELL)];
    let server = TmuxServer::start(&env, &server_name("stale"), &layout);
    let cwd = git_work_dir(&env, "proj", "");
    let run = run_hook(
        &env,
        "claude",
        &[("TMUX", &server.tmux_variable()), ("TMUX_PANE", "%77")],
        &session_start(&uuid(1), &cwd, "startup"),
    );
    run.assert_silent_success("stale pane");
    assert_eq!(
        env.index_bytes()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        None,
        "nothing recorded"
    );
    let log = hook_log(&env);
    assert!(log.contains("error:") && log.contains("%77"), "{log}");
    server.kill_and_wait();
}

/// How long the hook's log says it waited for the lock (`gave up after 1.7s`).
fn logged_wait(log: &str) -> Duration {
    let text = log
        .split("gave up after ")
        .nth(1)
        .unwrap_or_else(|| panic!("no lock wait in the log: {log}"));
    let number: String = text
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let value: f64 = number.parse().unwrap();
    match &text[number.len()..] {
        unit if unit.starts_with("ms") => Duration::from_secs_f64(value / 1000.0),
        unit if unit.starts_with('s') => Duration::from_secs_f64(value),
        unit => panic!("unknown unit in {unit}"),
    }
}

/// The pid of the background retry the log names.
fn retry_pid(log: &str) -> u32 {
    let text = log
        .split("background retry (pid ")
        .nth(1)
        .unwrap_or_else(|| panic!("no background retry in the log: {log}"));
    text.split(')').next().unwrap().parse().unwrap()
}

/// Lets the stopped holder finish, then waits for the background retry's record of `surface`.
fn release_and_wait_for_retry(env: &Sandbox, holder: Reaped, surface: &str) -> Value {
    holder.signal(Signal::CONT);
    assert!(holder.wait().success());
    wait_until("the background retry records the session", || {
        env.index_bytes().and_then(|_| env.entry(surface))
    })
}

#[test]
fn the_hook_honours_lock_timeout_and_a_bad_value_costs_no_record() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let holder = stopped_lock_holder(&env);
    let command = crash_resume_agent(&env);
    let mut command = with_vars(command, &[("CMUX_SURFACE_ID", "abc")]);
    command.args(["--lock-timeout", "150ms", "hook", "claude"]);
    run_with_stdin(command, &session_start(&uuid(1), &cwd, "startup"))
        .assert_silent_success("--lock-timeout 150ms");
    let log = hook_log(&env);
    assert!(
        logged_wait(&log) < Duration::from_secs(1),
        "--lock-timeout 150ms is the wait: {log}"
    );
    release_and_wait_for_retry(&env, holder, "cmux:abc");

    // An invalid value: logged, the default used, the record kept.
    for (surface, value) in [("bad-env", "soon"), ("bad-zero-unit", "5 parsecs")] {
        run_hook(
            &env,
            "claude",
            &[
                ("CRASH_RESUME_SURFACE", surface),
                ("CRASH_RESUME_LOCK_TIMEOUT", value),
            ],
            &session_start(&uuid(2), &cwd, "startup"),
        )
        .assert_silent_success(value);
        assert_eq!(env.entry(surface).unwrap()["sessionId"], uuid(2));
        let log = hook_log(&env);
        assert!(
            log.contains(&format!("invalid lock timeout {value:?}"))
                && log.contains("using the hook's default"),
            "{log}"
        );
    }
}

#[test]
fn a_payload_of_any_size_reaches_the_retry_and_never_its_command_line() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let holder = stopped_lock_holder(&env);
    // Far past what a command line may hold (about 128 KiB for one argument).
    let prompt = "a prompt the user typed, private ".repeat(16 * 1024);
    let payload = claude_payload(
        "SessionStart",
        &uuid(1),
        &cwd,
        json!({ "source": "startup", "prompt": prompt }),
    );
    assert!(payload.len() > 512 * 1024);
    run_hook(&env, "claude", &[("CMUX_SURFACE_ID", "abc")], &payload)
        .assert_silent_success("a large payload, lock held");
    let log = hook_log(&env);
    let pid = retry_pid(&log);
    // The retry waits for the lock: its command line is there to read, once the kernel has
    // set it up (the spawn returns when exec has begun, and the new program's arguments are
    // in place a moment later).
    let cmdline = wait_until("the retry's command line", || {
        let words = test_support::process::command_line(pid).unwrap();
        let words: Vec<String> = words
            .iter()
            .map(|word| word.to_string_lossy().into_owned())
            .collect();
        (!words.is_empty()).then(|| words.join(" "))
    });
    assert!(cmdline.contains("hook"), "{cmdline}");
    assert!(
        !cmdline.contains("a prompt the user typed") && !cmdline.contains(&uuid(1)),
        "the payload is not on the command line: {cmdline}"
    );
    let entry = release_and_wait_for_retry(&env, holder, "cmux:abc");
    assert_eq!(entry["sessionId"], uuid(1));
}

#[test]
fn a_failing_first_hook_creates_its_dir_and_log_private() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    assert!(!env.index_dir().exists());
    // No surface in the environment: the hook fails, and logs it.
    run_hook(
        &env,
        "claude",
        &[],
        &session_start(&uuid(1), &cwd, "startup"),
    )
    .assert_silent_success("no surface");
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.index_dir()), 0o700);
    assert_eq!(mode(&env.index_dir().join("hook.log")), 0o600);
    assert!(hook_log(&env).contains("no surface"));
}

/// WezTerm numbers panes from 0 again when its server restarts: a pane of a later WezTerm with
/// the same `WEZTERM_PANE` is another surface, since the hook records the WezTerm process it
/// runs under (by pid and start time), so it does not replace the earlier conversation's entry.
/// Without a WezTerm among its ancestors (the variable inherited from elsewhere) the id alone is
/// recorded.
#[test]
fn a_later_wezterm_pane_of_the_same_id_keeps_the_earlier_entry() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "wez", "");
    let program = bin_dir(&env).join("wezterm-gui");
    fs::create_dir_all(bin_dir(&env)).unwrap();
    std::os::unix::fs::symlink("/bin/sh", &program).unwrap();
    let hook = format!("{} hook claude; true", shell_word(crate::BIN));
    for session in [uuid(1), uuid(2)] {
        // Each run is a WezTerm process of its own (a later instance), whose pane 4 runs the agent.
        let mut command = crate::harness::agent_command(&env, &program);
        command
            .args(["-c", &hook])
            .current_dir(&cwd)
            .env("WEZTERM_PANE", "4");
        run_with_stdin(
            command,
            &session_start(&session, &cwd, "startup").to_string(),
        )
        .assert_silent_success("under a WezTerm");
    }
    let entries = env.entries();
    let surfaces: Vec<&String> = entries.keys().collect();
    assert_eq!(surfaces.len(), 2, "{entries:?}");
    for surface in &surfaces {
        let parsed = mux::Surface::parse(surface).unwrap();
        let mux::Surface::Wezterm(pane) = parsed else {
            panic!("{surface}");
        };
        assert_eq!(pane.id, "4");
        assert!(pane.instance_process().is_some(), "{surface}");
    }
    // No WezTerm above the hook: the id alone, as before.
    run_hook(
        &env,
        "claude",
        &[("WEZTERM_PANE", "4")],
        &session_start(&uuid(3), &cwd, "startup"),
    )
    .assert_silent_success("outside WezTerm");
    assert!(env.entry("wezterm:4").is_some());
}
