//! A private zellij for the live tests: the pinned executable (`cargo xtask zellij install`
//! builds it, `CRASH_RESUME_ZELLIJ` names it), and an instance of it confined to one dir (its
//! config, socket, cache and temp dirs), with its sessions' panes and server process.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The variable that names the zellij executable the live tests run.
pub const VARIABLE: &str = "CRASH_RESUME_ZELLIJ";

/// The configuration every test instance runs with: no tips or release notes over the panes,
/// the layout written to the cache every second (so a test can wait until it holds what it
/// killed zellij to lose), and `bash` in new panes.
const CONFIG: &str = "show_startup_tips false\n\
    show_release_notes false\n\
    session_serialization true\n\
    serialization_interval 1\n\
    default_shell \"bash\"\n";

/// The zellij executable the live tests run; the test fails (never skips) when it is missing.
pub fn executable() -> PathBuf {
    let Some(path) = std::env::var_os(VARIABLE).filter(|path| !path.is_empty()) else {
        panic!(
            "{VARIABLE} is not set: build zellij with `cargo xtask zellij install` and set \
             {VARIABLE} to the path it prints (`cargo xtask test` does both)"
        );
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "{VARIABLE} names {}, which is not a file; run `cargo xtask zellij install`",
        path.display()
    );
    path
}

/// One zellij instance, all of its files under `root`: the sockets in a short dir of its own
/// (a Unix socket path holds at most 107 bytes).
#[derive(Debug)]
pub struct Instance {
    executable: PathBuf,
    root: PathBuf,
    sockets: tempfile::TempDir,
}

impl Instance {
    /// An instance of `executable` under `root` (created), with its configuration written.
    pub fn new(executable: PathBuf, root: &Path) -> Instance {
        for dir in ["config", "cache", "tmp"] {
            std::fs::create_dir_all(root.join(dir)).expect("create a zellij dir");
        }
        std::fs::write(root.join("config").join("config.kdl"), CONFIG)
            .expect("write zellij's config");
        let sockets = tempfile::Builder::new()
            .prefix("crz-")
            .tempdir_in("/tmp")
            .expect("create zellij's socket dir");
        Instance {
            executable,
            root: root.to_path_buf(),
            sockets,
        }
    }

    /// The variables that confine zellij (and every program started in its panes) to this
    /// instance: `ZELLIJ_CONFIG_DIR`, `ZELLIJ_SOCKET_DIR`, `XDG_CACHE_HOME`, `TMPDIR`.
    pub fn vars(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("ZELLIJ_CONFIG_DIR", self.root.join("config")),
            ("ZELLIJ_SOCKET_DIR", self.sockets.path().to_path_buf()),
            ("XDG_CACHE_HOME", self.root.join("cache")),
            ("TMPDIR", self.root.join("tmp")),
        ]
    }

    /// `command` with this instance's variables, and none of a zellij the caller runs in.
    pub fn confine(&self, command: &mut Command) {
        for (name, value) in self.vars() {
            command.env(name, value);
        }
        for name in ["ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"] {
            command.env_remove(name);
        }
    }

    /// `zellij ARGS` in this instance: its stdout, or what it said when it failed.
    pub fn try_zellij(&self, args: &[&str]) -> Result<String, String> {
        let mut command = Command::new(&self.executable);
        self.confine(&mut command);
        let output = command
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|error| format!("cannot run zellij: {error}"))?;
        if !output.status.success() {
            return Err(format!(
                "zellij {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    }

    /// `zellij --session SESSION action ARGS`, which must succeed.
    pub fn action(&self, session: &str, args: &[&str]) -> String {
        let mut all = vec!["--session", session, "action"];
        all.extend_from_slice(args);
        self.try_zellij(&all).unwrap_or_else(|error| panic!("{error}"))
    }

    /// The terminal panes of a session (`list-panes --all --json`), none when it cannot be
    /// read (not running, or one of zellij's empty answers).
    pub fn panes(&self, session: &str) -> Vec<Value> {
        let listing = self
            .try_zellij(&[
                "--session",
                session,
                "action",
                "list-panes",
                "--all",
                "--json",
            ])
            .unwrap_or_default();
        let panes: Vec<Value> = serde_json::from_str(&listing).unwrap_or_default();
        panes
            .into_iter()
            .filter(|pane| pane["is_plugin"] == false)
            .collect()
    }

    /// The session's layout as zellij last wrote it to its cache (empty before it has).
    pub fn serialized_layout(&self, session: &str) -> String {
        let cache = self.root.join("cache").join("zellij");
        let Ok(contracts) = std::fs::read_dir(&cache) else {
            return String::new();
        };
        contracts
            .filter_map(Result::ok)
            .map(|contract| {
                contract
                    .path()
                    .join("session_info")
                    .join(session)
                    .join("session-layout.kdl")
            })
            .find_map(|layout| std::fs::read_to_string(layout).ok())
            .unwrap_or_default()
    }

    /// The pid of the server of `session` (`zellij --server <socket dir>/.../<session>`),
    /// from `/proc`.
    pub fn server_pid(&self, session: &str) -> Option<u32> {
        let sockets = self.sockets.path().to_string_lossy().into_owned();
        std::fs::read_dir("/proc").ok()?.find_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args: Vec<String> = cmdline
                .split(|byte| *byte == 0)
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect();
            let server = args.iter().position(|arg| arg == "--server")?;
            let socket = args.get(server + 1)?;
            (socket.starts_with(&sockets) && socket.ends_with(&format!("/{session}")))
                .then_some(pid)
        })
    }
}

impl Drop for Instance {
    /// Every session of the instance killed, so that no server outlives its test.
    fn drop(&mut self) {
        let _ = self.try_zellij(&["kill-all-sessions", "--yes"]);
    }
}
