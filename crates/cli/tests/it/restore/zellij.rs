//! `crash-resume restore --apply zellij` against the real, pinned zellij (the `live-zellij`
//! feature; `CRASH_RESUME_ZELLIJ` names the executable, and the tests fail without it). The
//! story is `test_support::zellij::Story`'s, which `cargo xtask reboot-sim --mux zellij` plays
//! too: agents captured by the real hook in three panes of one session (which the hook names)
//! and one of another; a pane closed so that zellij renumbers the rest when it resurrects the
//! session; both servers killed with SIGKILL; the second session brought back by the user and
//! its agent's pane made busy; then `restore --apply zellij` resurrects the first session,
//! starts each agent as the process of its own named pane once, leaves the busy pane alone, and
//! a second restore starts nothing. Beside the story, in two sessions at once: a pane whose
//! program sets its title to another pane's name takes nothing of that pane (neither its entry
//! in the hook nor, once it is gone, its place in a restore), and a pane the user named keeps
//! its name.
//!
//! Each test's zellij is confined to its sandbox (`ZELLIJ_CONFIG_DIR`, `ZELLIJ_SOCKET_DIR`,
//! `XDG_CACHE_HOME`, `TMPDIR`). A client is attached through a pane of a private tmux server,
//! as zellij lays out a session with no client in 1×1 panes. Nothing is typed into any pane:
//! the panes' programs are given to `new-pane`.

use std::time::Duration;

use serde_json::Value;
use test_support::zellij::{Instance, Story};

use crate::harness::{
    PANE_SHELL, PanePlace, TmuxServer, bin_dir, claude_dir, crash_resume_agent, git_work_dir,
    make_dir, server_name, uuid, wait_until, write_transcript,
};
use crate::{BIN, Sandbox};

const HOUR: Duration = Duration::from_secs(3600);

#[test]
fn restore_after_a_zellij_crash_starts_each_agent_in_its_named_pane_once() {
    let env = Sandbox::default();
    let zellij = Instance::new(
        test_support::zellij::executable(),
        &env.root().join("zellij"),
    );
    make_dir(&bin_dir(&env));
    let vars: Vec<(&str, String)> = zellij
        .vars()
        .into_iter()
        .map(|(name, value)| (name, value.to_string_lossy().into_owned()))
        .collect();
    let vars: Vec<(&str, &str)> = vars
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let place = PanePlace::new("client", 0, 0);
    let tmux = TmuxServer::start_with(
        &env,
        &server_name("zellij"),
        &[(place.clone(), env.home(), PANE_SHELL)],
        &vars,
    );
    // The client exits when its server is killed: the tmux pane stays for the next one.
    tmux.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
    let attach = |line: &str| {
        tmux.tmux(&["respawn-pane", "-k", "-t", &place.target(), line]);
    };
    let agents = ["alpha", "beta", "gamma", "delta"].map(|repo| {
        let dir = git_work_dir(&env, repo, "");
        (dir, String::new())
    });
    let agents: [(std::path::PathBuf, String); 4] = std::array::from_fn(|n| {
        let session = uuid(n as u32 + 1);
        write_transcript(&claude_dir(&env), &agents[n].0, &session, HOUR);
        (agents[n].0.clone(), session)
    });
    let surfaces = || {
        if env.index_bytes().is_none() {
            return Vec::new();
        }
        env.entries()
            .into_iter()
            .map(|(surface, entry)| {
                (
                    surface,
                    entry["sessionId"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    let story = Story {
        zellij: &zellij,
        attach: &attach,
        crash_resume: std::path::Path::new(BIN),
        command: &|| crash_resume_agent(&env),
        bin: &bin_dir(&env),
        scratch: env.root(),
        surfaces: &surfaces,
        agents: agents.clone(),
    };
    let seen = story.play().unwrap_or_else(|error| panic!("{error}"));

    // The hook named each pane, and the panes bore the names.
    for (surface, (name, bears)) in seen.surfaces.iter().zip(&seen.named) {
        assert!(mux::zellij::is_pane_name(name), "{surface}");
        assert!(bears, "{surface}: no pane bore its name");
    }
    let (before, after) = &seen.renumbered;
    let side = &seen.named[3].0;
    assert_ne!(
        before[side], after[side],
        "zellij renumbered the panes: {before:?} then {after:?}"
    );

    // Of the two restores at once, one resurrected the session and started each agent in its
    // pane; the other, let in once the first was done, started nothing.
    let [one, other] = &seen.first;
    let said = format!("{}\n{}", one.stderr, other.stderr);
    assert_eq!((one.code, other.code), (Some(0), Some(0)), "{said}");
    let mut outcomes: Vec<&str> = seen.surfaces[..3]
        .iter()
        .flat_map(|surface| [&one.applied[surface], &other.applied[surface]])
        .map(|applied| applied.as_str().unwrap_or_default())
        .collect();
    let skipped = |outcome: &str| {
        outcome == "skipped: another restore claimed it"
            || outcome == "skipped: the pane is busy running sleep"
    };
    assert_eq!(
        outcomes.iter().filter(|outcome| skipped(outcome)).count(),
        3,
        "{outcomes:?}: {said}"
    );
    outcomes.retain(|outcome| !skipped(outcome));
    outcomes.sort_unstable();
    assert_eq!(
        outcomes,
        [
            "created the session from its saved layout and started in it",
            "started in the existing pane",
            "started in the existing pane",
        ],
        "{said}"
    );
    let busy = &seen.surfaces[3];
    for restore in [one, other] {
        assert_eq!(
            restore.applied[busy], "skipped: the pane is busy running sleep",
            "{busy}: {said}"
        );
    }
    let mut started: Vec<&str> = seen.runs.iter().map(|run| run.surface.as_str()).collect();
    started.sort_unstable();
    let mut expected: Vec<&str> = seen.surfaces[..3].iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(started, expected, "each agent once: {:?}", seen.runs);
    for run in &seen.runs {
        let n = seen
            .surfaces
            .iter()
            .position(|surface| *surface == run.surface)
            .unwrap();
        let name = &seen.named[n].0;
        assert_eq!(
            seen.story_after.get(name).map(u64::to_string).as_deref(),
            Some(run.pane.as_str()),
            "{run:?} ran in the pane named {name}"
        );
        assert_eq!(run.dir, agents[n].0.to_string_lossy(), "{run:?}");
        assert!(
            run.args.ends_with(&format!("--resume {}", agents[n].1)),
            "{run:?}"
        );
    }

    // The busy pane was not touched, and a second restore started nothing.
    assert_eq!(
        seen.busy_pane.0, seen.busy_pane.1,
        "the busy pane is the same pane"
    );
    let test_support::zellij::Restored {
        code,
        applied,
        stderr,
    } = &seen.second;
    assert_eq!(*code, Some(0), "{stderr}");
    for surface in &seen.surfaces[..3] {
        // The agent the first restore started runs there.
        assert_eq!(
            applied[surface], "skipped: the pane is busy running sleep",
            "{surface}"
        );
    }
    assert_eq!(
        applied[busy],
        Value::from("skipped: the pane is busy running sleep")
    );
    assert_eq!(seen.runs_in_all, 3, "no second run");
}

/// Makes a pane of `session` with `args` (after `new-pane`) and returns its id, as `found`
/// tells it among the terminal panes. zellij now and then answers a call with nothing or a
/// failure, having made the pane or not: it is made again only when it is not listed for 2 s.
fn make_pane(
    zellij: &Instance,
    session: &str,
    args: &[&str],
    found: impl Fn(&[Value]) -> Option<u64>,
) -> u64 {
    for _ in 0..3 {
        let mut all = vec!["--session", session, "action", "new-pane"];
        all.extend_from_slice(args);
        let _ = zellij.try_zellij(&all);
        let started = std::time::Instant::now();
        let made = wait_until(
            &format!("a pane of {session} made with {args:?}"),
            || match found(&zellij.panes(session)) {
                Some(id) => Some(Some(id)),
                None if started.elapsed() > Duration::from_secs(2) => Some(None),
                None => None,
            },
        );
        if let Some(id) = made {
            return id;
        }
    }
    panic!(
        "zellij did not make a pane with {args:?} in three tries\n{}",
        zellij.diagnostics()
    );
}

/// The pane of `panes` whose command line holds `text`.
fn running(panes: &[Value], text: &str) -> Option<u64> {
    panes
        .iter()
        .find(|pane| {
            pane["terminal_command"]
                .as_str()
                .is_some_and(|command| command.contains(text))
        })
        .and_then(|pane| pane["id"].as_u64())
}

/// The titles of the terminal panes of `session`, by pane id.
fn titles(zellij: &Instance, session: &str) -> Vec<(u64, String)> {
    zellij
        .panes(session)
        .into_iter()
        .filter_map(|pane| Some((pane["id"].as_u64()?, pane["title"].as_str()?.to_string())))
        .collect()
}

/// A terminal title is whatever the pane's program last set (an OSC escape in any output:
/// a file shown, a remote host), and `list-panes` shows it where a pane has no name. A program
/// that sets its pane's title to another pane's name takes nothing of that pane: its agent is
/// recorded under a surface of its own, not over the named pane's entry, and once the named
/// pane is gone a restore leaves an idle shell whose title shows the name alone and opens a
/// pane of that name. A pane the user named keeps its name, and its surface carries it. Two
/// sessions run at once.
#[test]
fn a_pane_whose_title_shows_another_panes_name_takes_nothing_of_it_and_a_users_name_is_kept() {
    let env = Sandbox::default();
    let zellij = Instance::new(
        test_support::zellij::executable(),
        &env.root().join("zellij"),
    );
    let bin = make_dir(&bin_dir(&env));
    std::os::unix::fs::symlink(test_support::zellij::executable(), bin.join("zellij")).unwrap();
    crate::harness::install_claude_stand_in_that_stays(&env);
    for session in ["one", "two"] {
        let mut attach = crate::harness::agent_command(&env, test_support::zellij::executable());
        zellij.confine(&mut attach);
        let attached = attach
            .args(["attach", "--create-background", session])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(attached.status.success(), "{attached:?}");
        wait_until(&format!("session {session} to run its first shell"), || {
            zellij.runs_a_shell(session).then_some(())
        });
    }
    let entry_of = |session: &str| {
        env.index_bytes()?;
        env.entries()
            .into_iter()
            .find(|(_, entry)| entry["sessionId"] == session)
            .map(|(surface, _)| surface)
    };
    // Agent `n` in a pane of `session`: the real hook, after `before` (shell) and, when given,
    // after a line is read from `gate`; then it stays. Its surface once recorded.
    let agent = |n: u32, session: &str, name: Option<&str>, before: &str| {
        let dir = make_dir(&env.root().join(format!("work/agent-{n}")));
        let id = uuid(n);
        write_transcript(&claude_dir(&env), &dir, &id, HOUR);
        let payload = env.root().join(format!("payload-{n}.json"));
        std::fs::write(
            &payload,
            crate::harness::session_start(&id, &dir, "startup"),
        )
        .unwrap();
        let program = format!(
            "{before}{} hook claude < {}; exec sleep 600",
            crate::harness::shell_word(BIN),
            crate::harness::shell_word(&payload.to_string_lossy()),
        );
        let mut args = Vec::new();
        if let Some(name) = name {
            args.extend(["--name", name]);
        }
        args.extend([
            "--cwd",
            dir.to_str().unwrap(),
            "--",
            "/bin/sh",
            "-c",
            &program,
        ]);
        let marker = payload.to_string_lossy().into_owned();
        let pane = make_pane(&zellij, session, &args, |panes| running(panes, &marker));
        (pane, id)
    };

    // A pane named by the hook in each session.
    let (named_pane, named_session) = agent(1, "one", None, "");
    let named = wait_until("the hook to record agent 1", || entry_of(&named_session));
    let (_, side_session) = agent(2, "two", None, "");
    let side = wait_until("the hook to record agent 2", || entry_of(&side_session));
    let name = named.rsplit(':').next().unwrap().to_string();
    assert!(mux::zellij::is_pane_name(&name), "{named}");
    assert!(named.starts_with("zellij:one:") && side.starts_with("zellij:two:"));

    // A pane without a name whose program sets its title to that name, then (once zellij
    // shows the title) fires its agent's hook.
    let gate = env.root().join("gate");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&gate)
            .status()
            .unwrap()
            .success()
    );
    let before = format!(
        "printf '\\033]0;%s\\007' {}; read line < {}; ",
        crate::harness::shell_word(&name),
        crate::harness::shell_word(&gate.to_string_lossy())
    );
    let (forger, forger_session) = agent(3, "one", Some(""), &before);
    wait_until("the forged title to show", || {
        titles(&zellij, "one")
            .contains(&(forger, name.clone()))
            .then_some(())
    });
    std::fs::write(&gate, "go\n").unwrap();
    let forged = wait_until("the hook to record agent 3", || entry_of(&forger_session));
    assert_ne!(forged, named, "the forger's agent has a surface of its own");
    assert_eq!(
        env.entry(&named).unwrap()["sessionId"],
        named_session.as_str(),
        "the named pane's entry is its own"
    );

    // A pane the user named keeps its name, which its surface carries.
    let (users_pane, users_session) = agent(4, "two", Some("editor"), "");
    let users = wait_until("the hook to record agent 4", || entry_of(&users_session));
    assert_eq!(users, "zellij:two:editor");
    assert!(
        titles(&zellij, "two").contains(&(users_pane, "editor".to_string())),
        "{:?}",
        titles(&zellij, "two")
    );

    // The named pane and the forger are gone (their agents killed, their sessions not
    // ended); an idle shell's title shows the name.
    for pane in [named_pane, forger] {
        zellij.action(
            "one",
            &["close-pane", "--pane-id", &format!("terminal_{pane}")],
        );
    }
    let shell = format!(
        "printf '\\033]0;%s\\007' {}; exec bash --norc --noprofile",
        crate::harness::shell_word(&name)
    );
    let idle = make_pane(
        &zellij,
        "one",
        &["--name", "", "--", "/bin/sh", "-c", &shell],
        |panes| running(panes, "--noprofile"),
    );
    wait_until("the idle shell to show the name", || {
        let panes = zellij.panes("one");
        panes
            .iter()
            .any(|pane| {
                pane["id"] == idle
                    && pane["title"] == name.as_str()
                    && pane["pane_command"]
                        .as_str()
                        .is_some_and(|command| command.starts_with("bash"))
            })
            .then_some(())
    });
    let titles_before = titles(&zellij, "one");

    let mut restore = crate::harness::agent_command(&env, BIN);
    zellij.confine(&mut restore);
    let output = restore
        .args(["--json", "restore", "--apply", "zellij"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let applied = |surface: &str| {
        document["surfaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|item| item["surface"] == surface)
            .map(|item| item["applied"].clone())
            .unwrap_or_else(|| panic!("{surface} not in {document:#}"))
    };
    assert_eq!(
        applied(&named),
        "created a pane and started in it",
        "{document:#}"
    );
    for busy in [&side, &users] {
        assert_eq!(
            applied(busy),
            "skipped: the pane is busy running sleep",
            "{document:#}"
        );
    }
    // The idle shell is untouched: the same pane, still a shell, its title the program's.
    let after = zellij.panes("one");
    let shell_after = after.iter().find(|pane| pane["id"] == idle);
    assert!(
        shell_after.is_some_and(|pane| pane["pane_command"]
            .as_str()
            .is_some_and(|command| command.starts_with("bash"))),
        "{after:#?}\nbefore: {titles_before:?}"
    );
    let runs = wait_until("the restored agents to start", || {
        let runs = crate::harness::claude_runs(&env);
        (runs.len() >= 2).then_some(runs)
    });
    assert!(
        runs.iter()
            .any(|run| run.contains(&format!("--resume {named_session}"))),
        "{runs:?}"
    );
    assert!(
        !runs
            .iter()
            .any(|run| run.contains(&format!("--resume {side_session}"))
                || run.contains(&format!("--resume {users_session}"))),
        "{runs:?}"
    );
    assert_eq!(runs.len(), 2, "{runs:?}");
}

/// `restore --apply zellij --once-per-boot` after a reboot, with no zellij running: the restore
/// creates the session in the background and opens a pane of each recorded name, where the
/// stand-in binds itself at once, late, never, or fails; each is said so, the failed one keeps
/// its recorded session, every pane died of the reboot, and a second run in the same boot
/// restores nothing.
#[test]
fn once_per_boot_in_zellij_creates_the_session_verifies_each_start_and_runs_once_per_boot() {
    let env = Sandbox::default();
    let zellij = Instance::new(
        test_support::zellij::executable(),
        &env.root().join("zellij"),
    );
    let bin = make_dir(&bin_dir(&env));
    std::os::unix::fs::symlink(test_support::zellij::executable(), bin.join("zellij")).unwrap();
    let sessions: Vec<String> = (1..=4).map(uuid).collect();
    let [bound, late, never, fail] = &sessions[..] else {
        unreachable!()
    };
    super::once_per_boot::install_wrapping_stand_in(&env, never, fail, late);
    let mut surfaces = std::collections::BTreeMap::new();
    for (n, session) in sessions.iter().enumerate() {
        let surface = format!("zellij:work:cr-{}-boot{n}", n + 1);
        let cwd = git_work_dir(&env, &format!("repo-{n}"), "");
        super::tmux::record_session(&env, &surface, session, &format!("repo-{n}"), &cwd);
        surfaces.insert(session.clone(), surface);
    }
    // Every session was recorded in an earlier boot.
    let mut index: Value = serde_json::from_slice(&env.index_bytes().unwrap()).unwrap();
    for entry in index["entries"].as_object_mut().unwrap().values_mut() {
        entry["boot_id"] = Value::from("boot-before");
    }
    env.write_index_bytes(&serde_json::to_vec(&index).unwrap());
    let once = || {
        let mut command = crash_resume_agent(&env);
        zellij.confine(&mut command);
        let output = command
            .env("CRASH_RESUME_BOOT_ID", "boot-after")
            .args([
                "--json",
                "restore",
                "--apply",
                "zellij",
                "--once-per-boot",
                "--start-timeout",
                "3s",
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (
            output.status.code(),
            crate::harness::plan_by_surface(&output.stdout),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, plan, said) = once();
    assert_eq!(code, Some(1), "one start failed: {plan:#?}\n{said}");
    let outcome = |session: &str| plan[&surfaces[session]]["outcome"].clone();
    assert_eq!(outcome(bound)["outcome"], "started", "{plan:#?}");
    assert_eq!(outcome(bound)["verified"]["kind"], "bound", "{plan:#?}");
    assert_eq!(outcome(late)["verified"]["kind"], "bound", "{plan:#?}");
    assert!(
        outcome(late)["verified"]["after_ms"].as_u64().unwrap() >= 1000,
        "the late one bound after its second: {plan:#?}"
    );
    assert_eq!(outcome(never)["outcome"], "started", "{plan:#?}");
    assert_eq!(
        outcome(never)["verified"]["kind"],
        "not_in_time",
        "{plan:#?}"
    );
    assert_eq!(outcome(fail)["outcome"], "failed", "{plan:#?}");
    assert_eq!(outcome(fail)["reason"], "agent_exited", "{plan:#?}");
    for surface in surfaces.values() {
        assert_eq!(plan[surface]["died"], "reboot", "{surface}");
    }
    assert!(
        outcome(bound)["created"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(outcome(late)["created"].as_array().into_iter().flatten())
            .any(|created| created["what"] == "session"),
        "the restore created the session: {plan:#?}"
    );
    assert_eq!(
        env.entry(&surfaces[fail]).unwrap()["sessionId"],
        fail.as_str(),
        "the failed start kept its session"
    );
    let (code, again, said) = once();
    assert_eq!(code, Some(0), "{said}");
    assert!(again.is_empty(), "{again:#?}");
    assert!(said.contains("already restored into"), "{said}");
}
