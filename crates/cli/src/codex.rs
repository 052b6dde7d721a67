//! Codex CLI specifics of capture: its shared daemon, which hides the pane a session runs in.
//!
//! By default (0.171) the Codex TUI hands its sessions to `codex app-server --managed-daemon`,
//! which the first TUI starts and which outlives it, and the hooks run inside that daemon. They
//! inherit the environment of the pane that started the daemon, so every hook sees that pane's
//! `TMUX_PANE` (measured: pane B's session was recorded under pane A's surface, and pane A's
//! session was lost). Nothing a hook can see there tells the panes apart: the TUI processes hold
//! no file of the session they show, and the daemon serves all of them over one socket. So a
//! Codex hook that runs under the daemon records nothing and says so once per daemon in
//! `hook.log`; with `codex --no-daemon` (or `daemon_auto_start = false` under `[features]` in
//! `config.toml`, with no daemon running) the hooks run in the TUI, in its pane.

use std::io::Write as _;

use camino::Utf8Path;

/// How many ancestors are looked at (a hook sits a few levels below the daemon).
const MAX_ANCESTORS: usize = 32;

/// The pid of the Codex daemon among this process's ancestors, if there is one: from `/proc`
/// on Linux, from one `ps` listing elsewhere (macOS), given up on at `deadline`.
#[cfg_attr(target_os = "linux", allow(unused_variables))]
pub fn managed_daemon_ancestor(deadline: std::time::Instant) -> Option<u32> {
    #[cfg(target_os = "linux")]
    let ancestors = proc_ancestors();
    #[cfg(not(target_os = "linux"))]
    let ancestors = ps_ancestors(&ps_listing(deadline)?, std::process::id());
    ancestors
        .into_iter()
        .find(|(_, words)| is_managed_daemon(words))
        .map(|(pid, _)| pid)
}

/// Whether a command line (its words) is `codex app-server ... --managed-daemon`.
pub fn is_managed_daemon(words: &[String]) -> bool {
    words.iter().any(|word| word == "app-server")
        && words.iter().any(|word| word == "--managed-daemon")
}

/// This process's ancestors, nearest first, each with the words of its command line.
#[cfg(target_os = "linux")]
fn proc_ancestors() -> Vec<(u32, Vec<String>)> {
    let mut ancestors = Vec::new();
    let mut pid = mux::procfs::proc_parent("self");
    while let Some(current) = pid.filter(|pid| *pid > 1) {
        if ancestors.len() == MAX_ANCESTORS {
            break;
        }
        ancestors.push((current, command_line(current)));
        pid = mux::procfs::proc_parent(&current.to_string());
    }
    ancestors
}

/// The words of `/proc/<pid>/cmdline` (none when it cannot be read).
#[cfg(target_os = "linux")]
fn command_line(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            bytes
                .split(|byte| *byte == 0)
                .filter(|word| !word.is_empty())
                .map(|word| String::from_utf8_lossy(word).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The ancestors of `pid` in a `ps -A -o pid=,ppid=,command=` listing, nearest first, each with
/// its command line split at spaces (the daemon's words hold none).
#[cfg(any(test, not(target_os = "linux")))]
fn ps_ancestors(listing: &str, pid: u32) -> Vec<(u32, Vec<String>)> {
    let table: std::collections::HashMap<u32, (u32, Vec<String>)> = listing
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let pid = words.next()?.parse().ok()?;
            let parent = words.next()?.parse().ok()?;
            Some((pid, (parent, words.map(str::to_string).collect())))
        })
        .collect();
    let mut ancestors = Vec::new();
    let mut current = table.get(&pid).map(|(parent, _)| *parent);
    while let Some(pid) = current.filter(|pid| *pid > 1) {
        let Some((parent, words)) = table.get(&pid) else {
            break;
        };
        if ancestors.len() == MAX_ANCESTORS {
            break;
        }
        ancestors.push((pid, words.clone()));
        current = Some(*parent);
    }
    ancestors
}

/// `ps -A -o pid=,ppid=,command=`, its errors silenced.
#[cfg(not(target_os = "linux"))]
fn ps_listing(deadline: std::time::Instant) -> Option<String> {
    crate::surface::ps_every_process("pid=,ppid=,command=", deadline)
}

/// What the log says, once per daemon, when a Codex hook runs under the daemon.
pub fn daemon_message(daemon: u32) -> String {
    format!(
        "Codex runs its hooks in its shared daemon (pid {daemon}, `codex app-server \
         --managed-daemon`), which carries the environment of the pane that started it, not of \
         the session's pane: Codex sessions are not recorded while it runs them. Run `codex \
         --no-daemon`, or set `daemon_auto_start = false` under [features] in \
         $CODEX_HOME/config.toml (with no daemon running), so that hooks run in the pane"
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
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
            managed_daemon_ancestor(std::time::Instant::now() + std::time::Duration::from_secs(30)),
            None
        );
    }

    #[test]
    fn a_ps_listing_leads_to_the_daemon() {
        let listing = "\
    1     0 /sbin/launchd
  500     1 /Users/u/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex app-server --listen unix:// --managed-daemon
  600   500 /bin/sh -c /usr/local/bin/crash-resume hook codex
  601   600 /usr/local/bin/crash-resume hook codex
  700     1 /bin/zsh -l
  701   700 /usr/local/bin/crash-resume hook codex";
        let ancestors = ps_ancestors(listing, 601);
        assert_eq!(
            ancestors.iter().map(|(pid, _)| *pid).collect::<Vec<_>>(),
            [600, 500]
        );
        assert!(is_managed_daemon(&ancestors[1].1));
        assert!(
            !ps_ancestors(listing, 701)
                .iter()
                .any(|(_, words)| is_managed_daemon(words))
        );
        assert_eq!(ps_ancestors(listing, 999), Vec::new());
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
