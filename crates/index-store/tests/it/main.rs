//! Integration tests of index-store: the on-disk format both ways with the JavaScript tool,
//! durability, corruption handling, locking and the volatile-path rule; every state a power cut
//! during an update can leave; bounded fuzzing of the loader.

mod crash_states;
mod format;
mod fuzz;
mod scoped;
mod store;

use camino::{Utf8Path, Utf8PathBuf};
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions, Warning};
use test_support::sandbox::durable_or_var_tmp;

/// A throwaway directory under the build dir (not `/tmp`, which the store refuses; when the
/// build dir itself is on a volatile path, under `/var/tmp/crash-resume-tests-<checkout>`).
pub fn temp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let base = durable_or_var_tmp(env!("CARGO_TARGET_TMPDIR").as_ref(), "tests");
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::Builder::new()
        .prefix("store-")
        .tempdir_in(base)
        .unwrap();
    let path = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    (dir, path)
}

pub fn store_at(path: &Utf8Path) -> Store {
    Store::open(path, StoreOptions::default()).unwrap()
}

pub fn rec(surface: &str, session: &str, repo: &str) -> Record {
    Record::new(
        SurfaceId::new(surface).unwrap(),
        SessionId::new(session).unwrap(),
        Repo::new(repo).unwrap(),
    )
}

pub fn fixture(name: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Where a load moved the unreadable index aside when it fell back to the backup: its one
/// warning, which must say so (`context` names the case otherwise).
pub fn quarantined_from_backup<'a>(warnings: &'a [Warning], context: &str) -> &'a Utf8Path {
    let [
        Warning::Quarantined {
            moved_to,
            from_backup: true,
            ..
        },
    ] = warnings
    else {
        panic!("{context}: expected one quarantine warning, got {warnings:?}");
    };
    moved_to
}
