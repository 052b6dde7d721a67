//! `crash-resume hook install tmux` and `hook uninstall tmux`: a restore when a tmux server
//! starts, as tmux-continuum's auto-restore does. Install adds one marked block to the tmux
//! config file; tmux runs it each time it reads the file, and the block guards itself with a
//! server option (`@crash-resume-restored`), so only a server's first read restores, in the
//! background (`run-shell -b`), into that server (`$TMUX`), its output appended to a log beside
//! the index. The restore itself never runs twice at once (the restore lock) and never starts
//! anything in a busy pane (the apply protocol).
//!
//! The block is found by its marker lines: installing again leaves an identical block alone and
//! replaces one another binary path wrote; uninstall removes every block, keeping every other
//! line as written. A begin line without its end line is refused, naming the line (taking it
//! out would take the user's lines after it). Both are the locked, backed-up read-change-write
//! of the agents' hook files (`index_store::edit_file`), through a symlink at the path as they
//! are (`index_store::resolve_path`).

use anyhow::anyhow;
use camino::{Utf8Path, Utf8PathBuf};

// The block's first and last lines are `setup_check::tmux_block`'s, which `doctor` reads.
use setup_check::tmux_block::{BEGIN, END, is_begin};

use crate::context::{self, Context};
use crate::error::Failure;
use crate::output;
/// The server option that marks a server as restored once.
const GUARD: &str = "@crash-resume-restored";
/// The log the restore writes to, beside the index.
const LOG: &str = "tmux-start.log";
/// How long an install waits for another one editing the same dir.
const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// `hook install tmux` (`uninstall` false) or `hook uninstall tmux`, on `config` or the tmux
/// config file tmux reads (a symlink at its path followed when it is safe to, as the agents'
/// settings are, so a dotfile manager's link stays a link).
pub fn run(
    cx: &Context,
    config: Option<String>,
    dry_run: bool,
    uninstall: bool,
) -> Result<(), Failure> {
    let path = match config {
        Some(path) if path.trim().is_empty() => {
            return Err(Failure::Usage(anyhow!(
                "--settings is empty; give the tmux config file's path"
            )));
        }
        Some(path) => Utf8PathBuf::from(path),
        None => default_config(cx)?,
    };
    let via_link = std::fs::symlink_metadata(&path).is_ok_and(|metadata| metadata.is_symlink());
    let path = index_store::resolve_path(&path).map_err(|error| store_failure(&error))?;
    let block = match uninstall {
        true => None,
        false => {
            super::ours::refuse_volatile_index(cx)?;
            Some(block(cx)?)
        }
    };
    let mut result = None;
    let mut change = |current: Option<&[u8]>| -> Result<Option<Vec<u8>>, Failure> {
        let text = std::str::from_utf8(current.unwrap_or_default()).map_err(|_| {
            Failure::Failed(anyhow!(
                "{path} is not valid UTF-8; the file was left untouched"
            ))
        })?;
        let changed = edited(text, block.as_deref()).map_err(|refusal| {
            Failure::Failed(anyhow!(
                "{}: {refusal}; fix it by hand (or choose another file with --settings), the file \
                 was left untouched",
                index_core::text::escape(path.as_str())
            ))
        })?;
        // A config left empty is removed (no content, which the edit takes for that), but
        // not through a link, which would be left leading nowhere: a blank line stays there.
        let written = match (changed.text.is_empty(), via_link) {
            (true, true) => "\n".to_string(),
            _ => changed.text.clone(),
        };
        let bytes = (written != text).then(|| written.into_bytes());
        result = Some(changed);
        Ok(bytes)
    };
    let escaped = index_core::text::escape(path.as_str());
    if dry_run {
        let current = index_store::read_editable(&path).map_err(|error| store_failure(&error))?;
        let changed = change(current.as_deref())?;
        let edit = result.expect("the edit ran");
        if cx.json {
            let merged = match (&current, uninstall) {
                (None, true) => None,
                _ => Some(edit.text.as_str()),
            };
            return report_json(cx, &path, &edit, uninstall, (false, false), Some(merged));
        }
        match &changed {
            Some(bytes) => output::print_bytes(bytes)?,
            None => output::print_message(&format!("{escaped} would not change")),
        }
        output::print_message(&format!("dry run: {escaped} was not written"));
        return Ok(());
    }
    if uninstall && !path.as_std_path().exists() {
        if cx.json {
            let nothing = Edited {
                text: String::new(),
                removed: 0,
            };
            return report_json(cx, &path, &nothing, uninstall, (false, false), None);
        }
        output::print_message(&format!(
            "no restore of crash-resume to remove: {escaped} does not exist"
        ));
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|dir| !dir.as_str().is_empty()) {
        safe_open::create_private_dirs(dir.as_std_path())
            .map_err(|error| Failure::Failed(anyhow!("cannot create {dir}: {error}")))?;
    }
    let edited = index_store::edit_file(&path, LOCK_TIMEOUT, |current| {
        change(current).map_err(Edit::Refused)
    })
    .map_err(|error| match error {
        Edit::Store(error) => store_failure(&error),
        Edit::Refused(failure) => failure,
    })?;
    if cx.json {
        let edit = result.expect("the edit ran");
        return report_json(
            cx,
            &path,
            &edit,
            uninstall,
            (edited.written, edited.removed),
            None,
        );
    }
    let kept = match &edited.backup {
        Some(backup) => format!(
            " (the previous version is kept as {})",
            index_core::text::escape(backup.as_str())
        ),
        None => String::new(),
    };
    match (uninstall, edited.written) {
        (true, true) => output::print_line(&format!(
            "removed crash-resume's restore at tmux server start from {escaped}{}{kept}",
            match edited.removed {
                true => ", and the file, which held nothing else",
                false => "",
            }
        ))?,
        (true, false) => output::print_message(&format!(
            "no restore of crash-resume in {escaped}; nothing to remove"
        )),
        (false, false) => output::print_line(&format!("already installed in {escaped}"))?,
        (false, true) => {
            output::print_line(&format!(
                "installed a restore at tmux server start into {escaped}{kept}"
            ))?;
            output::print_message(&format!(
                "next: the next tmux server that starts (after a reboot or a crash) restores the \
                 recorded panes into itself, once, in the background; it writes what it did to \
                 {}. A server already running is not restored: run `crash-resume restore \
                 --apply tmux` there (`--tmux-socket NAME` for a server started with `tmux -L \
                 NAME`). `crash-resume hook uninstall tmux` removes it",
                index_core::text::escape(log_path(cx)?.as_str())
            ));
        }
    }
    Ok(())
}

/// The `--json` document of an install or uninstall (`written`: whether the file was written,
/// and whether that removed it; `merged`: with `--dry-run`, the text that would be written,
/// `None` for no file).
fn report_json(
    cx: &Context,
    path: &Utf8Path,
    edit: &Edited,
    uninstall: bool,
    (written, file_removed): (bool, bool),
    merged: Option<Option<&str>>,
) -> Result<(), Failure> {
    if uninstall {
        return output::print_json(&output::TmuxUninstalled::new(
            path.as_str(),
            edit.removed,
            written,
            file_removed,
            merged,
        ));
    }
    let log = log_path(cx)?;
    output::print_json(&output::TmuxInstalled::new(
        path.as_str(),
        log.as_str(),
        edit.removed,
        written,
        merged.flatten(),
    ))
}

/// Why an edit did not go through.
enum Edit {
    Store(index_store::StoreError),
    Refused(Failure),
}

impl From<index_store::StoreError> for Edit {
    fn from(error: index_store::StoreError) -> Self {
        Edit::Store(error)
    }
}

fn store_failure(error: &index_store::StoreError) -> Failure {
    Failure::Failed(anyhow!(
        "{error}; or choose another tmux config file with --settings"
    ))
}

/// The config file tmux reads: `~/.tmux.conf` when it exists, else
/// `$XDG_CONFIG_HOME/tmux/tmux.conf` (`~/.config/tmux/tmux.conf`) when that exists, else a new
/// `~/.tmux.conf`.
fn default_config(cx: &Context) -> Result<Utf8PathBuf, Failure> {
    let home = cx.env().home().ok_or_else(|| {
        Failure::Failed(anyhow!(
            "no home dir (HOME is not set); give the tmux config file with --settings"
        ))
    })?;
    Ok(setup_check::tmux_block::config_path(
        &home,
        std::env::var("XDG_CONFIG_HOME").ok().as_deref(),
    ))
}

/// The restore's log, beside the index.
fn log_path(cx: &Context) -> Result<Utf8PathBuf, Failure> {
    let index = context::index_path(cx)?;
    Ok(index.parent().unwrap_or(Utf8Path::new("/")).join(LOG))
}

/// The block: once per server, the restore in the background, into `$TMUX`'s server, with the
/// global options of this install (`--path`, `--allow-volatile`). The log's dir is made first
/// (before anything is recorded it may not exist yet), and whatever fails, the command returns
/// 0 with nothing on its output: tmux shows a `run-shell` that fails or prints in view mode,
/// over the pane the user is starting. The paths in it go through tmux's config parser (single
/// quotes), a format expansion (`run-shell`) and `sh -c`, so only paths of plain characters are
/// taken.
fn block(cx: &Context) -> Result<String, Failure> {
    let mut words = vec![plain(&super::ours::program()?, "this program's path")?];
    for word in super::ours::global_words(cx)? {
        words.push(match word.starts_with("--") {
            true => word,
            false => plain(&word, "the index path")?,
        });
    }
    // The server that reads the block names itself: `run-shell` expands the format to its own
    // socket path, shell-quoted (`q:`), so no variable of the environment (`TMUX`, or a
    // `CRASH_RESUME_TMUX_SOCKET` in tmux's global environment) can point the restore at
    // another server. Once per boot: a server started again in the same boot (a second login,
    // a crash) restores nothing twice, and the agents start a few at a time, each verified.
    words.extend(
        [
            "restore",
            "--apply",
            "tmux",
            "--once-per-boot",
            "--tmux-socket",
            "#{q:socket_path}",
        ]
        .map(str::to_string),
    );
    let log = log_path(cx)?;
    let log_dir = log.parent().unwrap_or(Utf8Path::new("/"));
    let command = format!(
        "(mkdir -p -m 700 {} && {} >> {} 2>&1) >/dev/null 2>&1 || true",
        plain(log_dir.as_str(), "the log's dir")?,
        words.join(" "),
        plain(log.as_str(), "the log path")?
    );
    Ok(format!(
        "{BEGIN}: restore after a crash when a tmux server starts (`crash-resume hook uninstall tmux` removes it)\n\
         if-shell -F '#{{!=:#{{{GUARD}}},1}}' {{\n  \
         set-option -g {GUARD} 1\n  \
         run-shell -b '{command}'\n\
         }}\n\
         {END}\n"
    ))
}

/// `path` as it is, when it holds only characters that neither tmux (quotes, `#`, `~`, `$`) nor
/// the shell interprets.
fn plain(path: &str, what: &str) -> Result<String, Failure> {
    let is_plain =
        |character: char| character.is_ascii_alphanumeric() || "/._+-@%=,:".contains(character);
    match path.starts_with('/') && path.chars().all(is_plain) {
        true => Ok(path.to_string()),
        false => Err(Failure::Usage(anyhow!(
            "{what} {} holds a character tmux's config or the shell would interpret (or is not \
             absolute); nothing was written. Install crash-resume at a plain path",
            index_core::text::escape(path)
        ))),
    }
}

/// What an edit makes of the config.
#[derive(Debug, PartialEq, Eq)]
struct Edited {
    /// The config with the change.
    text: String,
    /// How many blocks of ours it took out (an install that leaves the text as it is takes none).
    removed: usize,
}

/// `text` with every block of ours taken out, then `block` added at the end (when given): an
/// identical block already there leaves the text as it is. A block whose end marker is missing
/// (or that a second begin marker interrupts) is refused, naming its line: taking it out would
/// take the user's lines after it with it.
fn edited(text: &str, block: Option<&str>) -> Result<Edited, String> {
    let mut kept = String::with_capacity(text.len());
    let mut ours = String::new();
    let mut removed = 0;
    let mut begun_at = None;
    for (number, line) in (1..).zip(text.split_inclusive('\n')) {
        let bare = line.trim_end_matches(['\n', '\r']);
        if is_begin(bare) {
            if let Some(begun_at) = begun_at {
                return Err(format!(
                    "line {begun_at} begins a block of crash-resume (`{BEGIN}`) that line \
                     {number} begins again before its end (`{END}`)"
                ));
            }
            begun_at = Some(number);
        }
        match begun_at {
            Some(_) => ours.push_str(line),
            None => kept.push_str(line),
        }
        if begun_at.is_some() && bare == END {
            begun_at = None;
            removed += 1;
        }
    }
    if let Some(begun_at) = begun_at {
        return Err(format!(
            "line {begun_at} begins a block of crash-resume (`{BEGIN}`) that has no end line \
             (`{END}`) after it"
        ));
    }
    Ok(match block {
        // Installed once, exactly as it would be written, and nothing after it of ours.
        Some(block) if ours == block && text.ends_with(block) => Edited {
            text: text.to_string(),
            removed: 0,
        },
        Some(block) => {
            if !kept.is_empty() && !kept.ends_with('\n') {
                kept.push('\n');
            }
            kept.push_str(block);
            Edited {
                text: kept,
                removed,
            }
        }
        None => Edited {
            text: kept,
            removed,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "# >>> crash-resume: x\nrun-shell -b 'a'\n# <<< crash-resume\n";

    fn text(text: &str, block: Option<&str>) -> String {
        edited(text, block).unwrap().text
    }

    #[test]
    fn a_block_is_added_once_replaced_when_it_differs_and_removed_whole() {
        let user = "set -g mouse on\n";
        let installed = text(user, Some(BLOCK));
        assert_eq!(installed, format!("{user}{BLOCK}"));
        assert_eq!(text(&installed, Some(BLOCK)), installed);
        let other = BLOCK.replace("'a'", "'b'");
        assert_eq!(text(&installed, Some(&other)), format!("{user}{other}"));
        assert_eq!(edited(&installed, None).unwrap().removed, 1);
        assert_eq!(text(&installed, None), user);
        assert_eq!(
            text("set -g x 1", Some(BLOCK)),
            format!("set -g x 1\n{BLOCK}")
        );
        assert_eq!(text("", None), "");
        // A line that only begins with the marker's characters is the user's.
        let theirs = "# >>> crash-resume-notes\nset -g x 1\n";
        assert_eq!(text(theirs, None), theirs);
    }

    #[test]
    fn a_block_without_its_end_is_refused_with_its_line() {
        let open = "set -g a 1\n# >>> crash-resume: x\nset -g mine 1\n";
        let refused = edited(open, None).unwrap_err();
        assert!(refused.contains("line 2 begins"), "{refused}");
        let twice = format!("# >>> crash-resume: x\n{BLOCK}");
        let refused = edited(&twice, Some(BLOCK)).unwrap_err();
        assert!(
            refused.contains("line 1 begins") && refused.contains("line 2"),
            "{refused}"
        );
    }
}
