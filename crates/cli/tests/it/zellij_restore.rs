//! `crash-resume restore --apply zellij` against the real, pinned zellij (the `live-zellij`
//! feature; `CRASH_RESUME_ZELLIJ` names the executable, and the tests fail without it): agents
//! captured by the real hook in three panes, which it names; a pane closed so that zellij
//! renumbers the rest when it resurrects the session; the server killed with SIGKILL; then the
//! restore resurrects the session, starts each agent as the process of its own named pane once,
//! leaves a busy pane alone, and a second restore starts nothing.
//!
//! Each test's zellij is confined to its sandbox (`ZELLIJ_CONFIG_DIR`, `ZELLIJ_SOCKET_DIR`,
//! `XDG_CACHE_HOME`, `TMPDIR`). A client is attached through a pane of a private tmux server,
//! as zellij lays out a session with no client in 1×1 panes. Nothing is typed into any pane:
//! the panes' programs are given to `new-pane`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use test_support::zellij::Instance;

use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, bin_dir, claude_dir, crash_resume_agent, git_work_dir,
    make_dir, plan_by_surface, server_name, session_start, shell_word, uuid, wait_until,
    write_transcript,
};
use crate::{BIN, Sandbox};

const HOUR: Duration = Duration::from_secs(3600);

/// The session every test plays in.
const SESSION: &str = "story";

/// A zellij instance of the sandbox, with a client attached to `SESSION` through a tmux pane,
/// and `zellij` first on the agents' `PATH`.
struct Live {
    zellij: Instance,
    tmux: TmuxServer,
}

impl Live {
    fn start(env: &Sandbox, name: &str) -> Live {
        let zellij = Instance::new(
            test_support::zellij::executable(),
            &env.root().join("zellij"),
        );
        make_dir(&bin_dir(env));
        std::os::unix::fs::symlink(test_support::zellij::executable(), bin_dir(env).join("zellij"))
            .unwrap();
        let vars: Vec<(String, String)> = zellij
            .vars()
            .into_iter()
            .map(|(name, value)| (name.to_string(), value.to_string_lossy().into_owned()))
            .collect();
        let vars: Vec<(&str, &str)> = vars
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        let place = PanePlace::new("client", 0, 0);
        let tmux = TmuxServer::start_with(env, &server_name(name), &[(place, env.home(), PANE_SHELL)], &vars);
        let live = Live { zellij, tmux };
        live.attach_client();
        live
    }

    /// Starts a zellij client of `SESSION` in the tmux pane (a session created or resurrected
    /// by it), and waits until zellij runs the session's first shell.
    fn attach_client(&self) {
        self.tmux.tmux(&[
            "respawn-pane",
            "-k",
            "-t",
            "=client:0.0",
            &format!("zellij attach --create {SESSION}"),
        ]);
        wait_until("zellij's first shell", || {
            self.zellij
                .panes(SESSION)
                .iter()
                .any(|pane| pane["pane_command"].as_str().is_some_and(|command| command.contains("bash")))
                .then_some(())
        });
    }

    /// The session's terminal panes by title.
    fn panes_by_title(&self) -> BTreeMap<String, Value> {
        self.zellij
            .panes(SESSION)
            .into_iter()
            .map(|pane| (pane["title"].as_str().unwrap_or_default().to_string(), pane))
            .collect()
    }

    /// Kills the session's server with SIGKILL and waits until it is gone and zellij lists the
    /// session as exited.
    fn kill_server(&self) {
        let pid = self.zellij.server_pid(SESSION).expect("the zellij server's pid");
        let raw = rustix::process::Pid::from_raw(pid as i32).unwrap();
        rustix::process::kill_process(raw, rustix::process::Signal::KILL).unwrap();
        wait_until("the zellij server to exit", || {
            matches!(crate::process_state(pid), None | Some('Z')).then_some(())
        });
        wait_until("zellij to list the session as exited", || {
            self.zellij
                .try_zellij(&["list-sessions", "--no-formatting"])
                .ok()
                .filter(|listing| listing.contains("EXITED"))
        });
    }
}

/// A stand-in `claude` that writes down where it runs (its zellij pane, its surface, its dir,
/// its arguments) and stays, as an agent does.
fn install_claude_stand_in(env: &Sandbox) -> PathBuf {
    let runs = env.root().join("claude-runs");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"pane=${{ZELLIJ_PANE_ID-}} surface=${{CRASH_RESUME_SURFACE-}} \
         pwd=$PWD args=$*\" >> {}\nexec sleep 600\n",
        shell_word(runs.to_str().unwrap())
    );
    let path = bin_dir(env).join("claude");
    fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    runs
}

fn claude_runs(runs: &Path) -> Vec<String> {
    fs::read_to_string(runs)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The program of an agent's pane: the real hook fired with the payload in `payload`, then
/// staying as the agent would.
fn agent_pane_program(payload: &Path) -> String {
    format!(
        "{} hook claude < {}; exec sleep 600",
        shell_word(BIN),
        shell_word(payload.to_str().unwrap())
    )
}

/// `crash-resume --json restore ARGS` in the agents' environment (the zellij instance's
/// variables included).
fn restore(env: &Sandbox, live: &Live, args: &[&str]) -> Output {
    let mut command = crash_resume_agent(env);
    live.zellij.confine(&mut command);
    command
        .args(["--json", "restore"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn applied(output: &Output) -> BTreeMap<String, Value> {
    plan_by_surface(&output.stdout)
        .into_iter()
        .map(|(surface, item)| (surface, item["applied"].clone()))
        .collect()
}

#[test]
fn restore_after_a_zellij_crash_starts_each_agent_in_its_named_pane_once() {
    let env = Sandbox::default();
    let runs = install_claude_stand_in(&env);
    let config = claude_dir(&env);
    let live = Live::start(&env, "zstory");
    let dirs: Vec<PathBuf> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|repo| git_work_dir(&env, repo, ""))
        .collect();

    // A pane opened first and closed at the end, so that zellij renumbers the agents' panes
    // when it resurrects the session.
    let doomed = live
        .zellij
        .action(SESSION, &["new-pane", "--name", "doomed", "--", "sleep", "600"]);

    // Three agents, each capturing its pane through the real hook.
    for (n, dir) in dirs.iter().enumerate() {
        let session = uuid(n as u32 + 1);
        write_transcript(&config, dir, &session, HOUR);
        let payload = env.root().join(format!("payload-{n}.json"));
        fs::write(&payload, session_start(&session, dir, "startup")).unwrap();
        live.zellij.action(
            SESSION,
            &[
                "new-pane",
                "--cwd",
                dir.to_str().unwrap(),
                "--",
                "/bin/sh",
                "-c",
                &agent_pane_program(&payload),
            ],
        );
        wait_until("the hook to record the pane", || {
            (env.entries().len() == n + 1).then_some(())
        });
    }
    let surfaces: Vec<String> = env.entries().keys().cloned().collect();
    let mut names = Vec::new();
    for surface in &surfaces {
        let name = surface
            .strip_prefix(&format!("zellij:{SESSION}:"))
            .unwrap_or_else(|| panic!("{surface} is not a pane of {SESSION}"));
        assert!(mux::zellij::is_pane_name(name), "{surface} names its pane by a name of ours");
        names.push(name.to_string());
    }
    let titles = live.panes_by_title();
    for name in &names {
        assert!(titles.contains_key(name), "the pane bears its name {name}: {titles:?}");
    }
    live.zellij.action(SESSION, &["close-pane", "--pane-id", &doomed]);

    // The names are in the layout zellij keeps for resurrection; then the crash.
    wait_until("zellij to write the names into its layout", || {
        let layout = live.zellij.serialized_layout(SESSION);
        (names.iter().all(|name| layout.contains(name.as_str())) && !layout.contains("doomed"))
            .then_some(())
    });
    let before: BTreeMap<String, u64> = live
        .panes_by_title()
        .into_iter()
        .filter_map(|(title, pane)| Some((title, pane["id"].as_u64()?)))
        .collect();
    live.kill_server();

    // The restore resurrects the session and starts each agent in its own pane.
    let first = restore(&env, &live, &["--apply", "zellij"]);
    assert!(first.status.success(), "{first:?}");
    let outcome = applied(&first);
    for surface in &surfaces {
        assert_eq!(
            outcome[surface], "created the session from its saved layout and started in it",
            "{surface}: {}",
            String::from_utf8_lossy(&first.stderr)
        );
    }
    wait_until("each agent to run once", || {
        (claude_runs(&runs).len() >= 3).then_some(())
    });
    let after = live.panes_by_title();
    let mut seen = Vec::new();
    for line in claude_runs(&runs) {
        let surface = line.split(' ').nth(1).unwrap().trim_start_matches("surface=");
        let pane = line.split(' ').next().unwrap().trim_start_matches("pane=");
        let name = surface.rsplit(':').next().unwrap();
        let n = names.iter().position(|known| known == name).expect("a recorded surface");
        assert_eq!(after[name]["id"].as_u64().unwrap().to_string(), pane, "{line}");
        assert!(line.contains(&format!("pwd={}", dirs[n].display())), "{line}");
        assert!(line.contains(&format!("args=--resume {}", uuid(n as u32 + 1))), "{line}");
        seen.push(surface.to_string());
    }
    seen.sort();
    assert_eq!(seen, surfaces, "each agent once");
    assert_ne!(
        before.values().collect::<Vec<_>>(),
        after.values().filter_map(|pane| pane["id"].as_u64()).collect::<Vec<_>>().iter().collect::<Vec<_>>(),
        "zellij renumbered the panes"
    );

    // A second restore starts nothing.
    let second = restore(&env, &live, &["--apply", "zellij"]);
    assert!(second.status.success(), "{second:?}");
    for (surface, outcome) in applied(&second) {
        assert_eq!(outcome, "skipped: another restore claimed it", "{surface}");
    }
    assert_eq!(claude_runs(&runs).len(), 3, "no second run");
}
