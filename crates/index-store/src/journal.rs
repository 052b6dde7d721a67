//! The backup's journal, `<index>.bak.journal`: what turns the backup into the latest
//! acknowledged generation when a scoped write ([`crate::Store::update_entries`]) made the
//! replaced generation the backup (by a link, no copy) instead of writing a copy of the new one.
//!
//! The journal is a chain of links, each a change as the scoped write made it (the entries it
//! set, the surfaces it dropped) with the identity of the file it was applied to (`base`) and of
//! the file it made (`result`): device, inode, size and modification time, which a link or a
//! rename leaves as they are and a write changes. A reader applies the chain from the first link
//! whose base is the backup file it read; a journal none of whose links is the backup (left from
//! an earlier generation, a crash between the renames, a full write since) is not used. A write
//! keeps the links that lead from the backup to the index it replaces, and adds its own: the
//! backup and the journal are renamed into place before one sync of the directory, and whichever
//! of the two renames a power cut keeps, the backup with the journal is the generation before
//! the write or the one after.

use std::fs;

use camino::Utf8Path;
use safe_open::Symlinks;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::format::{self, Document};
use crate::location;

/// The largest journal read: a journal holds the entries of a few changes, far below it. A
/// larger one is not used, and a write whose journal would be larger copies the index instead.
pub(crate) const MAX_JOURNAL_BYTES: u64 = 1 << 20;

/// The journal's format version.
const VERSION: u64 = 1;

/// What says a file is the one a link was made from or to.
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

/// One change of the chain.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Link {
    /// The file the change was applied to.
    pub(crate) base: Identity,
    /// The file the change made.
    pub(crate) result: Identity,
    /// The entries the change set, as the new file holds them.
    pub(crate) set: Vec<(String, Box<RawValue>)>,
    /// The surfaces the change dropped.
    pub(crate) removed: Vec<String>,
}

/// The file.
#[derive(Serialize, Deserialize)]
struct Journal {
    crash_resume_backup_journal: u64,
    links: Vec<Link>,
}

/// The links of the journal at `path`; `None` when there is none, or it is not a journal of
/// this version, is larger than [`MAX_JOURNAL_BYTES`], or another user could have written it.
pub(crate) fn read(path: &Utf8Path) -> Option<Vec<Link>> {
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
    (journal.crash_resume_backup_journal == VERSION).then_some(journal.links)
}

/// The journal's bytes for `links`; `None` when they would be larger than it may be.
pub(crate) fn serialize(links: Vec<Link>) -> Option<Vec<u8>> {
    let bytes = serde_json::to_vec(&Journal {
        crash_resume_backup_journal: VERSION,
        links,
    })
    .ok()?;
    (bytes.len() as u64 <= MAX_JOURNAL_BYTES).then_some(bytes)
}

/// The links that apply to the backup file of identity `backup`: from the first one made from
/// it to the end; `None` when no link was.
pub(crate) fn from_backup(links: &[Link], backup: Identity) -> Option<&[Link]> {
    let first = links.iter().position(|link| link.base == backup)?;
    Some(&links[first..])
}

/// `document` (the backup) with the changes of `links` applied in order.
pub(crate) fn apply(mut document: Document, links: &[Link]) -> Document {
    for link in links {
        // Each is JSON already (it was read as such).
        let set = link
            .set
            .iter()
            .filter_map(|(surface, raw)| {
                let value = serde_json::from_str(raw.get()).ok()?;
                Some((surface.clone(), value))
            })
            .collect();
        document = format::apply_change(document, &link.removed, set);
    }
    document
}
