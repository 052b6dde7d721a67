//! Power cuts during one update. The file operations of a real `Store::update` are recorded
//! (`faults::record_file_ops`), every state a power cut could leave them in is built on disk, and
//! the store must turn each into a consistent index.
//!
//! The power cut model, for each prefix of the operations (the update got that far):
//! - a name change (a file or directory created, a hard link, a rename, a removal) is durable
//!   once its directory was synced after it; before that it may or may not have reached the
//!   disk, each independently of the others (no ordering between them is assumed);
//! - written data is durable once its file was synced; before that the file may hold nothing,
//!   part of it, all of it, or zeros;
//! - a directory whose own name did not reach the disk is gone, with everything in it.
//!
//! Each state must load as the generation before the update or the one after (the one after
//! when the update had returned: it was acknowledged), with every record acknowledged earlier;
//! so must it once its index is rewritten in place with garbage (as a torn write of the
//! JavaScript tool leaves it), from the backup and its journal; loading a state that parses
//! writes nothing; a state whose index does not parse has it kept aside byte for byte; and the
//! next update succeeds and leaves no temp file behind. The updates are full writes
//! (`Store::update`) and scoped ones (`Store::update_entries`, which leaves the backup as it is
//! and journals the change beside it).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt;

use camino::{Utf8Path, Utf8PathBuf};
use index_core::Index;
use index_store::faults::{FileOp, record_file_ops};
use index_store::{Scope, Store, StoreOptions, Warning};

use crate::{quarantined_from_backup, rec, temp_dir};

/// The time every update of these tests runs at, so the generations are byte for byte the same
/// from one run to the next.
const NOW: u64 = 1_700_000_000_000;

/// Where the index lives inside each test dir: two levels below it, so the first write creates
/// directories too.
const INDEX: &str = "state/crash-resume/index.json";

/// A directory tree as a power cut leaves it: directories, names of files, and what each file
/// (an inode, which several names may share) holds. Paths are relative to the test dir; the lock
/// file is left out (its content is a hint, and the store creates it when it is missing).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Disk {
    dirs: BTreeSet<Utf8PathBuf>,
    names: BTreeMap<Utf8PathBuf, usize>,
    data: BTreeMap<usize, Vec<u8>>,
}

impl Disk {
    /// Reads the tree under `root` (hard links become names of one inode).
    fn scan(root: &Utf8Path) -> Disk {
        let mut disk = Disk {
            dirs: BTreeSet::from([Utf8PathBuf::new()]),
            names: BTreeMap::new(),
            data: BTreeMap::new(),
        };
        let mut inodes = BTreeMap::new();
        let mut pending = vec![Utf8PathBuf::new()];
        while let Some(dir) = pending.pop() {
            for item in root.join(&dir).read_dir_utf8().unwrap() {
                let item = item.unwrap();
                let relative = dir.join(item.file_name());
                let metadata = fs::symlink_metadata(item.path()).unwrap();
                if metadata.is_dir() {
                    disk.dirs.insert(relative.clone());
                    pending.push(relative);
                } else if !item.file_name().ends_with("lock") {
                    let next = inodes.len();
                    let inode = *inodes.entry(metadata.ino()).or_insert(next);
                    disk.data
                        .entry(inode)
                        .or_insert_with(|| fs::read(item.path()).unwrap());
                    disk.names.insert(relative, inode);
                }
            }
        }
        disk.canonical()
    }

    /// Numbers the inodes in the order of their first name, so equal trees compare equal.
    fn canonical(&self) -> Disk {
        let mut numbers = BTreeMap::new();
        for inode in self.names.values() {
            let next = numbers.len();
            numbers.entry(*inode).or_insert(next);
        }
        Disk {
            dirs: self.dirs.clone(),
            names: self
                .names
                .iter()
                .map(|(name, inode)| (name.clone(), numbers[inode]))
                .collect(),
            data: self
                .data
                .iter()
                .filter_map(|(inode, bytes)| numbers.get(inode).map(|n| (*n, bytes.clone())))
                .collect(),
        }
    }

    /// Builds the tree under `root`, an empty dir.
    fn build(&self, root: &Utf8Path) {
        for dir in &self.dirs {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        let mut first_name: BTreeMap<usize, Utf8PathBuf> = BTreeMap::new();
        for (name, inode) in &self.names {
            match first_name.get(inode) {
                Some(first) => fs::hard_link(root.join(first), root.join(name)).unwrap(),
                None => {
                    fs::write(root.join(name), &self.data[inode]).unwrap();
                    first_name.insert(*inode, name.clone());
                }
            }
        }
    }

    fn exists(&self, dir: &Utf8Path) -> bool {
        self.dirs.contains(dir)
    }

    /// Applies a name change as it reached the disk. `Err` when it could not have (its source
    /// is not there: an operation it depends on did not reach the disk either); a change inside
    /// a directory that is gone is dropped with it.
    fn apply(&mut self, op: &Op, inode_of_new_file: usize) -> Result<(), ()> {
        let present = |disk: &Disk, name: &Utf8Path| disk.names.contains_key(name);
        match op {
            Op::CreateDir(dir) => {
                if self.exists(parent(dir)) {
                    self.dirs.insert(dir.clone());
                }
            }
            Op::CreateFile(name) => {
                if self.exists(parent(name)) {
                    if present(self, name) {
                        return Err(());
                    }
                    self.names.insert(name.clone(), inode_of_new_file);
                    self.data.insert(inode_of_new_file, Vec::new());
                }
            }
            Op::HardLink { from, to } => {
                if self.exists(parent(to)) {
                    let inode = *self.names.get(from).ok_or(())?;
                    if present(self, to) {
                        return Err(());
                    }
                    self.names.insert(to.clone(), inode);
                }
            }
            Op::Rename { from, to } => {
                if self.exists(parent(to)) {
                    let inode = *self.names.get(from).ok_or(())?;
                    // Renaming a name over another name of the same file does nothing.
                    if self.names.get(to) != Some(&inode) {
                        self.names.remove(from);
                        self.names.insert(to.clone(), inode);
                    }
                }
            }
            Op::Remove(name) => {
                if self.exists(parent(name)) {
                    self.names.remove(name).ok_or(())?;
                }
            }
            Op::Write { .. } | Op::SyncFile(_) | Op::SyncDir(_) => {}
        }
        Ok(())
    }
}

/// A recorded file operation, with paths relative to the test dir.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    CreateDir(Utf8PathBuf),
    CreateFile(Utf8PathBuf),
    Write { name: Utf8PathBuf, bytes: Vec<u8> },
    SyncFile(Utf8PathBuf),
    SyncDir(Utf8PathBuf),
    HardLink { from: Utf8PathBuf, to: Utf8PathBuf },
    Rename { from: Utf8PathBuf, to: Utf8PathBuf },
    Remove(Utf8PathBuf),
}

impl Op {
    fn from_recorded(op: FileOp, root: &Utf8Path) -> Op {
        let relative = |path: Utf8PathBuf| {
            path.strip_prefix(root)
                .unwrap_or_else(|_| panic!("{path} is outside the test dir {root}"))
                .to_owned()
        };
        match op {
            FileOp::CreateDir(dir) => Op::CreateDir(relative(dir)),
            FileOp::CreateFile(path) => Op::CreateFile(relative(path)),
            FileOp::Write { path, bytes } => Op::Write {
                name: relative(path),
                bytes,
            },
            FileOp::SyncFile(path) => Op::SyncFile(relative(path)),
            FileOp::SyncDir(dir) => Op::SyncDir(relative(dir)),
            FileOp::HardLink { from, to } => Op::HardLink {
                from: relative(from),
                to: relative(to),
            },
            FileOp::Rename { from, to } => Op::Rename {
                from: relative(from),
                to: relative(to),
            },
            FileOp::Remove(path) => Op::Remove(relative(path)),
        }
    }

    /// The directory whose sync makes this name change durable; `None` for data and syncs.
    fn dir(&self) -> Option<&Utf8Path> {
        match self {
            Op::CreateDir(path) | Op::CreateFile(path) | Op::Remove(path) => Some(parent(path)),
            Op::HardLink { from, to } | Op::Rename { from, to } => {
                assert_eq!(parent(from), parent(to), "{self:?} crosses directories");
                Some(parent(to))
            }
            Op::Write { .. } | Op::SyncFile(_) | Op::SyncDir(_) => None,
        }
    }
}

fn parent(path: &Utf8Path) -> &Utf8Path {
    path.parent().unwrap_or(Utf8Path::new(""))
}

/// What unsynced data may have become on disk.
fn unsynced_variants(bytes: &[u8]) -> Vec<Vec<u8>> {
    vec![
        Vec::new(),
        bytes[..bytes.len() / 2].to_vec(),
        bytes.to_vec(),
        vec![0; bytes.len()],
    ]
}

/// Every state a power cut during `ops` could leave, starting from `start` (all durable), each
/// with whether the update had returned by then (so its new generation was acknowledged).
fn power_cut_states(start: &Disk, ops: &[Op]) -> BTreeMap<Disk, bool> {
    // In the real run, which inode each operation creates or writes.
    let mut real = start.clone();
    let first_new_inode = 1 + start.data.keys().max().copied().unwrap_or(0);
    let new_inode: Vec<usize> = (first_new_inode..).take(ops.len()).collect();
    let mut written_inode = vec![None; ops.len()];
    for (at, op) in ops.iter().enumerate() {
        match op {
            Op::Write { name, .. } | Op::SyncFile(name) => {
                written_inode[at] = Some(real.names[name]);
            }
            _ => real
                .apply(op, new_inode[at])
                .unwrap_or_else(|()| panic!("the real run could not have made {op:?}")),
        }
    }

    let mut states: BTreeMap<Disk, bool> = BTreeMap::new();
    for done in 0..=ops.len() {
        let executed = &ops[..done];
        let durable = |at: usize| match executed[at].dir() {
            Some(dir) => executed[at + 1..]
                .iter()
                .any(|later| *later == Op::SyncDir(dir.to_owned())),
            None => true,
        };
        let uncertain: Vec<usize> = (0..done)
            .filter(|&at| executed[at].dir().is_some() && !durable(at))
            .collect();
        assert!(uncertain.len() <= 12, "too many unsynced name changes");
        for mask in 0u32..(1 << uncertain.len()) {
            let reached = |at: usize| match uncertain.iter().position(|&u| u == at) {
                Some(bit) => mask & (1 << bit) != 0,
                None => true,
            };
            let mut disk = start.clone();
            let possible = (0..done)
                .filter(|&at| reached(at))
                .all(|at| disk.apply(&executed[at], new_inode[at]).is_ok());
            if !possible {
                continue;
            }
            // Data: synced writes are there in full; an unsynced one may be anything of it.
            let mut variants = vec![disk];
            for (at, op) in executed.iter().enumerate() {
                let Op::Write { bytes, .. } = op else {
                    continue;
                };
                let inode = written_inode[at].unwrap();
                let synced = executed[at + 1..].iter().enumerate().any(|(later, op)| {
                    matches!(op, Op::SyncFile(_)) && written_inode[at + 1 + later] == Some(inode)
                });
                let contents = if synced {
                    vec![bytes.clone()]
                } else {
                    unsynced_variants(bytes)
                };
                variants = variants
                    .into_iter()
                    .flat_map(|disk| {
                        contents.iter().map(move |content| {
                            let mut disk = disk.clone();
                            if disk.data.contains_key(&inode) {
                                disk.data.insert(inode, content.clone());
                            }
                            disk
                        })
                    })
                    .collect();
            }
            for disk in variants {
                let acknowledged = states.entry(disk.canonical()).or_insert(false);
                *acknowledged |= done == ops.len();
            }
        }
    }
    states
}

/// A starting situation: what is on disk before the update, and the update in flight.
#[derive(Debug, Clone, Copy)]
enum Scenario {
    /// No index yet; its directories do not exist either.
    FirstWrite,
    /// An index of one generation, no backup yet.
    SecondWrite,
    /// An index and its backup; the update records a new surface.
    Steady,
    /// An index and its backup; the update forgets an acknowledged surface.
    SteadyForget,
    /// As a writer killed mid-update leaves it: a half-written temp file.
    Leftovers,
    /// The backup is already a second name of the index (a writer died after linking it).
    BackupIsIndex,
    /// A record by a scoped write over an index and backup of full writes: the backup holds
    /// the index's bytes, and the scoped write starts a journal.
    ScopedAfterFull,
    /// Records by scoped writes, after scoped writes: the journal leads from the backup to
    /// the index, and the scoped write carries it on.
    ScopedSteady,
    /// As [`Scenario::ScopedSteady`], the record taking a session from the surface holding it
    /// (the change drops an entry).
    ScopedMove,
    /// As [`Scenario::ScopedSteady`], after the JavaScript tool rewrote the index in place:
    /// the journal no longer leads to it, and the scoped write copies the backup as a full
    /// write does.
    ScopedAfterOutsideWrite,
}

impl Scenario {
    const ALL: [Scenario; 10] = [
        Scenario::FirstWrite,
        Scenario::SecondWrite,
        Scenario::Steady,
        Scenario::SteadyForget,
        Scenario::Leftovers,
        Scenario::BackupIsIndex,
        Scenario::ScopedAfterFull,
        Scenario::ScopedSteady,
        Scenario::ScopedMove,
        Scenario::ScopedAfterOutsideWrite,
    ];

    /// Whether the updates are scoped writes.
    fn scoped(self) -> bool {
        matches!(
            self,
            Scenario::ScopedAfterFull
                | Scenario::ScopedSteady
                | Scenario::ScopedMove
                | Scenario::ScopedAfterOutsideWrite
        )
    }

    /// Whether the update in flight journals its change instead of copying the backup.
    fn journals(self) -> bool {
        self.scoped() && !matches!(self, Scenario::ScopedAfterOutsideWrite)
    }

    /// Builds the situation under `root` with the store; returns the acknowledged records.
    fn set_up(self, root: &Utf8Path) -> Vec<(&'static str, &'static str)> {
        let store = open(root);
        let generations: &[(&str, &str)] = match self {
            Scenario::FirstWrite => &[],
            Scenario::SecondWrite => &[("p1", "s1")],
            _ => &[("p1", "s1"), ("p2", "s2"), ("p3", "s3")],
        };
        for (n, (surface, session)) in generations.iter().enumerate() {
            let record =
                |index: &mut Index| index.record(rec(surface, session, "repo"), NOW + n as u64);
            match self {
                Scenario::ScopedSteady
                | Scenario::ScopedMove
                | Scenario::ScopedAfterOutsideWrite => {
                    let scope = Scope {
                        surfaces: &[surface],
                        sessions: &[session],
                    };
                    store.update_entries(scope, record).unwrap()
                }
                _ => store.update(record).unwrap(),
            };
        }
        let index = root.join(INDEX);
        match self {
            Scenario::ScopedSteady | Scenario::ScopedMove => {
                assert!(
                    store.journal_path().exists(),
                    "{self:?}: scoped writes journal"
                );
            }
            Scenario::ScopedAfterOutsideWrite => {
                // The JavaScript tool's write: the same file truncated and written again (the
                // same entries, laid out as it lays them out).
                let mut bytes = fs::read(&index).unwrap();
                bytes.push(b'\n');
                fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&index)
                    .unwrap()
                    .write_all(&bytes)
                    .unwrap();
            }
            Scenario::Leftovers => {
                let bytes = fs::read(&index).unwrap();
                let dir = index.parent().unwrap();
                fs::write(
                    dir.join(".index.json.crashed.tmp"),
                    &bytes[..bytes.len() / 3],
                )
                .unwrap();
            }
            Scenario::BackupIsIndex => {
                let backup = store.backup_path();
                fs::remove_file(&backup).unwrap();
                fs::hard_link(&index, &backup).unwrap();
            }
            _ => {}
        }
        generations.to_vec()
    }

    /// The update in flight when the power goes.
    fn change(self, index: &mut Index) {
        match self {
            Scenario::SteadyForget => {
                index.forget("p2");
            }
            Scenario::ScopedMove => {
                index.record(rec("moved", "s2", "repo"), NOW + 100);
            }
            _ => {
                index.record(rec("in-flight", "s-in-flight", "repo"), NOW + 100);
            }
        }
    }

    /// Runs the update in flight on `store`, scoped or not.
    fn update(self, store: &Store) -> Result<index_store::Updated<()>, index_store::StoreError> {
        match self {
            Scenario::ScopedMove => store.update_entries(
                Scope {
                    surfaces: &["moved"],
                    sessions: &["s2"],
                },
                |index| self.change(index),
            ),
            _ if self.scoped() => store.update_entries(
                Scope {
                    surfaces: &["in-flight"],
                    sessions: &["s-in-flight"],
                },
                |index| self.change(index),
            ),
            _ => store.update(|index| self.change(index)),
        }
    }

    /// The surface the update removes, if any.
    fn removes(self) -> Option<&'static str> {
        match self {
            Scenario::SteadyForget | Scenario::ScopedMove => Some("p2"),
            _ => None,
        }
    }
}

fn open(root: &Utf8Path) -> Store {
    Store::open(&root.join(INDEX), StoreOptions::default()).unwrap()
}

/// The record every state's recovery update adds.
fn record_after(index: &mut Index) {
    index.record(rec("after-power-cut", "s-after", "repo"), NOW + 200);
}

/// The file names in the index's directory, the lock file left out.
fn index_dir_names(root: &Utf8Path) -> Vec<String> {
    let dir = root.join(INDEX);
    let dir = dir.parent().unwrap();
    let mut names: Vec<String> = dir
        .read_dir_utf8()
        .unwrap()
        .map(|item| item.unwrap().file_name().to_string())
        .filter(|name| !name.ends_with("lock"))
        .collect();
    names.sort();
    names
}

/// The states one scenario can leave, checked one by one; returns how many there were.
fn check_scenario(scenario: Scenario) -> usize {
    // The real update, recorded.
    let (_real_dir, real_root) = temp_dir();
    let real_root = real_root.canonicalize_utf8().unwrap();
    let acknowledged = scenario.set_up(&real_root);
    let store = open(&real_root);
    let old = store.load().unwrap().index;
    let start = Disk::scan(&real_root);
    let (updated, recorded) = record_file_ops(|| scenario.update(&store));
    assert!(updated.unwrap().written, "{scenario:?}: the update wrote");
    let new = store.load().unwrap().index;
    assert_ne!(old, new, "{scenario:?}");
    let ops: Vec<Op> = recorded
        .into_iter()
        .map(|op| Op::from_recorded(op, &real_root))
        .collect();
    assert!(
        ops.iter()
            .any(|op| matches!(op, Op::Rename { to, .. } if to == INDEX)),
        "{scenario:?}: the recorded operations replace the index: {ops:#?}"
    );
    let journal = format!("{INDEX}.bak.journal");
    let backup = format!("{INDEX}.bak");
    // One write of the index's size: the backup is left as it is, the journal written instead.
    let journaled = ops
        .iter()
        .any(|op| matches!(op, Op::Rename { to, .. } if to.as_str() == journal))
        && !ops
            .iter()
            .any(|op| matches!(op, Op::Rename { to, .. } if to.as_str() == backup));
    assert_eq!(
        journaled,
        scenario.journals(),
        "{scenario:?}: whether the change was journaled: {ops:#?}"
    );
    assert!(
        !ops.iter().any(|op| matches!(op, Op::HardLink { .. })),
        "{scenario:?}: no file gets a second name: {ops:#?}"
    );

    // The model replays the whole run to what the real run left.
    let mut replayed = start.clone();
    for (at, op) in ops.iter().enumerate() {
        replayed.apply(op, 1000 + at).unwrap();
        if let Op::Write { name, bytes } = op {
            let inode = replayed.names[name];
            replayed.data.insert(inode, bytes.clone());
        }
    }
    assert_eq!(
        replayed.canonical(),
        Disk::scan(&real_root),
        "{scenario:?}: the model of the operations {ops:#?}"
    );

    let states = power_cut_states(&start, &ops);
    for (n, (state, acknowledged_update)) in states.iter().enumerate() {
        let context = format!("{scenario:?}, state {n} of {}: {state:#?}", states.len());
        let shares = |disk: &Disk| {
            disk.names.contains_key(Utf8Path::new(INDEX))
                && disk.names.get(Utf8Path::new(&backup)) == disk.names.get(Utf8Path::new(INDEX))
        };
        if shares(state) {
            // Only the starting state made so could leave it so: no write of ours does.
            assert!(
                matches!(scenario, Scenario::BackupIsIndex) && shares(&start),
                "{context}: the backup is a second name of the index"
            );
        } else {
            let (_dir, root) = temp_dir();
            state.build(&root);
            check_damaged(
                &root,
                &old,
                &new,
                *acknowledged_update,
                &acknowledged,
                scenario.removes(),
                &context,
            );
        }
        let (_dir, root) = temp_dir();
        state.build(&root);
        check_state(
            &root,
            &old,
            &new,
            *acknowledged_update,
            &acknowledged,
            scenario.removes(),
            &context,
        );
    }
    states.len()
}

/// The state once the JavaScript tool's write in place tore the index (nothing whole left in
/// it): a read falls back to the backup and its journal, and finds the generation before the
/// update or after it (after it, if acknowledged) with every acknowledged record.
fn check_damaged(
    root: &Utf8Path,
    old: &Index,
    new: &Index,
    acknowledged_update: bool,
    acknowledged: &[(&str, &str)],
    removed_by_update: Option<&str>,
    context: &str,
) {
    let store = open(root);
    let context = format!("{context}, its index torn in place");
    if !store.path().exists() {
        return;
    }
    fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(store.path())
        .unwrap()
        .write_all(b"{\"version\": 1, \"entries\": {\"p")
        .unwrap();
    let snapshot = store
        .load()
        .unwrap_or_else(|error| panic!("{context}: {error}"));
    assert!(
        matches!(
            &snapshot.warnings[..],
            [Warning::Damaged { salvaged: 0, .. }]
        ),
        "{context}: {:?}",
        snapshot.warnings
    );
    let is_new = snapshot.index == *new;
    assert!(
        is_new || snapshot.index == *old,
        "{context}: recovered neither generation: {:#?}",
        snapshot.index
    );
    assert!(
        is_new || !acknowledged_update,
        "{context}: the update had returned, yet its generation is not recovered"
    );
    for (surface, session) in acknowledged {
        if is_new && removed_by_update == Some(surface) {
            continue;
        }
        assert_eq!(
            snapshot
                .index
                .lookup(surface)
                .map(|entry| entry.session.as_str()),
            Some(*session),
            "{context}: acknowledged record of {surface} lost"
        );
    }
    // The repair writes what was recovered.
    store.update(|_| ()).unwrap();
    assert_eq!(store.load().unwrap().index, snapshot.index, "{context}");
}

fn check_state(
    root: &Utf8Path,
    old: &Index,
    new: &Index,
    acknowledged_update: bool,
    acknowledged: &[(&str, &str)],
    removed_by_update: Option<&str>,
    context: &str,
) {
    let store = open(root);
    let before = Disk::scan(root);
    let snapshot = store
        .load()
        .unwrap_or_else(|error| panic!("{context}: {error}"));
    assert_eq!(snapshot.warnings, [], "{context}");
    assert_eq!(Disk::scan(root), before, "{context}: loading wrote");
    let is_new = snapshot.index == *new;
    assert!(
        is_new || snapshot.index == *old,
        "{context}: loaded neither generation: {:#?}",
        snapshot.index
    );
    assert!(
        is_new || !acknowledged_update,
        "{context}: the update had returned, yet its generation is not there"
    );
    for (surface, session) in acknowledged {
        if is_new && removed_by_update == Some(surface) {
            continue;
        }
        let entry = snapshot.index.lookup(surface);
        assert_eq!(
            entry.map(|entry| entry.session.as_str()),
            Some(*session),
            "{context}: acknowledged record of {surface} lost"
        );
    }

    // The next update goes through, on top of what was loaded, and cleans up.
    store
        .update(record_after)
        .unwrap_or_else(|error| panic!("{context}: the next update failed: {error}"));
    let mut expected = snapshot.index;
    record_after(&mut expected);
    assert_eq!(store.load().unwrap().index, expected, "{context}");
    assert_eq!(
        index_dir_names(root),
        ["index.json", "index.json.bak"],
        "{context}"
    );
    let backup = index_store::format::parse(&fs::read(store.backup_path()).unwrap())
        .unwrap_or_else(|error| panic!("{context}: the backup does not parse: {error:?}"));
    assert_eq!(
        backup.index, expected,
        "{context}: the backup is the generation the update wrote"
    );
}

#[test]
fn every_power_cut_state_of_an_update_loads_as_a_whole_generation() {
    let counts: Vec<(Scenario, usize)> = Scenario::ALL
        .into_iter()
        .map(|scenario| (scenario, check_scenario(scenario)))
        .collect();
    for (scenario, count) in counts {
        assert!(count > 4, "{scenario:?}: only {count} states");
    }
}

/// The corrupt-index repair is an update too: a power cut during it must never lose the corrupt
/// file (kept aside before it is replaced) nor the backup generation it falls back to.
#[test]
fn every_power_cut_state_of_a_repair_keeps_the_corrupt_file() {
    let garbage = b"{\"version\": 1, \"entries\": {\"p3\": {\"surfaceId\"".to_vec();
    let (_real_dir, real_root) = temp_dir();
    let real_root = real_root.canonicalize_utf8().unwrap();
    Scenario::Steady.set_up(&real_root);
    let store = open(&real_root);
    let backup_generation =
        index_store::format::parse(&fs::read(store.backup_path()).unwrap()).unwrap();
    fs::write(store.path(), &garbage).unwrap();
    let start = Disk::scan(&real_root);
    let (updated, recorded) =
        record_file_ops(|| store.update(|index| Scenario::Steady.change(index)));
    let updated = updated.unwrap();
    assert!(matches!(
        &updated.warnings[..],
        [Warning::Quarantined {
            from_backup: true,
            ..
        }]
    ));
    let repaired = store.load().unwrap().index;
    let ops: Vec<Op> = recorded
        .into_iter()
        .map(|op| Op::from_recorded(op, &real_root))
        .collect();
    let states = power_cut_states(&start, &ops);
    assert!(states.len() > 4);
    for (n, (state, acknowledged_update)) in states.iter().enumerate() {
        let context = format!("repair, state {n} of {}: {state:#?}", states.len());
        let (_dir, root) = temp_dir();
        state.build(&root);
        let store = open(&root);
        let snapshot = store
            .load()
            .unwrap_or_else(|error| panic!("{context}: {error}"));
        assert!(
            snapshot.index == backup_generation.index || snapshot.index == repaired,
            "{context}: loaded {:#?}",
            snapshot.index
        );
        assert!(
            !acknowledged_update || snapshot.index == repaired,
            "{context}"
        );
        let kept = |root: &Utf8Path| -> Vec<Vec<u8>> {
            index_dir_names(root)
                .into_iter()
                .filter(|name| name.starts_with("index.json.corrupt-"))
                .map(|name| fs::read(store.path().with_file_name(name)).unwrap())
                .collect()
        };
        // A read writes nothing: the corrupt file is still at the index path, or kept aside.
        assert!(
            kept(&root).contains(&garbage) || fs::read(store.path()).unwrap() == garbage,
            "{context}: the corrupt file is lost"
        );
        store
            .update(record_after)
            .unwrap_or_else(|error| panic!("{context}: the next update failed: {error}"));
        assert!(
            kept(&root).contains(&garbage),
            "{context}: the corrupt file is lost ({} kept files)",
            kept(&root).len()
        );
        assert!(
            store
                .load()
                .unwrap()
                .index
                .lookup("after-power-cut")
                .is_some()
        );
        assert!(
            index_dir_names(&root)
                .iter()
                .all(|name| !name.ends_with(".tmp")),
            "{context}: {:?}",
            index_dir_names(&root)
        );
    }
}

/// Beyond the contract: an index torn by a filesystem that does not keep the order of a sync
/// and a rename (it cannot happen with the writes above). The torn file is never overwritten:
/// a read uses the backup generation, and the next write keeps it aside byte for byte.
#[test]
fn a_torn_index_is_kept_aside_and_the_backup_generation_used() {
    let (_template_dir, template) = temp_dir();
    Scenario::Steady.set_up(&template);
    let good = fs::read(template.join(INDEX)).unwrap();
    let backup = fs::read(open(&template).backup_path()).unwrap();
    let backup_generation = index_store::format::parse(&backup).unwrap().index;
    let mut torn = unsynced_variants(&good);
    torn.retain(|bytes| *bytes != good);
    torn.push(good[..good.len() - 2].to_vec());
    for bytes in torn {
        let context = format!("torn index {:?}", String::from_utf8_lossy(&bytes));
        let (_dir, root) = temp_dir();
        let store = open(&root);
        fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        fs::write(store.path(), &bytes).unwrap();
        fs::write(store.backup_path(), &backup).unwrap();
        let snapshot = store.load().unwrap();
        assert!(
            matches!(
                &snapshot.warnings[..],
                [Warning::Damaged {
                    from_backup: true,
                    ..
                }]
            ),
            "{context}: {:?}",
            snapshot.warnings
        );
        assert_eq!(snapshot.index, backup_generation, "{context}");
        assert_eq!(
            fs::read(store.path()).unwrap(),
            bytes,
            "{context}: a read wrote"
        );
        let updated = store.update(|_| ()).unwrap();
        let moved_to = quarantined_from_backup(&updated.warnings, &context);
        assert_eq!(fs::read(moved_to).unwrap(), bytes, "{context}");
        assert_eq!(
            store.load().unwrap().warnings,
            [],
            "{context}: repaired on disk"
        );
    }
}
