//! Re-opening `tmux:` surfaces: find the pane (or create its window), and type the resume
//! command when it is idle at a shell. Talks to tmux only through its command line.

use std::ffi::OsString;
use std::process::Command as Process;
use std::sync::OnceLock;

use anyhow::{Context as _, anyhow, bail};

/// What `restore --apply` can re-open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Apply {
    Tmux,
}

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

    fn session_target(&self) -> String {
        format!("={}", self.session)
    }

    fn window_target(&self) -> String {
        format!("={}:{}", self.session, self.window)
    }

    fn pane_target(&self) -> String {
        format!("={}:{}.{}", self.session, self.window, self.pane)
    }
}

/// The program a pane runs, unless it is a shell (a login shell's `-` prefix dropped).
fn busy_with(running: &str) -> Option<&str> {
    let running = running.trim_start_matches('-');
    (!SHELLS.contains(&running)).then_some(running)
}

/// What a restore says of a pane it leaves alone because something runs there.
pub fn busy_message(running: &str) -> String {
    format!("skipped: the pane is busy running {running}")
}

/// What a server has of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    Nothing,
    /// The session, not the window.
    Session,
    /// The window, not the pane.
    Window,
    Pane {
        id: String,
        /// `pane_current_command`.
        running: String,
    },
}

/// A tmux server: the default one (or `$TMUX`'s), or a named socket (`tmux -L NAME`).
#[derive(Debug, Clone)]
pub struct Server {
    socket: Option<String>,
}

impl Server {
    pub fn new(socket: Option<String>) -> Server {
        Server { socket }
    }

    fn tmux(&self, args: &[&str]) -> anyhow::Result<String> {
        let mut command = Process::new(program());
        if let Some(socket) = &self.socket {
            command.args(["-L", socket]);
        }
        let output = command.args(args).output().context("cannot run tmux")?;
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
            "#{window_index}\t#{pane_index}\t#{pane_id}\t#{pane_current_command}\t#{session_name}",
        ]) else {
            return Found::Nothing;
        };
        let mut found = Found::Nothing;
        for line in listing.lines() {
            let mut fields = line.splitn(5, '\t');
            let (Some(window), Some(pane), Some(id), Some(running), Some(session)) = (
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
            if window != target.window.to_string() {
                if found == Found::Nothing {
                    found = Found::Session;
                }
                continue;
            }
            if pane != target.pane.to_string() {
                found = Found::Window;
                continue;
            }
            return Found::Pane {
                id: id.to_string(),
                running: running.to_string(),
            };
        }
        found
    }

    /// What runs in the target's pane, when the pane exists and is not idle at a shell.
    pub fn busy(&self, target: &PaneTarget) -> Option<String> {
        match self.find(target) {
            Found::Pane { running, .. } => busy_with(&running).map(str::to_string),
            _ => None,
        }
    }

    /// Opens the surface and types `command` there. Returns what was done.
    pub fn open(
        &self,
        target: &PaneTarget,
        cwd: Option<&str>,
        command: &str,
    ) -> anyhow::Result<String> {
        let start_dir = cwd.filter(|dir| std::path::Path::new(dir).is_dir());
        let mut dir_args = Vec::new();
        if let Some(dir) = start_dir {
            dir_args.extend(["-c", dir]);
        }
        let (pane_id, done) = match self.find(target) {
            Found::Pane { id, running } => {
                if let Some(running) = busy_with(&running) {
                    return Ok(busy_message(running));
                }
                (id, "typed into the existing pane")
            }
            Found::Window => {
                let mut args = vec!["split-window", "-d", "-P", "-F", "#{pane_id}", "-t"];
                let window = target.window_target();
                args.push(&window);
                args.extend(&dir_args);
                (
                    self.tmux(&args)?,
                    "split the window and typed into the new pane",
                )
            }
            Found::Session => {
                let window = format!("{}:{}", target.session_target(), target.window);
                let mut args = vec!["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", &window];
                args.extend(&dir_args);
                (self.tmux(&args)?, "created the window and typed into it")
            }
            Found::Nothing => {
                let mut args = vec![
                    "new-session",
                    "-d",
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "-s",
                    &target.session,
                ];
                args.extend(&dir_args);
                let pane_id = self.tmux(&args)?;
                let created =
                    self.tmux(&["display-message", "-p", "-t", &pane_id, "#{window_index}"])?;
                if created != target.window.to_string() {
                    let from = format!("{}:{created}", target.session_target());
                    let to = format!("{}:{}", target.session_target(), target.window);
                    self.tmux(&["move-window", "-s", &from, "-t", &to])?;
                }
                (pane_id, "created the session and typed into it")
            }
        };
        if pane_id.is_empty() {
            return Err(anyhow!("tmux gave no pane id for {}", target.pane_target()));
        }
        self.tmux(&["send-keys", "-t", &pane_id, "-l", command])?;
        self.tmux(&["send-keys", "-t", &pane_id, "Enter"])?;
        Ok(done.to_string())
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
