//! `crash-resume restore --apply zellij` against the real, pinned zellij (the `live-zellij`
//! feature; `CRASH_RESUME_ZELLIJ` names the executable, and the tests fail without it). The
//! story is `test_support::zellij::Story`'s, which `cargo xtask reboot-sim --mux zellij` plays
//! too: agents captured by the real hook in three panes of one session (which the hook names)
//! and one of another; a pane closed so that zellij renumbers the rest when it resurrects the
//! session; both servers killed with SIGKILL; the second session brought back by the user and
//! its agent's pane made busy; then `restore --apply zellij` resurrects the first session,
//! starts each agent as the process of its own named pane once, leaves the busy pane alone, and
//! a second restore starts nothing.
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
    make_dir, server_name, uuid, write_transcript,
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
