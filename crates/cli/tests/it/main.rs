//! Integration tests of the `crash-resume` binary: the real executable, run in a throwaway
//! directory per test, judged by its exit code, its stdout and stderr, and the index file it
//! leaves on disk.
//!
//! The binary under test is built with index-store's `fault-injection` feature (see the
//! dev-dependencies), so `CRASH_RESUME_FAULT=<point>:<action>` can stop, abort or fail a writer
//! at an exact line of the write path.

mod activity;
mod bad_input;
mod codex_capture;
#[cfg(feature = "real-cli")]
mod codex_tui;
mod concurrency;
mod crash_points;
mod crashes;
mod harness;
mod hook_log;
mod hooks;
mod install;
mod json;
mod manual;
mod matrix;
mod messages;
mod meta;
mod paths;
mod restore;
mod scenarios;
mod soak;
mod tables;
mod tmux_restore;
mod traps;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use assert_cmd::Command;
use assert_cmd::assert::Assert;
use predicates::Predicate;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_crash-resume");

pub const SECOND: u64 = 1000;
pub const MINUTE: u64 = 60 * SECOND;
pub const HOUR: u64 = 60 * MINUTE;
pub const DAY: u64 = 24 * HOUR;

/// Variables that would let the environment of whoever runs the tests leak into them.
const REMOVED_VARIABLES: [&str; 14] = [
    "CRASH_RESUME_PROFILE",
    "CRASH_RESUME_LOCK_TIMEOUT",
    "CRASH_RESUME_ALLOW_VOLATILE",
    "CRASH_RESUME_FAULT",
    "CRASH_RESUME_SURFACE",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "CMUX_SURFACE_ID",
    "TMUX",
    "TMUX_PANE",
    "ZELLIJ_PANE_ID",
    "ZELLIJ_SESSION_NAME",
    "WEZTERM_PANE",
    "KITTY_WINDOW_ID",
];

/// Where sandboxes go: `CARGO_TARGET_TMPDIR`, unless the build dir is itself on a volatile path
/// (a clone under `/tmp`), which the store refuses, or, when the tests run as root, sits under a
/// dir that other users cannot traverse (a checkout under `/root`, mode 0700), where the tests
/// that run the binary as nobody could not reach it; then `/var/tmp`, which survives reboots.
pub fn scratch_base() -> PathBuf {
    let preferred = camino::Utf8Path::new(env!("CARGO_TARGET_TMPDIR"));
    let durable = index_store::durability(preferred) == index_store::Durability::Durable;
    if durable && (!rustix::process::geteuid().is_root() || traversable_by_others(preferred)) {
        return preferred.into();
    }
    let base = PathBuf::from("/var/tmp/crash-resume-tests");
    fs::create_dir_all(&base).expect("create /var/tmp/crash-resume-tests");
    base
}

/// `path` and every dir above it let other users through (`o+x`).
fn traversable_by_others(path: &camino::Utf8Path) -> bool {
    path.ancestors()
        .all(|ancestor| fs::metadata(ancestor).is_ok_and(|metadata| metadata.mode() & 0o001 != 0))
}

/// One test's own directory (under [`scratch_base`], a durable filesystem: the store refuses
/// `/tmp`), with a home, state and config dir and an index path inside it.
#[derive(Debug)]
pub struct Sandbox {
    root: PathBuf,
    _dir: TempDir,
}

impl Default for Sandbox {
    fn default() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("sandbox-")
            .tempdir_in(scratch_base())
            .expect("create the sandbox dir");
        let root = dir
            .path()
            .canonicalize()
            .expect("canonicalize the sandbox dir");
        for sub in ["home", "state", "config"] {
            fs::create_dir(root.join(sub)).expect("create a sandbox subdir");
        }
        Sandbox { root, _dir: dir }
    }
}

impl Sandbox {
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub fn state_home(&self) -> PathBuf {
        self.root.join("state")
    }

    pub fn config_home(&self) -> PathBuf {
        self.root.join("config")
    }

    /// The directory the index lives in (created by the first write).
    pub fn index_dir(&self) -> PathBuf {
        self.root.join("index")
    }

    /// The index file every command of this sandbox uses (`CRASH_RESUME_INDEX_PATH`).
    pub fn index_path(&self) -> PathBuf {
        self.index_dir().join("index.json")
    }

    pub fn backup_path(&self) -> PathBuf {
        self.index_dir().join("index.json.bak")
    }

    /// The index file's bytes, `None` when there is none.
    pub fn index_bytes(&self) -> Option<Vec<u8>> {
        match fs::read(self.index_path()) {
            Ok(bytes) => Some(bytes),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => panic!("cannot read {}: {error}", self.index_path().display()),
        }
    }

    /// The index file parsed, checked to be a version 1 index.
    pub fn index(&self) -> Value {
        let bytes = self.index_bytes().expect("the index file exists");
        parse_index(&bytes, &self.index_path())
    }

    /// The entries object of the index file.
    pub fn entries(&self) -> serde_json::Map<String, Value> {
        match self.index().get("entries") {
            Some(Value::Object(entries)) => entries.clone(),
            other => panic!("the index has no entries object: {other:?}"),
        }
    }

    /// One entry of the index file.
    pub fn entry(&self, surface: &str) -> Option<Value> {
        self.entries().get(surface).cloned()
    }

    /// Writes a version 1 index holding `entries` (as [`entry`] builds them), as the JavaScript
    /// tool would have.
    pub fn write_index(&self, entries: &[Value]) {
        let entries: serde_json::Map<String, Value> = entries
            .iter()
            .map(|entry| {
                (
                    entry["surfaceId"].as_str().unwrap().to_string(),
                    entry.clone(),
                )
            })
            .collect();
        let document = json!({ "version": 1, "entries": entries });
        self.write_index_bytes(&serde_json::to_vec_pretty(&document).unwrap());
    }

    pub fn write_index_bytes(&self, bytes: &[u8]) {
        fs::create_dir_all(self.index_dir()).unwrap();
        fs::write(self.index_path(), bytes).unwrap();
    }

    /// The names of the files in the index dir, sorted.
    pub fn index_dir_files(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.index_dir())
            .map(|listing| {
                listing
                    .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Temp files of the write path left in the index dir (`.index.json.*.tmp`).
    pub fn temp_files(&self) -> Vec<String> {
        self.index_dir_files()
            .into_iter()
            .filter(|name| name.starts_with(".index.json.") && name.ends_with(".tmp"))
            .collect()
    }

    /// The copies of a corrupt index kept aside (`index.json.corrupt-*`).
    pub fn corrupt_copies(&self) -> Vec<String> {
        self.index_dir_files()
            .into_iter()
            .filter(|name| name.starts_with("index.json.corrupt-"))
            .collect()
    }
}

/// Parses an index file's bytes and checks it is a version 1 index with an entries object.
pub fn parse_index(bytes: &[u8], path: &Path) -> Value {
    let value: Value = serde_json::from_slice(bytes).unwrap_or_else(|error| {
        panic!(
            "index {} is not JSON ({error}): {:?}",
            path.display(),
            String::from_utf8_lossy(bytes)
        )
    });
    assert_eq!(
        value["version"],
        json!(1),
        "index {} version",
        path.display()
    );
    assert!(
        value["entries"].is_object(),
        "index {} entries: {value}",
        path.display()
    );
    value
}

/// A `std` command for `program` with the sandbox's environment: the index path, home, state
/// and config dirs inside the sandbox, and nothing from the caller's crash-resume settings.
pub fn sandboxed(env: &Sandbox, program: impl AsRef<OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command
        .current_dir(env.root())
        .env("CRASH_RESUME_INDEX_PATH", env.index_path())
        .env("HOME", env.home())
        .env("XDG_STATE_HOME", env.state_home())
        .env("XDG_CONFIG_HOME", env.config_home())
        .env("NO_COLOR", "1");
    for variable in REMOVED_VARIABLES {
        command.env_remove(variable);
    }
    command
}

/// The binary under test, in the sandbox's environment.
pub fn crash_resume(env: &Sandbox) -> Command {
    Command::from_std(sandboxed(env, BIN))
}

/// The binary under test as a `std` command, for spawning many or signalling one.
pub fn crash_resume_std(env: &Sandbox) -> std::process::Command {
    sandboxed(env, BIN)
}

/// Runs the binary with `args` and checks its exit code, stdout and stderr.
pub fn check(
    env: &Sandbox,
    args: &[&str],
    code: i32,
    stdout: impl Predicate<str>,
    stderr: impl Predicate<str>,
) -> Assert {
    crash_resume(env)
        .args(args)
        .assert()
        .code(code)
        .stdout(stdout)
        .stderr(stderr)
}

/// `record SURFACE SESSION REPO`, which must succeed.
pub fn record(env: &Sandbox, surface: &str, session: &str, repo: &str) {
    crash_resume(env)
        .args(["record", surface, session, repo])
        .assert()
        .success()
        .stdout(format!("recorded {surface} → {session} ({repo})\n"));
}

/// The current time in epoch milliseconds, as the index stores it.
pub fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// An entry in the index format of the JavaScript tool.
pub fn entry(
    surface: &str,
    session: &str,
    repo: &str,
    captured_at: u64,
    last_active: u64,
) -> Value {
    json!({
        "surfaceId": surface,
        "sessionId": session,
        "repo": repo,
        "role": null,
        "captured_at": captured_at,
        "last_active": last_active,
    })
}

/// The one-letter state of a process (`T` when stopped, `Z` a zombie): from `/proc/<pid>/stat`
/// on Linux, from `ps -o stat=` where there is no `/proc` (macOS).
pub fn process_state(pid: u32) -> Option<char> {
    if cfg!(target_os = "linux") {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        return stat.rsplit_once(')')?.1.trim_start().chars().next();
    }
    let output = std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .chars()
        .next()
}

/// A child that is killed and reaped if the test ends (or panics) before it is.
#[derive(Debug)]
pub struct Reaped(Option<Child>);

impl Reaped {
    pub fn new(child: Child) -> Reaped {
        Reaped(Some(child))
    }

    pub fn pid(&self) -> u32 {
        self.child().id()
    }

    fn child(&self) -> &Child {
        self.0.as_ref().expect("the child is not reaped yet")
    }

    pub fn signal(&self, signal: Signal) {
        rustix::process::kill_process(Pid::from_child(self.child()), signal)
            .expect("signal the child");
    }

    /// Blocks until the child has stopped itself (SIGSTOP at a fault point); panics if it
    /// exits instead.
    pub fn wait_until_stopped(&self) {
        let pid = Pid::from_child(self.child());
        let options = WaitIdOptions::STOPPED | WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
        let status = loop {
            match rustix::process::waitid(WaitId::Pid(pid), options) {
                Ok(Some(status)) => break status,
                Ok(None) => continue,
                Err(rustix::io::Errno::INTR) => continue,
                Err(error) => panic!("waitid on the child: {error}"),
            }
        };
        assert!(
            status.stopped(),
            "the child exited instead of stopping at its fault point ({status:?}); was the \
             binary built without index-store's fault-injection feature (for example by a \
             concurrent `cargo build` in the same target dir)?"
        );
        assert_eq!(
            process_state(self.pid()),
            Some('T'),
            "the state of a stopped child"
        );
    }

    pub fn wait(mut self) -> ExitStatus {
        self.0.take().unwrap().wait().expect("wait for the child")
    }

    pub fn wait_with_output(mut self) -> Output {
        self.0
            .take()
            .unwrap()
            .wait_with_output()
            .expect("wait for the child")
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A small deterministic PRNG (xorshift64*), seeded per run so a failure can be replayed.
#[derive(Debug)]
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }
}

/// The seed of this run: `CRASH_RESUME_TEST_SEED` to replay one, else the clock.
pub fn seed() -> u64 {
    std::env::var("CRASH_RESUME_TEST_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
}
