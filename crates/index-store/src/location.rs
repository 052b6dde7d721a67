//! Where the index lives: the default path, symlink resolution, and whether a path survives a
//! reboot.

use std::path::{Component, Path, PathBuf};

use camino::{Utf8Path, Utf8PathBuf};
use etcetera::BaseStrategy;

use crate::StoreError;

/// The index file's name inside its directory.
pub const FILE_NAME: &str = "index.json";
/// The directory under the state dir.
pub const APP_DIR: &str = "crash-resume";

/// `$XDG_STATE_HOME/crash-resume/index.json`, else `~/.local/state/crash-resume/index.json`.
///
/// XDG is used on every platform, as the JavaScript tool did, so the path is the same on a
/// Mac and on Linux.
pub fn default_index_path() -> Result<Utf8PathBuf, StoreError> {
    let strategy = etcetera::base_strategy::Xdg::new().map_err(|_| StoreError::NoHome)?;
    let state = strategy.state_dir().ok_or(StoreError::NoHome)?;
    utf8(state.join(APP_DIR).join(FILE_NAME))
}

pub(crate) fn utf8(path: PathBuf) -> Result<Utf8PathBuf, StoreError> {
    Utf8PathBuf::from_path_buf(path).map_err(|path| StoreError::NotUtf8 { path })
}

/// Makes `path` absolute and follows a symlink at its end (a dotfile manager may link the
/// index elsewhere); the directory part leads where `real_location` says, resolved even where
/// it does not exist yet.
///
/// A symlink is followed only when it is safe to, by the rule OpenSSH applies to its files:
/// the link is owned by this user (or root), and so is the directory holding it, which no one
/// else may write to (no group or other write bit, so no sticky world-writable dir like `/tmp`
/// either). Otherwise another user could plant the link or swap it, and the index would be
/// written through it: [`StoreError::UnsafeSymlink`] says which condition failed.
pub fn resolve(path: &Utf8Path) -> Result<Utf8PathBuf, StoreError> {
    let mut current: PathBuf = std::path::absolute(path).map_err(|source| StoreError::Read {
        path: path.to_owned(),
        cause: source,
    })?;
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.is_symlink() => {
                let target = std::fs::read_link(&current).map_err(|source| StoreError::Read {
                    path: utf8(current.clone()).unwrap_or_else(|_| path.to_owned()),
                    cause: source,
                })?;
                if let Some(reason) = unsafe_link(&current, &metadata) {
                    return Err(StoreError::UnsafeSymlink {
                        path: utf8(current).unwrap_or_else(|_| path.to_owned()),
                        target: Utf8PathBuf::from(target.to_string_lossy().into_owned()),
                        reason,
                    });
                }
                current = match current.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            _ => break,
        }
    }
    utf8(real_location(&current))
}

/// Where `path` (absolute, its own final symlink already followed) really leads: its deepest
/// existing ancestor canonicalized (every `..` and symlink in it resolved), the rest, which
/// does not exist yet and so holds no symlink, appended with `.` and `..` resolved by name
/// (and the result resolved again when a `..` led back into what exists).
/// A path whose ancestors cannot be resolved at all (the root unreadable) is kept as it is.
fn real_location(path: &Path) -> PathBuf {
    let Some(parent) = path.parent() else {
        return path.to_path_buf();
    };
    let existing = parent
        .ancestors()
        .find_map(|ancestor| Some((ancestor, ancestor.canonicalize().ok()?)));
    let Some((ancestor, mut real)) = existing else {
        return path.to_path_buf();
    };
    // The ancestor is a prefix of `path` by construction.
    let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
    let mut went_up = false;
    for component in rest.components() {
        match component {
            Component::ParentDir => {
                real.pop();
                went_up = true;
            }
            Component::Normal(name) => real.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    // A `..` may lead back into dirs that exist (and may be symlinks): resolve the result,
    // which holds no `..` any more, once again.
    if went_up {
        return real_location(&real);
    }
    real
}

/// Why following the symlink at `link` is not safe, or `None` when it is.
fn unsafe_link(link: &Path, metadata: &std::fs::Metadata) -> Option<String> {
    if let Some(reason) = untrusted_owner(metadata) {
        return Some(format!("the link {reason}"));
    }
    let dir = link.parent().unwrap_or(Path::new("/"));
    match std::fs::metadata(dir) {
        Ok(dir_metadata) => untrusted(&dir_metadata, false)
            .map(|reason| format!("its directory {} {reason}", dir.display())),
        Err(error) => Some(format!("its directory cannot be checked ({error})")),
    }
}

/// Why the index at `path` (its real location, symlinks followed) is not safe to use, or
/// `None` when it is: the symlink rule applied to the file and every existing dir on its
/// path, where a sticky dir (such as `/var/tmp`) may be writable by others, since no one else
/// can replace or remove what is ours in it (OpenSSH's exception too). A file or dir that
/// cannot be examined is left to the open that follows, which names the error.
pub fn untrusted_path(path: &Utf8Path) -> Option<String> {
    // A symlink still there (a loop) is refused by the open that follows.
    let file = std::fs::symlink_metadata(path).ok();
    let file_reason = file
        .filter(|metadata| !metadata.is_symlink())
        .and_then(|metadata| untrusted(&metadata, false));
    if let Some(reason) = file_reason {
        return Some(format!("it {reason}"));
    }
    path.ancestors().skip(1).find_map(|dir| {
        let dir = if dir.as_str().is_empty() {
            Utf8Path::new(".")
        } else {
            dir
        };
        let metadata = std::fs::metadata(dir).ok()?;
        untrusted(&metadata, true).map(|reason| format!("the directory {dir} on its path {reason}"))
    })
}

/// Why a file or dir with this owner and mode could be changed by another user, in words
/// that follow its name ("is owned by uid 1001, not by you"), or `None` when only this user
/// (or root) can change it. `sticky_ok`: a dir writable by others is accepted when sticky.
#[cfg(unix)]
pub(crate) fn untrusted(metadata: &std::fs::Metadata, sticky_ok: bool) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if let Some(reason) = untrusted_owner(metadata) {
        return Some(reason);
    }
    let mode = metadata.mode() & 0o7777;
    let sticky = sticky_ok && metadata.is_dir() && mode & 0o1000 != 0;
    // Group write is the user's alone when the group is the user's private one (systems that
    // make a group per user, as Debian and Fedora do, default to umask 002), as Debian's
    // OpenSSH accepts it.
    let writers = if private_group(metadata.gid()) {
        0o002
    } else {
        0o022
    };
    (mode & writers != 0 && !sticky).then(|| format!("can be written by others (mode {mode:o})"))
}

/// Whether `gid` is the user's private group: the user's own group, numbered as the user is
/// (the convention of systems that make a group per user), so that no one else is in it.
#[cfg(unix)]
fn private_group(gid: u32) -> bool {
    let user = rustix::process::geteuid().as_raw();
    gid == user && rustix::process::getegid().as_raw() == gid
}

#[cfg(not(unix))]
pub(crate) fn untrusted(_metadata: &std::fs::Metadata, _sticky_ok: bool) -> Option<String> {
    None
}

/// Why the owner of a file or dir is not to be trusted: neither this user nor root.
#[cfg(unix)]
fn untrusted_owner(metadata: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    let owner = metadata.uid();
    (owner != me && owner != 0).then(|| format!("is owned by uid {owner}, not by you"))
}

#[cfg(not(unix))]
fn untrusted_owner(_metadata: &std::fs::Metadata) -> Option<String> {
    None
}

/// Whether the index at a path would survive a reboot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Durability {
    /// It survives a reboot.
    Durable,
    /// On a filesystem a reboot wipes; the text says why.
    Volatile(String),
}

/// Directories a reboot empties: Linux's, and macOS's under their real names (`/tmp`,
/// `/var/run` and `/var/folders`, where `$TMPDIR` points, are symlinks into `/private`).
const VOLATILE_PREFIXES: [&str; 8] = [
    "/tmp",
    "/dev/shm",
    "/run",
    "/var/run",
    "/var/folders",
    "/private/tmp",
    "/private/var/run",
    "/private/var/folders",
];

/// Decides whether the index at `path` would survive a reboot. Both the path as given (made
/// absolute) and its real location (symlinks followed, the file's own too) are checked: a
/// symlink in `/tmp` goes with `/tmp` wherever it points, and a durable-looking name may lead
/// into `/tmp`. Volatile is a path under one of the volatile dirs (`/tmp`, `/dev/shm`, `/run`, and macOS's) or the temp dir
/// (`$TMPDIR`, as [`std::env::temp_dir`] reads it), or one on tmpfs or ramfs as `statfs`
/// reports for the real location's nearest existing ancestor.
pub fn durability(path: &Utf8Path) -> Durability {
    durability_with(path, &std::env::temp_dir())
}

/// [`durability`] with the temp dir given (a test's seam: the process's `$TMPDIR` is fixed).
pub fn durability_with(path: &Utf8Path, temp_dir: &Path) -> Durability {
    let real = resolve(path).unwrap_or_else(|_| path.to_owned());
    judge(path, &real, temp_dir)
}

/// [`durability`] of `path`, whose real location ([`resolve`]) is `real`.
pub(crate) fn judge(path: &Utf8Path, real: &Utf8Path, temp_dir: &Path) -> Durability {
    let temp_dirs = temp_dirs(temp_dir);
    let given = std::path::absolute(path)
        .ok()
        .and_then(|given| Utf8PathBuf::from_path_buf(given).ok())
        .unwrap_or_else(|| path.to_owned());
    for candidate in [given.as_path(), real] {
        if let Some(prefix) = VOLATILE_PREFIXES
            .iter()
            .find(|prefix| candidate.starts_with(Utf8Path::new(prefix)))
        {
            return Durability::Volatile(format!("under {prefix}"));
        }
        if let Some(temp) = temp_dirs.iter().find(|temp| candidate.starts_with(temp)) {
            return Durability::Volatile(format!("under the temp dir {temp} ($TMPDIR)"));
        }
    }
    match memory_filesystem(real.as_std_path()) {
        Some(kind) => Durability::Volatile(format!("on {kind}")),
        None => Durability::Durable,
    }
}

/// The temp dir as named and as it really is; nothing when it is the root (a `$TMPDIR` of `/`
/// would make every path volatile).
fn temp_dirs(temp_dir: &Path) -> Vec<Utf8PathBuf> {
    let real = temp_dir.canonicalize().ok();
    [Some(temp_dir.to_path_buf()), real]
        .into_iter()
        .flatten()
        .filter_map(|dir| Utf8PathBuf::from_path_buf(dir).ok())
        .filter(|dir| dir.is_absolute() && dir.parent().is_some())
        .collect()
}

#[cfg(target_os = "linux")]
fn memory_filesystem(path: &Path) -> Option<&'static str> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let existing = path.ancestors().find(|ancestor| ancestor.exists())?;
    let stats = rustix::fs::statfs(existing).ok()?;
    #[allow(clippy::unnecessary_cast)]
    match stats.f_type as i64 {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    }
}

#[cfg(not(target_os = "linux"))]
fn memory_filesystem(_path: &Path) -> Option<&'static str> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `real_location` of `path` (relative to a fresh dir holding `existing/` and a link
    /// `link -> existing`) is `expected` (relative to the same dir).
    #[cfg(unix)]
    fn check(path: &str, expected: &str) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("existing")).unwrap();
        std::os::unix::fs::symlink(base.join("existing"), base.join("link")).unwrap();
        assert_eq!(
            real_location(&base.join(path)),
            base.join(expected),
            "{path}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_real_location_resolves_dots_and_links_before_the_path_exists() {
        check("existing/index.json", "existing/index.json");
        check("missing/index.json", "missing/index.json");
        check("missing/deeper/index.json", "missing/deeper/index.json");
        check("link/missing/index.json", "existing/missing/index.json");
        check("link/../existing/new/index.json", "existing/new/index.json");
        check("existing/../missing/index.json", "missing/index.json");
        check("missing/../existing/./index.json", "existing/index.json");
        check("missing/a/../../link/b/index.json", "existing/b/index.json");
    }

    #[test]
    fn a_path_through_dots_into_tmp_is_volatile_before_it_exists() {
        let through_dots = Utf8Path::new("/var/tmp/../../tmp/crash-resume-never-made/x/i.json");
        assert_eq!(
            durability_with(through_dots, Path::new("/nonexistent-temp")),
            Durability::Volatile("under /tmp".into())
        );
    }
}
