//! Integration tests of index-store: the on-disk format both ways with the JavaScript tool,
//! durability, corruption handling, locking and the volatile-path rule; every state a power cut
//! during an update can leave; bounded fuzzing of the loader.

mod crash_states;
mod format;
mod fuzz;
mod store;

use camino::{Utf8Path, Utf8PathBuf};
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};

/// A throwaway directory under the build dir (not `/tmp`, which the store refuses; when the
/// build dir itself is on a volatile path, under `/var/tmp`).
pub fn temp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let preferred = Utf8PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let base = match index_store::durability(&preferred) {
        index_store::Durability::Durable => preferred,
        index_store::Durability::Volatile(_) => Utf8PathBuf::from("/var/tmp"),
    };
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
