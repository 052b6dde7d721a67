//! Recorded paths as the agent will meet them: the home-dir expansion that the preflight and the
//! resume command share, so both look in the same place (it lives in `agent-paths`, with the
//! agents' config-dir facts, and is re-exported here), and [`start_dir`], the one rule for
//! where a restore starts an agent whose recorded working dir is gone.

use camino::{Utf8Path, Utf8PathBuf};

pub use agent_paths::expand_home;

/// Where a restore starts the agent of a session recorded in a working dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartDir {
    /// The recorded dir is there: the resume command changes into it (`~` expanded).
    Recorded(Utf8PathBuf),
    /// The recorded dir is gone (deleted, renamed, or no longer a dir; or a relative path,
    /// which another tool may have written and which names no one dir): the resume command
    /// cannot change into it, so the agent starts in the home dir instead.
    Home {
        /// The recorded dir, `~` expanded.
        gone: Utf8PathBuf,
        /// The home dir the agent starts in.
        home: Utf8PathBuf,
    },
    /// The recorded dir is gone and no home dir is known to start in.
    Nowhere {
        /// The recorded dir, `~` expanded.
        gone: Utf8PathBuf,
    },
}

impl StartDir {
    /// The dir the agent starts in, when one is known.
    pub fn dir(&self) -> Option<&Utf8Path> {
        match self {
            StartDir::Recorded(dir) | StartDir::Home { home: dir, .. } => Some(dir),
            StartDir::Nowhere { .. } => None,
        }
    }

    /// The recorded dir when it is gone.
    pub fn gone(&self) -> Option<&Utf8Path> {
        match self {
            StartDir::Recorded(_) => None,
            StartDir::Home { gone, .. } | StartDir::Nowhere { gone } => Some(gone),
        }
    }
}

/// Where a restore starts the agent of a session recorded in `cwd` (`~` expanded with `home`):
/// in `cwd` when it is an absolute path to a dir (following symlinks, as `cd` does), else in
/// `home`; a relative one would be looked up from wherever the caller runs. One `stat`.
pub fn start_dir(cwd: &str, home: Option<&Utf8Path>) -> StartDir {
    let recorded = expand_home(cwd, home);
    if recorded.is_absolute() && recorded.is_dir() {
        return StartDir::Recorded(recorded);
    }
    match home {
        Some(home) => StartDir::Home {
            gone: recorded,
            home: home.to_path_buf(),
        },
        None => StartDir::Nowhere { gone: recorded },
    }
}
