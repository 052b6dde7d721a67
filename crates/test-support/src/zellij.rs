//! A private zellij for the live tests: the pinned executable (`cargo xtask zellij install`
//! builds it, `CRASH_RESUME_ZELLIJ` names it), and an instance of it confined to one dir (its
//! config, socket, cache and temp dirs), with its sessions' panes and server process.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt as _;
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
        self.try_zellij(&all)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// The terminal panes of a session (`list-panes --all --json`), none when it cannot be
    /// read (not running). zellij now and then answers a running session with nothing: the
    /// listing is asked for up to three times.
    pub fn panes(&self, session: &str) -> Vec<Value> {
        for _ in 0..3 {
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
            let terminals: Vec<Value> = panes
                .into_iter()
                .filter(|pane| pane["is_plugin"] == false)
                .collect();
            if !terminals.is_empty() {
                return terminals;
            }
        }
        Vec::new()
    }

    /// The session's layout as zellij last wrote it to its cache (empty before it has).
    pub fn serialized_layout(&self, session: &str) -> String {
        self.layout_path(session)
            .and_then(|layout| std::fs::read_to_string(layout).ok())
            .unwrap_or_default()
    }

    /// When zellij last wrote the session's layout to its cache.
    pub fn layout_written(&self, session: &str) -> Option<std::time::SystemTime> {
        std::fs::metadata(self.layout_path(session)?)
            .and_then(|metadata| metadata.modified())
            .ok()
    }

    fn layout_path(&self, session: &str) -> Option<PathBuf> {
        let cache = self.root.join("cache").join("zellij");
        std::fs::read_dir(&cache)
            .ok()?
            .filter_map(Result::ok)
            .map(|contract| {
                contract
                    .path()
                    .join("session_info")
                    .join(session)
                    .join("session-layout.kdl")
            })
            .find(|layout| layout.is_file())
    }

    /// Whether a shell of `session` runs (a process whose environment names the session and
    /// this instance's socket dir): a server is past its start once it runs its
    /// first shell, and one that a client connects to before that can panic.
    pub fn runs_a_shell(&self, session: &str) -> bool {
        let wanted = OsString::from(format!("ZELLIJ_SESSION_NAME={session}"));
        let mut sockets = OsString::from("ZELLIJ_SOCKET_DIR=");
        sockets.push(self.sockets.path());
        crate::process::processes()
            .into_iter()
            .filter(|process| process.name == "bash")
            .any(|shell| {
                crate::process::environment(shell.pid).is_some_and(|environment| {
                    environment.contains(&wanted) && environment.contains(&sockets)
                })
            })
    }

    /// What zellij lists and the end of its log, for a failure's message.
    pub fn diagnostics(&self) -> String {
        let listing = self
            .try_zellij(&["list-sessions", "--no-formatting"])
            .unwrap_or_else(|error| error);
        let log = std::fs::read_dir(self.root.join("tmp"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|dir| dir.path().join("zellij-log").join("zellij.log"))
            .find_map(|log| std::fs::read_to_string(log).ok())
            .unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "zellij lists:\n{listing}\nthe end of its log:\n{}",
            tail.join("\n")
        )
    }

    /// The pid of the server of `session` (`zellij --server <socket dir>/.../<session>`).
    pub fn server_pid(&self, session: &str) -> Option<u32> {
        let sockets = self.sockets.path().as_os_str().as_bytes();
        let socket_name = format!("/{session}");
        crate::process::all_pids().into_iter().find(|pid| {
            let Some(arguments) = crate::process::command_line(*pid) else {
                return false;
            };
            arguments
                .iter()
                .position(|argument| argument == "--server")
                .and_then(|server| arguments.get(server + 1))
                .is_some_and(|socket| {
                    let socket = socket.as_bytes();
                    socket.starts_with(sockets) && socket.ends_with(socket_name.as_bytes())
                })
        })
    }
}

impl Drop for Instance {
    /// Every session of the instance killed, so that no server outlives its test.
    fn drop(&mut self) {
        let _ = self.try_zellij(&["kill-all-sessions", "--yes"]);
    }
}

/// How long the story waits for something zellij or an agent does.
const STORY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Calls `probe` until it returns `Some`; an error naming `what` after [`STORY_DEADLINE`].
fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> Result<T, String> {
    let started = std::time::Instant::now();
    loop {
        if let Some(found) = probe() {
            return Ok(found);
        }
        if started.elapsed() > STORY_DEADLINE {
            return Err(format!(
                "gave up after {STORY_DEADLINE:?} waiting for {what}"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The session the story's agents run in, which the restore resurrects.
pub const STORY_SESSION: &str = "story";

/// The session whose agent's pane the user made busy before the restore.
pub const SIDE_SESSION: &str = "side";

/// How many agent panes the story runs.
pub const STORY_PANES: usize = 4;

/// What the story is played with: the instance, how to attach a client in a terminal, and
/// `crash-resume` in the agents' environment.
#[allow(missing_debug_implementations, reason = "it holds closures")]
pub struct Story<'a> {
    /// The zellij instance.
    pub zellij: &'a Instance,
    /// Starts a shell command line (a zellij client) in a terminal of its own, such as a tmux
    /// pane, and returns at once.
    pub attach: &'a dyn Fn(&str),
    /// The `crash-resume` executable the agents' hooks run.
    pub crash_resume: &'a Path,
    /// `crash-resume` in the agents' environment (the story adds the instance's variables and
    /// the arguments).
    pub command: &'a dyn Fn() -> Command,
    /// The dir first on the agents' `PATH`: the story puts `zellij` and a stand-in `claude`
    /// there.
    pub bin: &'a Path,
    /// A dir for the story's own files (payloads, the stand-in's runs).
    pub scratch: &'a Path,
    /// The recorded surfaces and their sessions, from the index.
    pub surfaces: &'a dyn Fn() -> Vec<(String, String)>,
    /// Four agents, each its working dir and its session (with a transcript): three in
    /// [`STORY_SESSION`], the last in [`SIDE_SESSION`].
    pub agents: [(PathBuf, String); 4],
}

/// One run of the stand-in `claude`: the zellij pane it ran in, its surface, its dir, its
/// arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// `ZELLIJ_PANE_ID`.
    pub pane: String,
    /// `CRASH_RESUME_SURFACE`.
    pub surface: String,
    /// Its working dir.
    pub dir: String,
    /// Its arguments.
    pub args: String,
}

/// One `crash-resume --json restore --apply zellij`.
#[derive(Debug)]
pub struct Restored {
    /// Its exit code.
    pub code: Option<i32>,
    /// Each surface's `applied`.
    pub applied: BTreeMap<String, Value>,
    /// What it said on stderr.
    pub stderr: String,
}

/// What the story saw.
#[derive(Debug)]
pub struct Observed {
    /// The surfaces the hook recorded, in the order of `Story::agents`.
    pub surfaces: Vec<String>,
    /// Each surface's pane name, and whether a pane bore it before the crash.
    pub named: Vec<(String, bool)>,
    /// The side session's pane ids by name, before the crash and once its client resurrected
    /// it.
    pub renumbered: (BTreeMap<String, u64>, BTreeMap<String, u64>),
    /// The story session's pane ids by name after the restore.
    pub story_after: BTreeMap<String, u64>,
    /// The two `restore --apply zellij` run at once.
    pub first: [Restored; 2],
    /// The stand-in's runs after the two restores.
    pub runs: Vec<Run>,
    /// The busy pane's id before the restores and after them.
    pub busy_pane: (Option<u64>, Option<u64>),
    /// The `restore --apply zellij` run after them.
    pub second: Restored,
    /// How many runs the stand-in made in all.
    pub runs_in_all: usize,
}

const STAND_IN: &str = "#!/bin/sh\nprintf '%s\\t%s\\t%s\\t%s\\n' \"${ZELLIJ_PANE_ID-}\" \
    \"${CRASH_RESUME_SURFACE-}\" \"$PWD\" \"$*\" >> \"$0.runs\"\nexec sleep 600\n";

fn runs(bin: &Path) -> Vec<Run> {
    std::fs::read_to_string(bin.join("claude.runs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut fields = line.split('\t');
            Some(Run {
                pane: fields.next()?.to_string(),
                surface: fields.next()?.to_string(),
                dir: fields.next()?.to_string(),
                args: fields.next()?.to_string(),
            })
        })
        .collect()
}

fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl Story<'_> {
    fn ids(&self, session: &str) -> BTreeMap<String, u64> {
        self.zellij
            .panes(session)
            .into_iter()
            .filter_map(|pane| Some((pane["title"].as_str()?.to_string(), pane["id"].as_u64()?)))
            .collect()
    }

    /// Starts `crash-resume --json restore --apply zellij`.
    fn spawn_restore(&self) -> Result<std::process::Child, String> {
        let mut command = (self.command)();
        self.zellij.confine(&mut command);
        command
            .args(["--json", "restore", "--apply", "zellij"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|error| format!("cannot run crash-resume: {error}"))
    }

    /// Waits for a restore [`Story::spawn_restore`] started, and reads what it did.
    fn restored(child: std::process::Child) -> Result<Restored, String> {
        let output = child
            .wait_with_output()
            .map_err(|error| format!("cannot wait for crash-resume: {error}"))?;
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let document: Value = serde_json::from_slice(&output.stdout)
            .map_err(|error| format!("restore printed no JSON ({error}): {stderr}"))?;
        let applied = document["surfaces"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| {
                Some((
                    item["surface"].as_str()?.to_string(),
                    item["applied"].clone(),
                ))
            })
            .collect();
        Ok(Restored {
            code: output.status.code(),
            applied,
            stderr,
        })
    }

    /// Attaches a client to `session` (creating or resurrecting it) and waits until zellij
    /// runs a shell or a held pane there.
    fn attach_to(&self, session: &str) -> Result<(), String> {
        (self.attach)(&format!("zellij attach --create {}", shell_quote(session)));
        wait_for(
            &format!("zellij session {session} to run its first shell"),
            || self.zellij.runs_a_shell(session).then_some(()),
        )?;
        wait_for(
            &format!("zellij session {session} to show its panes"),
            || {
                let panes = self.zellij.panes(session);
                (!panes.is_empty()).then_some(())
            },
        )
    }

    /// Starts agent `n` in a new pane of `session`: the real hook fired, then it stays.
    fn start_agent(&self, session: &str, n: usize) -> Result<(), String> {
        let (dir, id) = &self.agents[n];
        let payload = self.scratch.join(format!("payload-{n}.json"));
        let json = serde_json::json!({
            "session_id": id,
            "cwd": dir,
            "hook_event_name": "SessionStart",
            "source": "startup",
        });
        std::fs::write(&payload, json.to_string()).map_err(|error| error.to_string())?;
        let program = format!(
            "{} hook claude < {}; exec sleep 600",
            shell_quote(&self.crash_resume.to_string_lossy()),
            shell_quote(&payload.to_string_lossy())
        );
        let before = (self.surfaces)().len();
        let payload_name = payload.to_string_lossy().into_owned();
        // An answer of nothing or a failure may still have made the pane, or not: the pane is
        // created again only when zellij lists no pane running this agent's program.
        for _ in 0..3 {
            let _ = self.zellij.try_zellij(&[
                "--session",
                session,
                "action",
                "new-pane",
                "--cwd",
                &dir.to_string_lossy(),
                "--",
                "/bin/sh",
                "-c",
                &program,
            ]);
            // Not made: not listed for 2 s on end.
            let mut listed_at = std::time::Instant::now();
            let recorded = wait_for(&format!("agent {n}'s pane"), || {
                if (self.surfaces)().len() > before {
                    return Some(true);
                }
                let listed = self.zellij.panes(session).iter().any(|pane| {
                    pane["terminal_command"]
                        .as_str()
                        .is_some_and(|command| command.contains(&payload_name))
                });
                if listed {
                    listed_at = std::time::Instant::now();
                }
                (listed_at.elapsed() > std::time::Duration::from_secs(2)).then_some(false)
            });
            if recorded == Ok(true) {
                return Ok(());
            }
            if recorded.is_err() {
                break;
            }
        }
        wait_for(&format!("agent {n}'s hook to record its pane"), || {
            ((self.surfaces)().len() > before).then_some(())
        })
    }

    fn kill_server(&self, session: &str) -> Result<(), String> {
        let pid = self
            .zellij
            .server_pid(session)
            .ok_or_else(|| format!("no server of zellij session {session}"))?;
        let raw = rustix::process::Pid::from_raw(pid.cast_signed())
            .ok_or_else(|| format!("pid {pid}"))?;
        // zellij rewrites the layout (each second, when it changed); killed in the middle of
        // a write, it lost the session once (no longer listed for resurrection). The kill
        // comes once the layout has not been written for 1.5 s.
        let mut last = (
            self.zellij.layout_written(session),
            std::time::Instant::now(),
        );
        wait_for(
            &format!("zellij to stop writing {session}'s layout"),
            || {
                let written = self.zellij.layout_written(session);
                if written != last.0 {
                    last = (written, std::time::Instant::now());
                }
                (last.1.elapsed() > std::time::Duration::from_millis(1500)).then_some(())
            },
        )?;
        rustix::process::kill_process(raw, rustix::process::Signal::KILL)
            .map_err(|error| format!("cannot SIGKILL {pid}: {error}"))?;
        wait_for(&format!("zellij to list {session} as exited"), || {
            let listing = self
                .zellij
                .try_zellij(&["list-sessions", "--no-formatting"])
                .unwrap_or_default();
            listing
                .lines()
                .any(|line| line.starts_with(&format!("{session} [")) && line.contains("EXITED"))
                .then_some(())
        })
    }

    /// The whole story: three agents in [`STORY_SESSION`] (after a pane that is then closed,
    /// so that the resurrected session renumbers its panes) and one in [`SIDE_SESSION`], each
    /// captured by the real hook; both servers killed with SIGKILL once zellij has saved the
    /// names in their layouts; the side session resurrected by a client and its agent's pane
    /// made busy; then two restores at once, and a third after them.
    pub fn play(&self) -> Result<Observed, String> {
        self.play_through()
            .map_err(|error| format!("{error}\n{}", self.zellij.diagnostics()))
    }

    fn play_through(&self) -> Result<Observed, String> {
        let link = self.bin.join("zellij");
        if !link.exists() {
            std::os::unix::fs::symlink(&self.zellij.executable, &link)
                .map_err(|error| format!("cannot link zellij: {error}"))?;
        }
        let claude = self.bin.join("claude");
        std::fs::write(&claude, STAND_IN).map_err(|error| error.to_string())?;
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755))
            .map_err(|error| error.to_string())?;

        // In each session a pane opened before the agents' and closed after them, so that
        // zellij renumbers the agents' panes when it resurrects the session.
        for (session, agents) in [(STORY_SESSION, 0..3), (SIDE_SESSION, 3..4)] {
            self.attach_to(session)?;
            // zellij now and then answers a call with nothing (or a failure), having done it or
            // not: the pane is found by its name, and made again when it is not there.
            let mut doomed = None;
            for _ in 0..3 {
                let _ = self.zellij.try_zellij(&[
                    "--session",
                    session,
                    "action",
                    "new-pane",
                    "--name",
                    "doomed",
                    "--",
                    "sleep",
                    "600",
                ]);
                let started = std::time::Instant::now();
                doomed = wait_for("the doomed pane", || {
                    let id = self.ids(session).get("doomed").copied();
                    match id {
                        Some(id) => Some(Some(format!("terminal_{id}"))),
                        None if started.elapsed() > std::time::Duration::from_secs(2) => Some(None),
                        None => None,
                    }
                })?;
                if doomed.is_some() {
                    break;
                }
            }
            let doomed = doomed.ok_or("zellij did not make the doomed pane in three tries")?;
            for n in agents {
                self.start_agent(session, n)?;
            }
            self.zellij.try_zellij(&[
                "--session",
                session,
                "action",
                "close-pane",
                "--pane-id",
                &doomed,
            ])?;
        }

        let all = (self.surfaces)();
        let surfaces: Vec<String> = self
            .agents
            .iter()
            .map(|(_, id)| {
                all.iter()
                    .find(|(_, session)| session == id)
                    .map(|(surface, _)| surface.clone())
                    .unwrap_or_default()
            })
            .collect();
        let name_of = |surface: &str| surface.rsplit(':').next().unwrap_or_default().to_string();
        let story_titles = self.ids(STORY_SESSION);
        let side_titles = self.ids(SIDE_SESSION);
        let named = surfaces
            .iter()
            .map(|surface| {
                let name = name_of(surface);
                let bears = story_titles.contains_key(&name) || side_titles.contains_key(&name);
                (name, bears)
            })
            .collect::<Vec<_>>();
        for (session, names) in [(STORY_SESSION, &named[..]), (SIDE_SESSION, &named[..])] {
            let titles = self.ids(session);
            let wanted: Vec<&String> = names
                .iter()
                .map(|(name, _)| name)
                .filter(|name| titles.contains_key(*name))
                .collect();
            wait_for(&format!("zellij to save {session}'s pane names"), || {
                let layout = self.zellij.serialized_layout(session);
                (wanted.iter().all(|name| layout.contains(name.as_str()))
                    && !layout.contains("doomed"))
                .then_some(())
            })?;
        }
        let side_before = self.ids(SIDE_SESSION);
        self.kill_server(STORY_SESSION)?;
        self.kill_server(SIDE_SESSION)?;

        // The user brings the side session back and runs something in its agent's pane.
        self.attach_to(SIDE_SESSION)?;
        let side_name = named
            .last()
            .map(|(name, _)| name.clone())
            .unwrap_or_default();
        let held = wait_for("the side agent's pane to come back", || {
            self.ids(SIDE_SESSION).get(&side_name).copied()
        })?;
        let side_resurrected = self.ids(SIDE_SESSION);
        // As above: a failure or an answer of nothing says nothing; the pane's program tells.
        let mut busy_before = None;
        for _ in 0..3 {
            let held = self
                .ids(SIDE_SESSION)
                .get(&side_name)
                .copied()
                .unwrap_or(held);
            let _ = self.zellij.try_zellij(&[
                "--session",
                SIDE_SESSION,
                "action",
                "new-pane",
                "--in-place",
                "--close-replaced-pane",
                "--pane-id",
                &format!("terminal_{held}"),
                "--name",
                &side_name,
                "--",
                "sleep",
                "600",
            ]);
            let started = std::time::Instant::now();
            busy_before = wait_for("the busy pane to run", || {
                let panes = self.zellij.panes(SIDE_SESSION);
                let busy = panes
                    .iter()
                    .find(|pane| {
                        pane["title"] == side_name.as_str()
                            && pane["pane_command"]
                                .as_str()
                                .is_some_and(|command| command.starts_with("sleep"))
                    })
                    .and_then(|pane| pane["id"].as_u64());
                match busy {
                    Some(id) => Some(Some(id)),
                    None if started.elapsed() > std::time::Duration::from_secs(2) => Some(None),
                    None => None,
                }
            })?;
            if busy_before.is_some() {
                break;
            }
        }
        let busy_before = busy_before.ok_or("zellij did not make the busy pane in three tries")?;

        // Two restores at once, then a third once they are done.
        let children = [self.spawn_restore()?, self.spawn_restore()?];
        let [one, other] = children.map(Self::restored);
        let first = [one?, other?];
        wait_for("the three agents to run", || {
            (runs(self.bin).len() >= 3).then_some(())
        })
        .map_err(|error| format!("{error}; the restores did {first:?}"))?;
        let story_after = wait_for("the story session's panes", || {
            let ids = self.ids(STORY_SESSION);
            (ids.len() >= 3).then_some(ids)
        })?;
        let runs_after_first = runs(self.bin);
        let second = Self::restored(self.spawn_restore()?)?;
        let busy_after = self.ids(SIDE_SESSION).get(&side_name).copied();
        Ok(Observed {
            surfaces,
            named,
            renumbered: (side_before, side_resurrected),
            story_after,
            first,
            runs: runs_after_first,
            busy_pane: (Some(busy_before), busy_after),
            second,
            runs_in_all: runs(self.bin).len(),
        })
    }
}
