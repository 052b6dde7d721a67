//! Codex CLI specifics of capture: its shared daemon, which hides the pane a session runs in.
//!
//! By default (0.171) the Codex TUI hands its sessions to `codex app-server --managed-daemon`,
//! which the first TUI starts and which outlives it, and the hooks run inside that daemon. They
//! inherit the environment of the pane that started the daemon, so every hook sees that pane's
//! `TMUX_PANE` (measured: pane B's session was recorded under pane A's surface, and pane A's
//! session was lost), and nothing else a hook sees there tells the panes apart. So a hook that
//! runs under the daemon never uses its environment or ancestry to name a pane: it searches the
//! tmux panes for the one whose title shows the session's thread id (which Codex writes there
//! with `"thread-id"` among `[tui] terminal_title`; the rule is `index_core::title`). With no
//! such title it records nothing and says why once per daemon in `hook.log`; with
//! `codex --no-daemon` the hooks run in the TUI, in its pane.

use std::ffi::OsString;
use std::io::Write as _;

use std::process::Command as Process;
use std::time::Instant;

use anyhow::{anyhow, bail};
use camino::Utf8Path;
use proc_table::Dev;

/// How many ancestors are looked at (a hook sits a few levels below the daemon).
const MAX_ANCESTORS: usize = 32;

/// The pid of the Codex daemon among this process's ancestors, if there is one: from the
/// process table (`/proc`, else `ps`, given up on at `deadline`).
pub fn managed_daemon_ancestor(deadline: Instant) -> Option<u32> {
    let table = proc_table::table();
    let ancestry = table.ancestry(std::process::id(), MAX_ANCESTORS, deadline)?;
    let pids: Vec<u32> = ancestry
        .ancestors
        .iter()
        .map(|process| process.pid)
        .collect();
    let command_lines = table.command_lines(&pids, deadline);
    pids.into_iter().find(|pid| {
        command_lines
            .iter()
            .any(|(listed, words)| listed == pid && is_managed_daemon(words))
    })
}

/// Whether a command line (its words) is `codex app-server ... --managed-daemon`.
pub fn is_managed_daemon(words: &[OsString]) -> bool {
    words.iter().any(|word| word == "app-server")
        && words.iter().any(|word| word == "--managed-daemon")
}

/// Whether the daemon `daemon` is news for `marker` (a file beside the index that holds the pid
/// of the daemon last reported); records it when it is. A marker that cannot be read or written
/// counts as news, so the message is never lost.
pub fn first_report_of(marker: &Utf8Path, daemon: u32) -> bool {
    // The marker is ours: never read or written through a symlink, never waited on.
    let known = safe_open::read_head(marker.as_std_path(), safe_open::Symlinks::Refuse, 64)
        .is_ok_and(|part| String::from_utf8_lossy(&part.bytes).trim() == daemon.to_string());
    if known {
        return false;
    }
    if let Some(dir) = marker.parent() {
        let _ = safe_open::create_private_dirs(dir.as_std_path());
    }
    let _ = safe_open::open(
        marker.as_std_path(),
        std::fs::OpenOptions::new().write(true).create(true),
        safe_open::Symlinks::Refuse,
    )
    .and_then(|mut file| {
        file.set_len(0)?;
        write!(file, "{daemon}")
    });
    true
}

/// The tmux format of one pane in the title search: the fields that cannot hold a tab first,
/// the session name, then the title (which may hold anything but a newline) last.
const PANE_FORMAT: &str = "#{pane_tty}\t#{window_index}\t#{pane_index}\t#{window_layout}\t#{socket_path}\t#{session_name}\t#{pane_title}";

/// One pane of the tmux listing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ListedPane {
    tty: String,
    surface: String,
    layout: Option<String>,
    title: String,
}

/// The panes of a `tmux list-panes -a -F PANE_FORMAT` listing (lines it cannot read skipped).
fn parse_panes(listing: &str) -> Vec<ListedPane> {
    listing
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(7, '\t');
            let tty = fields.next()?;
            let window = fields.next()?.parse().ok()?;
            let pane = fields.next()?.parse().ok()?;
            let layout = fields.next()?;
            let server = fields.next()?;
            let session = fields.next()?;
            let title = fields.next()?;
            let place = mux::tmux::TmuxPane {
                server: Some(server.to_string()).filter(|server| server.starts_with('/')),
                session: session.to_string(),
                window,
                pane,
            };
            Some(ListedPane {
                tty: tty.to_string(),
                surface: place.to_string(),
                layout: (!layout.is_empty()).then(|| layout.to_string()),
                title: title.to_string(),
            })
        })
        .collect()
}

/// The pane of a Codex session whose hook runs in the daemon: the one pane of the tmux server
/// this process reaches (through `$TMUX`, else tmux's default socket) whose title shows the
/// session's thread id and whose terminal still runs Codex. The daemon's own `TMUX_PANE` and
/// ancestry are never used. An error says why no pane is named (then nothing may be recorded).
pub fn pane_by_title(
    session: &str,
    daemon: u32,
    deadline: Instant,
) -> Result<crate::surface::Named, Unfound> {
    let listed = list_panes(deadline).map_err(|error| {
        Unfound::NoTitle(format!(
            "Codex runs its hooks in its shared daemon (pid {daemon}, `codex app-server \
             --managed-daemon`), whose environment is not the session's pane, and the tmux panes \
             could not be searched for the session's title ({}): Codex sessions are not \
             recorded. {TITLE_ADVICE}",
            crate::error::error_text(&error)
        ))
    })?;
    let showing: Vec<&ListedPane> = listed
        .iter()
        .filter(|pane| index_core::title::title_shows(&pane.title, session))
        .collect();
    // The process table is read only when some title shows the id.
    let codex_terminals = match showing.is_empty() {
        true => Vec::new(),
        false => codex_terminals(deadline),
    };
    let panes: Vec<index_core::title::TitledPane> = showing
        .iter()
        .map(|pane| index_core::title::TitledPane {
            surface: pane.surface.clone(),
            title: pane.title.clone(),
            runs_codex: runs_codex(&pane.tty, &codex_terminals),
        })
        .collect();
    match index_core::title::pane_by_title(session, &panes) {
        index_core::title::TitleMatch::One(at) => Ok(crate::surface::Named {
            surface: showing[at].surface.clone(),
            window_layout: showing[at].layout.clone(),
            warning: None,
        }),
        index_core::title::TitleMatch::None { stale } if stale.is_empty() => {
            Err(Unfound::NoTitle(format!(
                "Codex runs its hooks in its shared daemon (pid {daemon}, `codex app-server \
                 --managed-daemon`), whose environment is not the session's pane, and none of \
                 the {} tmux panes has the session's thread id in its title: Codex sessions are \
                 not recorded. {TITLE_ADVICE}",
                listed.len()
            )))
        }
        index_core::title::TitleMatch::None { stale } => Err(Unfound::Other(anyhow!(
            "the title of {} shows Codex session {session}, but Codex no longer runs there; \
             session not recorded",
            stale.join(", ")
        ))),
        index_core::title::TitleMatch::Several(surfaces) => Err(Unfound::Other(anyhow!(
            "the titles of {} all show Codex session {session}, each running Codex; session not \
             recorded, since it cannot be told which is its pane",
            surfaces.join(", ")
        ))),
    }
}

/// What to do when no pane's title can show the session.
const TITLE_ADVICE: &str = "Add \"thread-id\" to `terminal_title` under [tui] in \
                            $CODEX_HOME/config.toml (`crash-resume hook install codex \
                            --codex-title` does), or run `codex --no-daemon`";

/// Why [`pane_by_title`] named no pane.
#[derive(Debug)]
pub enum Unfound {
    /// No pane's title shows the session (Codex is not set to write it, most likely): what the
    /// log says, once per daemon.
    NoTitle(String),
    /// Anything else: tmux not answering, a pane no longer running Codex, several panes.
    Other(anyhow::Error),
}

/// The panes of the tmux server this process reaches.
fn list_panes(deadline: Instant) -> anyhow::Result<Vec<ListedPane>> {
    let output = bounded_run::output_by(
        Process::new(mux::tmux::program()).args(["list-panes", "-a", "-F", PANE_FORMAT]),
        deadline,
    )
    .map_err(|error| anyhow!(error).context("cannot list the tmux panes"))?;
    if !output.status.success() {
        bail!(
            "tmux could not list its panes: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(parse_panes(&String::from_utf8_lossy(&output.stdout)))
}

/// Whether the terminal `tty` (a path such as `/dev/pts/3`) is among `terminals`.
fn runs_codex(tty: &str, terminals: &[Dev]) -> bool {
    terminal_of(tty).is_some_and(|terminal| terminals.contains(&terminal))
}

/// The terminal of a tty path.
fn terminal_of(tty: &str) -> Option<Dev> {
    Some(rustix::fs::stat(tty).ok()?.st_rdev)
}

/// The controlling terminals of the processes named `codex` (the TUI's native program; the
/// daemon has none), from the process table.
fn codex_terminals(deadline: Instant) -> Vec<Dev> {
    proc_table::table()
        .processes(deadline)
        .into_iter()
        .filter(|process| process.name == "codex")
        .filter_map(|process| process.terminal)
        .collect()
}

// Codex's title items, where a hook under its daemon finds the pane: the rule `doctor`
// checks too.
pub use setup_check::codex_title::{TitleEdit, add_thread_id_to_title, title_has_thread_id};

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_daemon_is_told_from_its_command_line() {
        assert!(is_managed_daemon(&words(
            "/h/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex app-server --listen unix:// --analytics-default-enabled --managed-daemon"
        )));
        assert!(!is_managed_daemon(&words(
            "codex app-server daemon pid-update-loop"
        )));
        assert!(!is_managed_daemon(&words("codex --no-daemon")));
        assert!(!is_managed_daemon(&words(
            "node /x/node_modules/.bin/codex"
        )));
        assert!(!is_managed_daemon(&[]));
    }

    #[test]
    fn this_test_runs_under_no_daemon() {
        assert_eq!(
            managed_daemon_ancestor(Instant::now() + std::time::Duration::from_secs(30)),
            None
        );
    }

    #[test]
    fn a_pane_listing_is_read_with_any_title() {
        let listing = "/dev/pts/3\t0\t1\t5b2e,80x24,0,0{40x24,0,0,1,39x24,41,0,2}\t/tmp/tmux-0/default\tmy work\talpha | 01a2323a-58b9-7f73-aba8-bf783...\n\
                       /dev/pts/4\t2\t0\t\t/tmp/tmux-0/default\tw\ta\ttitle with a tab\n\
                       not a pane\n";
        let panes = parse_panes(listing);
        assert_eq!(panes.len(), 2, "{panes:?}");
        assert_eq!(panes[0].surface, "tmux:/tmp/tmux-0/default:my work:0.1");
        assert_eq!(panes[0].tty, "/dev/pts/3");
        assert_eq!(panes[0].title, "alpha | 01a2323a-58b9-7f73-aba8-bf783...");
        assert!(panes[0].layout.is_some());
        assert_eq!(panes[1].title, "a\ttitle with a tab");
        assert_eq!(panes[1].layout, None);
    }

    #[test]
    fn each_daemon_is_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let marker = camino::Utf8PathBuf::from_path_buf(dir.path().join("state/marker")).unwrap();
        assert!(first_report_of(&marker, 41));
        assert!(!first_report_of(&marker, 41));
        assert!(first_report_of(&marker, 42));
        assert!(!first_report_of(&marker, 42));
    }
}
