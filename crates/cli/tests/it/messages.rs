//! What people read of every command: every index-store error, a missing surface, a bad value
//! from a variable and a path with control characters, through the real binary, each with its
//! exit code, its cause stated once and plain values (no Rust debug quoting). One table across
//! the commands (they share the index and its messages), so it stays one file; the messages of
//! one command are in its file (launcher config: `resume_cmd`; settings: `install`; the index
//! path: `path`).

use std::fs;
use std::os::unix::ffi::OsStrExt;

use crate::resume_cmd::resume_cmd_of_s;
use crate::snapshot::assert_cli_snapshot;
use crate::{Sandbox, crash_resume, record};

/// What a refused command printed: its exit code and its stderr.
pub fn refused(mut command: assert_cmd::Command, code: i32) -> String {
    let output = command.output().expect("run the binary");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "stderr: {stderr}");
    assert!(
        output.stdout.is_empty() || output.stdout == b"null\n",
        "nothing on stdout: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(stderr.starts_with("error: "), "one error line: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    stderr
}

/// `piece` is in `text` exactly once: a cause is stated once.
pub fn once(text: &str, piece: &str) {
    assert_eq!(
        text.matches(piece).count(),
        1,
        "{piece:?} stated exactly once in: {text}"
    );
}

/// No Rust debug formatting of a value reaches people.
pub fn plain(text: &str) {
    for debug in ["SurfaceId(", "SessionId(", "\\\"", "Os {", "kind:"] {
        assert!(!text.contains(debug), "{debug:?} in: {text}");
    }
}

/// Our lock on `<index>.flock`, held by this test process until dropped.
struct HeldLock(#[allow(dead_code)] fs::File);

fn hold_lock(env: &Sandbox) -> HeldLock {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(env.index_dir().join("index.json.flock"))
        .unwrap();
    // A waiter that gives up finds the holder from the kernel's table of locks.
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
        .expect("take the index lock");
    HeldLock(file)
}

#[test]
fn every_index_store_error_is_one_plain_line_with_its_cause_once() {
    // Volatile: a path under /tmp, refused for reads as for writes.
    let env = Sandbox::default();
    for (name, args) in [
        ("volatile_list", &["list"][..]),
        ("volatile_touch", &["touch", "S"]),
    ] {
        let mut command = crash_resume(&env);
        command.args(["--path", "/tmp/crash-resume-never/index.json"]);
        command.args(args);
        let stderr = refused(command, 1);
        plain(&stderr);
        assert_cli_snapshot!(&env, name, &stderr);
    }

    // NotUtf8: the index is a symlink to a name that is not UTF-8.
    let env = Sandbox::default();
    fs::create_dir_all(env.index_dir()).unwrap();
    std::os::unix::fs::symlink(
        std::ffi::OsStr::from_bytes(b"index-\xff.json"),
        env.index_path(),
    )
    .unwrap();
    let mut command = crash_resume(&env);
    command.arg("list");
    let stderr = refused(command, 1);
    assert_cli_snapshot!(&env, "not_utf8", &stderr);

    // IsDirectory.
    let env = Sandbox::default();
    fs::create_dir_all(env.index_path()).unwrap();
    let mut command = crash_resume(&env);
    command.args(["lookup", "S"]);
    let stderr = refused(command, 1);
    plain(&stderr);
    assert_cli_snapshot!(&env, "is_a_directory", &stderr);

    // Read: the index's dir is a regular file.
    let env = Sandbox::default();
    fs::write(env.root().join("a-file"), "").unwrap();
    let mut command = crash_resume(&env);
    command.args(["--path", "a-file/index.json", "list"]);
    let stderr = refused(command, 1);
    plain(&stderr);
    assert_cli_snapshot!(&env, "read", &stderr);

    // Write and NotDurable: the write path failing before and after the rename.
    for (name, fault) in [
        ("write", "temp-written:fail"),
        ("not_durable", "renamed:fail"),
    ] {
        let env = Sandbox::default();
        record(&env, "S", "SID", "REPO");
        let mut command = crash_resume(&env);
        command
            .env("CRASH_RESUME_FAULT", fault)
            .args(["touch", "S"]);
        let stderr = refused(command, 1);
        plain(&stderr);
        assert_cli_snapshot!(&env, name, &stderr);
    }

    // NewerVersion.
    let env = Sandbox::default();
    env.write_index_bytes(br#"{"version": 7, "entries": {}}"#);
    let mut command = crash_resume(&env);
    command.arg("list");
    let stderr = refused(command, 1);
    assert_cli_snapshot!(&env, "newer_version", &stderr);

    // LockTimeout: another process holds the lock (this test's; the snapshot filters its pid).
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let held = hold_lock(&env);
    let mut command = crash_resume(&env);
    command.args(["--lock-timeout", "50ms", "touch", "S"]);
    let stderr = refused(command, 1);
    drop(held);
    once(&stderr, &format!("pid {}, running", std::process::id()));
    plain(&stderr);
    assert_cli_snapshot!(&env, "lock_timeout", &stderr);

    // LockDirInTheWay: a stale JavaScript lock dir that is not empty.
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let js_lock = env.index_dir().join("index.json.lock");
    fs::create_dir(&js_lock).unwrap();
    fs::write(js_lock.join("junk"), "").unwrap();
    let times = fs::FileTimes::new()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(20));
    fs::File::open(&js_lock).unwrap().set_times(times).unwrap();
    let mut command = crash_resume(&env);
    command.args(["--lock-timeout", "50ms", "touch", "S"]);
    let stderr = refused(command, 1);
    plain(&stderr);
    assert_cli_snapshot!(&env, "lock_dir_in_the_way", &stderr);

    // Lock: the lock file cannot be opened (it is a directory).
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let lock = env.index_dir().join("index.json.flock");
    fs::remove_file(&lock).unwrap();
    fs::create_dir(&lock).unwrap();
    let mut command = crash_resume(&env);
    command.args(["touch", "S"]);
    let stderr = refused(command, 1);
    plain(&stderr);
    assert_cli_snapshot!(&env, "lock", &stderr);
}

#[test]
fn a_missing_surface_is_named_plainly_by_every_command() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let mut said = String::new();
    for args in [
        &["lookup", "tmux:nope:9.9"][..],
        &["resume-cmd", "tmux:nope:9.9"],
        &["touch", "tmux:nope:9.9"],
        &["forget", "tmux:nope:9.9"],
        &["preflight", "tmux:nope:9.9"],
    ] {
        let output = crash_resume(&env).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{args:?}: {stderr}");
        plain(&stderr);
        assert!(!stderr.contains('"'), "{args:?}: no quotes: {stderr}");
        said += &format!("{}\n{stderr}\n", args.join(" "));
    }
    assert_cli_snapshot!(&env, "missing_surface", said);
}

#[test]
fn a_bad_value_from_a_variable_names_the_variable_and_a_typed_one_does_not() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let mut typed = crash_resume(&env);
    typed.args(["--lock-timeout", "soon", "touch", "S"]);
    let typed = refused(typed, 2);
    assert_cli_snapshot!(&env, "lock_timeout_typed", &typed);
    let mut from_variable = crash_resume(&env);
    from_variable
        .env("CRASH_RESUME_LOCK_TIMEOUT", "soon")
        .args(["touch", "S"]);
    let from_variable = refused(from_variable, 2);
    assert_cli_snapshot!(&env, "lock_timeout_from_variable", &from_variable);

    let mut profile = resume_cmd_of_s(&env);
    profile.env("CRASH_RESUME_PROFILE", "nope");
    let profile = refused(profile, 2);
    assert_cli_snapshot!(&env, "profile_from_variable", &profile);
    let mut typed_profile = resume_cmd_of_s(&env);
    typed_profile
        .env("CRASH_RESUME_PROFILE", "golems")
        .args(["--profile", "nope"]);
    let typed_profile = refused(typed_profile, 2);
    assert_cli_snapshot!(&env, "profile_typed", &typed_profile);
}

/// A directory whose name would retitle a terminal (OSC 0) and ring its bell.
pub const TERMINAL_CONTROL: &str = "e\u{1b}]0;PWN\u{7}";

/// Nothing in `bytes` a terminal would act on: no C0 control but the line break, no DEL, no C1,
/// no bidirectional override; and the control sequence is there, spelled out.
pub fn shown_escaped(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for character in text.chars() {
        assert!(
            character == '\n'
                || !(character.is_control() || ('\u{202a}'..='\u{202e}').contains(&character)),
            "U+{:04X} reached the terminal: {text:?}",
            u32::from(character)
        );
    }
    assert!(
        text.contains(r"e\e]0;PWN\x07"),
        "the path spelled out: {text}"
    );
}

#[test]
fn an_error_about_a_path_shows_its_control_characters_escaped() {
    let env = Sandbox::default();
    let dir = env.root().join(TERMINAL_CONTROL);
    fs::create_dir_all(&dir).unwrap();
    test_support::sandbox::mkfifo(&dir.join("f.json"));
    let mut command = crash_resume(&env);
    command.arg("--path").arg(dir.join("f.json")).arg("list");
    let stderr = refused(command, 1);
    shown_escaped(stderr.as_bytes());
    assert!(stderr.contains("FIFO"), "{stderr}");
}
