//! Every operation that writes the index (record, touch, forget, prune, the hook's SessionStart
//! and SessionEnd, restore's claim), aborted and failed at each named point of the write path.
//!
//! - Aborted (as a `kill -9` there would leave it): the index parses and holds, whole, the state
//!   before the operation (at every point before the rename) or after it (at `renamed`), with
//!   every record acknowledged before; the next operation succeeds and leaves no temp file.
//! - Failed (as a full disk or an I/O error would): exit 1 with a message naming the path; before
//!   the rename the index is byte for byte as it was and no temp file is left; after it the
//!   message says the new index is in place but may not be durable, and it holds the new state.
//!   A hook still exits 0 and logs it; restore reports it in its plan and goes on.
//!
//! `record::crashes` covers the random kills and a few cases of `record`; this covers the whole
//! matrix of operations and points. It is one table across every writing command (they share the
//! write path, so the points are the same for each) and stays one file; `hook install`'s own
//! points are `install`'s.

use std::fs;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::Output;

use rustix::process::Signal;
use serde_json::{Map, Value, json};
use test_support::process::spawn_piped;

use crate::{DAY, Sandbox, crash_resume, crash_resume_std, entry, now_millis, parse_index, record};

/// The named points of a full write, in order (index-store's `faults::Point::FULL`).
pub const POINTS: [&str; 5] = [
    "locked",
    "temp-written",
    "temp-synced",
    "backup-written",
    "renamed",
];

/// The named points of a scoped write (`record` and the hook over an index of ours, which
/// journal the change beside the backup), in order (index-store's `faults::Point::SCOPED`).
pub const SCOPED_POINTS: [&str; 6] = [
    "locked",
    "temp-written",
    "temp-synced",
    "journal-written",
    "renamed",
    "journal-renamed",
];

/// Whether the new index is in place at `point`.
fn renamed_at(point: &str) -> bool {
    matches!(point, "renamed" | "journal-renamed")
}

/// Stands, in an expected state, for the time the operation ran at: one value, within the
/// operation's run.
const NOW: &str = "$now";

/// Stands, in an expected state, for any value (a pid, a process's start time).
const ANY: &str = "$any";

/// The tmux surface restore re-opens (and so claims) in these tests.
const TMUX_SURFACE: &str = "tmux:crash-points:0.0";

/// The operations that write the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    Record,
    Touch,
    Forget,
    Prune,
    HookStart,
    HookEnd,
    RestoreClaim,
}

impl Operation {
    const ALL: [Operation; 7] = [
        Operation::Record,
        Operation::Touch,
        Operation::Forget,
        Operation::Prune,
        Operation::HookStart,
        Operation::HookEnd,
        Operation::RestoreClaim,
    ];

    fn is_hook(self) -> bool {
        matches!(self, Operation::HookStart | Operation::HookEnd)
    }

    /// The points its write reaches: a scoped write's for `record` and the hook, a full
    /// write's for the others.
    fn points(self) -> &'static [&'static str] {
        match self {
            Operation::Record | Operation::HookStart | Operation::HookEnd => &SCOPED_POINTS,
            _ => &POINTS,
        }
    }

    /// The command, and what it reads on stdin.
    fn command(self, env: &Sandbox) -> (std::process::Command, Option<String>) {
        let mut command = crash_resume_std(env);
        command.env_remove("CRASH_RESUME_ROLE");
        let mut stdin = None;
        match self {
            Operation::Record => {
                command.args([
                    "record",
                    "N",
                    "sid-n",
                    "REPO",
                    "lead",
                    "--provider",
                    "codex",
                ]);
            }
            Operation::Touch => {
                command.args(["touch", "stale-1"]);
            }
            Operation::Forget => {
                command.args(["forget", "A"]);
            }
            Operation::Prune => {
                command.args(["prune", "1d"]);
            }
            Operation::HookStart | Operation::HookEnd => {
                command
                    .args(["hook", "claude"])
                    .env("CRASH_RESUME_SURFACE", "H")
                    .env("CLAUDE_CONFIG_DIR", claude_config(env));
                stdin = Some(
                    if self == Operation::HookStart {
                        json!({
                            "session_id": "sid-h2",
                            "hook_event_name": "SessionStart",
                            "source": "startup",
                            "cwd": project(env),
                        })
                    } else {
                        json!({
                            "session_id": "sid-h1",
                            "hook_event_name": "SessionEnd",
                            "reason": "prompt_input_exit",
                        })
                    }
                    .to_string(),
                );
            }
            Operation::RestoreClaim => {
                // No tmux on the PATH: the claim is written, then re-opening the pane fails
                // (which shows whether restore went on after the claim). The surface, recorded
                // without its server, is the default server's: the sandbox's.
                let no_bin = env.root().join("no-bin");
                fs::create_dir_all(&no_bin).unwrap();
                command
                    .args(["restore", "--apply", "tmux", "--tmux-socket", "default"])
                    .env("TMUX_TMPDIR", env.root().join("run"))
                    .env("PATH", no_bin);
            }
        }
        (command, stdin)
    }

    /// The entries once the operation went through, from the entries before it.
    fn after(self, env: &Sandbox, before: &Map<String, Value>) -> Map<String, Value> {
        let mut after = before.clone();
        match self {
            Operation::Record => {
                let mut new = entry("N", "sid-n", "REPO", 0, 0);
                new["role"] = json!("lead");
                new["captured_at"] = json!(NOW);
                new["last_active"] = json!(NOW);
                new["provider"] = json!("codex");
                new["boot_id"] = json!("sandbox-boot");
                after.insert("N".into(), new);
            }
            Operation::Touch => after["stale-1"]["last_active"] = json!(NOW),
            Operation::Forget => {
                after.remove("A");
            }
            Operation::Prune => {
                after.remove("stale-1");
                after.remove("stale-2");
            }
            Operation::HookStart => {
                let held = &mut after["H"];
                held["sessionId"] = json!("sid-h2");
                held["repo"] = json!("proj");
                held["last_active"] = json!(NOW);
                held["provider"] = json!("claude");
                held["cwd"] = json!(project(env));
                held["config_dir"] = json!(claude_config(env));
                held["previous_sessions"] = json!(["sid-h1"]);
                held["boot_id"] = json!("sandbox-boot");
            }
            Operation::HookEnd => {
                after["H"]["last_active"] = json!(NOW);
                after["H"]["ended_at"] = json!(NOW);
            }
            Operation::RestoreClaim => {
                after[TMUX_SURFACE]["restore_claimed_at"] = json!(NOW);
                // The restore that claimed it: its pid and start time, not yet started.
                after[TMUX_SURFACE]["restore_claimed_by"] =
                    json!({"pid": ANY, "started": ANY, "opened": false});
            }
        }
        after
    }
}

fn claude_config(env: &Sandbox) -> String {
    env.root()
        .join("claude-config")
        .to_str()
        .unwrap()
        .to_string()
}

/// The hook's working dir: a git checkout named `proj` (so the repo name does not depend on the
/// checkout the tests run in).
fn project(env: &Sandbox) -> String {
    let project = env.root().join("work").join("proj");
    fs::create_dir_all(project.join(".git")).unwrap();
    project.to_str().unwrap().to_string()
}

/// A sandbox whose index holds two entries last active 10 days ago (written by the JavaScript
/// tool) and four acknowledged records.
fn set_up() -> Sandbox {
    let env = Sandbox::default();
    let long_ago = now_millis() - 10 * DAY;
    env.write_index(&[
        entry("stale-1", "sid-stale-1", "OLD", long_ago, long_ago),
        entry("stale-2", "sid-stale-2", "OLD", long_ago, long_ago),
    ]);
    record(&env, "A", "sid-a", "REPO");
    record(&env, "B", "sid-b", "REPO");
    record(&env, "H", "sid-h1", "REPO");
    crash_resume(&env)
        .args([
            "record",
            TMUX_SURFACE,
            "sid-t",
            "REPO",
            "--provider",
            "gemini",
        ])
        .assert()
        .success();
    env
}

/// Runs the operation with `CRASH_RESUME_FAULT=<point>:<action>`; returns its output and the
/// time window it ran in.
fn run(env: &Sandbox, operation: Operation, fault: Option<&str>) -> (Output, (u64, u64)) {
    let (mut command, stdin) = operation.command(env);
    if let Some(fault) = fault {
        command.env("CRASH_RESUME_FAULT", fault);
    }
    let started = now_millis();
    let (child, mut input) = spawn_piped(&mut command);
    if let Some(stdin) = stdin {
        input.write_all(stdin.as_bytes()).unwrap();
    }
    drop(input);
    let output = child.wait_with_output().unwrap();
    (output, (started, now_millis()))
}

/// Whether `actual` is `expected`, where [`NOW`] in `expected` stands for one time within
/// `window` (the same everywhere it appears).
pub fn matches(expected: &Value, actual: &Value, window: (u64, u64)) -> bool {
    fn walk(expected: &Value, actual: &Value, window: (u64, u64), now: &mut Option<u64>) -> bool {
        match (expected, actual) {
            (Value::String(placeholder), _) if placeholder == ANY => true,
            (Value::String(placeholder), Value::Number(time)) if placeholder == NOW => {
                let Some(time) = time.as_u64() else {
                    return false;
                };
                let same = now.is_none_or(|now| now == time);
                *now = Some(time);
                same && (window.0..=window.1).contains(&time)
            }
            (Value::Object(expected), Value::Object(actual)) => {
                expected.len() == actual.len()
                    && expected.iter().all(|(key, value)| {
                        actual
                            .get(key)
                            .is_some_and(|actual| walk(value, actual, window, now))
                    })
            }
            (Value::Array(expected), Value::Array(actual)) => {
                expected.len() == actual.len()
                    && expected
                        .iter()
                        .zip(actual)
                        .all(|(expected, actual)| walk(expected, actual, window, now))
            }
            _ => expected == actual,
        }
    }
    walk(expected, actual, window, &mut None)
}

/// The files a crashed or failed write may have left: its temp file and the backup's staging
/// name.
fn leftovers(env: &Sandbox) -> Vec<String> {
    env.index_dir_files()
        .into_iter()
        .filter(|name| name.ends_with(".tmp"))
        .collect()
}

fn show(output: &Output) -> String {
    format!(
        "{}; stdout {:?}; stderr {:?}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The next operation succeeds on whatever the crash or failure left, keeps it whole, and
/// cleans up.
fn check_next_write(env: &Sandbox, state: &Map<String, Value>, context: &str) {
    let started = now_millis();
    record(env, "next", "sid-next", "REPO");
    let window = (started, now_millis());
    let mut expected = state.clone();
    let mut next = entry("next", "sid-next", "REPO", 0, 0);
    next["captured_at"] = json!(NOW);
    next["last_active"] = json!(NOW);
    next["boot_id"] = json!("sandbox-boot");
    expected.insert("next".into(), next);
    assert!(
        matches(
            &Value::Object(expected),
            &Value::Object(env.entries()),
            window
        ),
        "{context}: the next write: {:#?}",
        env.entries()
    );
    assert_eq!(leftovers(env), Vec::<String>::new(), "{context}");
    parse_index(&fs::read(env.backup_path()).unwrap(), &env.backup_path());
}

#[test]
fn every_writing_operation_aborted_at_every_point_leaves_a_whole_generation() {
    for operation in Operation::ALL {
        for &point in operation.points() {
            let context = format!("{operation:?} aborted at {point}");
            let env = set_up();
            let before = env.entries();
            let (output, window) = run(&env, operation, Some(&format!("{point}:abort")));
            assert_eq!(
                output.status.signal(),
                Some(Signal::ABORT.as_raw()),
                "{context}: {}",
                show(&output)
            );
            let state = env.entries();
            let expected = if renamed_at(point) {
                operation.after(&env, &before)
            } else {
                before.clone()
            };
            assert!(
                matches(
                    &Value::Object(expected.clone()),
                    &Value::Object(state.clone()),
                    window
                ),
                "{context}: expected {expected:#?}, found {state:#?}"
            );
            for acknowledged in ["A", "B", "H", TMUX_SURFACE, "stale-1", "stale-2"] {
                let removed =
                    renamed_at(point) && !operation.after(&env, &before).contains_key(acknowledged);
                assert_eq!(
                    state.contains_key(acknowledged),
                    !removed,
                    "{context}: {acknowledged}"
                );
            }
            parse_index(&fs::read(env.backup_path()).unwrap(), &env.backup_path());
            check_next_write(&env, &state, &context);
        }
    }
}

/// As the JavaScript tool's write in place leaves the index when it dies mid-write: nothing of
/// it whole.
fn tear_in_place(env: &Sandbox) {
    fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(env.index_path())
        .unwrap()
        .write_all(b"{\"version\": 1, \"entries\": {\"A")
        .unwrap();
}

#[test]
fn an_index_torn_from_outside_after_a_writer_aborted_at_any_point_loses_nothing_acknowledged() {
    for operation in Operation::ALL {
        for &point in operation.points() {
            let context = format!("{operation:?} aborted at {point}, then the index torn");
            let env = set_up();
            let before = env.entries();
            let (output, window) = run(&env, operation, Some(&format!("{point}:abort")));
            assert_eq!(
                output.status.signal(),
                Some(Signal::ABORT.as_raw()),
                "{context}: {}",
                show(&output)
            );
            tear_in_place(&env);
            // The next write repairs the index from the backup (and its journal): the state
            // before the operation or after it, and its own record.
            record(&env, "next", "sid-next", "REPO");
            let mut recovered = env.entries();
            assert!(recovered.remove("next").is_some(), "{context}");
            let old = matches(
                &Value::Object(before.clone()),
                &Value::Object(recovered.clone()),
                window,
            );
            let new = matches(
                &Value::Object(operation.after(&env, &before)),
                &Value::Object(recovered.clone()),
                window,
            );
            assert!(
                old || new,
                "{context}: recovered neither generation: {recovered:#?}"
            );
            assert_eq!(leftovers(&env), Vec::<String>::new(), "{context}");
        }
    }
}

#[test]
fn every_writing_operation_failing_at_every_point_says_so_and_keeps_the_index() {
    for operation in Operation::ALL {
        for &point in operation.points() {
            let context = format!("{operation:?} failing at {point}");
            let env = set_up();
            let before = env.entries();
            let bytes_before = env.index_bytes().unwrap();
            let (output, window) = run(&env, operation, Some(&format!("{point}:fail")));
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            let index_dir = env.index_dir();
            let index_dir = index_dir.to_str().unwrap();
            let renamed = renamed_at(point);
            let injected = format!("injected fault at {point}");
            // What the user (or, for a hook, the log) is told.
            let told = match operation {
                _ if operation.is_hook() => {
                    assert_eq!(
                        output.status.code(),
                        Some(0),
                        "{context}: {}",
                        show(&output)
                    );
                    assert_eq!(stdout, "", "{context}: a hook prints nothing on stdout");
                    fs::read_to_string(env.index_dir().join("hook.log")).unwrap_or_default()
                }
                Operation::RestoreClaim => {
                    // A surface it tried to open failed, either way: exit 1.
                    assert_eq!(
                        output.status.code(),
                        Some(1),
                        "{context}: {}",
                        show(&output)
                    );
                    assert!(
                        stderr.contains("1 of the surfaces tried could not be opened"),
                        "{context}: {stderr}"
                    );
                    let line = stdout
                        .lines()
                        .find(|line| line.starts_with(TMUX_SURFACE))
                        .unwrap_or_default()
                        .to_string();
                    if renamed {
                        assert!(
                            line.contains("[failed: cannot run tmux")
                                && line.contains("the claim may not survive a power cut"),
                            "{context}: restore goes on to re-open a surface it claimed: {line}"
                        );
                    } else {
                        assert!(
                            line.contains("[failed: cannot claim it in the index: cannot write"),
                            "{context}: {line}"
                        );
                    }
                    line
                }
                _ => {
                    assert_eq!(
                        output.status.code(),
                        Some(1),
                        "{context}: {}",
                        show(&output)
                    );
                    assert_eq!(stdout, "", "{context}");
                    assert!(stderr.starts_with("error: "), "{context}: {stderr}");
                    stderr.clone()
                }
            };
            assert!(
                told.contains(&injected) && told.contains(index_dir),
                "{context}: the message names the fault and the path: {told}"
            );
            if renamed {
                assert!(
                    told.contains("is in place but could not be synced")
                        && told.contains("may not")
                        && !told.contains("left as it was"),
                    "{context}: {told}"
                );
                let expected = match operation {
                    // Re-opening the pane fails here (no tmux), so the restore takes back the
                    // claim it had written: the entries are as they were.
                    Operation::RestoreClaim => before.clone(),
                    _ => operation.after(&env, &before),
                };
                assert!(
                    matches(
                        &Value::Object(expected.clone()),
                        &Value::Object(env.entries()),
                        window
                    ),
                    "{context}: the new state is in place: expected {expected:#?}, found {:#?}",
                    env.entries()
                );
            } else {
                assert!(told.contains("left as it was"), "{context}: {told}");
                assert_eq!(
                    env.index_bytes().unwrap(),
                    bytes_before,
                    "{context}: the index is byte for byte as it was"
                );
            }
            assert_eq!(leftovers(&env), Vec::<String>::new(), "{context}");
            parse_index(&fs::read(env.backup_path()).unwrap(), &env.backup_path());
            let state = env.entries();
            check_next_write(&env, &state, &context);
        }
    }
}

#[test]
fn the_expected_state_matcher_pins_one_time_within_the_window() {
    let expected = json!({ "a": NOW, "b": [NOW, 3] });
    assert!(matches(&expected, &json!({ "a": 5, "b": [5, 3] }), (4, 6)));
    assert!(!matches(&expected, &json!({ "a": 5, "b": [6, 3] }), (4, 6)));
    assert!(!matches(&expected, &json!({ "a": 7, "b": [7, 3] }), (4, 6)));
    assert!(!matches(
        &expected,
        &json!({ "a": 5, "b": [5, 3], "c": 1 }),
        (4, 6)
    ));
    assert!(!matches(&expected, &json!({ "a": 5 }), (4, 6)));
}
