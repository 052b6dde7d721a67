//! Bad input and refused indexes, for every command that takes them (so one place, not a copy per
//! command): each is a clear message on stderr, nothing on stdout, the documented exit code, and
//! the index file left byte for byte as it was. The matrix of every command against every bad
//! input, as data: `matrix`. Cases of one command alone are in its file (`lookup`, `forget`,
//! `record`).

pub mod matrix;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use predicates::str::contains;
use test_support::sandbox::open_to_others;

use crate::{Sandbox, crash_resume, crash_resume_as_nobody, record};

/// A sandbox whose index holds one entry, `S`.
pub fn with_one_entry() -> (Sandbox, Vec<u8>) {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let bytes = env.index_bytes().unwrap();
    (env, bytes)
}

/// Runs `args`, expects `code`, empty stdout, a stderr holding every piece of `message`, and the
/// index unchanged byte for byte (and no new file next to it).
pub fn check_refused(
    env: &Sandbox,
    index_before: &[u8],
    args: &[&OsStr],
    code: i32,
    message: &[&str],
) {
    let files_before = files_but_the_lock(env);
    let assert = crash_resume(env).args(args).assert();
    let output = assert.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(
        output.stdout.is_empty(),
        "{args:?} printed {:?}",
        String::from_utf8_lossy(&output.stdout)
    );
    for piece in message {
        assert!(
            stderr.contains(piece),
            "{args:?}: stderr lacks {piece:?}: {stderr}"
        );
    }
    assert!(
        stderr.trim_end().lines().count() <= 12,
        "{args:?}: a short message: {stderr}"
    );
    assert_eq!(
        env.index_bytes().as_deref(),
        Some(index_before),
        "{args:?} changed the index"
    );
    assert_eq!(
        files_but_the_lock(env),
        files_before,
        "{args:?} left a file"
    );
}

/// The files in the index dir but the lock sidecar (which any write attempt may create, and
/// which is never removed).
pub fn files_but_the_lock(env: &Sandbox) -> Vec<String> {
    let mut files = env.index_dir_files();
    files.retain(|name| name != "index.json.flock");
    files
}

pub fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Stands for a 513-byte id in the cases below.
const TOO_LONG: &str = "<513 bytes>";

/// (arguments, exit code, pieces of the message on stderr)
#[rustfmt::skip]
const INVALID_INPUT: &[(&[&str], i32, &[&str])] = &[
    // Empty, blank, control characters, too long: every id.
    (&["record", "", "s", "r"], 2, &["error:", "surface id is empty"]),
    (&["record", "T", "", "r"], 2, &["session id is empty"]),
    (&["record", "T", "s", ""], 2, &["repo is empty"]),
    (&["record", "   ", "s", "r"], 2, &["surface id is only whitespace"]),
    (&["record", "T", "  ", "r"], 2, &["session id is only whitespace"]),
    (&["record", "T", "s", " "], 2, &["repo is only whitespace"]),
    (&["record", "T", "s", "r", " "], 2, &["role is only whitespace"]),
    (&["record", "a\tb", "s", "r"], 2, &["surface id contains a control character (U+0009)"]),
    (&["record", "T", "a\nb", "r"], 2, &["session id contains a control character (U+000A)"]),
    (&["record", "T", "s\r", "r"], 2, &["session id contains a control character (U+000D)"]),
    (&["record", "T", "s", "a\u{7f}b"], 2, &["repo contains a control character (U+007F)"]),
    (&["record", "T", "s", "r", "ro\u{1b}le"], 2, &["role contains a control character (U+001B)"]),
    (&["record", "T", "s", "r", "ro\u{9b}le"], 2, &["role contains a control character (U+009B)"]),
    // A control character in a dir would reach a shell's line editor; an option-like id the agent.
    (&["record", "T", "s", "r", "--cwd", "/x/\u{15}touch X\n"], 2, &["working dir contains a control character (U+0015) at byte 3"]),
    (&["record", "T", "s", "r", "--cwd", "/x/\u{85}y"], 2, &["working dir contains a control character (U+0085)"]),
    (&["record", "T", "s", "r", "--config-dir", "/c/\u{1b}]0;x\u{7}"], 2, &["config dir contains a control character (U+001B)"]),
    (&["record", "--", "T", "--dangerously-skip-permissions", "r"], 2, &["session id begins with '-'", "as an option"]),
    (&["record", "--", "T", "-", "r"], 2, &["session id begins with '-'"]),
    (&["record", TOO_LONG, "s", "r"], 2, &["surface id is 513 bytes long", "at most 512"]),
    (&["record", "T", TOO_LONG, "r"], 2, &["session id is 513 bytes long"]),
    (&["record", "T", "s", TOO_LONG], 2, &["repo is 513 bytes long"]),
    (&["record", "T", "s", "r", "--provider", ""], 2, &["provider is empty"]),
    (&["record", "T", "s", "r", "--cwd", ""], 2, &["--cwd is empty"]),
    (&["record", "T", "s", "r", "--config-dir", " "], 2, &["--config-dir is empty"]),
    // Bad max ages.
    (&["resume-cmd", "S", "abc"], 2, &["invalid max age abc", "90s, 30m, 2h, 7d"]),
    (&["resume-cmd", "S", "1x"], 2, &["invalid max age 1x"]),
    (&["resume-cmd", "S", ""], 2, &["the max age is empty"]),
    (&["resume-cmd", "S", " "], 2, &["the max age is empty"]),
    (&["resume-cmd", "S", "--", "-5"], 2, &["invalid max age -5"]),
    (&["resume-cmd", "S", "-5"], 2, &["unexpected argument '-5'"]),
    (&["prune", "abc"], 2, &["invalid max age abc"]),
    (&["prune", "1x"], 2, &["invalid max age 1x"]),
    (&["prune", ""], 2, &["the max age is empty"]),
    (&["prune", "--", "-5"], 2, &["invalid max age -5"]),
    (&["prune", "-5"], 2, &["unexpected argument '-5'"]),
    (&["prune", "99999999999999999999"], 2, &["invalid max age 99999999999999999999"]),
    // A bad lock timeout, an empty index path, an unknown profile.
    (&["--lock-timeout", "soon", "record", "T", "s", "r"], 2, &["invalid lock timeout soon"]),
    (&["--path", "", "record", "T", "s", "r"], 2, &["the index path is empty"]),
    (&["--profile", "no-such-profile", "resume-cmd", "S"], 2, &["no-such-profile"]),
    // Unknown commands and flags, missing and extra arguments.
    (&[], 2, &["requires a subcommand", "Usage:"]),
    (&["bogus"], 2, &["unrecognized subcommand 'bogus'", "Usage:"]),
    (&["record", "T", "s", "r", "--bogus"], 2, &["unexpected argument '--bogus'"]),
    (&["record"], 2, &["required arguments were not provided", "<SURFACE>", "<SESSION>", "<REPO>"]),
    (&["record", "T", "s"], 2, &["required arguments were not provided", "<REPO>"]),
    (&["record", "T", "s", "r", "role", "extra"], 2, &["unexpected argument 'extra'"]),
    (&["lookup"], 2, &["<SURFACE>"]),
    (&["lookup", "S", "T"], 2, &["unexpected argument 'T'"]),
    (&["resume-cmd"], 2, &["<SURFACE>"]),
    (&["touch"], 2, &["<SURFACE>"]),
    (&["forget"], 2, &["<SURFACE>"]),
    (&["prune"], 2, &["<MAX_AGE>"]),
    (&["completions", "nosh"], 2, &["invalid value 'nosh'"]),
];

#[test]
fn invalid_input_is_refused_and_writes_nothing() {
    let too_long = "x".repeat(513);
    let (env, before) = with_one_entry();
    for (args, code, message) in INVALID_INPUT {
        let args: Vec<&OsStr> = args
            .iter()
            .map(|arg| {
                if *arg == TOO_LONG {
                    too_long.as_ref()
                } else {
                    OsStr::new(arg)
                }
            })
            .collect();
        check_refused(&env, &before, &args, *code, message);
    }
}

#[test]
fn invalid_utf8_argument_is_refused() {
    let (env, before) = with_one_entry();
    let invalid = OsStr::from_bytes(b"pane-\xff\xfe");
    let cases: [Vec<&OsStr>; 4] = [
        vec!["record".as_ref(), invalid, "s".as_ref(), "r".as_ref()],
        vec!["record".as_ref(), "T".as_ref(), invalid, "r".as_ref()],
        vec!["lookup".as_ref(), invalid],
        vec!["prune".as_ref(), invalid],
    ];
    for args in cases {
        check_refused(&env, &before, &args, 2, &["invalid UTF-8"]);
    }
}

#[test]
fn index_path_that_is_a_directory_is_refused() {
    let (env, before) = with_one_entry();
    let dir = env.root().join("a-dir");
    fs::create_dir(&dir).unwrap();
    let dir_text = dir.to_str().unwrap();
    for args in [
        vec!["--path", dir_text, "record", "T", "s", "r"],
        vec!["--path", dir_text, "lookup", "S"],
        vec!["--path", dir_text, "resume-cmd", "S"],
        vec!["--path", dir_text, "list"],
    ] {
        let args = os(&args);
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        check_refused(&env, &before, &args, 1, &[dir_text, "is a directory"]);
    }
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing was written into the dir"
    );
}

#[test]
fn newer_index_version_is_refused_and_left_untouched() {
    let env = Sandbox::default();
    let newer = br#"{
  "version": 2,
  "entries": { "S": { "surfaceId": "S", "sessionId": "SID", "repo": "REPO", "shape": "new" } },
  "format": "from the future"
}
"#;
    env.write_index_bytes(newer);
    let index = env.index_path();
    let index = index.to_str().unwrap();
    for args in [
        vec!["record", "T", "s", "r"],
        vec!["touch", "S"],
        vec!["prune", "1h"],
        vec!["lookup", "S"],
        vec!["resume-cmd", "S"],
        vec!["list"],
    ] {
        let args = os(&args);
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        check_refused(
            &env,
            newer,
            &args,
            1,
            &[index, "format version 2", "upgrade crash-resume"],
        );
    }
    assert_eq!(env.index_dir_files(), ["index.json", "index.json.flock"]);
}

/// Makes a directory read-only for the user that runs the binary, and undoes it on drop.
#[derive(Debug)]
struct ReadOnly {
    dir: PathBuf,
    mode: u32,
    owner: (u32, u32),
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = fs::set_permissions(&self.dir, fs::Permissions::from_mode(self.mode));
        if rustix::process::geteuid().is_root() {
            let _ = chown_tree(&self.dir, self.owner);
        }
    }
}

fn chown_tree(dir: &Path, (uid, gid): (u32, u32)) -> std::io::Result<()> {
    std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
    for item in fs::read_dir(dir)? {
        std::os::unix::fs::chown(item?.path(), Some(uid), Some(gid))?;
    }
    Ok(())
}

const NOBODY: u32 = 65534;

/// Makes the index dir read-only for the binary: as root (where mode bits do not stop writes)
/// the binary runs as nobody on a dir nobody owns with mode 0555; otherwise the dir is 0555.
fn make_read_only(env: &Sandbox) -> ReadOnly {
    let dir = env.index_dir();
    let metadata = fs::metadata(&dir).unwrap();
    let guard = ReadOnly {
        dir: dir.clone(),
        mode: metadata.mode() & 0o7777,
        owner: (metadata.uid(), metadata.gid()),
    };
    if rustix::process::geteuid().is_root() {
        open_to_others(env.root());
        chown_tree(&dir, (NOBODY, NOBODY)).unwrap();
    }
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    guard
}

/// The binary as the user the read-only test runs it as (nobody when the tests run as root).
fn crash_resume_unprivileged(env: &Sandbox) -> assert_cmd::Command {
    if rustix::process::geteuid().is_root() {
        assert_cmd::Command::from_std(crash_resume_as_nobody(env))
    } else {
        crash_resume(env)
    }
}

#[test]
fn read_only_index_dir_fails_and_leaves_the_index_untouched() {
    // With the lock file in place (any earlier write leaves one), the write fails at the temp
    // file; without it, at creating the lock file. Both are exit 1, the index as it was.
    for keep_lock_file in [true, false] {
        let (env, before) = with_one_entry();
        if !keep_lock_file {
            fs::remove_file(env.index_dir().join("index.json.flock")).unwrap();
        }
        let files_before = env.index_dir_files();
        let read_only = make_read_only(&env);
        let index_dir = env.index_dir();
        let index_dir = index_dir.to_str().unwrap();

        for args in [
            vec!["record", "T", "sid-t", "REPO"],
            vec!["touch", "S"],
            vec!["forget", "S"],
            vec!["prune", "1ms"],
        ] {
            crash_resume_unprivileged(&env)
                .args(&args)
                .assert()
                .code(1)
                .stdout("")
                .stderr(
                    contains("error:")
                        .and(contains(index_dir))
                        .and(contains("ermission denied")),
                );
            assert_eq!(
                env.index_bytes().unwrap(),
                before,
                "{args:?} (lock file kept: {keep_lock_file})"
            );
            assert_eq!(
                env.index_dir_files(),
                files_before,
                "{args:?} (lock file kept: {keep_lock_file})"
            );
        }
        // Reads still work.
        crash_resume_unprivileged(&env)
            .args(["resume-cmd", "S"])
            .assert()
            .code(0)
            .stdout("claude --resume SID\n")
            .stderr("");
        drop(read_only);
    }
}

#[test]
fn a_directory_index_path_leaves_no_lock_file_behind() {
    let env = Sandbox::default();
    let dir = env.root().join("a-dir");
    fs::create_dir(&dir).unwrap();
    crash_resume(&env)
        .args(["--path", dir.to_str().unwrap(), "record", "T", "s", "r"])
        .assert()
        .code(1)
        .stderr(contains("is a directory"));
    let mut files: Vec<String> = fs::read_dir(env.root())
        .unwrap()
        .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["a-dir", "config", "home", "state"],
        "a refused write leaves nothing"
    );
}

/// Whether `bytes` hold a C0 control other than the newline and the tab of the tables, DEL,
/// or a C1 control: what a terminal or a line editor would act on.
pub fn holds_control(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
}

/// An index another tool wrote with hostile values: an option-like session id, a working dir
/// holding readline's kill-line and a newline, a session id holding a terminal title escape,
/// and a repo holding a right-to-left override. `resume-cmd` refuses the first three (exit 1),
/// `restore` resumes none of them, and no output carries a control character; human output
/// shows the override escaped, `--json` exact.
#[test]
fn hostile_values_in_an_index_are_refused_and_never_printed_raw() {
    let env = Sandbox::default();
    let entry = |surface: &str, session: &str, repo: &str, cwd: Option<&str>| {
        let mut entry = serde_json::json!({
            "surfaceId": surface,
            "sessionId": session,
            "repo": repo,
            "role": null,
            "captured_at": 1_700_000_000_000u64,
            "last_active": 1_700_000_000_000u64,
            "provider": "claude",
        });
        if let Some(cwd) = cwd {
            entry["cwd"] = cwd.into();
        }
        entry
    };
    env.write_index(&[
        entry("tmux:s:2.0", "--dangerously-skip-permissions", "repo", None),
        entry("tmux:s:3.0", "sid-3", "repo", Some("/x/\u{15}touch X\n")),
        entry("tmux:s:4.0", "sid-\u{1b}]0;pwned\u{7}", "repo", Some("/w")),
        entry("tmux:s:5.0", "sid-5", "rtl\u{202e}gnp", Some("/w")),
    ]);
    let run = |args: &[&str]| {
        let output = crash_resume(&env).args(args).output().unwrap();
        assert!(!holds_control(&output.stdout), "{args:?}: {output:?}");
        assert!(!holds_control(&output.stderr), "{args:?}: {output:?}");
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };

    for (surface, why) in [
        ("tmux:s:2.0", "session id begins with '-'"),
        (
            "tmux:s:3.0",
            "its working dir contains a control character (U+0015) at byte 3",
        ),
        (
            "tmux:s:4.0",
            "session id contains a control character (U+001B)",
        ),
    ] {
        let (code, stdout, stderr) = run(&["resume-cmd", surface]);
        assert_eq!(code, Some(1), "{surface}: {stderr}");
        assert_eq!(stdout, "", "{surface}");
        assert!(
            stderr.contains(&format!("the entry of surface {surface} is refused")),
            "{surface}: {stderr}"
        );
        assert!(stderr.contains(why), "{surface}: {stderr}");
        assert!(
            stderr.contains("crash-resume forget"),
            "{surface}: {stderr}"
        );
    }
    // Not refused: only nothing of it is on this machine to resume.
    let (code, stdout, stderr) = run(&["resume-cmd", "tmux:s:5.0"]);
    assert_eq!(code, Some(4), "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("the preflight says fresh"), "{stderr}");

    let (code, stdout, stderr) = run(&["list"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"rtl\\u{202e}gnp\""), "{stdout}");
    assert!(!stdout.contains('\u{202e}'), "{stdout}");
    assert!(
        stderr.contains("entry tmux:s:2.0 is not usable"),
        "{stderr}"
    );
    assert!(
        stderr.contains("entry tmux:s:4.0 is not usable"),
        "{stderr}"
    );

    let (code, stdout, stderr) = run(&["restore"]);
    assert_eq!(code, Some(0), "{stderr}");
    let line = stdout
        .lines()
        .find(|line| line.starts_with("tmux:s:3.0\t"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains("not resumed: the entry of surface tmux:s:3.0 is refused"),
        "{line}"
    );
    assert!(!stdout.contains("sid-3 &&"), "{stdout}");

    let (code, stdout, _) = run(&["--json", "restore"]);
    assert_eq!(code, Some(0));
    let plan: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let items = plan["surfaces"].as_array().unwrap();
    let refused = items
        .iter()
        .find(|item| item["surface"] == "tmux:s:3.0")
        .unwrap();
    assert_eq!(refused["command"], serde_json::Value::Null, "{refused}");
    assert!(
        refused["refused"].as_str().unwrap().contains("U+0015"),
        "{refused}"
    );
    // --json stays exact: the override is a character of the JSON string, not an escape of ours.
    let kept = items
        .iter()
        .find(|item| item["surface"] == "tmux:s:5.0")
        .unwrap();
    assert_eq!(kept["repo"], "rtl\u{202e}gnp", "{kept}");
    assert_eq!(items.len(), 2, "{plan}");
}
