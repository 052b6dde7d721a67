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

/// The pid of the Codex daemon among this process's ancestors, if there is one.
pub fn managed_daemon_ancestor() -> Option<u32> {
    let mut pid = parent_of("self")?;
    for _ in 0..MAX_ANCESTORS {
        if pid <= 1 {
            return None;
        }
        if is_managed_daemon(&command_line(pid)) {
            return Some(pid);
        }
        pid = parent_of(&pid.to_string())?;
    }
    None
}

/// Whether a command line (its words) is `codex app-server ... --managed-daemon`.
pub fn is_managed_daemon(words: &[String]) -> bool {
    words.iter().any(|word| word == "app-server")
        && words.iter().any(|word| word == "--managed-daemon")
}

/// The words of `/proc/<pid>/cmdline` (none when it cannot be read).
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

/// The parent pid from `/proc/<pid>/stat` (the field after the command name, which may hold
/// spaces and parentheses, so it is read from the last `)`).
fn parent_of(pid: &str) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
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
    let known = std::fs::read_to_string(marker).is_ok_and(|text| text.trim() == daemon.to_string());
    if known {
        return false;
    }
    if let Some(dir) = marker.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::File::create(marker).and_then(|mut file| write!(file, "{daemon}"));
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
        assert_eq!(managed_daemon_ancestor(), None);
        assert!(parent_of("self").is_some_and(|pid| pid > 0));
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
