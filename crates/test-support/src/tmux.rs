//! Talking to a private tmux server (`tmux -L <name> -f /dev/null`), as the CLI's tmux tests and
//! the reboot simulation both do.

use std::process::Command;

/// The surface id crash-resume gives a tmux pane, as a tmux format.
pub const PANE_SURFACE: &str = "tmux:#{session_name}:#{window_index}.#{pane_index}";

/// Runs `client ARGS` (`client`: `tmux` with its environment, `-L <name>` and `-f /dev/null`);
/// its stdout with the final newline trimmed, or what tmux said on stderr.
pub fn run(mut client: Command, args: &[&str]) -> Result<String, String> {
    let output = client
        .args(args)
        .output()
        .map_err(|error| format!("cannot run tmux ({error}); install tmux and retry"))?;
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

/// Every pane's surface id and `columns` (a tmux format), one `(surface, columns)` pair a pane
/// in tmux's order, through `tmux` (which runs `tmux ARGS`); none when the server is not
/// running.
pub fn list_panes<E>(
    tmux: impl FnOnce(&[&str]) -> Result<String, E>,
    columns: &str,
) -> Vec<(String, String)> {
    let format = format!("{PANE_SURFACE}\t{columns}");
    let Ok(listing) = tmux(&["list-panes", "-a", "-F", &format]) else {
        return Vec::new();
    };
    listing
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(surface, rest)| (surface.to_string(), rest.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panes_are_split_at_the_first_tab_and_a_failure_is_no_panes() {
        let listing = |args: &[&str]| -> Result<String, ()> {
            assert_eq!(args[..3], ["list-panes", "-a", "-F"]);
            assert_eq!(args[3], format!("{PANE_SURFACE}\t#{{pane_pid}}"));
            Ok("tmux:a b:0.0\t12\ntmux:c:1.2\t34".to_string())
        };
        assert_eq!(
            list_panes(listing, "#{pane_pid}"),
            [
                ("tmux:a b:0.0".to_string(), "12".to_string()),
                ("tmux:c:1.2".to_string(), "34".to_string())
            ]
        );
        assert!(list_panes(|_| Err(()), "#{pane_pid}").is_empty());
        let failed = run(Command::new("sh"), &["-c", "echo no >&2; exit 1"]).unwrap_err();
        assert_eq!(failed, "tmux -c echo no >&2; exit 1: no");
    }
}
