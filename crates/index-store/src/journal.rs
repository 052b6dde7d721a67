//! The backup's journal, `<index>.bak.journal`: the changes the scoped writes
//! ([`crate::Store::update_entries`]) made since the backup was written, so that a scoped write
//! writes the index once and this small file, not a second copy of the index as the backup.
//!
//! The journal names the backup it applies to (`base`) and the index it leads to (`result`) by
//! their size and a digest of their bytes, and the backup file it was started beside (`backup`)
//! by its identity: device, inode, size and modification time, which only a write changes. The
//! change it holds is the entries set (each as the index holds it) and the surfaces dropped
//! since the backup, merged, so it grows with the surfaces touched, not with the writes.
//!
//! A read of the backup applies it when the backup is its base; a journal of another backup (a
//! copy a full write made since, if a crash kept the journal's removal from the disk) is not
//! used. A scoped write carries the journal on only when it leads from this backup file to the
//! index being replaced; else it starts one when the backup holds the index's bytes, and copies
//! the backup as a full write does otherwise (another tool wrote the index since). The backup
//! itself is left as it is, so whichever of the index's and the journal's renames a power cut
//! keeps, the backup with the journal is the generation before the write or the one after, and
//! it is never a second name of the index.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use camino::Utf8Path;
use safe_open::Symlinks;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::format::{self, Document};
use crate::location;

/// The largest journal read: a scoped write copies the backup instead once the journal would
/// be larger than [`compacted_above`], which is far below it.
const MAX_JOURNAL_BYTES: u64 = 1 << 20;

/// The journal's format version.
const VERSION: u64 = 1;

/// How large a journal may grow beside an index of `index_bytes` before a write copies the
/// backup instead (and the journal starts again): a quarter of the index, at least 4 KiB and
/// at most 64 KiB, so a record writes far less than a second copy of the index on average.
pub(crate) fn compacted_above(index_bytes: usize) -> usize {
    (index_bytes / 4).clamp(4 << 10, 64 << 10)
}

/// What says a file holds the bytes a journal was made for: their size and digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Content {
    size: u64,
    digest: u64,
}

impl Content {
    /// The content of a file of these bytes.
    pub(crate) fn of(bytes: &[u8]) -> Content {
        Content {
            size: bytes.len() as u64,
            digest: digest(bytes),
        }
    }
}

/// A 64-bit digest of `bytes`, the same on every platform and in every version (a change of a
/// byte changes it; it is no defence against a forger, whom the ownership checks keep out):
/// four lanes of eight-byte words, each word multiplied into its lane and mixed, the lanes
/// folded together with the length (four lanes, so the multiplications overlap).
fn digest(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |state: u64, word: u64| {
        let state = (state ^ word).wrapping_mul(K);
        state ^ (state >> 29)
    };
    let word = |chunk: &[u8]| {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        u64::from_le_bytes(word)
    };
    let mut lanes = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, chunk) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = mix(*lane, word(chunk));
        }
    }
    let mut state = mix(0, bytes.len() as u64);
    for lane in lanes {
        state = mix(state, lane);
    }
    for chunk in blocks.remainder().chunks(8) {
        state = mix(state, word(chunk));
    }
    mix(state, K)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_fixed_and_sees_every_byte() {
        // Fixed: a journal written by one build is read by the next.
        assert_eq!(
            digest(b"{\"version\": 1, \"entries\": {}}\n"),
            2_951_209_167_196_571_474,
            "the digest changed"
        );
        let base: Vec<u8> = (0..100u8).collect();
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(digest(&base)));
        for at in 0..base.len() {
            let mut changed = base.clone();
            changed[at] ^= 1;
            assert!(seen.insert(digest(&changed)), "byte {at}");
        }
        for len in 0..base.len() {
            assert!(seen.insert(digest(&base[..len])), "length {len}");
        }
    }
}

/// What says a file is the one a journal was started beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_s: i64,
    mtime_ns: i64,
}

impl Identity {
    /// The identity of the file `metadata` describes; `None` where there are no inodes.
    pub(crate) fn of(metadata: &fs::Metadata) -> Option<Identity> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Identity {
                dev: metadata.dev(),
                ino: metadata.ino(),
                size: metadata.size(),
                mtime_s: metadata.mtime(),
                mtime_ns: metadata.mtime_nsec(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            None
        }
    }
}

/// The journal file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Journal {
    crash_resume_backup_journal: u64,
    /// The backup the change applies to.
    pub(crate) base: Content,
    /// The backup file beside which the journal was started.
    pub(crate) backup: Identity,
    /// The index the change leads to.
    pub(crate) result: Content,
    /// The entries set since the backup, as the index holds them.
    set: BTreeMap<String, Box<RawValue>>,
    /// The surfaces dropped since the backup (none of them in `set`).
    removed: BTreeSet<String>,
}

impl Journal {
    /// A journal of no change to the backup `base` (the file `backup`), which is (for now) the
    /// index too.
    pub(crate) fn empty(base: Content, backup: Identity) -> Journal {
        Journal {
            crash_resume_backup_journal: VERSION,
            base,
            backup,
            result: base,
            set: BTreeMap::new(),
            removed: BTreeSet::new(),
        }
    }

    /// The journal with one more change: `set` entries set, `removed` surfaces dropped.
    pub(crate) fn then(
        mut self,
        set: Vec<(String, Box<RawValue>)>,
        removed: Vec<String>,
    ) -> Journal {
        for surface in removed {
            self.set.remove(&surface);
            self.removed.insert(surface);
        }
        for (surface, raw) in set {
            self.removed.remove(&surface);
            self.set.insert(surface, raw);
        }
        self
    }

    /// The journal's bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// `document` (the backup) with the change applied.
    pub(crate) fn apply(&self, document: Document) -> Document {
        let removed: Vec<String> = self.removed.iter().cloned().collect();
        // Each is JSON already (it was read as such).
        let set = self
            .set
            .iter()
            .filter_map(|(surface, raw)| {
                let value = serde_json::from_str(raw.get()).ok()?;
                Some((surface.clone(), value))
            })
            .collect();
        format::apply_change(document, &removed, set)
    }
}

/// The journal at `path`; `None` when there is none, or it is not a journal of this version,
/// is larger than [`MAX_JOURNAL_BYTES`], or another user could have written it.
pub(crate) fn read(path: &Utf8Path) -> Option<Journal> {
    let file = safe_open::open_read(path.as_std_path(), Symlinks::Refuse).ok()?;
    let metadata = file.metadata().ok()?;
    if location::untrusted(&metadata, false).is_some() {
        return None;
    }
    let bytes = match safe_open::read_whole_within(file, MAX_JOURNAL_BYTES).ok()? {
        safe_open::Within::Whole(bytes) => bytes,
        safe_open::Within::TooLarge(_) => return None,
    };
    let journal: Journal = serde_json::from_slice(&bytes).ok()?;
    let disjoint = journal
        .removed
        .iter()
        .all(|surface| !journal.set.contains_key(surface));
    (journal.crash_resume_backup_journal == VERSION && disjoint).then_some(journal)
}
