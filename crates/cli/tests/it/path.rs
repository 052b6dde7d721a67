//! Where the index lives: `path`, the default location, and the refusal of volatile
//! filesystems (`/tmp`, `/dev/shm` where there is one, `$TMPDIR`, tmpfs) that a reboot wipes;
//! what `path` says without a home, and a control character in the path shown escaped.

use std::fs;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use predicates::str::{contains, is_empty};

use crate::messages::{TERMINAL_CONTROL, refused, shown_escaped};
use crate::snapshot::assert_cli_snapshot;
use crate::{Sandbox, check, crash_resume, record, sandboxed};

/// A directory on a volatile filesystem for one test, removed when the test ends.
#[derive(Debug)]
struct VolatileDir(PathBuf);

impl VolatileDir {
    /// `<base>/crash-resume-it-<sandbox name>`: unique per test, not created yet.
    fn new(base: &str, env: &Sandbox) -> VolatileDir {
        let name = env.root().file_name().unwrap().to_string_lossy();
        VolatileDir(Path::new(base).join(format!("crash-resume-it-{name}")))
    }

    fn index(&self) -> String {
        self.0.join("index.json").to_str().unwrap().to_string()
    }
}

/// Volatile dirs to try: `/tmp` everywhere, and `/dev/shm` where there is one (Linux; not macOS).
fn volatile_bases() -> Vec<&'static str> {
    ["/dev/shm", "/tmp"]
        .into_iter()
        .filter(|base| Path::new(base).is_dir())
        .collect()
}

impl Drop for VolatileDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn path_prints_the_index_in_use_and_durable() {
    let env = Sandbox::default();
    let expected = format!("{}\ndurable\n", env.index_path().display());
    check(
        &env,
        &["path"],
        0,
        predicate::eq(expected.as_str()),
        is_empty(),
    );
    record(&env, "S", "SID", "REPO");
    check(
        &env,
        &["path"],
        0,
        predicate::eq(expected.as_str()),
        is_empty(),
    );

    let other = env.root().join("elsewhere").join("idx.json");
    let other = other.to_str().unwrap();
    check(
        &env,
        &["--path", other, "path"],
        0,
        predicate::eq(format!("{other}\ndurable\n").as_str()),
        is_empty(),
    );
}

#[test]
fn default_path_follows_xdg_state_home_then_home() {
    let env = Sandbox::default();
    let with_xdg = sandboxed(&env, crate::BIN)
        .env_remove("CRASH_RESUME_INDEX_PATH")
        .arg("path")
        .output()
        .unwrap();
    assert!(with_xdg.status.success());
    let expected = env.state_home().join("crash-resume").join("index.json");
    assert_eq!(
        String::from_utf8(with_xdg.stdout).unwrap(),
        format!("{}\ndurable\n", expected.display())
    );

    let with_home = sandboxed(&env, crate::BIN)
        .env_remove("CRASH_RESUME_INDEX_PATH")
        .env_remove("XDG_STATE_HOME")
        .arg("path")
        .output()
        .unwrap();
    assert!(with_home.status.success());
    let expected = env.home().join(".local/state/crash-resume/index.json");
    assert_eq!(
        String::from_utf8(with_home.stdout).unwrap(),
        format!("{}\ndurable\n", expected.display())
    );
}

#[test]
fn volatile_paths_are_reported_by_path() {
    let env = Sandbox::default();
    for base in volatile_bases() {
        let volatile = VolatileDir::new(base, &env);
        let index = volatile.index();
        check(
            &env,
            &["--path", &index, "path"],
            0,
            predicate::str::starts_with(format!("{index}\nvolatile: under {base}"))
                .and(contains("--allow-volatile")),
            is_empty(),
        );
        let info = crash_resume(&env)
            .args(["--json", "--path", &index, "path"])
            .assert()
            .success();
        let info: serde_json::Value = serde_json::from_slice(&info.get_output().stdout).unwrap();
        assert_eq!(info["durable"], false);
        assert_eq!(info["volatile_reason"], format!("under {base}"));
        assert!(!volatile.0.exists(), "path creates nothing");
    }
}

#[test]
fn volatile_index_is_refused_without_allow_volatile() {
    let env = Sandbox::default();
    for base in volatile_bases() {
        let volatile = VolatileDir::new(base, &env);
        let index = volatile.index();
        check(
            &env,
            &["--path", &index, "record", "S", "SID", "REPO"],
            1,
            is_empty(),
            contains(index.as_str()).and(contains("--allow-volatile")),
        );
        assert!(
            !volatile.0.exists(),
            "a refused write creates nothing under {base}"
        );

        check(
            &env,
            &[
                "--path",
                &index,
                "--allow-volatile",
                "record",
                "S",
                "SID",
                "REPO",
            ],
            0,
            predicate::eq("recorded S → SID (REPO)\n"),
            is_empty(),
        );
        let stored: serde_json::Value =
            serde_json::from_slice(&fs::read(volatile.0.join("index.json")).unwrap()).unwrap();
        assert_eq!(stored["entries"]["S"]["sessionId"], "SID");

        // The environment variable allows it too.
        crash_resume(&env)
            .env("CRASH_RESUME_ALLOW_VOLATILE", "1")
            .args(["--path", &index, "record", "T", "SID-T", "REPO"])
            .assert()
            .success();
    }
    assert_eq!(
        env.index_bytes(),
        None,
        "the sandbox's own index was never written"
    );
}

#[test]
fn symlink_into_a_volatile_dir_is_refused() {
    let env = Sandbox::default();
    let volatile = VolatileDir::new("/tmp", &env);
    fs::create_dir_all(env.index_dir()).unwrap();
    std::os::unix::fs::symlink(volatile.0.join("index.json"), env.index_path()).unwrap();
    check(
        &env,
        &["record", "S", "SID", "REPO"],
        1,
        is_empty(),
        contains("/tmp").and(contains("--allow-volatile")),
    );
    assert!(!volatile.0.exists());
    check(
        &env,
        &["path"],
        0,
        predicate::str::starts_with(format!("{}\nvolatile", volatile.index())),
        is_empty(),
    );
}

/// A volatile dir named through `..` or through a symlink to `/tmp`, before the dir itself
/// exists (the first write would make it), is volatile by where it really leads.
#[test]
fn a_path_leading_into_tmp_before_it_exists_is_refused() {
    let env = Sandbox::default();
    let volatile = VolatileDir::new("/tmp", &env);
    let link = env.root().join("tmp-link");
    std::os::unix::fs::symlink("/tmp", &link).unwrap();
    let name = volatile.0.file_name().unwrap();
    let through_dots = Path::new("/var/tmp/../../tmp")
        .join(name)
        .join("index.json");
    let through_link = link.join(name).join("index.json");
    for index in [through_dots, through_link] {
        let index = index.to_str().unwrap();
        crash_resume(&env)
            .args(["--path", index, "path"])
            .assert()
            .success()
            .stdout(contains("volatile: under /tmp").and(contains("--allow-volatile")));
        crash_resume(&env)
            .args(["--path", index, "record", "S", "SID", "REPO"])
            .assert()
            .code(1)
            .stdout(is_empty())
            .stderr(contains("/tmp").and(contains("--allow-volatile")));
        assert!(!volatile.0.exists(), "{index}: nothing written");
    }
}

/// `$TMPDIR` is emptied by the system (macOS clears its `/var/folders/.../T` at boot): an index
/// under it is volatile wherever it is, by its name or through a symlink.
#[test]
fn an_index_under_tmpdir_is_volatile() {
    let env = Sandbox::default();
    let temp = env.root().join("tmpdir");
    fs::create_dir_all(&temp).unwrap();
    let link = env.root().join("tmpdir-link");
    std::os::unix::fs::symlink(&temp, &link).unwrap();
    for index in [temp.join("state/index.json"), link.join("index.json")] {
        let index = index.to_str().unwrap();
        crash_resume(&env)
            .env("TMPDIR", &temp)
            .args(["--path", index, "path"])
            .assert()
            .success()
            .stdout(contains("volatile: under the temp dir").and(contains("--allow-volatile")));
        crash_resume(&env)
            .env("TMPDIR", &temp)
            .args(["--path", index, "record", "S", "SID", "REPO"])
            .assert()
            .code(1)
            .stderr(contains("under the temp dir").and(contains("--allow-volatile")));
    }
    assert_eq!(fs::read_dir(&temp).unwrap().count(), 0, "nothing written");
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
    assert_cli_snapshot!(&env, "no_home", &stderr);
}

#[test]
fn path_says_a_volatile_index_is_refused_for_reads_too() {
    let env = Sandbox::default();
    let assert = crash_resume(&env)
        .args(["--path", "/dev/shm/crash-resume-never/index.json", "path"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert_cli_snapshot!(&env, "volatile", &stdout);
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
