//! Talking to a private tmux server (`tmux -L <name> -f /dev/null`), as the CLI's tmux tests and
//! the reboot simulation both do.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `client` (`tmux` with its environment) made a client of the private server `name`:
/// `-L <name> -f /dev/null`, no config of the user's.
pub fn private(mut client: Command, name: &str) -> Command {
    client.args(["-L", name, "-f", "/dev/null"]);
    client
}

/// The socket of the private server `name` of clients run with `TMUX_TMPDIR=<tmpdir>`.
pub fn socket_path(tmpdir: &Path, name: &str) -> PathBuf {
    tmpdir
        .join(format!("tmux-{}", rustix::process::getuid().as_raw()))
        .join(name)
}

/// How long a test waits for one tmux command (a stopped or hung server fails the test
/// instead of holding it).
const TMUX_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs `client ARGS` (`client`: `tmux` with its environment, `-L <name>` and `-f /dev/null`);
/// its stdout with the final newline trimmed, or what tmux said on stderr.
pub fn run(mut client: Command, args: &[&str]) -> Result<String, String> {
    client.args(args);
    let output = bounded_run::output(&mut client, TMUX_DEADLINE).map_err(|error| match error {
        bounded_run::RunError::Start { .. } => {
            format!("cannot run tmux ({error}); install tmux and retry")
        }
        other => format!("tmux {}: {other}", args.join(" ")),
    })?;
    if !output.status.success() {
        return Err(format!(
            "tmux {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .trim_end()
        .to_string())
}

/// The fields of a pane's place in a `list-panes` line, before the caller's columns (a session
/// name holds no tab: tmux escapes control characters in it).
const PLACE_FIELDS: &str = "#{window_index}\t#{pane_index}\t#{session_name}";

/// Every pane's place (`mux::tmux::TmuxPane` without its server: `tmux:<session>:<window>.<pane>`)
/// and `columns` (a tmux format), one `(place, columns)` pair a pane in tmux's order, through `tmux` (which runs
/// `tmux ARGS`); none when the server is not running.
pub fn list_panes<E>(
    tmux: impl FnOnce(&[&str]) -> Result<String, E>,
    columns: &str,
) -> Vec<(String, String)> {
    let format = format!("{PLACE_FIELDS}\t{columns}");
    let Ok(listing) = tmux(&["list-panes", "-a", "-F", &format]) else {
        return Vec::new();
    };
    listing
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(4, '\t');
            let (window, pane) = (fields.next()?.parse().ok()?, fields.next()?.parse().ok()?);
            let session = fields.next()?.to_string();
            let rest = fields.next()?.to_string();
            let place = mux::tmux::TmuxPane {
                server: None,
                session,
                window,
                pane,
            };
            Some((place.to_string(), rest))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panes_are_named_by_their_place_and_a_failure_is_no_panes() {
        let listing = |args: &[&str]| -> Result<String, ()> {
            assert_eq!(args[..3], ["list-panes", "-a", "-F"]);
            assert_eq!(
                args[3],
                "#{window_index}\t#{pane_index}\t#{session_name}\t#{pane_pid}\t#{pane_tty}"
            );
            Ok("0\t0\ta b\t12\t/dev/pts/1\n1\t2\tc\t34\t/dev/pts/2".to_string())
        };
        assert_eq!(
            list_panes(listing, "#{pane_pid}\t#{pane_tty}"),
            [
                ("tmux:a b:0.0".to_string(), "12\t/dev/pts/1".to_string()),
                ("tmux:c:1.2".to_string(), "34\t/dev/pts/2".to_string())
            ]
        );
        assert!(list_panes(|_| Err(()), "#{pane_pid}").is_empty());
        let failed = run(Command::new("sh"), &["-c", "echo no >&2; exit 1"]).unwrap_err();
        assert_eq!(failed, "tmux -c echo no >&2; exit 1: no");
    }
}
