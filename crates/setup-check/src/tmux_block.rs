//! The block `hook install tmux` writes into the tmux config: its marker lines, which file tmux
//! reads, and what a block runs. The CLI's `tmux_start` writes and removes the block by these
//! markers; `doctor` reads it back.

use camino::{Utf8Path, Utf8PathBuf};

/// The first line of the block (its start; what follows on the line is for people).
pub const BEGIN: &str = "# >>> crash-resume";
/// The last line of the block.
pub const END: &str = "# <<< crash-resume";

/// The config file tmux reads: `~/.tmux.conf` when it exists, else
/// `$XDG_CONFIG_HOME/tmux/tmux.conf` (`~/.config/tmux/tmux.conf`; an `xdg_config_home` that is
/// not absolute does not count) when that exists, else a new `~/.tmux.conf`.
pub fn config_path(home: &Utf8Path, xdg_config_home: Option<&str>) -> Utf8PathBuf {
    let dotfile = home.join(".tmux.conf");
    let xdg = xdg_config_home
        .filter(|dir| dir.starts_with('/'))
        .map_or_else(|| home.join(".config"), Utf8PathBuf::from)
        .join("tmux/tmux.conf");
    match (dotfile.exists(), xdg.exists()) {
        (false, true) => xdg,
        _ => dotfile,
    }
}

/// A block of ours found in a tmux config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The line it begins on (from 1).
    pub line: usize,
    /// The program its restore runs, when the block has the shape this version writes.
    pub program: Option<String>,
    /// The `--path` the restore runs with, when it has one.
    pub index_path: Option<String>,
    /// Whether an end line follows.
    pub closed: bool,
}

/// Whether `line` begins a block of ours.
pub fn is_begin(line: &str) -> bool {
    line.strip_prefix(BEGIN)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
}

/// The blocks of ours in a tmux config's text, in order.
pub fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if !is_begin(lines[at]) {
            at += 1;
            continue;
        }
        let begin = at;
        let end = lines[begin + 1..]
            .iter()
            .position(|line| *line == END || is_begin(line))
            .map(|offset| begin + 1 + offset)
            .filter(|&end| lines[end] == END);
        let body = &lines[begin + 1..end.unwrap_or(lines.len())];
        let words = body.iter().find_map(|line| restore_words(line));
        let (program, index_path) = match words {
            Some(words) => {
                let index_path = words
                    .windows(2)
                    .find(|pair| pair[0] == "--path")
                    .map(|pair| pair[1].to_string());
                (words.first().map(|word| word.to_string()), index_path)
            }
            None => (None, None),
        };
        found.push(Block {
            line: begin + 1,
            program,
            index_path,
            closed: end.is_some(),
        });
        at = end.map_or(lines.len(), |end| end + 1);
    }
    found
}

/// The words of the restore a `run-shell` line of the block runs, from its program to
/// `restore` (the block's paths are plain: no quotes, no spaces).
fn restore_words(line: &str) -> Option<Vec<&str>> {
    let command = line.trim().strip_prefix("run-shell")?;
    let after = command
        .split_once("&& ")
        .map_or(command, |(_, after)| after);
    let (words, _) = after.split_once(" restore ")?;
    Some(words.split_whitespace().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_says_what_it_runs() {
        let text = "set -g mouse on\n\
            # >>> crash-resume: restore after a crash\n\
            if-shell -F '#{!=:#{@crash-resume-restored},1}' {\n  \
            set-option -g @crash-resume-restored 1\n  \
            run-shell -b '(mkdir -p -m 700 /s && /usr/bin/crash-resume --path /s/i.json restore --apply tmux --tmux-socket #{q:socket_path} >> /s/tmux-start.log 2>&1) >/dev/null 2>&1 || true'\n\
            }\n\
            # <<< crash-resume\n\
            # >>> crash-resume\n";
        assert_eq!(
            blocks(text),
            [
                Block {
                    line: 2,
                    program: Some("/usr/bin/crash-resume".to_string()),
                    index_path: Some("/s/i.json".to_string()),
                    closed: true,
                },
                Block {
                    line: 8,
                    program: None,
                    index_path: None,
                    closed: false,
                },
            ]
        );
        assert_eq!(blocks("set -g mouse on\n"), []);
    }
}
