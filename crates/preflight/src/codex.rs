//! Codex CLI's on-disk layout: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<id>.jsonl`.
//!
//! `codex resume <id>` finds the rollout by its id wherever its date folder is. A transcript is
//! reachable when such a non-empty regular file exists. There is no disk recovery for Codex.

use std::fs;

use camino::{Utf8Path, Utf8PathBuf};

/// The rollout file of `session` under `codex_home`, if one exists as a non-empty regular file.
/// Date folders are searched newest first.
pub fn find_rollout(codex_home: &Utf8Path, session: &str) -> Option<Utf8PathBuf> {
    if !crate::claude::is_file_name_safe(session) {
        return None;
    }
    let suffix = format!("-{session}.jsonl");
    let sessions = codex_home.join("sessions");
    for year in sorted_dirs(&sessions) {
        for month in sorted_dirs(&year) {
            for day in sorted_dirs(&month) {
                let Ok(listing) = fs::read_dir(&day) else {
                    continue;
                };
                let found = listing.flatten().find_map(|item| {
                    let name = item.file_name().into_string().ok()?;
                    let is_rollout = name.starts_with("rollout-") && name.ends_with(&suffix);
                    let metadata = fs::metadata(item.path()).ok()?;
                    (is_rollout && metadata.is_file() && metadata.len() > 0).then(|| day.join(name))
                });
                if found.is_some() {
                    return found;
                }
            }
        }
    }
    None
}

/// The sub-directories of `dir`, newest name first.
fn sorted_dirs(dir: &Utf8Path) -> Vec<Utf8PathBuf> {
    let Ok(listing) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<Utf8PathBuf> = listing
        .flatten()
        .filter(|item| item.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter_map(|item| item.file_name().into_string().ok())
        .map(|name| dir.join(name))
        .collect();
    dirs.sort_by(|a, b| b.cmp(a));
    dirs
}
