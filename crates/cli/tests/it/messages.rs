//! What people read: every launcher-config error and every index-store error through the real
//! binary, each with its exit code, its cause stated once, plain values (no Rust debug quoting)
//! and advice that fits what was typed.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::{Sandbox, crash_resume, record, sandboxed};

/// What a refused command printed: its exit code and its stderr.
fn refused(mut command: assert_cmd::Command, code: i32) -> String {
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
fn once(text: &str, piece: &str) {
    assert_eq!(
        text.matches(piece).count(),
        1,
        "{piece:?} stated exactly once in: {text}"
    );
}

/// No Rust debug formatting of a value reaches people.
fn plain(text: &str) {
    for debug in ["SurfaceId(", "SessionId(", "\\\"", "Os {", "kind:"] {
        assert!(!text.contains(debug), "{debug:?} in: {text}");
    }
}

fn write_launchers(env: &Sandbox, text: &str) -> String {
    let dir = env.config_home().join("crash-resume");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("launchers.toml");
    fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn resume_cmd(env: &Sandbox) -> assert_cmd::Command {
    let mut command = crash_resume(env);
    command.args(["resume-cmd", "S"]);
    command
}

#[test]
fn every_launcher_config_error_is_one_plain_line_with_its_cause_once() {
    // (launchers.toml, exit code, pieces, the cause that must appear once)
    let cases: &[(&str, i32, &[&str], &str)] = &[
        (
            "nope = 1",
            2,
            &["is invalid at line 1, column 1", "fix the file"],
            "unknown field `nope`",
        ),
        (
            "[repos.api]\ncommand = \"apiClaude {nope} {session}\"",
            2,
            &["`repos.api.command`", "use {session}, {repo}"],
            "uses an unknown placeholder `{nope}`",
        ),
        (
            "[repos.api]\ncommand = \"apiClaude --continue\"",
            2,
            &["`repos.api.command`"],
            "does not use {session}",
        ),
        (
            "version = 2",
            2,
            &["`version`", "upgrade crash-resume"],
            "this crash-resume reads version 1",
        ),
        (
            "profile = \"nope\"",
            2,
            &["known profiles: golems", "(chosen by `profile` in"],
            "no launcher profile named `nope`",
        ),
    ];
    for (text, code, pieces, cause) in cases {
        let env = Sandbox::default();
        record(&env, "S", "SID", "api");
        let path = write_launchers(&env, text);
        let stderr = refused(resume_cmd(&env), *code);
        once(&stderr, cause);
        once(&stderr, &path);
        plain(&stderr);
        for piece in *pieces {
            assert!(stderr.contains(piece), "{text}: lacks {piece:?}: {stderr}");
        }
    }
}

#[test]
fn an_unreadable_launcher_config_is_a_failure_with_its_cause_once() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "api");
    fs::create_dir_all(env.config_home().join("crash-resume/launchers.toml")).unwrap();
    let stderr = refused(resume_cmd(&env), 1);
    once(&stderr, "it is a directory, not a regular file");
    once(&stderr, "cannot read launcher config");
    plain(&stderr);
}

#[test]
fn an_unknown_profile_reads_the_same_from_the_flag_and_from_the_file() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "api");
    let mut from_flag = resume_cmd(&env);
    from_flag.args(["--profile", "nope"]);
    let from_flag = refused(from_flag, 2);
    let path = write_launchers(&env, "profile = \"nope\"");
    let from_file = refused(resume_cmd(&env), 2);
    assert_eq!(
        from_file.replace(&format!(" (chosen by `profile` in {path})"), ""),
        from_flag
    );
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
    for args in [&["list"][..], &["touch", "S"]] {
        let mut command = crash_resume(&env);
        command.args(["--path", "/tmp/crash-resume-never/index.json"]);
        command.args(args);
        let stderr = refused(command, 1);
        once(&stderr, "which a reboot wipes");
        once(&stderr, "--allow-volatile");
        plain(&stderr);
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
    once(&stderr, "is not valid UTF-8");

    // IsDirectory.
    let env = Sandbox::default();
    fs::create_dir_all(env.index_path()).unwrap();
    let mut command = crash_resume(&env);
    command.args(["lookup", "S"]);
    let stderr = refused(command, 1);
    once(&stderr, "is a directory");
    plain(&stderr);

    // Read: the index's dir is a regular file.
    let env = Sandbox::default();
    fs::write(env.root().join("a-file"), "").unwrap();
    let mut command = crash_resume(&env);
    command.args(["--path", "a-file/index.json", "list"]);
    let stderr = refused(command, 1);
    once(&stderr, "cannot read index at");
    once(&stderr, "Not a directory");
    plain(&stderr);

    // Write and NotDurable: the write path failing before and after the rename.
    for (fault, pieces) in [
        (
            "temp-written:fail",
            &["cannot write", "the index was left as it was"],
        ),
        (
            "renamed:fail",
            &["could not be synced to disk", "power cut"],
        ),
    ] {
        let env = Sandbox::default();
        record(&env, "S", "SID", "REPO");
        let mut command = crash_resume(&env);
        command
            .env("CRASH_RESUME_FAULT", fault)
            .args(["touch", "S"]);
        let stderr = refused(command, 1);
        once(&stderr, "injected fault");
        for piece in pieces {
            once(&stderr, piece);
        }
        plain(&stderr);
    }

    // NewerVersion.
    let env = Sandbox::default();
    env.write_index_bytes(br#"{"version": 7, "entries": {}}"#);
    let mut command = crash_resume(&env);
    command.arg("list");
    let stderr = refused(command, 1);
    once(&stderr, "format version 7");

    // LockTimeout: another process holds the lock.
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let held = hold_lock(&env);
    let mut command = crash_resume(&env);
    command.args(["--lock-timeout", "50ms", "touch", "S"]);
    let stderr = refused(command, 1);
    drop(held);
    once(&stderr, "is locked by another process");
    once(&stderr, &format!("pid {}, running", std::process::id()));
    plain(&stderr);

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
    once(&stderr, "that is not empty is in the way");
    once(&stderr, "Directory not empty");
    once(&stderr, "remove it if no crash-resume-index process runs");
    plain(&stderr);

    // Lock: the lock file cannot be opened (it is a directory).
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let lock = env.index_dir().join("index.json.flock");
    fs::remove_file(&lock).unwrap();
    fs::create_dir(&lock).unwrap();
    let mut command = crash_resume(&env);
    command.args(["touch", "S"]);
    let stderr = refused(command, 1);
    once(&stderr, "cannot lock");
    once(&stderr, "Is a directory");
    plain(&stderr);
}

#[test]
fn no_home_at_all_is_said_plainly() {
    // As a user with no passwd entry and no HOME, no XDG dir and no --path, there is nowhere
    // to put the index. Only root can become such a user; elsewhere HOME is enough to unset
    // only when the passwd entry has no home, which cannot be arranged.
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let env = Sandbox::default();
    let mut command = sandboxed(&env, "setpriv");
    command
        .args([
            "--reuid",
            "43210",
            "--regid",
            "43210",
            "--clear-groups",
            "--",
        ])
        .arg(crate::BIN)
        .arg("path")
        .current_dir("/")
        .env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CRASH_RESUME_INDEX_PATH");
    let stderr = refused(assert_cmd::Command::from_std(command), 1);
    once(&stderr, "cannot find the home directory");
    once(&stderr, "--path");
}

#[test]
fn a_missing_surface_is_named_plainly_by_every_command() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
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
        assert!(
            stderr.contains("for surface tmux:nope:9.9"),
            "{args:?}: {stderr}"
        );
        plain(&stderr);
        assert!(!stderr.contains('"'), "{args:?}: no quotes: {stderr}");
    }
}

#[test]
fn path_says_a_volatile_index_is_refused_for_reads_too() {
    let env = Sandbox::default();
    let assert = crash_resume(&env)
        .args(["--path", "/dev/shm/crash-resume-never/index.json", "path"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("reads or writes"), "{stdout}");
}

#[test]
fn settings_advice_fits_what_was_typed() {
    let env = Sandbox::default();
    let settings = env.root().join("settings.json");
    fs::write(&settings, "{ not json").unwrap();
    let given = refused_install(&env, Some(&settings));
    assert!(!given.contains("--settings"), "{given}");
    let default = env.home().join(".claude/settings.json");
    fs::create_dir_all(default.parent().unwrap()).unwrap();
    fs::write(&default, "{ not json").unwrap();
    let not_given = refused_install(&env, None);
    assert!(not_given.contains("with --settings"), "{not_given}");
}

fn refused_install(env: &Sandbox, settings: Option<&Path>) -> String {
    let mut command = crash_resume(env);
    command.args(["hook", "install", "claude"]);
    if let Some(settings) = settings {
        command.arg("--settings").arg(settings);
    }
    let stderr = refused(command, 1);
    once(&stderr, "cannot parse");
    stderr
}

#[test]
fn a_bad_value_from_a_variable_names_the_variable_and_a_typed_one_does_not() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let mut typed = crash_resume(&env);
    typed.args(["--lock-timeout", "soon", "touch", "S"]);
    let typed = refused(typed, 2);
    assert!(typed.contains("invalid lock timeout soon:"), "{typed}");
    assert!(!typed.contains("CRASH_RESUME_LOCK_TIMEOUT"), "{typed}");
    let mut from_variable = crash_resume(&env);
    from_variable
        .env("CRASH_RESUME_LOCK_TIMEOUT", "soon")
        .args(["touch", "S"]);
    let from_variable = refused(from_variable, 2);
    once(
        &from_variable,
        "invalid lock timeout soon in CRASH_RESUME_LOCK_TIMEOUT",
    );

    let mut profile = resume_cmd(&env);
    profile.env("CRASH_RESUME_PROFILE", "nope");
    let profile = refused(profile, 2);
    assert!(
        profile.starts_with(
            "error: the profile in CRASH_RESUME_PROFILE: no launcher profile named `nope`"
        ),
        "{profile}"
    );
    let mut typed_profile = resume_cmd(&env);
    typed_profile
        .env("CRASH_RESUME_PROFILE", "golems")
        .args(["--profile", "nope"]);
    let typed_profile = refused(typed_profile, 2);
    assert!(
        typed_profile.starts_with("error: no launcher profile named `nope`"),
        "{typed_profile}"
    );
}

/// A directory whose name would retitle a terminal (OSC 0) and ring its bell.
const TERMINAL_CONTROL: &str = "e\u{1b}]0;PWN\u{7}";

/// Nothing in `bytes` a terminal would act on: no C0 control but the line break, no DEL, no C1,
/// no bidirectional override; and the control sequence is there, spelled out.
fn shown_escaped(bytes: &[u8]) {
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
fn path_shows_a_control_character_in_the_index_path_escaped() {
    let env = Sandbox::default();
    let dir = env.root().join(TERMINAL_CONTROL);
    fs::create_dir_all(&dir).unwrap();
    let output = crash_resume(&env)
        .arg("--path")
        .arg(dir.join("index.json"))
        .arg("path")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    shown_escaped(&output.stdout);
    let json = crash_resume(&env)
        .args(["--json", "--path"])
        .arg(dir.join("index.json"))
        .arg("path")
        .output()
        .unwrap();
    let document: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        document["path"].as_str().map(Path::new),
        Some(dir.join("index.json").as_path()),
        "--json stays exact"
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

#[test]
fn hook_install_shows_a_control_character_in_the_settings_path_escaped() {
    let env = Sandbox::default();
    let dir = env.root().join(TERMINAL_CONTROL);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("s.json"), "{}\n").unwrap();
    let output = crash_resume(&env)
        .args(["hook", "install", "claude", "--settings"])
        .arg(dir.join("s.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    shown_escaped(&[output.stdout, output.stderr].concat());
    let settings = fs::read_to_string(dir.join("s.json")).unwrap();
    assert!(settings.contains("SessionStart"), "installed: {settings}");
}
