//! The bad-input matrix: every command against every bad input, as data. Each case states the
//! exit code (docs/commands.md's table: 0 done, 1 failed, 2 usage or invalid input, 4 nothing
//! found), what the command prints, the message, and what may happen to the index, which is
//! checked byte for byte.
//!
//! Two tables: bad arguments (empty, blank, control characters, over-long ids; invalid UTF-8 in
//! paths and in the environment; over-long paths; bad durations; missing, extra and conflicting
//! arguments), and indexes that cannot be used as they are (a directory, a symlink elsewhere,
//! a symlink loop, unreadable, in a read-only directory) for every command. `bad_input` holds
//! the cases of `record`, `prune` and `resume-cmd` that are not repeated here.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;

use Condition::{Directory, ReadOnlyDir, SymlinkElsewhere, SymlinkLoop, Unreadable};
use Effect::{Unchanged, Written};
use test_support::process::spawn_piped;
use test_support::sandbox::open_to_others;

use crate::{
    BIN, DAY, Sandbox, XorShift, crash_resume_as_nobody, entry, now_millis, parse_index, record,
    sandboxed, seed,
};

/// Placeholders in the tables, replaced when a case runs.
const LONG_ID: &str = "{513 bytes}";
const NOT_UTF8: &str = "{not utf-8}";
const LONG_PATH: &str = "{long path}";
const LONG_DIR: &str = "{long dir}";
const INDEX: &str = "{index}";
const INDEX_DIR: &str = "{index dir}";
const TARGET: &str = "{target}";
const SETTINGS: &str = "{settings}";

/// One bad-argument case: arguments, environment, exit code, a piece of stdout (`""`: stdout is
/// empty), and pieces of stderr (for a hook: of stderr and its log together).
type ArgumentCase = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    i32,
    &'static str,
    &'static [&'static str],
);

#[rustfmt::skip]
const ARGUMENTS: &[ArgumentCase] = &[
    // Empty, blank, control characters, too long: the surface of every command that takes one.
    (&["lookup", ""], &[], 2, "", &["surface id is empty"]),
    (&["lookup", "  "], &[], 2, "", &["surface id is only whitespace"]),
    (&["lookup", "\u{a0}"], &[], 2, "", &["surface id is only whitespace"]),
    (&["lookup", "a\u{1}b"], &[], 2, "", &["surface id contains a control character (U+0001) at byte 1"]),
    (&["lookup", LONG_ID], &[], 2, "", &["surface id is 513 bytes long", "at most 512"]),
    (&["resume-cmd", ""], &[], 2, "", &["surface id is empty"]),
    (&["resume-cmd", "\t"], &[], 2, "", &["surface id contains a control character (U+0009)"]),
    (&["resume-cmd", LONG_ID], &[], 2, "", &["surface id is 513 bytes long"]),
    (&["touch", ""], &[], 2, "", &["surface id is empty"]),
    (&["touch", " "], &[], 2, "", &["surface id is only whitespace"]),
    (&["touch", "S\n"], &[], 2, "", &["surface id contains a control character (U+000A)"]),
    (&["touch", LONG_ID], &[], 2, "", &["surface id is 513 bytes long"]),
    (&["forget", ""], &[], 2, "", &["surface id is empty"]),
    (&["forget", "\u{3000}"], &[], 2, "", &["surface id is only whitespace"]),
    (&["forget", "S\u{7f}"], &[], 2, "", &["surface id contains a control character (U+007F)"]),
    (&["forget", LONG_ID], &[], 2, "", &["surface id is 513 bytes long"]),
    (&["preflight", ""], &[], 2, "", &["surface id is empty"]),
    (&["preflight", " "], &[], 2, "", &["surface id is only whitespace"]),
    (&["preflight", "a\u{1b}"], &[], 2, "", &["surface id contains a control character (U+001B)"]),
    (&["preflight", LONG_ID], &[], 2, "", &["surface id is 513 bytes long"]),
    (&["preflight", "--session", "", "--cwd", "/x"], &[], 2, "", &["session id is empty"]),
    (&["preflight", "--session", "a\tb", "--cwd", "/x"], &[], 2, "", &["session id contains a control character (U+0009)"]),
    (&["preflight", "--session", LONG_ID, "--cwd", "/x"], &[], 2, "", &["session id is 513 bytes long"]),
    (&["preflight", "--history-session", " ", "--cwd", "/x"], &[], 2, "", &["session id is only whitespace"]),
    (&["preflight", "--cwd", ""], &[], 2, "", &["--cwd is empty"]),
    (&["preflight", "--cwd", "  "], &[], 2, "", &["--cwd is empty"]),
    (&["record", "T", "s", "r", "--provider", " "], &[], 2, "", &["agent is only whitespace"]),
    (&["record", "T", "s", "r", "--provider", "a\nb"], &[], 2, "", &["agent contains a control character (U+000A)"]),
    (&["record", "T", "s", "r", "--provider", LONG_ID], &[], 2, "", &["agent is 513 bytes long"]),
    // The preflight's inputs may be empty (docs/preflight.md): no agent that resumes by id,
    // no config dir known. Both are a verdict of `unknown`, not a usage error.
    (&["preflight", "--session", "s", "--cwd", "/x", "--provider", ""], &[], 0, "unknown", &[]),
    (&["preflight", "--session", "s", "--cwd", "/x", "--config-dir", ""], &[], 0, "unknown", &[]),
    // Invalid UTF-8 in every path: the index path (flag and variable), working and config dirs,
    // the settings file, the config dir the agent runs with.
    (&["--path", NOT_UTF8, "record", "T", "s", "r"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "lookup", "S"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "resume-cmd", "S"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "touch", "S"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "forget", "S"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "prune", "1h"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "list"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "preflight", "S"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "restore"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "path"], &[], 2, "", &["invalid UTF-8"]),
    (&["--path", NOT_UTF8, "hook", "install", "claude", "--settings", SETTINGS], &[], 2, "", &["invalid UTF-8"]),
    (&["list"], &[("CRASH_RESUME_INDEX_PATH", NOT_UTF8)], 2, "", &["invalid UTF-8"]),
    (&["record", "T", "s", "r", "--cwd", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["record", "T", "s", "r", "--config-dir", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["preflight", "--cwd", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["preflight", "--cwd", "/x", "--config-dir", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["hook", "install", "claude", "--settings", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["touch", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["forget", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["resume-cmd", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    (&["preflight", NOT_UTF8], &[], 2, "", &["invalid UTF-8"]),
    // Not the default dir: the one the variable names, which cannot be used.
    (&["hook", "install", "claude"], &[("CLAUDE_CONFIG_DIR", NOT_UTF8)], 1, "", &["CLAUDE_CONFIG_DIR", "is not valid UTF-8"]),
    // A path too long for the filesystem: refused, naming it; `path` only prints it.
    (&["--path", LONG_PATH, "record", "T", "s", "r"], &[], 1, "", &["cannot write", LONG_DIR, "File name too long", "left as it was"]),
    (&["--path", LONG_PATH, "touch", "S"], &[], 1, "", &["cannot write", LONG_DIR, "File name too long"]),
    (&["--path", LONG_PATH, "lookup", "S"], &[], 1, "", &["cannot read index at", LONG_PATH, "File name too long"]),
    (&["--path", LONG_PATH, "list"], &[], 1, "", &["cannot read index at", LONG_PATH, "File name too long"]),
    (&["--path", LONG_PATH, "restore"], &[], 1, "", &["cannot read index at", LONG_PATH, "File name too long"]),
    (&["--path", LONG_PATH, "path"], &[], 0, "durable", &[]),
    (&["hook", "install", "claude", "--settings", LONG_PATH], &[], 1, "", &["cannot read", LONG_PATH, "File name too long"]),
    // Bad durations: max ages and the lock timeout.
    (&["resume-cmd", "S", "1e3"], &[], 2, "", &["invalid max age 1e3"]),
    (&["resume-cmd", "S", "--", "-0"], &[], 2, "", &["invalid max age -0"]),
    (&["resume-cmd", "S", "1h 1x"], &[], 2, "", &["invalid max age 1h 1x"]),
    (&["prune", "0x10"], &[], 2, "", &["invalid max age 0x10"]),
    (&["prune", "∞"], &[], 2, "", &["invalid max age ∞"]),
    (&["prune", "\u{1}"], &[], 2, "", &["invalid max age \"\\x01\""]),
    (&["--lock-timeout", "", "touch", "S"], &[], 2, "", &["the lock timeout is empty"]),
    (&["--lock-timeout=-1s", "forget", "S"], &[], 2, "", &["invalid lock timeout -1s"]),
    (&["--lock-timeout", "5 parsecs", "prune", "1h"], &[], 2, "", &["invalid lock timeout 5 parsecs"]),
    (&["--lock-timeout", "soon", "lookup", "S"], &[], 2, "", &["invalid lock timeout soon"]),
    (&["--lock-timeout", "soon", "list"], &[], 2, "", &["invalid lock timeout soon"]),
    (&["touch", "S"], &[("CRASH_RESUME_LOCK_TIMEOUT", "later")], 2, "", &["invalid lock timeout later in CRASH_RESUME_LOCK_TIMEOUT"]),
    // `path` takes no lock and reads no index: a bad lock timeout does not concern it.
    (&["--lock-timeout", "soon", "path"], &[], 0, "durable", &[]),
    // Missing arguments.
    (&["preflight"], &[], 2, "", &["required arguments were not provided", "<SURFACE|--cwd <DIR>>"]),
    (&["preflight", "--session", "s"], &[], 2, "", &["<SURFACE|--cwd <DIR>>"]),
    (&["hook"], &[], 2, "", &["requires a subcommand"]),
    (&["hook", "install"], &[], 2, "", &["<AGENT>"]),
    (&["restore", "--apply"], &[], 2, "", &["a value is required for '--apply <MULTIPLEXER>'"]),
    (&["--path"], &[], 2, "", &["a value is required for '--path <FILE>'"]),
    (&["record", "T", "s", "r", "--cwd"], &[], 2, "", &["a value is required for '--cwd <DIR>'"]),
    (&["completions"], &[], 2, "", &["<SHELL>"]),
    // Extra, unknown and conflicting arguments.
    (&["list", "extra"], &[], 2, "", &["unexpected argument 'extra'"]),
    (&["path", "extra"], &[], 2, "", &["unexpected argument 'extra'"]),
    (&["restore", "extra"], &[], 2, "", &["unexpected argument 'extra'"]),
    (&["touch", "S", "extra"], &[], 2, "", &["unexpected argument 'extra'"]),
    (&["forget", "S", "extra"], &[], 2, "", &["unexpected argument 'extra'"]),
    (&["prune", "1h", "extra"], &[], 2, "", &["unexpected argument 'extra'"]),
    (&["restore", "--apply", "screen"], &[], 2, "", &["invalid value 'screen'"]),
    (&["preflight", "S", "--cwd", "/x"], &[], 2, "", &["cannot be used with"]),
    (&["hook", "install", "bogus"], &[], 2, "", &["invalid value 'bogus'"]),
    (&["hook", "install", "codex", "--settings", ""], &[], 2, "", &["--settings is empty"]),
    (&["hook", "install", "claude", "--settings", ""], &[], 2, "", &["--settings is empty"]),
    (&["hook", "install", "claude", "--settings", " "], &[], 2, "", &["--settings is empty"]),
    // A hook exits 0 whatever it is given, prints nothing on stdout, and records nothing.
    (&["hook", "claude", "--bogus"], &[], 0, "", &["unexpected argument '--bogus'"]),
    (&["hook", "codex", "a", "b"], &[], 0, "", &["unexpected argument 'b'"]),
    (&["--path", NOT_UTF8, "hook", "claude"], &[], 0, "", &["invalid UTF-8"]),
    (&["hook", "claude"], &[("CRASH_RESUME_INDEX_PATH", NOT_UTF8)], 0, "", &["invalid UTF-8"]),
    (&["hook", "claude"], &[("CLAUDE_CONFIG_DIR", NOT_UTF8)], 0, "", &["CLAUDE_CONFIG_DIR", "is not valid UTF-8", "error:"]),
    (&["hook", "claude"], &[("CRASH_RESUME_SURFACE", LONG_ID)], 0, "", &["surface id is 513 bytes long"]),
    (&["hook", "claude"], &[("CRASH_RESUME_SURFACE", "a\u{1}b")], 0, "", &["surface id contains a control character"]),
    (&["hook", "claude"], &[("CRASH_RESUME_SURFACE", " ")], 0, "", &["no surface in the environment"]),
];

/// A sandbox with one entry, `S` (recorded, then last active a day ago as far as the index
/// says, for `prune 1h` to drop it), and the directory of the settings hook install writes.
fn with_one_entry() -> Sandbox {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let day_ago = now_millis() - DAY;
    env.write_index(&[entry("S", "SID", "REPO", day_ago, day_ago)]);
    fs::create_dir_all(settings_path(&env).parent().unwrap()).unwrap();
    env
}

fn settings_path(env: &Sandbox) -> PathBuf {
    env.root().join("settings").join("settings.json")
}

fn long_path(env: &Sandbox) -> PathBuf {
    env.root().join("x".repeat(300)).join("index.json")
}

fn text(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// Replaces the placeholders of a table cell.
fn fill(cell: &str, env: &Sandbox, target: &Path) -> OsString {
    match cell {
        LONG_ID => OsString::from("x".repeat(513)),
        NOT_UTF8 => OsStr::from_bytes(b"not-utf8-\xff\xfe").to_owned(),
        _ => OsString::from(
            cell.replace(LONG_PATH, &text(&long_path(env)))
                .replace(LONG_DIR, &text(long_path(env).parent().unwrap()))
                .replace(INDEX_DIR, &text(&env.index_dir()))
                .replace(INDEX, &text(&env.index_path()))
                .replace(TARGET, &text(target))
                .replace(SETTINGS, &text(&settings_path(env))),
        ),
    }
}

/// The payload every hook case is given on stdin: a session starting on surface `H`.
const PAYLOAD: &str =
    r#"{"session_id": "sid-h", "hook_event_name": "SessionStart", "cwd": "/work/h"}"#;

/// Runs `args` with the sandbox's environment plus `vars`, `stdin` on stdin.
fn run(
    env: &Sandbox,
    args: &[OsString],
    vars: &[(OsString, OsString)],
    as_nobody: bool,
    stdin: &[u8],
) -> Output {
    let mut command = if as_nobody {
        crash_resume_as_nobody(env)
    } else {
        sandboxed(env, BIN)
    };
    command
        .env("CRASH_RESUME_SURFACE", "H")
        .env_remove("CRASH_RESUME_ROLE")
        .args(args);
    for (name, value) in vars {
        command.env(name, value);
    }
    let (child, mut input) = spawn_piped(&mut command);
    // Only a hook reads it; others may be gone before it is written.
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

/// What a case was told: stderr, and for a hook its log too.
fn told(env: &Sandbox, output: &Output) -> String {
    let log = fs::read_to_string(env.index_dir().join("hook.log")).unwrap_or_default();
    format!("{}{log}", String::from_utf8_lossy(&output.stderr))
}

#[test]
fn every_bad_argument_is_refused_with_its_exit_code_and_writes_nothing() {
    for (args, vars, code, stdout_piece, pieces) in ARGUMENTS {
        let env = with_one_entry();
        let index_before = env.index_bytes().unwrap();
        let files_before = files_but_the_lock(&env);
        let target = env.index_path();
        let args: Vec<OsString> = args.iter().map(|arg| fill(arg, &env, &target)).collect();
        let vars: Vec<(OsString, OsString)> = vars
            .iter()
            .map(|(name, value)| (OsString::from(name), fill(value, &env, &target)))
            .collect();
        let context = format!("{args:?} {vars:?}");
        let output = run(&env, &args, &vars, false, PAYLOAD.as_bytes());
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let told = told(&env, &output);
        assert_eq!(output.status.code(), Some(*code), "{context}: {told}");
        if stdout_piece.is_empty() {
            assert_eq!(stdout, "", "{context}");
        } else {
            assert!(stdout.contains(stdout_piece), "{context}: {stdout}");
        }
        for piece in *pieces {
            let piece = fill(piece, &env, &target);
            let piece = piece.to_str().unwrap();
            assert!(told.contains(piece), "{context}: lacks {piece:?}: {told}");
        }
        assert!(
            told.lines().count() <= 12,
            "{context}: a short message: {told}"
        );
        assert_eq!(
            env.index_bytes().unwrap(),
            index_before,
            "{context} changed the index"
        );
        assert_eq!(
            files_but_the_lock(&env),
            files_before,
            "{context} left a file"
        );
        assert!(!long_path(&env).parent().unwrap().exists(), "{context}");
    }
}

/// The files in the index dir, but the lock (which any write attempt may create, and which is
/// never removed) and the hook's log.
fn files_but_the_lock(env: &Sandbox) -> Vec<String> {
    let mut files = env.index_dir_files();
    files.retain(|name| name != "index.json.flock" && name != "hook.log");
    files
}

/// An index that cannot be used as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Condition {
    /// The index path is a directory.
    Directory,
    /// The index path is a symlink to an index elsewhere: followed, for reads and writes, and
    /// left a symlink.
    SymlinkElsewhere,
    /// The index path is a symlink to itself.
    SymlinkLoop,
    /// The index cannot be read by the user running the binary.
    Unreadable,
    /// The index's directory cannot be written by the user running the binary.
    ReadOnlyDir,
}

const CONDITIONS: [Condition; 5] = [
    Directory,
    SymlinkElsewhere,
    SymlinkLoop,
    Unreadable,
    ReadOnlyDir,
];

/// Every command, as a valid invocation.
pub const COMMANDS: [&[&str]; 12] = [
    &["record", "T", "sid-t", "REPO"],
    &["lookup", "S"],
    &["resume-cmd", "S"],
    &["touch", "S"],
    &["forget", "S"],
    &["prune", "1h"],
    &["list"],
    &["preflight", "S"],
    &["restore"],
    &["path"],
    &["hook", "install", "claude", "--settings", SETTINGS],
    &["hook", "claude"],
];

/// What a command does to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Left byte for byte as it was.
    Unchanged,
    /// A new generation written (to the symlink's target).
    Written,
}

/// (condition, command, exit code, a piece of stdout (`""`: empty), pieces of stderr (and the
/// hook's log), effect on the index)
type ConditionCase = (
    Condition,
    &'static str,
    i32,
    &'static str,
    &'static [&'static str],
    Effect,
);

#[rustfmt::skip]
const INDEX_CONDITIONS: &[ConditionCase] = &[
    (Directory, "record", 1, "", &["index path", INDEX, "is a directory"], Unchanged),
    (Directory, "lookup", 1, "", &[INDEX, "is a directory"], Unchanged),
    (Directory, "resume-cmd", 1, "", &[INDEX, "is a directory"], Unchanged),
    (Directory, "touch", 1, "", &[INDEX, "is a directory"], Unchanged),
    (Directory, "forget", 1, "", &[INDEX, "is a directory"], Unchanged),
    (Directory, "prune", 1, "", &[INDEX, "is a directory"], Unchanged),
    (Directory, "list", 1, "", &[INDEX, "is a directory"], Unchanged),
    (Directory, "preflight", 1, "", &[INDEX, "is a directory"], Unchanged),
    (Directory, "restore", 1, "", &[INDEX, "is a directory"], Unchanged),
    // `path` names the path in use and its filesystem; it does not look at what is there.
    (Directory, "path", 0, "durable", &[], Unchanged),
    (Directory, "hook install", 0, "installed SessionStart and SessionEnd hooks", &[], Unchanged),
    (Directory, "hook claude", 0, "", &[INDEX, "is a directory"], Unchanged),

    (SymlinkElsewhere, "record", 0, "recorded T → sid-t (REPO)", &[], Written),
    (SymlinkElsewhere, "lookup", 0, "\"sessionId\": \"SID\"", &[], Unchanged),
    (SymlinkElsewhere, "resume-cmd", 0, "claude --resume SID", &[], Unchanged),
    (SymlinkElsewhere, "touch", 0, "touched S", &[], Written),
    (SymlinkElsewhere, "forget", 0, "forgot S → SID (REPO)", &[], Written),
    (SymlinkElsewhere, "prune", 0, "pruned 1 entries\nS\tSID\tREPO", &[], Written),
    (SymlinkElsewhere, "list", 0, "S\tSID\tREPO", &[], Unchanged),
    (SymlinkElsewhere, "preflight", 0, "unknown", &[], Unchanged),
    (SymlinkElsewhere, "restore", 0, "claude --resume SID", &[], Unchanged),
    (SymlinkElsewhere, "path", 0, TARGET, &[], Unchanged),
    (SymlinkElsewhere, "hook install", 0, "installed SessionStart and SessionEnd hooks", &[], Unchanged),
    (SymlinkElsewhere, "hook claude", 0, "", &[], Written),

    (SymlinkLoop, "record", 1, "", &["cannot read index at", INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "lookup", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "resume-cmd", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "touch", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "forget", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "prune", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "list", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "preflight", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "restore", 1, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),
    (SymlinkLoop, "path", 0, "durable", &[], Unchanged),
    (SymlinkLoop, "hook install", 0, "installed SessionStart and SessionEnd hooks", &[], Unchanged),
    (SymlinkLoop, "hook claude", 0, "", &[INDEX, "Too many levels of symbolic links"], Unchanged),

    (Unreadable, "record", 1, "", &["cannot read index at", INDEX, "Permission denied"], Unchanged),
    (Unreadable, "lookup", 1, "", &["cannot read index at", INDEX, "Permission denied"], Unchanged),
    (Unreadable, "resume-cmd", 1, "", &[INDEX, "Permission denied"], Unchanged),
    (Unreadable, "touch", 1, "", &[INDEX, "Permission denied"], Unchanged),
    (Unreadable, "forget", 1, "", &[INDEX, "Permission denied"], Unchanged),
    (Unreadable, "prune", 1, "", &[INDEX, "Permission denied"], Unchanged),
    (Unreadable, "list", 1, "", &[INDEX, "Permission denied"], Unchanged),
    (Unreadable, "preflight", 1, "", &[INDEX, "Permission denied"], Unchanged),
    (Unreadable, "restore", 1, "", &[INDEX, "Permission denied"], Unchanged),
    (Unreadable, "path", 0, "durable", &[], Unchanged),
    (Unreadable, "hook install", 0, "installed SessionStart and SessionEnd hooks", &[], Unchanged),
    (Unreadable, "hook claude", 0, "", &[INDEX, "Permission denied"], Unchanged),

    (ReadOnlyDir, "record", 1, "", &["cannot write", INDEX_DIR, "Permission denied", "left as it was"], Unchanged),
    (ReadOnlyDir, "lookup", 0, "\"sessionId\": \"SID\"", &[], Unchanged),
    (ReadOnlyDir, "resume-cmd", 0, "claude --resume SID", &[], Unchanged),
    (ReadOnlyDir, "touch", 1, "", &["cannot write", INDEX_DIR, "Permission denied"], Unchanged),
    (ReadOnlyDir, "forget", 1, "", &["cannot write", INDEX_DIR, "Permission denied"], Unchanged),
    (ReadOnlyDir, "prune", 1, "", &["cannot write", INDEX_DIR, "Permission denied"], Unchanged),
    (ReadOnlyDir, "list", 0, "S\tSID\tREPO", &[], Unchanged),
    (ReadOnlyDir, "preflight", 0, "unknown", &[], Unchanged),
    (ReadOnlyDir, "restore", 0, "claude --resume SID", &[], Unchanged),
    (ReadOnlyDir, "path", 0, "durable", &[], Unchanged),
    (ReadOnlyDir, "hook install", 0, "installed SessionStart and SessionEnd hooks", &[], Unchanged),
    // The log beside the index cannot be written either: its line goes to stderr.
    (ReadOnlyDir, "hook claude", 0, "", &["cannot write", INDEX_DIR, "Permission denied"], Unchanged),
];

/// The name of a command in the table: its first word, or two for `hook`.
fn command_name(args: &[&str]) -> String {
    match args {
        ["hook", what, ..] => format!("hook {what}"),
        [name, ..] => name.to_string(),
        [] => String::new(),
    }
}

/// What the index path is, to compare before and after: a directory's listing, a symlink's
/// target with the bytes it points to (if any), or a file's bytes.
#[derive(Debug, PartialEq, Eq)]
enum IndexState {
    Directory(Vec<OsString>),
    Symlink(PathBuf, Option<Vec<u8>>),
    File(Vec<u8>),
}

fn index_state(env: &Sandbox) -> IndexState {
    let path = env.index_path();
    let metadata = fs::symlink_metadata(&path).unwrap();
    if metadata.is_symlink() {
        IndexState::Symlink(fs::read_link(&path).unwrap(), fs::read(&path).ok())
    } else if metadata.is_dir() {
        let mut names: Vec<OsString> = fs::read_dir(&path)
            .unwrap()
            .map(|item| item.unwrap().file_name())
            .collect();
        names.sort();
        IndexState::Directory(names)
    } else {
        IndexState::File(fs::read(&path).unwrap())
    }
}

/// Gives the index dir (and the settings dir) to nobody, makes it usable by nobody, and takes
/// them back on drop. As root, mode bits do not stop anything: the binary runs as nobody.
#[derive(Debug)]
struct Permissions {
    restore: Vec<(PathBuf, u32, u32, u32)>,
}

impl Permissions {
    fn set(env: &Sandbox, condition: Condition) -> Permissions {
        let as_root = rustix::process::geteuid().is_root();
        let mut guard = Permissions {
            restore: Vec::new(),
        };
        let mut change = |path: &Path, mode: u32| {
            let metadata = fs::metadata(path).unwrap();
            guard.restore.push((
                path.into(),
                metadata.mode() & 0o7777,
                metadata.uid(),
                metadata.gid(),
            ));
            if as_root {
                std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
            }
            fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
        };
        if as_root {
            open_to_others(env.root());
        }
        let settings_dir = settings_path(env).parent().unwrap().to_path_buf();
        change(&settings_dir, 0o755);
        let index_dir = env.index_dir();
        for name in ["index.json.flock", "index.json.bak", "index.json"] {
            let path = index_dir.join(name);
            if path.exists() {
                let mode = match (condition, name) {
                    (Unreadable, "index.json") => 0o000,
                    _ => 0o600,
                };
                change(&path, mode);
            }
        }
        let dir_mode = match condition {
            ReadOnlyDir => 0o555,
            _ => 0o755,
        };
        change(&index_dir, dir_mode);
        guard
    }
}

impl Drop for Permissions {
    fn drop(&mut self) {
        for (path, mode, uid, gid) in self.restore.iter().rev() {
            let _ = fs::set_permissions(path, fs::Permissions::from_mode(*mode));
            if rustix::process::geteuid().is_root() {
                let _ = std::os::unix::fs::chown(path, Some(*uid), Some(*gid));
            }
        }
    }
}

const NOBODY: u32 = 65534;

/// Builds the condition in a sandbox holding `S`; returns where a symlink points.
fn set_up(env: &Sandbox, condition: Condition) -> PathBuf {
    let index = env.index_path();
    match condition {
        Directory => {
            fs::remove_file(&index).unwrap();
            fs::create_dir(&index).unwrap();
            index
        }
        SymlinkElsewhere => {
            let elsewhere = env.root().join("elsewhere");
            fs::create_dir(&elsewhere).unwrap();
            let target = elsewhere.join("real.json");
            fs::copy(&index, &target).unwrap();
            fs::remove_file(&index).unwrap();
            let _ = fs::remove_file(env.backup_path());
            std::os::unix::fs::symlink("../elsewhere/real.json", &index).unwrap();
            target
        }
        SymlinkLoop => {
            fs::remove_file(&index).unwrap();
            std::os::unix::fs::symlink("index.json", &index).unwrap();
            index
        }
        Unreadable | ReadOnlyDir => index,
    }
}

#[test]
fn every_command_against_every_unusable_index() {
    for condition in CONDITIONS {
        for command in COMMANDS {
            let name = command_name(command);
            let cases: Vec<&ConditionCase> = INDEX_CONDITIONS
                .iter()
                .filter(|case| case.0 == condition && case.1 == name)
                .collect();
            let [(_, _, code, stdout_piece, pieces, effect)] = cases[..] else {
                panic!(
                    "{condition:?} × {name}: {} cases in the table, not one",
                    cases.len()
                );
            };
            let context = format!("{condition:?} × {name}");
            let env = with_one_entry();
            let target = set_up(&env, condition);
            let before = index_state(&env);
            let target_before = fs::read(&target).ok();
            let as_nobody = matches!(condition, Unreadable | ReadOnlyDir)
                && rustix::process::geteuid().is_root();
            let permissions = matches!(condition, Unreadable | ReadOnlyDir)
                .then(|| Permissions::set(&env, condition));
            let args: Vec<OsString> = command.iter().map(|arg| fill(arg, &env, &target)).collect();
            let output = run(&env, &args, &[], as_nobody, PAYLOAD.as_bytes());
            drop(permissions);

            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let told = told(&env, &output);
            assert_eq!(
                output.status.code(),
                Some(*code),
                "{context}: {stdout} {told}"
            );
            let stdout_piece = fill(stdout_piece, &env, &target);
            let stdout_piece = stdout_piece.to_str().unwrap();
            if stdout_piece.is_empty() {
                assert_eq!(stdout, "", "{context}");
            } else {
                assert!(stdout.contains(stdout_piece), "{context}: {stdout}");
            }
            for piece in *pieces {
                let piece = fill(piece, &env, &target);
                let piece = piece.to_str().unwrap();
                assert!(told.contains(piece), "{context}: lacks {piece:?}: {told}");
            }
            if *code != 0 || name == "hook claude" {
                assert!(
                    told.lines().count() <= 12,
                    "{context}: a short message: {told}"
                );
            }
            if name.starts_with("hook") && pieces.is_empty() {
                assert!(!told.contains("error"), "{context}: {told}");
            }
            let after = index_state(&env);
            match effect {
                Unchanged => {
                    assert_eq!(after, before, "{context}: the index changed");
                    assert_eq!(fs::read(&target).ok(), target_before, "{context}");
                }
                Written => {
                    // The link is left a link to the same file, which holds the new generation.
                    let (
                        IndexState::Symlink(link, _),
                        IndexState::Symlink(link_after, Some(bytes)),
                    ) = (&before, &after)
                    else {
                        panic!("{context}: {before:?} then {after:?}");
                    };
                    assert_eq!(link, link_after, "{context}");
                    assert_ne!(Some(bytes), target_before.as_ref(), "{context}");
                    parse_index(bytes, &target);
                    let index_dir = target.parent().unwrap();
                    for name in fs::read_dir(index_dir).unwrap() {
                        let name = name.unwrap().file_name().to_string_lossy().into_owned();
                        assert!(!name.ends_with(".tmp"), "{context}: {name} left");
                    }
                }
            }
            // Nothing new beside the index but its lock and the hook's log (a directory index
            // is left empty).
            let mut files = env.index_dir_files();
            files.retain(|name| {
                !matches!(
                    name.as_str(),
                    "index.json" | "index.json.bak" | "index.json.flock" | "hook.log"
                )
            });
            assert_eq!(files, Vec::<String>::new(), "{context}");
        }
    }
}

/// Pieces a near-JSON payload is made of.
const TOKENS: [&str; 16] = [
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\"session_id\"",
    "\"hook_event_name\"",
    "\"SessionStart\"",
    "\"SessionEnd\"",
    "\"cwd\"",
    "null",
    "1e999",
    "\"\\u0000\"",
    "\"",
    "\\",
];

/// `hook claude` given random bytes on stdin (seeded; `CRASH_RESUME_TEST_SEED` replays a run):
/// random bytes, cut and damaged payloads, near-JSON. It always exits 0, prints nothing on
/// stdout, and leaves a parsing index holding what it held.
#[test]
fn hook_claude_on_arbitrary_stdin_exits_0_prints_nothing_and_keeps_the_index() {
    let seed = seed();
    let mut random = XorShift::new(seed);
    let env = with_one_entry();
    let held = env.entry("S");
    let args = [OsString::from("hook"), OsString::from("claude")];
    for case in 0..64 {
        let mut bytes = PAYLOAD.as_bytes().to_vec();
        match case % 4 {
            0 => {
                bytes = (0..random.below(512))
                    .map(|_| random.next_u64() as u8)
                    .collect();
            }
            1 => bytes.truncate(random.below(bytes.len() as u64) as usize),
            2 => {
                for _ in 0..=random.below(4) {
                    let at = random.below(bytes.len() as u64) as usize;
                    bytes[at] ^= 1 << random.below(8);
                }
            }
            _ => {
                bytes = (0..random.below(24))
                    .flat_map(|_| TOKENS[random.below(TOKENS.len() as u64) as usize].bytes())
                    .collect();
            }
        }
        let context = format!(
            "seed {seed}, case {case}: {:?}",
            String::from_utf8_lossy(&bytes)
        );
        let output = run(&env, &args, &[], false, &bytes);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{context}: {}",
            told(&env, &output)
        );
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "",
            "{context}: a hook prints nothing on stdout"
        );
        let index = parse_index(&env.index_bytes().unwrap(), &env.index_path());
        assert_eq!(index["entries"].get("S"), held.as_ref(), "{context}");
        assert!(
            index["entries"]
                .as_object()
                .unwrap()
                .keys()
                .all(|surface| surface == "S" || surface == "H"),
            "{context}: {index}"
        );
    }
}
