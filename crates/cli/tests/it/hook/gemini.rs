//! `crash-resume hook gemini` without the real CLI: the note when Gemini hid the pane
//! (`GITHUB_SHA`), and the end of a session a restore started (`CRASH_RESUME_SURFACE` set) or
//! one in a kitty window or WezTerm pane, which counts only from a pane that still exists, as
//! for Codex and Copilot.

use serde_json::json;

use crate::harness::{
    Vars, agent_command, crash_resume_agent, hook_log, make_dir, run_with_stdin, uuid, with_vars,
};
use crate::{BIN, Sandbox};

/// A Gemini payload of `event` for session 1 in `work` (an end's reason is Gemini's `exit`).
fn payload(work: &std::path::Path, event: &str) -> String {
    json!({ "session_id": uuid(1), "cwd": work, "hook_event_name": event, "reason": "exit" })
        .to_string()
}

/// `crash-resume hook gemini` at a session's start, then at its end, each with `vars`; returns
/// whether the entry of `surface` is marked ended, and the hook log.
fn start_then_end(env: &Sandbox, vars: &[(&str, &str)], surface: &str) -> (bool, String) {
    let work = make_dir(&env.root().join("work"));
    for event in ["SessionStart", "SessionEnd"] {
        let mut hook = crash_resume_agent(env);
        hook.args(["hook", "gemini"]);
        run_with_stdin(with_vars(hook, vars), &payload(&work, event)).assert_silent_success(event);
    }
    let ended = env.entries()[surface]["ended_at"].is_number();
    (ended, hook_log(env))
}

/// A stand-in for a multiplexer's process: `program` copied into `dir` under `name`, so the
/// process table names it so.
fn stand_in(dir: &std::path::Path, program: &str, name: &str) -> std::path::PathBuf {
    let copy = dir.join(name);
    std::fs::copy(program, &copy).unwrap();
    copy
}

/// The end of a session that a restore started in `tmux:work:0.0` (so `CRASH_RESUME_SURFACE`
/// names it), by an agent whose end does not tell a quit from a killed pane: after its tmux
/// server died (a second crash), the end marks nothing, and the session is offered again;
/// where the multiplexer's variable still names a pane, it is the end.
#[test]
fn a_restored_sessions_end_counts_only_from_a_pane_that_still_exists() {
    const DEAD_TMUX: Vars = &[
        ("TMUX_PANE", "%5"),
        ("TMUX", "/crash-resume-tests-no-such-dir/socket,1,0"),
    ];
    const CMUX_PANE: Vars = &[("CMUX_SURFACE_ID", "A")];
    for (agent, end_args) in [
        ("gemini", &["hook", "gemini"][..]),
        ("codex", &["hook", "codex"]),
        ("copilot", &["hook", "copilot", "sessionEnd"]),
    ] {
        for (place, vars, ended) in [("dead tmux", DEAD_TMUX, false), ("cmux", CMUX_PANE, true)] {
            let env = Sandbox::default();
            let work = make_dir(&env.root().join("work"));
            let surface = match place {
                "cmux" => "cmux:A",
                _ => "tmux:work:0.0",
            };
            let explicit = [("CRASH_RESUME_SURFACE", surface)];
            let mut start = crash_resume_agent(&env);
            start.args(["hook", agent]);
            run_with_stdin(with_vars(start, &explicit), &payload(&work, "SessionStart"))
                .assert_silent_success("start");
            // A cmux surface that still exists: a cmux process runs the agent.
            let cmux = stand_in(env.root(), "/bin/sh", "cmux");
            let mut end = match place {
                "cmux" => {
                    let mut end = agent_command(&env, &cmux);
                    end.args(["-c", "\"$0\" \"$@\"", BIN]);
                    end
                }
                _ => crash_resume_agent(&env),
            };
            end.args(end_args);
            let vars: Vec<(&str, &str)> = explicit.iter().chain(vars.iter()).copied().collect();
            run_with_stdin(with_vars(end, &vars), &payload(&work, "SessionEnd"))
                .assert_silent_success("end");
            let entry = &env.entries()[surface];
            assert_eq!(
                entry["ended_at"].is_number(),
                ended,
                "{agent} in {place}: {entry}"
            );
            if !ended {
                let log = hook_log(&env);
                assert!(
                    log.contains("ended where no surface can be named any more")
                        && log.contains("tmux could not name pane %5"),
                    "{agent}: {log}"
                );
            }
        }
    }
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

/// A kitty window's session ends with a SessionEnd from an agent that does not tell a quit
/// from a killed window only while its kitty runs: after kitty died (its pid runs nothing, or
/// no kitty), the end marks nothing.
#[test]
fn a_kitty_windows_end_counts_only_while_its_kitty_runs() {
    let dir = tempfile::tempdir().unwrap();
    let kitty = stand_in(dir.path(), "/bin/sleep", "kitty");
    let spawn = |program: &std::path::Path| {
        crate::Reaped::new(
            std::process::Command::new(program)
                .arg("600")
                .spawn()
                .unwrap(),
        )
    };
    let running = spawn(&kitty);
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    ended.wait().unwrap();
    let other = spawn(std::path::Path::new("sleep"));
    for (kitty_pid, marked) in [
        (running.pid(), true),
        (ended.id(), false),
        (other.pid(), false),
    ] {
        let pid = kitty_pid.to_string();
        let vars = [("KITTY_WINDOW_ID", "3"), ("KITTY_PID", pid.as_str())];
        let (is_ended, log) = start_then_end(&Sandbox::default(), &vars, &format!("kitty:{pid}:3"));
        assert_eq!(is_ended, marked, "{pid}: {log}");
        assert_eq!(
            log.contains(&format!("kitty (pid {pid}) is not running any more")),
            !marked,
            "{log}"
        );
    }
    // A window a restore opened carries its surface, whose instance is the kitty that died
    // before; the kitty it runs in now is KITTY_PID's: a quit there is the end.
    let pid = running.pid().to_string();
    let surface = format!("kitty:{}:3", ended.id());
    let tag = format!("{pid}:1:{surface}");
    let vars = [
        ("KITTY_WINDOW_ID", "1"),
        ("KITTY_PID", pid.as_str()),
        ("CRASH_RESUME_KITTY_WINDOW", tag.as_str()),
        ("CRASH_RESUME_SURFACE", surface.as_str()),
    ];
    let (is_ended, log) = start_then_end(&Sandbox::default(), &vars, &surface);
    assert!(is_ended, "{log}");
}

/// A zellij pane a restore opened (`CRASH_RESUME_SURFACE` names it): after the zellij server
/// died, `zellij` answers nothing for the pane, and the end of its Gemini session marks nothing.
#[test]
fn a_restored_zellij_panes_end_counts_only_while_zellij_answers() {
    let env = Sandbox::default();
    let bin = make_dir(&env.root().join("bin"));
    let zellij = bin.join("zellij");
    std::fs::write(
        &zellij,
        "#!/bin/sh\necho 'There is no active session!' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&zellij, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let surface = "zellij:work:cr-3-1764600000000";
    let vars = [
        ("CRASH_RESUME_SURFACE", surface),
        ("ZELLIJ", "0"),
        ("ZELLIJ_SESSION_NAME", "work"),
        ("ZELLIJ_PANE_ID", "3"),
        ("PATH", path.as_str()),
    ];
    let (is_ended, log) = start_then_end(&env, &vars, surface);
    assert!(!is_ended, "{log}");
    assert!(
        log.contains(
            "ended where no surface can be named any more (its multiplexer did not answer"
        ),
        "{log}"
    );
}

/// A WezTerm pane's session ends with a SessionEnd from an agent that does not tell a quit
/// from a killed pane only while a WezTerm process runs the agent (is its ancestor): after
/// WezTerm died, the end marks nothing.
#[test]
fn a_wezterm_panes_end_counts_only_while_wezterm_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let wezterm = stand_in(dir.path(), "/bin/sh", "wezterm-gui");
    for (shell, marked) in [
        (wezterm.as_path(), true),
        (std::path::Path::new("sh"), false),
    ] {
        let env = Sandbox::default();
        let work = make_dir(&env.root().join("work"));
        // One agent process runs both hooks, under one WezTerm (its instance is in the surface).
        let script = format!(
            "printf '%s' \"$1\" | {bin} hook gemini && printf '%s' \"$2\" | {bin} hook gemini",
            bin = shlex::try_quote(BIN).unwrap()
        );
        let output = agent_command(&env, shell)
            .env("WEZTERM_PANE", "5")
            .args(["-c", &script, "sh"])
            .args([payload(&work, "SessionStart"), payload(&work, "SessionEnd")])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let entries = env.entries();
        let [(surface, entry)] = &entries.iter().collect::<Vec<_>>()[..] else {
            panic!("one entry: {entries:?}");
        };
        assert!(
            surface.starts_with("wezterm:") && surface.ends_with(":5") || *surface == "wezterm:5",
            "{surface}"
        );
        let log = hook_log(&env);
        assert_eq!(entry["ended_at"].is_number(), marked, "{entry}: {log}");
        assert_eq!(
            log.contains("no WezTerm process runs this agent any more"),
            !marked,
            "{log}"
        );
    }
}

/// A cmux surface's session, as a WezTerm pane's: a SessionEnd of Gemini or Copilot (neither
/// tells a quit from a killed surface) marks it ended only while a cmux process runs the agent;
/// after cmux died, the session stays offered.
#[test]
fn a_cmux_surfaces_end_counts_only_while_cmux_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let cmux = stand_in(dir.path(), "/bin/sh", "cmux");
    for (shell, marked) in [(cmux.as_path(), true), (std::path::Path::new("sh"), false)] {
        for agent in ["gemini", "copilot"] {
            let env = Sandbox::default();
            let work = make_dir(&env.root().join("work"));
            for event in ["SessionStart", "SessionEnd"] {
                let (hook, payload) = match agent {
                    "gemini" => ("hook gemini".to_string(), payload(&work, event)),
                    _ => (
                        format!("hook copilot {}", lower_first(event)),
                        copilot_payload(&work),
                    ),
                };
                let script = format!(
                    "printf '%s' \"$1\" | {} {hook}",
                    shlex::try_quote(BIN).unwrap()
                );
                let output = agent_command(&env, shell)
                    .env("CMUX_SURFACE_ID", "5F0C7A4E")
                    .args(["-c", &script, "sh", &payload])
                    .output()
                    .unwrap();
                assert!(output.status.success(), "{output:?}");
            }
            let log = hook_log(&env);
            let entry = &env.entries()["cmux:5F0C7A4E"];
            assert_eq!(
                entry["ended_at"].is_number(),
                marked,
                "{agent}: {entry}: {log}"
            );
            assert_eq!(
                log.contains("no cmux process runs this agent any more"),
                !marked,
                "{agent}: {log}"
            );
        }
    }
}

/// `SessionStart` as Copilot's hooks name it (`sessionStart`).
fn lower_first(event: &str) -> String {
    let mut chars = event.chars();
    chars
        .next()
        .map(|first| first.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// A Copilot hook payload in `cwd` (camelCase, no event name).
fn copilot_payload(cwd: &std::path::Path) -> String {
    serde_json::json!({
        "sessionId": "5c0f0b2e-1111-4222-8333-444455556666",
        "cwd": cwd,
        "timestamp": 1_764_600_000_000_u64,
        "reason": "user_exit",
    })
    .to_string()
}
