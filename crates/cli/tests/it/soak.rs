//! Soak: 8 workers, each driving the real binary one operation at a time, issue 1,000 mixed
//! operations (record, touch, forget, prune, the hook's SessionStart and SessionEnd) on
//! overlapping surfaces, and some are SIGKILLed at random moments. At the end the index equals a
//! model of the acknowledged operations. It mixes every writing command by design, so it stays
//! one file.
//!
//! How the model stays sound while the workers race:
//! - Each worker has surfaces of its own, written by no one else, so the order it acknowledged
//!   their operations is the order they applied; the whole entry (session, chain, repo, role,
//!   agent, dirs, clean-exit mark, and each time within the run of the operation that set it)
//!   is checked there. A killed operation may or may not have applied: the model keeps both
//!   possible states, and what later operations print (`touch` and `forget` exit 4 on a missing
//!   surface, `forget` names the session it dropped) rules out those that were not.
//! - Shared surfaces, written by every worker, are checked only for what holds whatever the
//!   order: each holds a session recorded on it, one that no acknowledged operation moved away
//!   and that no acknowledged record started after it finished replaced; it is missing only when
//!   nothing acknowledged was recorded there or a session of it was moved; no session is held by
//!   two surfaces. Workers move their own sessions from shared surfaces onto their own ones.
//! - `prune` uses a max age of 30 days, so it never drops anything here.
//!
//! The run is seeded (`CRASH_RESUME_TEST_SEED` replays one; every failure names its seed).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde_json::{Value, json};

use test_support::process::spawn_piped;

use crate::harness::wait_for_hook_retries;
use crate::{Sandbox, XorShift, crash_resume_std, now_millis, parse_index, record, seed};

const WORKERS: usize = 8;
const OPERATIONS: usize = 1000;
const _: () = assert!(
    OPERATIONS.is_multiple_of(WORKERS),
    "the workers share the operations evenly"
);
const OWN_SURFACES: usize = 3;
const SHARED_SURFACES: [&str; 3] = ["shared-0", "shared-1", "shared-2"];
/// One operation in this many is killed at a random moment.
const KILL_ONE_IN: u64 = 7;

/// A time as the model knows it: within the run of the operation that set it.
type Window = (u64, u64);

/// What an operation does to one possible state of a surface.
type Change = Box<dyn Fn(&Option<Expected>) -> Option<Expected>>;

/// What the model expects of one of a worker's own surfaces.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Expected {
    session: String,
    previous: Vec<String>,
    repo: String,
    role: Option<String>,
    provider: Option<String>,
    cwd: Option<String>,
    config_dir: Option<String>,
    captured: Window,
    last_active: Window,
    ended: Option<Window>,
}

/// What a record sets (`None` keeps the entry's value, as `index-core` does).
#[derive(Debug, Clone)]
struct Recording {
    session: String,
    repo: String,
    role: Option<String>,
    provider: Option<String>,
    cwd: Option<String>,
    config_dir: Option<String>,
}

fn apply_record(state: &Option<Expected>, record: &Recording, window: Window) -> Option<Expected> {
    Some(match state.clone() {
        None => Expected {
            session: record.session.clone(),
            previous: Vec::new(),
            repo: record.repo.clone(),
            role: record.role.clone(),
            provider: record.provider.clone(),
            cwd: record.cwd.clone(),
            config_dir: record.config_dir.clone(),
            captured: window,
            last_active: window,
            ended: None,
        },
        Some(mut entry) => {
            if entry.session != record.session {
                let old = std::mem::replace(&mut entry.session, record.session.clone());
                entry
                    .previous
                    .retain(|id| *id != record.session && *id != old);
                entry.previous.push(old);
                let excess = entry
                    .previous
                    .len()
                    .saturating_sub(index_core::MAX_PREVIOUS_SESSIONS);
                entry.previous.drain(..excess);
            }
            entry.repo = record.repo.clone();
            entry.role = record.role.clone().or(entry.role);
            entry.provider = record.provider.clone().or(entry.provider);
            entry.cwd = record.cwd.clone().or(entry.cwd);
            entry.config_dir = record.config_dir.clone().or(entry.config_dir);
            entry.last_active = window;
            entry.ended = None;
            entry
        }
    })
}

/// One operation of a worker.
#[derive(Debug, Clone)]
enum Op {
    /// `record` (or the hook's SessionStart, when `hook`) on one of the worker's surfaces.
    Record {
        surface: String,
        record: Recording,
        hook: bool,
    },
    Touch {
        surface: String,
    },
    Forget {
        surface: String,
    },
    Prune,
    /// The hook's SessionEnd, a clean exit, for `session`.
    End {
        surface: String,
        session: String,
    },
    /// `record` or the hook's SessionStart of a new session on a shared surface.
    Shared {
        surface: String,
        session: String,
        hook: bool,
    },
}

impl Op {
    /// Whether the operation runs the hook (which may hand its record to a background retry).
    fn is_hook(&self) -> bool {
        matches!(
            self,
            Op::Record { hook: true, .. } | Op::Shared { hook: true, .. } | Op::End { .. }
        )
    }
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Exit 0 (for a hook: exit 0, and `hook.log` holds no error, checked at the end).
    Done,
    /// Exit 4: nothing found.
    NotFound,
    /// SIGKILLed: it may or may not have applied.
    Killed,
}

/// A record on a shared surface, as the check needs it.
#[derive(Debug, Clone)]
struct SharedRecord {
    surface: String,
    session: String,
    started: Instant,
    ended: Instant,
    outcome: Outcome,
}

/// What a worker leaves for the final check.
#[derive(Debug, Default)]
struct Report {
    /// Its own surfaces, each with every state it may be in.
    own: BTreeMap<String, BTreeSet<Option<Expected>>>,
    shared: Vec<SharedRecord>,
    /// Sessions moved from a shared surface, and whether the move was acknowledged.
    moved: BTreeMap<String, Outcome>,
    operations: usize,
    killed: usize,
}

struct Worker<'a> {
    env: &'a Sandbox,
    id: usize,
    seed: u64,
    random: XorShift,
    span_micros: u64,
    next_session: usize,
    report: Report,
    /// Sessions this worker recorded on shared surfaces, not yet moved.
    movable: Vec<String>,
}

impl Worker<'_> {
    fn surface(&self, n: u64) -> String {
        format!("w{}-p{n}", self.id)
    }

    fn new_session(&mut self) -> String {
        self.next_session += 1;
        format!("w{}-s{}", self.id, self.next_session)
    }

    fn project(&self) -> String {
        let project = self
            .env
            .root()
            .join("work")
            .join(format!("proj-{}", self.id));
        std::fs::create_dir_all(project.join(".git")).unwrap();
        project.to_str().unwrap().to_string()
    }

    fn config_dir(&self) -> String {
        let dir = self.env.root().join(format!("claude-{}", self.id));
        dir.to_str().unwrap().to_string()
    }

    fn pick(&mut self, choices: usize) -> usize {
        self.random.below(choices as u64) as usize
    }

    fn next_op(&mut self) -> Op {
        let own = self.random.below(OWN_SURFACES as u64);
        let surface = self.surface(own);
        let roll = self.random.below(100);
        match roll {
            0..=21 => {
                let role = [None, Some("lead"), Some("worker")][self.pick(3)];
                let session = self.new_session();
                Op::Record {
                    surface,
                    record: Recording {
                        session,
                        repo: format!("REPO-{}", self.random.below(3)),
                        role: role.map(str::to_string),
                        provider: None,
                        cwd: None,
                        config_dir: None,
                    },
                    hook: false,
                }
            }
            22..=33 => {
                let session = self.new_session();
                Op::Record {
                    surface,
                    record: Recording {
                        session,
                        repo: format!("proj-{}", self.id),
                        role: None,
                        provider: Some("claude".into()),
                        cwd: Some(self.project()),
                        config_dir: Some(self.config_dir()),
                    },
                    hook: true,
                }
            }
            34..=45 => Op::Touch { surface },
            46..=53 => Op::Forget { surface },
            54..=59 => Op::Prune,
            60..=71 => {
                // Mostly the session the surface holds, sometimes one it held before.
                let states: Vec<Expected> = self.report.own[&surface]
                    .iter()
                    .flatten()
                    .cloned()
                    .collect();
                let session = match states.first() {
                    Some(state) if self.random.below(4) != 0 || state.previous.is_empty() => {
                        state.session.clone()
                    }
                    Some(state) => state.previous[self.pick(state.previous.len())].clone(),
                    None => self.new_session(),
                };
                Op::End { surface, session }
            }
            72..=87 => {
                let session = self.new_session();
                Op::Shared {
                    surface: SHARED_SURFACES[self.pick(SHARED_SURFACES.len())].to_string(),
                    session,
                    hook: self.random.below(3) == 0,
                }
            }
            _ => match self.movable.len() {
                0 => Op::Prune,
                count => {
                    let at = self.pick(count);
                    let session = self.movable.swap_remove(at);
                    Op::Record {
                        surface,
                        record: Recording {
                            session,
                            repo: "MOVED".into(),
                            role: None,
                            provider: None,
                            cwd: None,
                            config_dir: None,
                        },
                        hook: false,
                    }
                }
            },
        }
    }

    fn spawn(&self, op: &Op) -> Child {
        let mut command = crash_resume_std(self.env);
        command
            .env("CRASH_RESUME_LOCK_TIMEOUT", "60s")
            .env("CLAUDE_CONFIG_DIR", self.config_dir())
            .env_remove("CRASH_RESUME_ROLE");
        let mut payload = None;
        match op {
            Op::Record {
                surface,
                record,
                hook: false,
            } => {
                command.args(["record", surface, &record.session, &record.repo]);
                command.args(record.role.as_slice());
            }
            Op::Record {
                surface,
                record,
                hook: true,
            } => {
                command.env("CRASH_RESUME_SURFACE", surface);
                payload = Some(json!({
                    "session_id": record.session, "hook_event_name": "SessionStart",
                    "source": "startup", "cwd": record.cwd,
                }));
            }
            Op::Shared {
                surface,
                session,
                hook: false,
            } => {
                command.args(["record", surface, session, "SHARED"]);
            }
            Op::Shared {
                surface,
                session,
                hook: true,
            } => {
                command.env("CRASH_RESUME_SURFACE", surface);
                payload = Some(json!({
                    "session_id": session, "hook_event_name": "SessionStart",
                    "cwd": self.project(),
                }));
            }
            Op::Touch { surface } => {
                command.args(["touch", surface]);
            }
            Op::Forget { surface } => {
                command.args(["forget", surface]);
            }
            Op::Prune => {
                command.args(["prune", "30d"]);
            }
            Op::End { surface, session } => {
                command.env("CRASH_RESUME_SURFACE", surface);
                payload = Some(json!({
                    "session_id": session, "hook_event_name": "SessionEnd",
                    "reason": "prompt_input_exit",
                }));
            }
        }
        if payload.is_some() {
            command.args(["hook", "claude"]);
        }
        let (child, mut stdin) = spawn_piped(&mut command);
        if let Some(payload) = payload {
            // A writer killed before it reads its payload closes the pipe: that is fine.
            let _ = stdin.write_all(payload.to_string().as_bytes());
        }
        drop(stdin);
        child
    }

    fn run(mut self, operations: usize) -> Report {
        for surface in 0..OWN_SURFACES as u64 {
            let surface = self.surface(surface);
            self.report.own.insert(surface, BTreeSet::from([None]));
        }
        for n in 0..operations {
            let op = self.next_op();
            let kill_after = (self.random.below(KILL_ONE_IN) == 0)
                .then(|| Duration::from_micros(self.random.below(self.span_micros + 1)));
            let context = format!(
                "seed {}, worker {}, operation {n}: {op:?}",
                self.seed, self.id
            );
            let started_at = Instant::now();
            let started = now_millis();
            let mut child = self.spawn(&op);
            if let Some(kill_after) = kill_after {
                // The random moment of the kill, not a wait for anything.
                std::thread::sleep(kill_after);
                let _ = child.kill();
            }
            let output = child.wait_with_output().unwrap();
            if op.is_hook() {
                // A hook that missed the lock within its 2 s handed its record to a background
                // retry: the operation is over when that is.
                wait_for_hook_retries(self.env);
            }
            let window = (started, now_millis());
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            let outcome = match output.status.code() {
                Some(0) => Outcome::Done,
                Some(4) => Outcome::NotFound,
                None if output.status.signal() == Some(Signal::KILL.as_raw()) => {
                    assert!(kill_after.is_some(), "{context}: killed by someone else");
                    Outcome::Killed
                }
                _ => panic!("{context}: {}: {stdout} {stderr}", output.status),
            };
            assert!(
                outcome != Outcome::NotFound || matches!(op, Op::Touch { .. } | Op::Forget { .. }),
                "{context}: exit 4: {stderr}"
            );
            self.report.operations += 1;
            if outcome == Outcome::Killed {
                self.report.killed += 1;
            }
            self.apply(&op, outcome, window, started_at, &stdout, &context);
        }
        self.report
    }

    /// Updates the model with what an operation did (or may have done).
    fn apply(
        &mut self,
        op: &Op,
        outcome: Outcome,
        window: Window,
        started: Instant,
        stdout: &str,
        context: &str,
    ) {
        let is_hook = op.is_hook();
        if is_hook {
            assert!(
                outcome != Outcome::NotFound && (outcome == Outcome::Killed || stdout.is_empty()),
                "{context}: a hook exits 0 and prints nothing ({outcome:?}, {stdout:?})"
            );
        }
        let (surface, change): (&str, Change) = match op {
            Op::Record {
                surface, record, ..
            } => {
                if !is_hook && outcome == Outcome::Done {
                    assert_eq!(
                        stdout,
                        format!(
                            "recorded {surface} → {} ({})\n",
                            record.session, record.repo
                        ),
                        "{context}"
                    );
                }
                if record.repo == "MOVED" {
                    self.report.moved.insert(record.session.clone(), outcome);
                }
                let record = record.clone();
                (
                    surface,
                    Box::new(move |state| apply_record(state, &record, window)),
                )
            }
            Op::Touch { surface } => {
                self.filter(surface, outcome, |state| state.is_some(), context);
                if outcome == Outcome::Done {
                    assert_eq!(stdout, format!("touched {surface}\n"), "{context}");
                }
                (
                    surface,
                    Box::new(move |state| {
                        state.clone().map(|mut entry| {
                            entry.last_active = window;
                            entry
                        })
                    }),
                )
            }
            Op::Forget { surface } => {
                let printed = stdout.to_string();
                self.filter(
                    surface,
                    outcome,
                    |state| {
                        state.as_ref().is_some_and(|entry| {
                            printed.is_empty()
                                || printed
                                    == format!(
                                        "forgot {surface} → {} ({})\n",
                                        entry.session, entry.repo
                                    )
                        })
                    },
                    context,
                );
                (surface, Box::new(|_| None))
            }
            Op::End { surface, session } => {
                let session = session.clone();
                (
                    surface,
                    Box::new(move |state| {
                        state.clone().map(|mut entry| {
                            if entry.session == session {
                                entry.ended = Some(window);
                                entry.last_active = window;
                            }
                            entry
                        })
                    }),
                )
            }
            Op::Prune => {
                if outcome == Outcome::Done {
                    assert_eq!(stdout, "pruned 0 entries\n", "{context}");
                }
                return;
            }
            Op::Shared {
                surface, session, ..
            } => {
                assert!(outcome != Outcome::NotFound, "{context}");
                self.report.shared.push(SharedRecord {
                    surface: surface.clone(),
                    session: session.clone(),
                    started,
                    ended: Instant::now(),
                    outcome,
                });
                self.movable.push(session.clone());
                return;
            }
        };
        let states = self.report.own.get_mut(surface).unwrap();
        let applied: BTreeSet<Option<Expected>> = states.iter().map(&change).collect();
        match outcome {
            Outcome::Killed => states.extend(applied),
            Outcome::Done | Outcome::NotFound => *states = applied,
        }
        assert!(!states.is_empty(), "{context}");
    }

    /// Keeps only the states in which an operation on `surface` that ended with `outcome` ends
    /// that way: `found` says whether the surface's entry is there (and as printed).
    fn filter(
        &mut self,
        surface: &str,
        outcome: Outcome,
        found: impl Fn(&Option<Expected>) -> bool,
        context: &str,
    ) {
        let states = self.report.own.get_mut(surface).unwrap();
        let before = states.clone();
        match outcome {
            Outcome::Done => states.retain(|state| found(state)),
            Outcome::NotFound => states.retain(|state| state.is_none()),
            Outcome::Killed => {}
        }
        assert!(
            !states.is_empty(),
            "{context}: ended {outcome:?}, which no state the model allows explains: {before:#?}"
        );
    }
}

fn window_holds(window: Window, value: &Value) -> bool {
    value
        .as_u64()
        .is_some_and(|time| (window.0..=window.1).contains(&time))
}

/// Whether the stored entry is the expected one, field by field and nothing more.
fn entry_is(expected: &Expected, surface: &str, actual: &Value) -> bool {
    let Some(object) = actual.as_object() else {
        return false;
    };
    let text = |value: &Option<String>| value.as_ref().map_or(Value::Null, |text| json!(text));
    // Every record of the soak runs in the sandbox's boot.
    let mut fields = 7;
    let mut same = object.get("surfaceId") == Some(&json!(surface))
        && object.get("boot_id") == Some(&json!("sandbox-boot"))
        && object.get("sessionId") == Some(&json!(expected.session))
        && object.get("repo") == Some(&json!(expected.repo))
        && object.get("role") == Some(&text(&expected.role))
        && object
            .get("captured_at")
            .is_some_and(|time| window_holds(expected.captured, time))
        && object
            .get("last_active")
            .is_some_and(|time| window_holds(expected.last_active, time));
    for (name, value) in [
        ("provider", &expected.provider),
        ("cwd", &expected.cwd),
        ("config_dir", &expected.config_dir),
    ] {
        if value.is_some() {
            fields += 1;
            same &= object.get(name) == Some(&text(value));
        }
    }
    if !expected.previous.is_empty() {
        fields += 1;
        same &= object.get("previous_sessions") == Some(&json!(expected.previous));
    }
    if let Some(ended) = expected.ended {
        fields += 1;
        same &= object
            .get("ended_at")
            .is_some_and(|time| window_holds(ended, time));
    }
    same && object.len() == fields
}

#[test]
fn eight_workers_a_thousand_operations_random_kills_the_index_equals_the_model() {
    let seed = seed();
    let env = Sandbox::default();
    // Kills land anywhere from a writer's start to past its end: 0 to 10 ms, or to twice as
    // long as an undisturbed write takes on this machine if that is longer.
    let started = Instant::now();
    record(&env, "calibration", "sid-calibration", "REPO");
    let span_micros = Duration::from_millis(10)
        .max(2 * started.elapsed())
        .as_micros() as u64;

    let reports: Vec<Report> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|id| {
                let worker = Worker {
                    env: &env,
                    id,
                    seed,
                    random: XorShift::new(
                        seed ^ (id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    ),
                    span_micros,
                    next_session: 0,
                    report: Report::default(),
                    movable: Vec::new(),
                };
                let share = OPERATIONS / WORKERS;
                scope.spawn(move || worker.run(share))
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| panic!("seed {seed}: a worker failed (see above)"))
            })
            .collect()
    });
    assert_eq!(
        reports
            .iter()
            .map(|report| report.operations)
            .sum::<usize>(),
        OPERATIONS,
        "seed {seed}"
    );
    let killed: usize = reports.iter().map(|report| report.killed).sum();
    assert!(killed > 0, "seed {seed}: no operation was killed");

    // The next write cleans up what killed writers left.
    record(&env, "final", "sid-final", "REPO");
    let index = env.index();
    let entries = index["entries"].as_object().unwrap();
    assert!(
        env.index_dir_files()
            .iter()
            .all(|name| !name.ends_with(".tmp")),
        "seed {seed}: {:?}",
        env.index_dir_files()
    );
    parse_index(
        &std::fs::read(env.backup_path()).unwrap(),
        &env.backup_path(),
    );
    let log = std::fs::read_to_string(env.index_dir().join("hook.log")).unwrap_or_default();
    // Under load a hook may hand its record to a background retry (a warning, and the worker
    // waited for the retry); anything else logged is a hook that failed.
    let failed: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("error:") || line.contains("warning:"))
        .filter(|line| !line.contains("handed to a background retry"))
        .collect();
    assert!(
        failed.is_empty(),
        "seed {seed}: a hook that exited 0 failed: {failed:#?}"
    );

    // Each worker's own surfaces: the entry is one of the states the model allows.
    let mut checked = BTreeSet::from(["calibration".to_string(), "final".to_string()]);
    for report in &reports {
        for (surface, states) in &report.own {
            let actual = entries.get(surface);
            let allowed = states.iter().any(|state| match (state, actual) {
                (None, None) => true,
                (Some(expected), Some(actual)) => entry_is(expected, surface, actual),
                _ => false,
            });
            assert!(
                allowed,
                "seed {seed}: {surface} is {actual:#?}, which is none of the states the \
                 acknowledged operations allow: {states:#?}"
            );
            checked.insert(surface.clone());
        }
    }

    // The shared surfaces.
    let shared: Vec<&SharedRecord> = reports.iter().flat_map(|report| &report.shared).collect();
    let moved: BTreeMap<&String, Outcome> = reports
        .iter()
        .flat_map(|report| {
            report
                .moved
                .iter()
                .map(|(session, outcome)| (session, *outcome))
        })
        .collect();
    for surface in SHARED_SURFACES {
        let on_it: Vec<&&SharedRecord> = shared.iter().filter(|op| op.surface == surface).collect();
        let context = format!("seed {seed}: shared surface {surface}");
        match entries.get(surface) {
            Some(entry) => {
                let session = entry["sessionId"].as_str().unwrap();
                let Some(recorded) = on_it.iter().find(|op| op.session == session) else {
                    panic!("{context} holds {session}, never recorded there");
                };
                assert_ne!(
                    moved.get(&recorded.session),
                    Some(&Outcome::Done),
                    "{context} still holds {session}, moved away by an acknowledged record"
                );
                let replaced_by = on_it
                    .iter()
                    .find(|later| later.outcome == Outcome::Done && later.started > recorded.ended);
                assert!(
                    replaced_by.is_none(),
                    "{context} holds {session}, though {replaced_by:?} was acknowledged after"
                );
                checked.insert(surface.to_string());
            }
            None => {
                let acknowledged = on_it.iter().any(|op| op.outcome == Outcome::Done);
                let displaced = on_it.iter().any(|op| moved.contains_key(&op.session));
                assert!(
                    !acknowledged || displaced,
                    "{context} is missing, yet a record there was acknowledged and none of \
                     its sessions moved"
                );
            }
        }
    }
    let mut sessions = BTreeSet::new();
    for entry in entries.values() {
        let session = entry["sessionId"].as_str().unwrap();
        assert!(
            sessions.insert(session),
            "seed {seed}: {session} is held twice"
        );
    }
    let unexpected: Vec<&String> = entries
        .keys()
        .filter(|key| !checked.contains(*key))
        .collect();
    assert_eq!(unexpected, Vec::<&String>::new(), "seed {seed}");
}
