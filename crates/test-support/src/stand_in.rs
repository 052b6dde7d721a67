//! The stand-in agent (`stand-in-agent`, a binary of this crate) as its users see it: where
//! its executable is (built on first use), the `claude` wrapper that runs it in a sandbox's bin
//! dir, and the log it writes.
//!
//! The binary has two modes, chosen by the wrapper:
//!
//! - `claude`: behaves like Claude Code wherever crash-resume looks, judged by
//!   [`crate::claude_model`] (a resume of an unreachable transcript is refused as the CLI
//!   refuses it), runs the hooks of its `settings.json`, keeps its sessions file and writes its
//!   transcript; every event goes to `$HOME/`[`LOG_FILE`] as one JSON [`Event`] a line. The
//!   reboot simulation runs it.
//! - `record`: only writes down how it was started, one line to a file the caller names
//!   (`pane=... pwd=... oldpwd=... config=... surface=... args=...`), and exits, or, asked to
//!   stay, fires the real SessionStart hook of a resume and stays as `sleep`. The CLI's restore
//!   tests run it.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// The name of the binary.
pub const BINARY: &str = "stand-in-agent";

/// The log of the `claude` mode, in `$HOME`.
pub const LOG_FILE: &str = "stand-in.log";

/// What the stand-in did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Started; `session` is its id, `loaded` the session `--resume` loaded.
    Start,
    /// `--resume` was refused: no conversation found.
    NotFound,
    /// A prompt was answered (`text`); the transcript was written.
    Prompt,
    /// `/clear`: `session` is the new id.
    Clear,
    /// `/fork-bg`: `text` is the background session the conversation continued in.
    Fork,
    /// `/exit`.
    Exit,
    /// The real CLI answered: `loaded` is the session whose transcript it appended to, `text`
    /// its exit status and what it printed.
    Real,
}

/// One line of the log.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    /// The agent's pid.
    pub pid: u32,
    /// What it did.
    pub kind: Kind,
    /// `tmux:<session>:<window>.<pane>` of the pane it runs in, if any.
    pub surface: Option<String>,
    /// Its working dir, resolved (as the CLI sees it).
    pub cwd: String,
    /// Its arguments.
    pub argv: Vec<String>,
    /// Its config dir (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: String,
    /// The session it holds.
    pub session: Option<String>,
    /// The session `--resume` loaded.
    pub loaded: Option<String>,
    /// What the event says besides (a prompt, a refusal, a forked session).
    pub text: Option<String>,
}

/// The events logged from byte `offset` on (a torn last line is skipped).
pub fn read_events(log: &Path, offset: u64) -> io::Result<Vec<Event>> {
    let bytes = match fs::read(log) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(io::Error::new(
                error.kind(),
                format!("cannot read {}: {error}", log.display()),
            ));
        }
    };
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let complete = bytes[start..]
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(start, |last| start + last + 1);
    bytes[start..complete]
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice(line).map_err(|error| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: not an event ({error}): {}",
                        log.display(),
                        String::from_utf8_lossy(line)
                    ),
                )
            })
        })
        .collect()
}

/// A random (version 4) UUID, as Claude Code's session ids are.
pub fn new_session_id() -> io::Result<String> {
    let mut bytes = random_bytes::<16>()?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let text = hex(&bytes);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &text[..8],
        &text[8..12],
        &text[12..16],
        &text[16..20],
        &text[20..]
    ))
}

/// `N` bytes from `/dev/urandom`.
pub fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    File::open("/dev/urandom").and_then(|mut file| file.read_exact(&mut bytes))?;
    Ok(bytes)
}

/// `bytes` as lower-case hex digits.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// One shell word: `'...'` with every `'` written as `'\''`.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Writes `bin_dir/claude`: a shell script that runs `exec <line> "$@"` (`line` is shell text,
/// quoted by the caller). A new file, not rewritten in place: a shell reading the old one is
/// not disturbed.
pub fn write_wrapper(bin_dir: &Path, line: &str) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(bin_dir)?;
    let path = bin_dir.join("claude");
    match fs::remove_file(&path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
        _ => {}
    }
    fs::write(&path, format!("#!/bin/sh\nexec {line} \"$@\"\n"))?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
}

/// The stand-in agent's executable for the running test: built into the build dir the test
/// binary runs from (`<build dir>/<profile>/deps/<test>`) when it is missing or older than this
/// crate's sources or the test binary. Panics when it cannot be built.
pub fn agent() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let target_dir = exe
            .ancestors()
            .nth(3)
            .expect("the test binary runs from <build dir>/<profile>/deps");
        build(target_dir).unwrap_or_else(|error| panic!("{error}"))
    })
}

/// Builds the stand-in agent (`cargo build -p test-support --bin stand-in-agent`) into
/// `target_dir` unless it is there and newer than this crate's sources and the running program;
/// its path.
pub fn build(target_dir: &Path) -> Result<PathBuf, String> {
    let binary = target_dir.join("debug").join(BINARY);
    if is_fresh(&binary) {
        return Ok(binary);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let output = Command::new(cargo)
        .args(["build", "--quiet", "--bin", BINARY, "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .output()
        .map_err(|error| format!("cannot run cargo to build {BINARY}: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo build --bin {BINARY} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    // Cargo leaves a binary it found up to date as it was: marked as built now, the next test
    // process finds it fresh without asking cargo again.
    // (Through a read-only handle: a test may be running it, so it cannot be opened for
    // writing.)
    File::open(&binary)
        .and_then(|file| file.set_modified(SystemTime::now()))
        .map_err(|error| format!("cannot mark {} as built: {error}", binary.display()))?;
    Ok(binary)
}

/// `binary` exists and is newer than every source file of this crate and the running program.
fn is_fresh(binary: &Path) -> bool {
    let modified = |path: &Path| fs::metadata(path).and_then(|metadata| metadata.modified());
    let Ok(built) = modified(binary) else {
        return false;
    };
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = vec![crate_dir.join("Cargo.toml")];
    let mut dirs = vec![crate_dir.join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                inputs.push(path);
            }
        }
    }
    inputs.extend(std::env::current_exe().ok());
    inputs
        .iter()
        .all(|input| modified(input).is_ok_and(|time: SystemTime| time <= built))
}
