//! The apply protocol (`resume_plan::apply`) against a fake multiplexer (`test_support::fake_mux`):
//! claims, busy places, a failure's claim taken back, restores at once, a multiplexer that stops
//! answering, and what reaches the backend. No multiplexer runs.

use std::sync::{Arc, Barrier, Mutex};

use camino::Utf8PathBuf;
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};
use mux::Multiplexer;
use mux::pane::Busy;
use preflight::Verdict;
use resume_plan::PlanItem;
use resume_plan::apply::{ApplyOptions, Summary, apply, apply_with};
use resume_plan::outcome::{Applied, Failure, Skip};
use test_support::fake_mux::{FakeBackend, World};
use test_support::sandbox::Sandbox;

/// A sandboxed index holding one session per surface, and the plan that resumes each.
struct Setup {
    sandbox: Sandbox,
    surfaces: Vec<String>,
}

impl Setup {
    fn new(surfaces: &[&str]) -> Setup {
        let setup = Setup {
            sandbox: Sandbox::default(),
            surfaces: surfaces.iter().map(|surface| surface.to_string()).collect(),
        };
        let store = setup.store();
        store
            .update(|index| {
                for (n, surface) in surfaces.iter().enumerate() {
                    let record = Record::new(
                        SurfaceId::new(surface.to_string()).unwrap(),
                        SessionId::new(format!("session-{n}")).unwrap(),
                        Repo::new("repo".to_string()).unwrap(),
                    );
                    index.record(record, 1);
                }
            })
            .unwrap();
        setup
    }

    fn store(&self) -> Store {
        let path = Utf8PathBuf::from_path_buf(self.sandbox.index_path()).unwrap();
        Store::open(&path, StoreOptions::default()).unwrap()
    }

    fn plan(&self) -> Vec<PlanItem> {
        let dir = self.sandbox.root().to_string_lossy().into_owned();
        self.surfaces
            .iter()
            .enumerate()
            .map(|(n, surface)| PlanItem {
                surface: surface.clone(),
                repo: "repo".to_string(),
                agent: "claude".to_string(),
                held_session: format!("session-{n}"),
                ended_cleanly: false,
                verdict: Verdict::Resume,
                session_id: Some(format!("session-{n}")),
                recoverable_session_id: None,
                command: Some(format!("claude --resume session-{n}")),
                cwd: Some(if n == 0 {
                    dir.clone()
                } else {
                    format!("{dir}/gone")
                }),
                starts_in: None,
                held_elsewhere: None,
                refused: None,
                retention: None,
                cleanup: None,
                why: None,
                applied: None,
                outcome: None,
                last_activity: 0,
                window_layout: None,
                died: None,
                launch: None,
            })
            .collect()
    }

    fn claimed(&self, surface: &str) -> bool {
        let index = self.store().load().unwrap().index;
        index.lookup(surface).unwrap().restore_claimed_at.is_some()
    }
}

fn world() -> Arc<Mutex<World>> {
    Arc::new(Mutex::new(World::default()))
}

fn tmux(world: &Arc<Mutex<World>>) -> FakeBackend {
    FakeBackend::new(Multiplexer::Tmux, Arc::clone(world))
}

fn outcomes(plan: &[PlanItem]) -> Vec<Option<Applied>> {
    plan.iter().map(|item| item.outcome.clone()).collect()
}

const NOW: &dyn Fn() -> u64 = &|| 1_000;

#[test]
fn each_surface_is_claimed_started_once_with_its_surface_in_the_environment() {
    let setup = Setup::new(&["tmux:w:0.0", "tmux:w:0.1"]);
    let world = world();
    world
        .lock()
        .unwrap()
        .places
        .insert("tmux:w:0.0".into(), None);
    let mut plan = setup.plan();
    let summary = apply(&setup.store(), &tmux(&world), &mut plan, NOW).unwrap();
    assert_eq!(summary, Summary::default());
    assert_eq!(
        outcomes(&plan),
        [
            Some(Applied::Started {
                created: vec![],
                claim_not_durable: None,
                verified: None,
            }),
            Some(Applied::Started {
                created: vec![mux::Created::Panes { count: 1 }],
                claim_not_durable: None,
                verified: None,
            }),
        ]
    );
    assert_eq!(
        plan[0].applied.as_deref(),
        Some("started in the existing pane")
    );
    assert_eq!(
        plan[1].applied.as_deref(),
        Some("created the pane and started in it")
    );
    let started = world.lock().unwrap().started.clone();
    assert_eq!(started.len(), 2);
    for (start, item) in started.iter().zip(&plan) {
        assert_eq!(start.surface, item.surface);
        assert_eq!(start.command, item.command.clone().unwrap());
        assert_eq!(
            start.env,
            [("CRASH_RESUME_SURFACE".to_string(), item.surface.clone())]
        );
        assert!(setup.claimed(&item.surface));
    }
    // The dir is passed only when it exists.
    assert_eq!(started[0].dir, plan[0].cwd);
    assert_eq!(started[1].dir, None);

    // A second restore, with the places idle again (the agents not started yet), finds the
    // claims and starts nothing.
    world.lock().unwrap().places.clear();
    let mut again = setup.plan();
    apply(&setup.store(), &tmux(&world), &mut again, NOW).unwrap();
    for item in &again {
        assert_eq!(
            item.outcome,
            Some(Applied::Skipped {
                reason: Skip::Claimed,
                claim_not_durable: None
            })
        );
        assert_eq!(
            item.applied.as_deref(),
            Some("skipped: another restore claimed it")
        );
    }
    assert_eq!(world.lock().unwrap().started.len(), 2);
}

#[test]
fn a_busy_place_is_skipped_and_not_claimed() {
    let setup = Setup::new(&["tmux:w:0.0", "tmux:w:0.1"]);
    let world = world();
    world
        .lock()
        .unwrap()
        .places
        .insert("tmux:w:0.0".into(), Some(Busy::Program("sleep".into())));
    world
        .lock()
        .unwrap()
        .turning_busy
        .insert("tmux:w:0.1".into());
    let mut plan = setup.plan();
    let summary = apply(&setup.store(), &tmux(&world), &mut plan, NOW).unwrap();
    assert_eq!(summary.failed, 0);
    assert_eq!(
        plan[0].applied.as_deref(),
        Some("skipped: the pane is busy running sleep")
    );
    // Busy at the check: never claimed. Busy by the open: its claim taken back.
    for item in &plan {
        assert!(matches!(
            item.outcome,
            Some(Applied::Skipped {
                reason: Skip::Busy { .. },
                ..
            })
        ));
        assert!(!setup.claimed(&item.surface), "{}", item.surface);
    }
    assert!(world.lock().unwrap().started.is_empty());
}

#[test]
fn a_failed_open_fails_the_restore_and_gives_the_claim_back() {
    let setup = Setup::new(&["tmux:w:0.0", "tmux:w:0.1"]);
    let world = world();
    world.lock().unwrap().failing.insert("tmux:w:0.0".into());
    let mut plan = setup.plan();
    let summary = apply(&setup.store(), &tmux(&world), &mut plan, NOW).unwrap();
    assert_eq!(summary.failed, 1);
    assert_eq!(
        plan[0].outcome,
        Some(Applied::Failed {
            reason: Failure::Multiplexer,
            message: "the fake cannot make tmux:w:0.0".into(),
            claim_not_durable: None
        })
    );
    assert_eq!(
        plan[0].applied.as_deref(),
        Some("failed: the fake cannot make tmux:w:0.0")
    );
    assert!(!setup.claimed("tmux:w:0.0"));
    assert!(setup.claimed("tmux:w:0.1"));
    // The next restore tries it again.
    world.lock().unwrap().failing.clear();
    world.lock().unwrap().places.clear();
    let mut again = setup.plan();
    apply(&setup.store(), &tmux(&world), &mut again, NOW).unwrap();
    assert!(again[0].outcome.as_ref().is_some_and(Applied::is_started));
}

#[test]
fn once_the_multiplexer_stops_answering_nothing_more_is_tried_or_claimed() {
    let setup = Setup::new(&["tmux:w:0.0", "tmux:w:0.1", "tmux:w:0.2"]);
    let world = world();
    // The first surface's busy check and open are answered; the second's busy check is not.
    world.lock().unwrap().answers_left = Some(2);
    let mut plan = setup.plan();
    let summary = apply(&setup.store(), &tmux(&world), &mut plan, NOW).unwrap();
    assert!(plan[0].outcome.as_ref().is_some_and(Applied::is_started));
    assert_eq!(
        plan[1].outcome,
        Some(Applied::Failed {
            reason: Failure::Unanswered,
            message: "fake did not answer within 5s".into(),
            claim_not_durable: None
        })
    );
    assert_eq!(
        plan[2].outcome,
        Some(Applied::NotTried {
            unanswered: "fake did not answer within 5s".into()
        })
    );
    assert_eq!(
        plan[2].applied.as_deref(),
        Some("not tried: fake did not answer within 5s")
    );
    assert_eq!(
        summary,
        Summary {
            failed: 1,
            not_tried: 1,
            unanswered: Some("fake did not answer within 5s".into()),
            ..Summary::default()
        }
    );
    assert!(!setup.claimed("tmux:w:0.1"));
    assert!(!setup.claimed("tmux:w:0.2"));
}

#[test]
fn restores_at_once_start_every_surface_exactly_once() {
    let surfaces: Vec<String> = (0..6).map(|n| format!("tmux:w:0.{n}")).collect();
    let names: Vec<&str> = surfaces.iter().map(String::as_str).collect();
    let setup = Setup::new(&names);
    let world = world();
    let barrier = Barrier::new(3);
    let plans: Vec<Vec<PlanItem>> = std::thread::scope(|scope| {
        let restores: Vec<_> = (0..3)
            .map(|_| {
                let backend = tmux(&world);
                let (setup, barrier) = (&setup, &barrier);
                scope.spawn(move || {
                    let mut plan = setup.plan();
                    barrier.wait();
                    apply(&setup.store(), &backend, &mut plan, NOW).unwrap();
                    plan
                })
            })
            .collect();
        restores
            .into_iter()
            .map(|restore| restore.join().unwrap())
            .collect()
    });
    let mut started: Vec<String> = world
        .lock()
        .unwrap()
        .started
        .iter()
        .map(|start| start.surface.clone())
        .collect();
    started.sort();
    assert_eq!(started, surfaces, "each surface started exactly once");
    let starts = plans
        .iter()
        .flatten()
        .filter(|item| item.outcome.as_ref().is_some_and(Applied::is_started))
        .count();
    assert_eq!(starts, surfaces.len());
}

#[test]
fn other_surfaces_are_skipped_and_a_miswritten_one_fails() {
    let setup = Setup::new(&["kitty:3", "tmux:w:00.1", "wezterm:4"]);
    let world = world();
    let mut plan = setup.plan();
    let summary = apply(
        &setup.store(),
        &FakeBackend::new(Multiplexer::Wezterm, Arc::clone(&world)),
        &mut plan,
        NOW,
    )
    .unwrap();
    assert_eq!(summary.failed, 1);
    assert_eq!(
        plan[0].outcome,
        Some(Applied::Skipped {
            reason: Skip::OtherMultiplexer {
                applied_to: Multiplexer::Wezterm
            },
            claim_not_durable: None
        })
    );
    assert_eq!(
        plan[0].applied.as_deref(),
        Some("skipped: not a wezterm surface")
    );
    assert!(matches!(
        plan[1].outcome,
        Some(Applied::Failed {
            reason: Failure::NotCanonical,
            ..
        })
    ));
    assert!(plan[2].outcome.as_ref().is_some_and(Applied::is_started));
}

#[test]
fn the_outcome_round_trips_through_json() {
    for applied in [
        Applied::Started {
            created: vec![mux::Created::Session, mux::Created::Panes { count: 2 }],
            claim_not_durable: None,
            verified: None,
        },
        Applied::Started {
            created: vec![],
            claim_not_durable: None,
            verified: Some(resume_plan::outcome::Verified::Bound { after_ms: 1200 }),
        },
        Applied::Stopped {
            failures_in_a_row: 3,
        },
        Applied::Skipped {
            reason: Skip::Busy {
                busy: Busy::Typed("$ rm".into()),
            },
            claim_not_durable: Some("not synced".into()),
        },
        Applied::Failed {
            reason: Failure::Claim,
            message: "cannot claim it".into(),
            claim_not_durable: None,
        },
        Applied::Shell {
            created: vec![mux::Created::Window],
        },
        Applied::StartsHere {
            claim_not_durable: None,
        },
    ] {
        let json = serde_json::to_value(&applied).unwrap();
        assert_eq!(serde_json::from_value::<Applied>(json).unwrap(), applied);
    }
    assert_eq!(
        serde_json::to_value(Applied::Skipped {
            reason: Skip::Busy {
                busy: Busy::Program("vim".into())
            },
            claim_not_durable: None
        })
        .unwrap(),
        serde_json::json!({"outcome": "skipped", "reason": {"kind": "busy", "busy": {"kind": "program", "detail": "vim"}}})
    );
    assert_eq!(
        serde_json::to_value(Applied::StartsHere {
            claim_not_durable: None
        })
        .unwrap(),
        serde_json::json!({"outcome": "starts_here"})
    );
}

#[test]
fn the_surface_the_restore_runs_in_is_claimed_last_for_the_caller_to_start() {
    // The restore's own shell runs it, so the pane is busy with it.
    let setup_world = || {
        let setup = Setup::new(&["tmux:w:0.0", "tmux:w:0.1"]);
        let world = world();
        {
            let mut world = world.lock().unwrap();
            world.places.insert(
                "tmux:w:0.0".into(),
                Some(Busy::Program("crash-resume".into())),
            );
            world.caller = Some("tmux:w:0.0".into());
        }
        (setup, world)
    };
    // A caller that cannot start it (not on a terminal) leaves it busy, unclaimed.
    let (setup, world) = setup_world();
    let mut plan = setup.plan();
    let summary = apply(&setup.store(), &tmux(&world), &mut plan, NOW).unwrap();
    assert_eq!(summary.starts_here, None);
    assert!(matches!(
        plan[0].outcome,
        Some(Applied::Skipped {
            reason: Skip::Busy { .. },
            ..
        })
    ));
    assert!(!setup.claimed("tmux:w:0.0"));

    let (setup, world) = setup_world();
    let mut plan = setup.plan();
    let options = ApplyOptions {
        start_here: true,
        ..ApplyOptions::default()
    };
    let summary = apply_with(&setup.store(), &tmux(&world), &mut plan, NOW, options).unwrap();
    assert_eq!(summary.starts_here, Some(0));
    assert_eq!(
        plan[0].outcome,
        Some(Applied::StartsHere {
            claim_not_durable: None
        })
    );
    assert!(setup.claimed("tmux:w:0.0"));
    // The backend started only the other one; the caller starts its own.
    let started: Vec<String> = world
        .lock()
        .unwrap()
        .started
        .iter()
        .map(|start| start.surface.clone())
        .collect();
    assert_eq!(started, ["tmux:w:0.1"]);
    let script = resume_plan::apply::here_script(&plan[0], "tmux:w:0.0").unwrap();
    assert!(
        script.starts_with("set -m; cd -- ")
            && script.ends_with(
                "CRASH_RESUME_SURFACE=tmux:w:0.0; export CRASH_RESUME_SURFACE; claude --resume session-0"
            ),
        "{script}"
    );

    // A second restore from the same pane finds it claimed.
    let mut plan = setup.plan();
    let summary = apply_with(&setup.store(), &tmux(&world), &mut plan, NOW, options).unwrap();
    assert_eq!(summary.starts_here, None);
    assert_eq!(
        plan[0].applied.as_deref(),
        Some("skipped: another restore claimed it")
    );
}

#[test]
fn a_surface_with_nothing_to_resume_gets_a_shell_where_its_place_is_missing() {
    let setup = Setup::new(&["tmux:w:0.0", "tmux:w:0.1"]);
    let world = world();
    world
        .lock()
        .unwrap()
        .places
        .insert("tmux:w:0.0".into(), None);
    let mut plan = setup.plan();
    for item in &mut plan {
        item.command = None;
        item.cwd = Some(setup.sandbox.root().to_string_lossy().into_owned());
    }
    let summary = apply(&setup.store(), &tmux(&world), &mut plan, NOW).unwrap();
    assert_eq!(summary, Summary::default());
    // The existing place is left alone; the missing one is made, in the recorded dir.
    assert_eq!(plan[0].outcome, None);
    assert_eq!(
        plan[1].outcome,
        Some(Applied::Shell {
            created: vec![mux::Created::Panes { count: 1 }]
        })
    );
    assert_eq!(
        world.lock().unwrap().shells,
        [(
            "tmux:w:0.1".to_string(),
            Some(setup.sandbox.root().to_string_lossy().into_owned())
        )]
    );
    assert!(world.lock().unwrap().started.is_empty());
    assert!(!setup.claimed("tmux:w:0.1"));
}

/// Whether a claim left in the index keeps the next restore away: while the restore that made
/// it runs (its pid and start time), and once it is gone only when it started the agent less
/// than `CLAIM_TTL_MS` ago and the agent has not recorded itself since; a claim that names no
/// restore holds `CLAIM_TTL_MS`.
#[test]
fn a_left_claim_holds_by_its_restore_and_its_agent() {
    use resume_plan::apply::CLAIM_TTL_MS;
    let me = std::process::id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let my_start = proc_table::table()
        .started(me, deadline)
        .expect("this process's start time")
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    // Linux never hands out a pid above this (`PID_MAX_LIMIT`).
    let gone = (1 << 22) + 1;
    let claimant = |pid: u32, started: u64, opened: bool| {
        Some(index_core::Claimant {
            pid,
            started,
            opened,
        })
    };
    let claimed_at = 10_000;
    let recent = claimed_at + 1_000;
    let old = claimed_at + CLAIM_TTL_MS;
    // (what, the claimant, the agent recorded since, when the next restore runs, it holds)
    let cases: &[(&str, Option<index_core::Claimant>, bool, u64, bool)] = &[
        (
            "its restore runs",
            claimant(me, my_start, false),
            false,
            old,
            true,
        ),
        (
            "its pid is another process's",
            claimant(me, my_start - 60_000, false),
            false,
            recent,
            false,
        ),
        (
            "its restore was killed before it started",
            claimant(gone, 1, false),
            false,
            recent,
            false,
        ),
        (
            "started, the agent not seen yet",
            claimant(gone, 1, true),
            false,
            recent,
            true,
        ),
        (
            "started, the agent recorded",
            claimant(gone, 1, true),
            true,
            recent,
            false,
        ),
        (
            "started long ago",
            claimant(gone, 1, true),
            false,
            old,
            false,
        ),
        ("an earlier version's", None, false, recent, true),
        ("an earlier version's, long ago", None, false, old, false),
    ];
    for (what, by, recorded, now, holds) in cases {
        let setup = Setup::new(&["tmux:w:0.0"]);
        let store = setup.store();
        store
            .update(|index| {
                assert!(
                    index.claim_restore_by("tmux:w:0.0", "session-0", *by, claimed_at, |_| false)
                );
                if *recorded {
                    let record = Record::new(
                        SurfaceId::new("tmux:w:0.0".to_string()).unwrap(),
                        SessionId::new("session-0".to_string()).unwrap(),
                        Repo::new("repo".to_string()).unwrap(),
                    );
                    index.record(record, claimed_at + 500);
                }
            })
            .unwrap();
        let world = world();
        let mut plan = setup.plan();
        apply(&store, &tmux(&world), &mut plan, &|| *now).unwrap();
        let expected = match holds {
            true => Some(Applied::Skipped {
                reason: Skip::Claimed,
                claim_not_durable: None,
            }),
            false => plan[0].outcome.clone().filter(Applied::is_started),
        };
        assert_eq!(plan[0].outcome, expected, "{what}");
        assert!(plan[0].outcome.is_some(), "{what}");
    }
}
