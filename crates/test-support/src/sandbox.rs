//! One test's own directory: a home, state and config dir and an index path inside it, on a
//! durable filesystem (the store refuses volatile paths such as `/tmp`) that other users can
//! reach when the tests run as root (some run the binary as nobody); and a command whose
//! environment points only into it.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

/// Variables that would let the environment of whoever runs the tests leak into them: every
/// variable crash-resume reads ([`resume_plan::variables`]) but the system's (the home, the XDG
/// dirs, `PATH`, which [`sandboxed`] sets or the tests need), so that a new agent's or
/// multiplexer's variable is cleared as soon as its facts name it.
pub fn removed_variables() -> Vec<&'static str> {
    resume_plan::variables::inheritable_by_tests().collect()
}

/// Where sandboxes go: `<build dir>/<profile>/test-sandboxes` (beside the test binary that
/// runs), unless that is on a volatile path (a clone under `/tmp`), which the store refuses,
/// or, when the tests run as root, sits under a dir that other users cannot traverse (a
/// checkout under `/root`, mode 0700), where the tests that run the binary as nobody could not
/// reach it; then `/var/tmp/crash-resume-tests-<checkout>`, which survives reboots, one per
/// checkout ([`checkout_mark`]).
pub fn scratch_base() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // <build dir>/<profile>/deps/<test binary>
    let preferred = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary runs from <build dir>/<profile>/deps")
        .join("test-sandboxes");
    let base = durable_or_var_tmp(&preferred, "tests");
    let base = if base == preferred
        && rustix::process::geteuid().is_root()
        && !traversable_by_others(&preferred)
    {
        var_tmp("tests", &preferred)
    } else {
        base
    };
    fs::create_dir_all(&base)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", base.display()));
    base
}

/// `preferred` when it is on a durable filesystem (the store accepts it), else
/// `/var/tmp/crash-resume-<name>-<checkout>`: what the tests and the xtask's sandboxes fall
/// back to when the build dir is on a volatile path. `<checkout>` names the build dir
/// ([`checkout_mark`]), so two clones testing at once each have their own.
pub fn durable_or_var_tmp(preferred: &Path, name: &str) -> PathBuf {
    let durable = camino::Utf8Path::from_path(preferred)
        .is_some_and(|path| index_store::durability(path) == index_store::Durability::Durable);
    if durable {
        preferred.to_path_buf()
    } else {
        var_tmp(name, preferred)
    }
}

fn var_tmp(name: &str, preferred: &Path) -> PathBuf {
    PathBuf::from(format!(
        "/var/tmp/crash-resume-{name}-{}",
        checkout_mark(preferred)
    ))
}

/// Eight hex digits that stand for `path` (FNV-1a of its bytes): the same for one checkout's
/// build dir every run, another for another checkout's.
pub fn checkout_mark(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let hash = path
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0x811c_9dc5_u32, |hash, byte| {
            (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
        });
    format!("{hash:08x}")
}

/// `path` and every dir above it let other users through (`o+x`); the nearest existing dir
/// stands for a path not created yet.
fn traversable_by_others(path: &Path) -> bool {
    path.ancestors()
        .filter(|ancestor| ancestor.exists())
        .all(|ancestor| fs::metadata(ancestor).is_ok_and(|metadata| metadata.mode() & 0o001 != 0))
}

/// Lets the user nobody reach `root` (for tests that run the binary as nobody): checks that
/// every dir above it is traversable by others ([`scratch_base`] picks such a place) and opens
/// `root` itself to them (0755).
pub fn open_to_others(root: &Path) {
    for ancestor in root.ancestors().skip(1) {
        let mode = fs::metadata(ancestor)
            .unwrap_or_else(|error| panic!("cannot stat {}: {error}", ancestor.display()))
            .mode();
        assert!(
            mode & 0o001 != 0,
            "{} is not traversable by others (mode {mode:o}); nobody cannot reach the sandbox",
            ancestor.display()
        );
    }
    fs::set_permissions(root, fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|error| panic!("cannot open {} to others: {error}", root.display()));
}

/// Makes a FIFO at `path` (that no one will ever write to).
#[cfg(not(target_vendor = "apple"))]
pub fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from(0o600),
        0,
    )
    .unwrap_or_else(|error| panic!("cannot make a FIFO at {}: {error}", path.display()));
}

/// Makes a FIFO at `path` (that no one will ever write to). rustix has no `mknodat` on Apple
/// platforms; the system's `mkfifo` does the same there.
#[cfg(target_vendor = "apple")]
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .args(["-m", "600"])
        .arg(path)
        .status()
        .unwrap_or_else(|error| panic!("cannot run mkfifo: {error}"));
    assert!(status.success(), "cannot make a FIFO at {}", path.display());
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
    /// The sandbox's own dir (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// `XDG_STATE_HOME`.
    pub fn state_home(&self) -> PathBuf {
        self.root.join("state")
    }

    /// `XDG_CONFIG_HOME`.
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

    /// The index's backup file.
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

    /// Writes a version 1 index holding `entries` (objects with a `surfaceId`), as the JavaScript
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

    /// Writes `bytes` as the index file.
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
/// and config dirs inside the sandbox, the boot id fixed (`CRASH_RESUME_BOOT_ID`), and nothing
/// from the caller's crash-resume settings.
pub fn sandboxed(env: &Sandbox, program: impl AsRef<OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    // Removed first: the sandbox's own values of some of them follow.
    for variable in removed_variables() {
        command.env_remove(variable);
    }
    command
        .current_dir(env.root())
        .env("CRASH_RESUME_INDEX_PATH", env.index_path())
        .env("HOME", env.home())
        .env("XDG_STATE_HOME", env.state_home())
        .env("XDG_CONFIG_HOME", env.config_home())
        // The boot every test runs in, the same on every machine (a test that reboots sets
        // another).
        .env("CRASH_RESUME_BOOT_ID", "sandbox-boot")
        .env("NO_COLOR", "1");
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandboxed_command_inherits_no_variable_crash_resume_reads_but_the_systems() {
        let env = Sandbox::default();
        let command = sandboxed(&env, "true");
        let envs: std::collections::BTreeMap<&OsStr, Option<&OsStr>> = command.get_envs().collect();
        let system = resume_plan::variables::SYSTEM.map(|(name, _)| name);
        for variable in resume_plan::variables::all() {
            let given = envs.get(OsStr::new(variable.name));
            if system.contains(&variable.name) {
                continue;
            }
            assert!(given.is_some(), "{} is inherited", variable.name);
        }
        for name in [
            "GEMINI_CLI_HOME",
            "QWEN_HOME",
            "QWEN_RUNTIME_DIR",
            "CMUX_SOCKET_PATH",
        ] {
            assert_eq!(envs.get(OsStr::new(name)), Some(&None), "{name} removed");
        }
        assert_eq!(
            envs.get(OsStr::new("CRASH_RESUME_BOOT_ID")),
            Some(&Some(OsStr::new("sandbox-boot"))),
            "the sandbox's own value outlives the removal"
        );
    }

    #[test]
    fn a_sandbox_has_its_dirs_on_a_durable_path_and_round_trips_an_index() {
        let env = Sandbox::default();
        for dir in [env.home(), env.state_home(), env.config_home()] {
            assert!(dir.is_dir(), "{}", dir.display());
        }
        assert!(env.root().starts_with(scratch_base()));
        assert_eq!(env.index_bytes(), None);
        let entry = json!({ "surfaceId": "tmux:a:0.0", "sessionId": "s" });
        env.write_index(std::slice::from_ref(&entry));
        assert_eq!(env.entry("tmux:a:0.0"), Some(entry));
        assert_eq!(env.index_dir_files(), ["index.json"]);
        let command = sandboxed(&env, "true");
        let home = command.get_envs().find(|(name, _)| *name == "HOME");
        assert_eq!(
            home,
            Some((OsStr::new("HOME"), Some(env.home().as_os_str())))
        );
    }

    #[test]
    fn a_volatile_build_dir_falls_back_to_var_tmp_a_dir_per_checkout() {
        let first = durable_or_var_tmp(Path::new("/tmp/clone/target"), "x");
        assert_eq!(
            first,
            PathBuf::from(format!(
                "/var/tmp/crash-resume-x-{}",
                checkout_mark(Path::new("/tmp/clone/target"))
            ))
        );
        assert_eq!(
            durable_or_var_tmp(Path::new("/tmp/clone/target"), "x"),
            first
        );
        assert_ne!(
            durable_or_var_tmp(Path::new("/tmp/other/target"), "x"),
            first
        );
    }
}
