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
//! line as written. Both are the locked, backed-up read-change-write of the agents' hook files
//! (`index_store::edit_file`).

use anyhow::anyhow;
use camino::{Utf8Path, Utf8PathBuf};

use crate::context::{self, Context};
use crate::error::Failure;
use crate::output;

/// The first line of the block (its start; what follows on the line is for people).
const BEGIN: &str = "# >>> crash-resume";
/// The last line of the block.
const END: &str = "# <<< crash-resume";
/// The server option that marks a server as restored once.
const GUARD: &str = "@crash-resume-restored";
/// The log the restore writes to, beside the index.
const LOG: &str = "tmux-start.log";
/// How long an install waits for another one editing the same dir.
const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// `hook install tmux` (`uninstall` false) or `hook uninstall tmux`, on `config` or the tmux
/// config file tmux reads.
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
    let block = match uninstall {
        true => None,
        false => Some(block(cx)?),
    };
    let change = |current: Option<&[u8]>| -> Result<Option<Vec<u8>>, Failure> {
        let text = std::str::from_utf8(current.unwrap_or_default()).map_err(|_| {
            Failure::Failed(anyhow!(
                "{path} is not valid UTF-8; the file was left untouched"
            ))
        })?;
        let changed = edited(text, block.as_deref());
        Ok((changed != text).then(|| changed.into_bytes()))
    };
    let escaped = index_core::text::escape(path.as_str());
    if dry_run {
        let current = index_store::read_editable(&path).map_err(|error| store_failure(&error))?;
        let changed = change(current.as_deref())?;
        match &changed {
            Some(bytes) => output::print_bytes(bytes)?,
            None => output::print_message(&format!("{escaped} would not change")),
        }
        output::print_message(&format!("dry run: {escaped} was not written"));
        return Ok(());
    }
    if uninstall && !path.as_std_path().exists() {
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
    let kept = match &edited.backup {
        Some(backup) => format!(
            " (the previous version is kept as {})",
            index_core::text::escape(backup.as_str())
        ),
        None => String::new(),
    };
    match (uninstall, edited.written) {
        (true, true) => output::print_line(&format!(
            "removed crash-resume's restore at tmux server start from {escaped}{kept}"
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
                 --apply tmux` there. `crash-resume hook uninstall tmux` removes it",
                index_core::text::escape(log_path(cx)?.as_str())
            ));
        }
    }
    Ok(())
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
    let dotfile = home.join(".tmux.conf");
    let xdg = std::env::var("XDG_CONFIG_HOME")
        .ok()
        .filter(|dir| dir.starts_with('/'))
        .map_or_else(|| home.join(".config"), Utf8PathBuf::from)
        .join("tmux/tmux.conf");
    Ok(match (dotfile.exists(), xdg.exists()) {
        (false, true) => xdg,
        _ => dotfile,
    })
}

/// The restore's log, beside the index.
fn log_path(cx: &Context) -> Result<Utf8PathBuf, Failure> {
    let index = context::index_path(cx)?;
    Ok(index.parent().unwrap_or(Utf8Path::new("/")).join(LOG))
}

/// The block: once per server, the restore in the background, into `$TMUX`'s server. The paths
/// in it go through tmux's config parser (single quotes), a format expansion (`run-shell`) and
/// `sh -c`, so only paths of plain characters are taken.
fn block(cx: &Context) -> Result<String, Failure> {
    let exe = std::env::current_exe()
        .map_err(|error| Failure::Failed(anyhow!("cannot find this program's path: {error}")))?;
    let exe = Utf8PathBuf::from_path_buf(exe)
        .map_err(|_| Failure::Failed(anyhow!("this program's path is not valid UTF-8")))?;
    let mut words = vec![plain(exe.as_str(), "this program's path")?];
    if cx.path.is_some() {
        let index = context::index_path(cx)?;
        words.extend([
            "--path".to_string(),
            plain(index.as_str(), "the index path")?,
        ]);
    }
    words.extend(["restore", "--apply", "tmux"].map(str::to_string));
    let log = log_path(cx)?;
    let command = format!(
        "{} >> {} 2>&1",
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

/// `text` with every block of ours taken out, then `block` added at the end (when given): an
/// identical block already there leaves the text as it is.
fn edited(text: &str, block: Option<&str>) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut ours = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if !inside && bare.starts_with(BEGIN) {
            inside = true;
        }
        match inside {
            true => ours.push_str(line),
            false => kept.push_str(line),
        }
        if inside && bare == END {
            inside = false;
        }
    }
    match block {
        // Installed once, exactly as it would be written, and nothing after it of ours.
        Some(block) if ours == block && text.ends_with(block) => text.to_string(),
        Some(block) => {
            if !kept.is_empty() && !kept.ends_with('\n') {
                kept.push('\n');
            }
            kept.push_str(block);
            kept
        }
        None => kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "# >>> crash-resume: x\nrun-shell -b 'a'\n# <<< crash-resume\n";

    #[test]
    fn a_block_is_added_once_replaced_when_it_differs_and_removed_whole() {
        let user = "set -g mouse on\n";
        let installed = edited(user, Some(BLOCK));
        assert_eq!(installed, format!("{user}{BLOCK}"));
        assert_eq!(edited(&installed, Some(BLOCK)), installed);
        let other = BLOCK.replace("'a'", "'b'");
        assert_eq!(edited(&installed, Some(&other)), format!("{user}{other}"));
        assert_eq!(edited(&installed, None), user);
        assert_eq!(
            edited("set -g x 1", Some(BLOCK)),
            format!("set -g x 1\n{BLOCK}")
        );
        assert_eq!(edited("", None), "");
    }
}
