//! Re-opening `tmux:` surfaces: find the pane (or create its session, window and pane at the
//! recorded indexes), then start the resume command as the pane's own process. Nothing is ever
//! typed into a pane: a pane is re-used only when it is an idle interactive shell with no child
//! process, and `respawn-pane -k` replaces that shell, so no text a user typed there runs.
//! Talks to tmux only through its command line, each call bounded by [`CALL_DEADLINE`]: once a
//! server has not answered, it is not asked again.

use std::cell::OnceCell;
use std::ffi::OsString;
use std::process::Command as Process;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::bail;

/// What `restore --apply` can re-open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Apply {
    Tmux,
}

/// How long a restore waits for one program it runs (a tmux command, `ps`): a tmux server that
/// is stopped or hung never answers, and a restore must not hang with it.
pub const CALL_DEADLINE: Duration = Duration::from_secs(5);

/// Shells a pane may sit at; anything else running there means the pane is busy.
const SHELLS: [&str; 10] = [
    "bash", "zsh", "sh", "fish", "dash", "ksh", "tcsh", "csh", "nu", "mksh",
];

/// Where Homebrew puts programs (Apple silicon, Intel): a process the macOS GUI started, such as
/// an agent's hook in a terminal app, may have neither on its `PATH`.
const HOMEBREW_DIRS: [&str; 2] = ["/opt/homebrew/bin", "/usr/local/bin"];

/// The `tmux` to run: the first on `PATH`, else Homebrew's, else plain `tmux` (whose failure to
/// start then says it is missing).
pub fn program() -> &'static std::path::Path {
    static PROGRAM: OnceLock<std::path::PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        find_program("tmux", std::env::var_os("PATH"), &HOMEBREW_DIRS)
            .unwrap_or_else(|| std::path::PathBuf::from("tmux"))
    })
}

/// The first executable file `name` in the dirs of `path`, then in `fallback_dirs`.
fn find_program(
    name: &str,
    path: Option<OsString>,
    fallback_dirs: &[&str],
) -> Option<std::path::PathBuf> {
    let path_dirs = path
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    path_dirs
        .into_iter()
        .chain(fallback_dirs.iter().map(std::path::PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// `tmux:<session>:<window>.<pane>`, as the surface id records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneTarget {
    pub session: String,
    pub window: u32,
    pub pane: u32,
}

impl PaneTarget {
    pub fn parse(surface: &str) -> Option<PaneTarget> {
        let rest = surface.strip_prefix("tmux:")?;
        let (session, position) = rest.rsplit_once(':')?;
        let (window, pane) = position.split_once('.')?;
        Some(PaneTarget {
            session: session.to_string(),
            window: window.parse().ok()?,
            pane: pane.parse().ok()?,
        })
    }

    /// Why tmux cannot hold the recorded session: a session name with `.` or `:` (a surface
    /// recorded by hand; a hook records tmux's own names) is renamed by tmux (`a.b` becomes
    /// `a_b`), so the session created would not be the recorded one and could not be found again.
    fn unnameable(&self) -> Option<String> {
        self.session.contains(['.', ':']).then(|| {
            format!(
                "tmux cannot name a session {} ('.' and ':' are not allowed in a tmux session name); nothing was created",
                index_core::text::escape(&self.session)
            )
        })
    }

    fn session_target(&self) -> String {
        format!("={}", self.session)
    }

    fn window_target(&self) -> String {
        format!("={}:{}", self.session, self.window)
    }

    fn surface(&self) -> String {
        format!("tmux:{}:{}.{}", self.session, self.window, self.pane)
    }
}

/// What a restore did with one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// The resume command runs in the pane; what was done to get there.
    Started(String),
    /// The pane was left alone; why.
    Skipped(String),
}

/// What a server has of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    Nothing,
    /// The session, not the window.
    Session,
    /// The window, not the pane; the highest pane index it has.
    Window {
        last_pane: u32,
    },
    Pane(Pane),
}

/// A pane that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pane {
    id: String,
    /// `pane_pid`: the process tmux started in the pane.
    pid: u32,
    /// `pane_current_command`: the foreground process of the pane's terminal.
    running: String,
}

/// A tmux server: the default one (or `$TMUX`'s), or a named socket (`tmux -L NAME`).
#[derive(Debug, Clone)]
pub struct Server {
    socket: Option<String>,
    /// Set when a call did not answer within [`CALL_DEADLINE`]: what it said. Every later call
    /// fails at once with it, so a stopped server costs one deadline, not one per call.
    unanswered: OnceCell<String>,
}

impl Server {
    pub fn new(socket: Option<String>) -> Server {
        Server {
            socket,
            unanswered: OnceCell::new(),
        }
    }

    /// Whether a call to this server timed out, and what it said (`tmux did not answer within
    /// 5s (server NAME)`): then no further call is made.
    pub fn unanswered(&self) -> Option<&str> {
        self.unanswered.get().map(String::as_str)
    }

    /// `tmux -L NAME`, or `tmux` for the default server: how a user reaches this one.
    pub fn command_line(&self) -> String {
        match &self.socket {
            Some(socket) => format!("tmux -L {}", quote(socket)),
            None => "tmux".to_string(),
        }
    }

    fn tmux(&self, args: &[&str]) -> anyhow::Result<String> {
        if let Some(unanswered) = self.unanswered() {
            bail!("{unanswered}; not asked again");
        }
        let mut command = Process::new(program());
        if let Some(socket) = &self.socket {
            command.args(["-L", socket]);
        }
        let output = match bounded_run::output(command.args(args), CALL_DEADLINE) {
            Ok(output) => output,
            Err(error) if error.is_timeout() => {
                let asked = args.first().copied().unwrap_or_default();
                let said = format!("{error} (`{} {asked}`)", self.command_line());
                bail!(self.unanswered.get_or_init(|| said).clone());
            }
            Err(error) => return Err(error.into()),
        };
        if !output.status.success() {
            bail!(
                "tmux {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    }

    /// What the server has of `target`. Read from one listing of every pane and matched
    /// exactly: `display-message -t` is no test, since tmux answers it for a target that does
    /// not exist with another pane (the current one). No server: nothing.
    fn find(&self, target: &PaneTarget) -> Found {
        let Ok(listing) = self.tmux(&[
            "list-panes",
            "-a",
            "-F",
            "#{window_index}\t#{pane_index}\t#{pane_id}\t#{pane_pid}\t#{pane_current_command}\t#{session_name}",
        ]) else {
            return Found::Nothing;
        };
        let mut found = Found::Nothing;
        for line in listing.lines() {
            let mut fields = line.splitn(6, '\t');
            let (Some(window), Some(pane), Some(id), Some(pid), Some(running), Some(session)) = (
                fields.next(),
                fields.next(),
                fields.next(),
                fields.next(),
                fields.next(),
                fields.next(),
            ) else {
                continue;
            };
            if session != target.session {
                continue;
            }
            if window.parse() != Ok(target.window) {
                if found == Found::Nothing {
                    found = Found::Session;
                }
                continue;
            }
            let Ok(index) = pane.parse::<u32>() else {
                continue;
            };
            if index != target.pane {
                let last_pane = match found {
                    Found::Window { last_pane } => last_pane.max(index),
                    _ => index,
                };
                found = Found::Window { last_pane };
                continue;
            }
            return Found::Pane(Pane {
                id: id.to_string(),
                pid: pid.parse().unwrap_or(0),
                running: running.to_string(),
            });
        }
        found
    }

    /// Why the target's pane must be left alone, when it exists and is not an idle shell.
    pub fn busy(&self, target: &PaneTarget) -> Option<String> {
        match self.find(target) {
            Found::Pane(pane) => busy_reason(&pane),
            _ => None,
        }
    }

    /// Opens the surface: re-uses its pane when it is an idle shell, else creates what is
    /// missing (session, window, panes up to the recorded index), then starts `command` as
    /// the pane's process, with `CRASH_RESUME_SURFACE` naming the surface so that the agent's
    /// hook binds to it. Call it holding the restore lock: creating is find-then-create.
    pub fn open(
        &self,
        target: &PaneTarget,
        cwd: Option<&str>,
        command: &str,
    ) -> anyhow::Result<Opened> {
        if let Some(reason) = target.unnameable() {
            bail!(reason);
        }
        let start_dir = cwd.filter(|dir| std::path::Path::new(dir).is_dir());
        let mut dir_args = Vec::new();
        if let Some(dir) = start_dir {
            dir_args.extend(["-c", dir]);
        }
        let mut created: Vec<&str> = Vec::new();
        // Each round creates one thing; a failed round is retried once after finding again,
        // since the server may have changed (a user, or a restore not holding the lock).
        let mut failures = 0;
        let pane = loop {
            let step = match self.find(target) {
                Found::Pane(pane) => break pane,
                Found::Window { last_pane } => {
                    let after = format!("{}.{last_pane}", target.window_target());
                    let mut args = vec!["split-window", "-d", "-t", &after];
                    args.extend(&dir_args);
                    self.tmux(&args)
                        .or_else(|_| {
                            // A small window has no room for another pane until it is tiled.
                            self.tmux(&["select-layout", "-t", &target.window_target(), "tiled"])?;
                            self.tmux(&args)
                        })
                        .map(|_| "the pane")
                }
                Found::Session => {
                    let window = format!("{}:{}", target.session_target(), target.window);
                    let mut args = vec!["new-window", "-d", "-t", &window];
                    args.extend(&dir_args);
                    self.tmux(&args).map(|_| "the window")
                }
                Found::Nothing => self.new_session(target, &dir_args).map(|()| "the session"),
            };
            match step {
                Ok(what) => {
                    if !created.contains(&what) {
                        created.push(what);
                    }
                }
                Err(error) if failures > 0 => return Err(error),
                Err(_) => failures += 1,
            }
            if created.len() + failures > target.pane as usize + 8 {
                bail!(
                    "tmux did not make pane {} after {} tries",
                    target.surface(),
                    created.len() + failures
                );
            }
        };
        let done = if created.is_empty() {
            if let Some(reason) = busy_reason(&pane) {
                return Ok(Opened::Skipped(reason));
            }
            "started in the existing pane".to_string()
        } else {
            format!("created {} and started in it", created.join(", "))
        };
        let script = pane_script(&target.surface(), command, &self.user_shell());
        let mut args = vec!["respawn-pane", "-k", "-t", &pane.id];
        args.extend(&dir_args);
        args.extend(["/bin/sh", "-c", &script]);
        self.tmux(&args)?;
        Ok(Opened::Started(done))
    }

    /// Creates the session with its first window at the target's index.
    fn new_session(&self, target: &PaneTarget, dir_args: &[&str]) -> anyhow::Result<()> {
        let mut args = vec![
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{window_index}",
            "-s",
            &target.session,
        ];
        args.extend(dir_args);
        let created = self.tmux(&args)?;
        if created != target.window.to_string() {
            let from = format!("{}:{created}", target.session_target());
            let to = format!("{}:{}", target.session_target(), target.window);
            self.tmux(&["move-window", "-s", &from, "-t", &to])?;
        }
        Ok(())
    }

    /// The shell a pane falls back to once the agent exits: tmux's `default-command` when set
    /// (run by its `default-shell`), else the `default-shell` itself.
    fn user_shell(&self) -> String {
        let option = |name: &str| {
            self.tmux(&["show-options", "-gv", name])
                .ok()
                .filter(|value| !value.trim().is_empty())
        };
        let shell = option("default-shell")
            .or_else(|| std::env::var("SHELL").ok())
            .unwrap_or_else(|| "/bin/sh".to_string());
        let shell = quote(&shell);
        match option("default-command") {
            Some(command) => format!("{shell} -c {}", quote(&command)),
            None => shell,
        }
    }
}

/// The `sh -c` script a re-opened pane runs: the resume command with the surface named in its
/// environment, then the user's shell, left in the dir the command moved to. Job control
/// (`set -m`) puts the agent in its own process group in the terminal's foreground, so tmux
/// shows the agent as the pane's command and a Ctrl-C reaches the agent, not this script.
pub fn pane_script(surface: &str, command: &str, shell: &str) -> String {
    format!(
        "set -m; CRASH_RESUME_SURFACE={}; export CRASH_RESUME_SURFACE; {command}; \
         unset CRASH_RESUME_SURFACE; exec {shell}",
        quote(surface)
    )
}

fn quote(word: &str) -> String {
    shlex::try_quote(word).map_or_else(|_| "''".to_string(), |quoted| quoted.into_owned())
}

/// What a restore says of a pane it leaves alone, when something other than an idle
/// interactive shell runs there: another program in front, a child of the shell (a script
/// waiting on `read`), or a shell that runs a script rather than a prompt.
fn busy_reason(pane: &Pane) -> Option<String> {
    let running = pane.running.trim_start_matches('-');
    if !SHELLS.contains(&running) {
        return Some(format!("skipped: the pane is busy running {running}"));
    }
    if let Some(child) = processes::first_child(pane.pid) {
        return Some(format!(
            "skipped: the pane is busy: its shell runs a program (pid {child})"
        ));
    }
    if !processes::is_interactive_shell(pane.pid) {
        return Some("skipped: the pane is busy: its shell runs a script or command".to_string());
    }
    None
}

/// The process table, as far as telling an idle shell needs it: `/proc` on Linux, `ps`
/// elsewhere.
mod processes {
    use std::process::Command as Process;

    use super::CALL_DEADLINE;

    /// A child of `pid`, if it has one.
    pub fn first_child(pid: u32) -> Option<u32> {
        if let Ok(dir) = std::fs::read_dir("/proc") {
            return dir.flatten().find_map(|process| {
                let name = process.file_name();
                let child: u32 = name.to_str()?.parse().ok()?;
                (crate::procfs::proc_parent(name.to_str()?)? == pid).then_some(child)
            });
        }
        let listing = bounded_run::output(
            Process::new("ps").args(["-A", "-o", "pid=,ppid="]),
            CALL_DEADLINE,
        )
        .ok()?;
        String::from_utf8_lossy(&listing.stdout)
            .lines()
            .find_map(|line| {
                let mut fields = line.split_whitespace();
                let child: u32 = fields.next()?.parse().ok()?;
                let parent: u32 = fields.next()?.parse().ok()?;
                (parent == pid).then_some(child)
            })
    }

    /// Whether `pid` is a shell at its prompt rather than one running a script or a `-c`
    /// command: every argument after the program name is an option (and none is `-c`).
    pub fn is_interactive_shell(pid: u32) -> bool {
        let arguments: Vec<String> = match std::fs::read(format!("/proc/{pid}/cmdline")) {
            Ok(bytes) => bytes
                .split(|byte| *byte == 0)
                .filter(|argument| !argument.is_empty())
                .map(|argument| String::from_utf8_lossy(argument).into_owned())
                .collect(),
            Err(_) => match bounded_run::output(
                Process::new("ps").args(["-o", "args=", "-p", &pid.to_string()]),
                CALL_DEADLINE,
            ) {
                Ok(output) => String::from_utf8_lossy(&output.stdout)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
                Err(_) => return false,
            },
        };
        !arguments.is_empty()
            && arguments[1..]
                .iter()
                .all(|argument| argument.starts_with('-') && argument != "-c")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_is_found_on_the_path_then_in_the_fallback_dirs() {
        let root = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        };
        let install = |dir: &std::path::Path, mode: u32| {
            use std::os::unix::fs::PermissionsExt as _;
            let program = dir.join("tmux");
            std::fs::write(&program, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(mode)).unwrap();
            program
        };
        let (empty, not_executable, on_path, brew) =
            (dir("empty"), dir("plain"), dir("bin"), dir("brew"));
        install(&not_executable, 0o644);
        let on_path_tmux = install(&on_path, 0o755);
        let brew_tmux = install(&brew, 0o755);
        let brew_dirs = [brew.to_str().unwrap()];
        let path = |dirs: &[&std::path::Path]| Some(std::env::join_paths(dirs).unwrap());
        assert_eq!(
            find_program("tmux", path(&[&empty, &on_path]), &brew_dirs),
            Some(on_path_tmux)
        );
        assert_eq!(
            find_program("tmux", path(&[&empty, &not_executable]), &brew_dirs),
            Some(brew_tmux.clone())
        );
        assert_eq!(find_program("tmux", None, &brew_dirs), Some(brew_tmux));
        assert_eq!(find_program("tmux", path(&[&empty]), &[]), None);
    }
}
