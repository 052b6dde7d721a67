//! Re-opening `tmux:` surfaces: find the pane (or create its window), and type the resume
//! command when it is idle at a shell. Talks to tmux only through its command line.

use std::process::Command as Process;

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
        let mut command = Process::new("tmux");
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

    fn exists(&self, kind: &str, target: &str) -> bool {
        self.tmux(&[
            "display-message",
            "-p",
            "-t",
            target,
            &format!("#{{{kind}}}"),
        ])
        .is_ok_and(|found| !found.is_empty())
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
        let (pane_id, done) = if self.exists("pane_id", &target.pane_target()) {
            let pane_id = self.tmux(&[
                "display-message",
                "-p",
                "-t",
                &target.pane_target(),
                "#{pane_id}",
            ])?;
            let running = self.tmux(&[
                "display-message",
                "-p",
                "-t",
                &pane_id,
                "#{pane_current_command}",
            ])?;
            let running = running.trim_start_matches('-');
            if !SHELLS.contains(&running) {
                return Ok(format!("skipped: the pane is busy running {running}"));
            }
            (pane_id, "typed into the existing pane")
        } else if self.exists("window_id", &target.window_target()) {
            let mut args = vec!["split-window", "-d", "-P", "-F", "#{pane_id}", "-t"];
            let window = target.window_target();
            args.push(&window);
            args.extend(&dir_args);
            (
                self.tmux(&args)?,
                "split the window and typed into the new pane",
            )
        } else if self.exists("session_id", &target.session_target()) {
            let window = format!("{}:{}", target.session_target(), target.window);
            let mut args = vec!["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", &window];
            args.extend(&dir_args);
            (self.tmux(&args)?, "created the window and typed into it")
        } else {
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
        };
        if pane_id.is_empty() {
            return Err(anyhow!("tmux gave no pane id for {}", target.pane_target()));
        }
        self.tmux(&["send-keys", "-t", &pane_id, "-l", command])?;
        self.tmux(&["send-keys", "-t", &pane_id, "Enter"])?;
        Ok(done.to_string())
    }
}
