//! Claude Code's on-disk layout, as the real CLI reads it (measured against Claude Code 2.1.328;
//! see `docs/preflight.md`).
//!
//! The transcript of session `S` run in working dir `W` with config dir `C` is
//! `C/projects/<folder name of W'>/S.jsonl`, where `W'` is `W` with `~` expanded and symlinks
//! resolved. It is reachable when it is a regular file holding at least one complete JSON line
//! whose `type` is `user` or `assistant`.
//!
//! Measured beyond the derived folder (the conformance test runs the real CLI on each case):
//! when that file holds no conversation, the CLI looks for `S.jsonl` in every project folder
//! of `C` and resumes it when exactly one holds a conversation, for a UUID id. So a transcript
//! under another working dir's folder (a child dir, the unresolved name of a symlink) is
//! resumed too. A directory at the derived path stops the look-up (EISDIR). [`locate`] is that
//! rule.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use camino::{Utf8Path, Utf8PathBuf};
use safe_open::Symlinks;
use serde::Deserialize;

use crate::paths::expand_home;

/// Project folder names longer than this are cut and given a hash suffix.
pub const MAX_FOLDER_NAME: usize = 200;

/// The name of the project folder Claude Code keeps a working dir's transcripts in.
///
/// Walks the path as UTF-16 units: ASCII letters and digits stay, every other unit becomes `-`
/// (a character outside the BMP gives two). Past 200 characters: the first 200, `-`, and the
/// base-36 absolute value of a 32-bit rolling hash (`h = h*31 + unit`, wrapping) of the path.
pub fn project_folder_name(path: &str) -> String {
    let name: String = path
        .encode_utf16()
        .map(|unit| match u8::try_from(unit) {
            Ok(byte) if byte.is_ascii_alphanumeric() => char::from(byte),
            _ => '-',
        })
        .collect();
    if name.len() <= MAX_FOLDER_NAME {
        return name;
    }
    let hash = path.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    format!(
        "{}-{}",
        &name[..MAX_FOLDER_NAME],
        base36(i64::from(hash).unsigned_abs())
    )
}

fn base36(mut value: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).expect("base-36 digits are ASCII")
}

/// The working dir as the CLI sees it from inside: `~` expanded, symlinks resolved. A dir that
/// does not exist (or cannot be resolved) is taken as written, expanded.
pub fn resolve_working_dir(cwd: &str, home: Option<&Utf8Path>) -> Utf8PathBuf {
    let expanded = expand_home(cwd, home);
    match expanded.canonicalize_utf8() {
        Ok(resolved) => resolved,
        Err(_) => expanded,
    }
}

/// `C/projects/<folder name>`: where the transcripts of one working dir live.
pub fn project_dir(config_dir: &Utf8Path, resolved_cwd: &Utf8Path) -> Utf8PathBuf {
    config_dir
        .join("projects")
        .join(project_folder_name(resolved_cwd.as_str()))
}

/// A session id can name a transcript file only if it is one plain file name.
pub fn is_file_name_safe(session: &str) -> bool {
    !session.is_empty() && session != "." && session != ".." && !session.contains(['/', '\\', '\0'])
}

/// `<project dir>/<session>.jsonl`, or `None` for an id that is not a plain file name.
pub fn transcript_path(project_dir: &Utf8Path, session: &str) -> Option<Utf8PathBuf> {
    is_file_name_safe(session).then(|| project_dir.join(format!("{session}.jsonl")))
}

/// What is at a transcript path, in the terms the CLI's answer depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reachability {
    /// A regular file with a user or assistant line: `--resume` loads it.
    Reachable,
    /// No file there.
    Missing,
    /// A directory: the CLI fails with EISDIR.
    Directory,
    /// Neither a file nor a directory (a socket, a fifo, a dangling link).
    NotAFile,
    /// A file with no user or assistant line (empty, bookkeeping only, a summary, a torn line).
    NoConversation,
    /// The file exists but cannot be read.
    Unreadable,
}

impl Reachability {
    /// Whether the CLI would load it.
    pub fn is_reachable(self) -> bool {
        self == Reachability::Reachable
    }

    /// Words for a step's detail.
    pub fn describe(self) -> &'static str {
        match self {
            Reachability::Reachable => "holds a conversation",
            Reachability::Missing => "no transcript there",
            Reachability::Directory => "a directory, not a transcript",
            Reachability::NotAFile => "not a regular file",
            Reachability::NoConversation => "no user or assistant message in it",
            Reachability::Unreadable => "cannot be read",
        }
    }
}

#[derive(Deserialize)]
struct LineType<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

fn is_conversation_line(line: &[u8]) -> bool {
    match serde_json::from_slice::<LineType<'_>>(line) {
        Ok(LineType { kind: Some(kind) }) => kind == "user" || kind == "assistant",
        _ => false,
    }
}

/// How much of a transcript's start is read to find its first user or assistant line.
///
/// A file whose first [`HEAD_BYTES`] hold no such line is judged to hold no conversation,
/// without reading further: so a transcript of any size (a sparse file of gigabytes included)
/// costs at most this much to judge. A line the cap cuts (a first message with a large pasted
/// image) is judged by its top-level `type` when that comes before the cut, as Claude Code
/// writes it.
pub const HEAD_BYTES: u64 = 1 << 20;

/// Decides reachability as the CLI does: a regular file (a symlink followed, as the CLI
/// follows it), read from the start up to its first user or assistant line, never further and
/// never past [`HEAD_BYTES`]. A FIFO, socket or device is not a file, and is never waited on.
pub fn reachability(path: &Utf8Path) -> Reachability {
    let file = match safe_open::open_read(path.as_std_path(), Symlinks::Follow) {
        Ok(file) => file,
        Err(error) => {
            return match error.kind() {
                io::ErrorKind::NotFound => match fs::symlink_metadata(path) {
                    Ok(_) => Reachability::NotAFile,
                    Err(_) => Reachability::Missing,
                },
                io::ErrorKind::IsADirectory => Reachability::Directory,
                io::ErrorKind::InvalidInput => Reachability::NotAFile,
                _ => Reachability::Unreadable,
            };
        }
    };
    match has_conversation_line(BufReader::new(file.take(HEAD_BYTES))) {
        Ok(true) => Reachability::Reachable,
        Ok(false) => Reachability::NoConversation,
        Err(_) => Reachability::Unreadable,
    }
}

/// Whether the head holds a user or assistant line. The reader ends at the cap: a last line
/// without its newline that fills the head to the cap was cut there, and is judged by its
/// top-level `type` alone.
fn has_conversation_line(mut reader: impl BufRead) -> io::Result<bool> {
    let mut line = Vec::new();
    let mut read_so_far = 0u64;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(false);
        }
        read_so_far += read as u64;
        let cut = read_so_far >= HEAD_BYTES && line.last() != Some(&b'\n');
        let conversation = if cut {
            is_conversation_type(leading_type(&line).as_deref())
        } else {
            is_conversation_line(trim_line(&line))
        };
        if conversation {
            return Ok(true);
        }
    }
}

fn is_conversation_type(kind: Option<&str>) -> bool {
    matches!(kind, Some("user" | "assistant"))
}

/// The top-level `type` of a JSON object whose text may be cut short, when it comes before
/// the cut.
fn leading_type(text: &[u8]) -> Option<String> {
    struct TypeOnly<'a>(&'a RefCell<Option<String>>);
    impl<'de> serde::de::DeserializeSeed<'de> for TypeOnly<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_map(self)
        }
    }
    impl<'de> serde::de::Visitor<'de> for TypeOnly<'_> {
        type Value = ();
        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "type" {
                    let kind = map.next_value::<std::borrow::Cow<'de, str>>()?;
                    *self.0.borrow_mut() = Some(kind.into_owned());
                    // Stop here: the rest may be cut off.
                    return Err(serde::de::Error::custom("type found"));
                }
                map.next_value::<serde::de::IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let found = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let _ = serde::de::DeserializeSeed::deserialize(TypeOnly(&found), &mut deserializer);
    found.into_inner()
}

fn trim_line(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|byte| !byte.is_ascii_whitespace())
        .map_or(0, |last| last + 1);
    &line[..end]
}

/// Where the CLI would load a session from, and what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Whether the CLI would load it, and why not.
    pub reachability: Reachability,
    /// The transcript the CLI would load when reachable; else the path derived from the
    /// working dir.
    pub path: Utf8PathBuf,
}

/// The CLI's look-up of `session`: the folder of its working dir first; when that holds no
/// conversation (and is not a directory), for a UUID id, the one project folder of
/// `config_dir` holding `session.jsonl` with a conversation, if exactly one does.
pub fn locate(config_dir: &Utf8Path, project_dir: &Utf8Path, session: &str) -> Located {
    Cache::default().locate(config_dir, project_dir, session)
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in hex digits: the ids the CLI looks up everywhere.
pub fn is_uuid(session: &str) -> bool {
    let mut groups = session.split('-');
    [8, 4, 4, 4, 12].into_iter().all(|length| {
        groups.next().is_some_and(|group| {
            group.len() == length && group.bytes().all(|byte| byte.is_ascii_hexdigit())
        })
    }) && groups.next().is_none()
}

/// A transcript found by the recovery scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The session id.
    pub session: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The recovery scan ("largest on disk"): direct `*.jsonl` children of the project dir that
/// are reachable, other than the ids in `skip`; the largest wins, ties to the smaller id.
/// Files are checked largest first, so usually only one is opened.
pub fn largest_reachable(project_dir: &Utf8Path, skip: impl Fn(&str) -> bool) -> Option<Candidate> {
    Cache::default().largest_reachable(project_dir, skip)
}

/// What a batch of preflights reads from disk once: resolved working dirs, each transcript's
/// reachability, each project folder's transcripts, and which project folders hold a file of a
/// given name. A restore plan asks about thousands of sessions over a few dozen working dirs;
/// with one cache it reads each folder once instead of once per session.
///
/// The answers are those of the uncached functions as long as the disk does not change while
/// the cache is in use: keep one for one batch (a plan), not longer.
#[derive(Debug, Default)]
pub struct Cache {
    state: RefCell<CacheState>,
}

#[derive(Debug, Default)]
struct CacheState {
    working_dirs: HashMap<(String, Option<Utf8PathBuf>), Utf8PathBuf>,
    reachability: HashMap<Utf8PathBuf, Reachability>,
    /// A project folder's transcripts, largest first, ties to the smaller id.
    folders: HashMap<Utf8PathBuf, Rc<[(Candidate, Utf8PathBuf)]>>,
    /// Per config dir: the files of its project folders.
    projects: HashMap<Utf8PathBuf, Rc<ProjectFiles>>,
    /// Per config dir: the sessions of running Claude Code processes.
    holders: HashMap<Utf8PathBuf, Vec<(String, u32)>>,
    /// Per config dir: `cleanupPeriodDays`.
    cleanup_days: HashMap<Utf8PathBuf, u64>,
}

/// The files of every project folder of one config dir.
#[derive(Debug, Default)]
struct ProjectFiles {
    /// File name to the folders holding an entry of that name.
    by_name: HashMap<String, Vec<Utf8PathBuf>>,
    /// Items of `projects` that could not be listed (a file, an unreadable dir): a name is
    /// looked for in each of these by path, as without a cache.
    unlisted: Vec<Utf8PathBuf>,
}

impl Cache {
    /// [`live_holders`], once per config dir.
    pub fn live_holders(
        &self,
        config_dir: &Utf8Path,
        processes: &proc_table::Snapshot,
    ) -> Vec<(String, u32)> {
        if let Some(held) = self.state.borrow().holders.get(config_dir) {
            return held.clone();
        }
        let held = live_holders(config_dir, processes);
        self.state
            .borrow_mut()
            .holders
            .insert(config_dir.to_path_buf(), held.clone());
        held
    }

    /// Takes `held` (session, pid) as the sessions running Claude Code processes hold in
    /// `config_dir`, instead of reading `sessions/<pid>.json` and asking whether each pid is a
    /// live Claude process: for a caller that knows them already, and for tests, which start no
    /// agent.
    pub fn assume_live_holders(&self, config_dir: &Utf8Path, held: Vec<(String, u32)>) {
        self.state
            .borrow_mut()
            .holders
            .insert(config_dir.to_path_buf(), held);
    }

    /// [`cleanup_period_days`], once per config dir.
    pub fn cleanup_period_days(&self, config_dir: &Utf8Path) -> u64 {
        if let Some(days) = self.state.borrow().cleanup_days.get(config_dir) {
            return *days;
        }
        let days = cleanup_period_days(config_dir);
        self.state
            .borrow_mut()
            .cleanup_days
            .insert(config_dir.to_path_buf(), days);
        days
    }

    /// [`resolve_working_dir`], once per dir.
    pub fn resolve_working_dir(&self, cwd: &str, home: Option<&Utf8Path>) -> Utf8PathBuf {
        let key = (cwd.to_string(), home.map(Utf8Path::to_path_buf));
        if let Some(resolved) = self.state.borrow().working_dirs.get(&key) {
            return resolved.clone();
        }
        let resolved = resolve_working_dir(cwd, home);
        self.state
            .borrow_mut()
            .working_dirs
            .insert(key, resolved.clone());
        resolved
    }

    /// [`reachability`], once per path.
    pub fn reachability(&self, path: &Utf8Path) -> Reachability {
        if let Some(known) = self.state.borrow().reachability.get(path) {
            return *known;
        }
        let found = reachability(path);
        self.state
            .borrow_mut()
            .reachability
            .insert(path.to_path_buf(), found);
        found
    }

    /// [`locate`] through the cache.
    pub fn locate(&self, config_dir: &Utf8Path, project_dir: &Utf8Path, session: &str) -> Located {
        let Some(derived) = transcript_path(project_dir, session) else {
            return Located {
                reachability: Reachability::Missing,
                path: project_dir.join(format!("{session:?}")),
            };
        };
        let here = self.reachability(&derived);
        let fall_back = matches!(
            here,
            Reachability::Missing | Reachability::NoConversation | Reachability::NotAFile
        );
        if !fall_back || !is_uuid(session) {
            return Located {
                reachability: here,
                path: derived,
            };
        }
        let file_name = format!("{session}.jsonl");
        let files = self.project_files(config_dir);
        let mut found = files
            .by_name
            .get(&file_name)
            .into_iter()
            .flatten()
            .chain(&files.unlisted)
            .map(|folder| folder.join(&file_name))
            .filter(|path| *path != derived && self.reachability(path).is_reachable());
        match (found.next(), found.next()) {
            (Some(path), None) => Located {
                reachability: Reachability::Reachable,
                path,
            },
            _ => Located {
                reachability: here,
                path: derived,
            },
        }
    }

    /// Whether a transcript of `session` that is not at `derived` (where the CLI looks first)
    /// may be found by [`Cache::locate`]'s wider look-up: `session` is a UUID and another
    /// project folder holds its file name, or a folder could not be listed. No file is opened.
    pub fn may_be_elsewhere(
        &self,
        config_dir: &Utf8Path,
        derived: &Utf8Path,
        session: &str,
    ) -> bool {
        if !is_uuid(session) {
            return false;
        }
        let file_name = format!("{session}.jsonl");
        let files = self.project_files(config_dir);
        !files.unlisted.is_empty()
            || files
                .by_name
                .get(&file_name)
                .into_iter()
                .flatten()
                .any(|folder| folder.join(&file_name) != derived)
    }

    /// [`largest_reachable`] through the cache: the folder is listed once; `skip` applies to
    /// each call.
    pub fn largest_reachable(
        &self,
        project_dir: &Utf8Path,
        skip: impl Fn(&str) -> bool,
    ) -> Option<Candidate> {
        self.transcripts(project_dir)
            .iter()
            .filter(|(candidate, _)| !skip(&candidate.session))
            .find(|(_, path)| self.reachability(path).is_reachable())
            .map(|(candidate, _)| candidate.clone())
    }

    /// The direct `*.jsonl` children of a project folder that are files (a symlink followed),
    /// largest first, ties to the smaller id.
    fn transcripts(&self, project_dir: &Utf8Path) -> Rc<[(Candidate, Utf8PathBuf)]> {
        if let Some(listed) = self.state.borrow().folders.get(project_dir) {
            return Rc::clone(listed);
        }
        let mut candidates: Vec<(Candidate, Utf8PathBuf)> = fs::read_dir(project_dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|item| {
                let name = item.file_name().into_string().ok()?;
                let session = name.strip_suffix(".jsonl")?;
                if session.is_empty() {
                    return None;
                }
                // The listing's file type saves a stat for most entries; a symlink is followed.
                let metadata = match item.file_type().ok()? {
                    kind if kind.is_symlink() => fs::metadata(item.path()).ok()?,
                    kind if kind.is_file() => item.metadata().ok()?,
                    _ => return None,
                };
                metadata.is_file().then(|| {
                    let path = project_dir.join(&name);
                    let candidate = Candidate {
                        session: session.to_string(),
                        size: metadata.len(),
                    };
                    (candidate, path)
                })
            })
            .collect();
        candidates
            .sort_by(|(a, _), (b, _)| b.size.cmp(&a.size).then_with(|| a.session.cmp(&b.session)));
        let listed: Rc<[(Candidate, Utf8PathBuf)]> = candidates.into();
        self.state
            .borrow_mut()
            .folders
            .insert(project_dir.to_path_buf(), Rc::clone(&listed));
        listed
    }

    fn project_files(&self, config_dir: &Utf8Path) -> Rc<ProjectFiles> {
        if let Some(files) = self.state.borrow().projects.get(config_dir) {
            return Rc::clone(files);
        }
        let mut files = ProjectFiles::default();
        for item in fs::read_dir(config_dir.join("projects"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(folder) = Utf8PathBuf::from_path_buf(item.path()) else {
                continue;
            };
            match fs::read_dir(&folder) {
                Ok(listing) => {
                    for name in listing
                        .flatten()
                        .filter_map(|file| file.file_name().into_string().ok())
                    {
                        files.by_name.entry(name).or_default().push(folder.clone());
                    }
                }
                Err(_) => files.unlisted.push(folder),
            }
        }
        let files = Rc::new(files);
        self.state
            .borrow_mut()
            .projects
            .insert(config_dir.to_path_buf(), Rc::clone(&files));
        files
    }
}

/// How much of a transcript's end is read to find a `continued-in` record.
pub const TAIL_BYTES: u64 = 64 * 1024;

#[derive(Deserialize)]
struct ContinuedIn {
    #[serde(rename = "continuedInSessionId")]
    continued_in: Option<String>,
}

/// The session a transcript continues in: the `continuedInSessionId` of its last record, read
/// from the file's tail only (the file at `path`, typically [`locate`]'s answer).
pub fn continued_in(path: &Utf8Path) -> Option<String> {
    let tail = safe_open::read_tail(path.as_std_path(), Symlinks::Follow, TAIL_BYTES)
        .ok()?
        .bytes;
    let last = tail
        .split(|byte| *byte == b'\n')
        .map(trim_line)
        .rfind(|line| !line.is_empty())?;
    let record: ContinuedIn = serde_json::from_slice(last).ok()?;
    record
        .continued_in
        .filter(|session| is_file_name_safe(session))
}

/// Sessions held by running Claude Code processes: Claude Code keeps
/// `<config dir>/sessions/<pid>.json` naming the session of each running process. A file counts
/// only while its pid runs Claude Code and started before the file was last written (after a
/// reboot a stale pid may belong to anything; [`proc_table::Snapshot::holds_since`]). Returns
/// `(session, pid)` pairs.
pub fn live_holders(config_dir: &Utf8Path, processes: &proc_table::Snapshot) -> Vec<(String, u32)> {
    let Ok(listing) = fs::read_dir(config_dir.join("sessions")) else {
        return Vec::new();
    };
    listing
        .flatten()
        .filter_map(|item| {
            let name = item.file_name().into_string().ok()?;
            let pid: u32 = name.strip_suffix(".json")?.parse().ok()?;
            // Asked first: a file whose pid runs no Claude Code is not read at all.
            processes.process(pid)?;
            // Claude Code writes these files itself: a symlink, a FIFO or a file too large to
            // be one is skipped.
            let bytes =
                safe_open::read_head(&item.path(), Symlinks::Refuse, SESSION_FILE_BYTES).ok()?;
            let written = fs::symlink_metadata(item.path()).ok()?.modified().ok()?;
            if !processes.holds_since(pid, "claude", written) {
                return None;
            }
            let value: serde_json::Value = serde_json::from_slice(&bytes.bytes).ok()?;
            let session = ["sessionId", "session_id"]
                .into_iter()
                .find_map(|key| value.get(key).and_then(serde_json::Value::as_str))?
                .to_string();
            Some((session, pid))
        })
        .collect()
}

/// How long a `ps` call (where there is no `/proc`) may take.
pub(crate) const PS_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

#[cfg(test)]
mod liveness_tests {
    /// The `ps` snapshot, which macOS uses, agrees with the `/proc` one: a process started as
    /// `claude` before its evidence was written holds it; this test process (no `claude` in its
    /// command), a zombie, a reaped one, and one started after the evidence do not.
    #[cfg(target_os = "linux")]
    #[test]
    fn ps_and_proc_agree_on_live_claude_processes() {
        use std::time::{Duration, Instant, SystemTime};
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        std::os::unix::fs::symlink("/bin/sleep", &claude).unwrap();
        let agent = std::process::Command::new(&claude)
            .arg("60")
            .spawn()
            .unwrap();
        let other = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let mut gone = std::process::Command::new(&claude)
            .arg("0")
            .spawn()
            .unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        let mut zombie = std::process::Command::new(&claude)
            .arg("0")
            .spawn()
            .unwrap();
        let zombie_pid = rustix::process::Pid::from_raw(zombie.id() as i32).unwrap();
        // Returns once it has ended, leaving it unreaped.
        rustix::process::waitid(
            rustix::process::WaitId::Pid(zombie_pid),
            rustix::process::WaitIdOptions::EXITED | rustix::process::WaitIdOptions::NOWAIT,
        )
        .unwrap();
        let pids = [agent.id(), other.id(), gone_pid, zombie.id()];
        let now = SystemTime::now();
        let an_hour_ago = now - Duration::from_secs(3600);
        for table in [proc_table::Table::Ps, proc_table::Table::Proc] {
            let deadline = Instant::now() + super::PS_DEADLINE;
            let snapshot = proc_table::Snapshot::read(table, deadline, &["claude"]);
            let holders: Vec<u32> = pids
                .iter()
                .copied()
                .filter(|pid| snapshot.holds_since(*pid, "claude", now))
                .collect();
            assert_eq!(holders, [agent.id()], "{table:?}");
            assert!(
                !snapshot.holds_since(agent.id(), "claude", an_hour_ago),
                "{table:?}: started after the evidence"
            );
        }
        zombie.wait().unwrap();
        for mut child in [agent, other] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

/// Claude Code deletes transcripts older than `cleanupPeriodDays` (30 by default) at startup.
pub const DEFAULT_CLEANUP_DAYS: u64 = 30;
/// A transcript this close to the cut-off (or past it) is flagged.
pub const RETENTION_MARGIN_DAYS: u64 = 5;

/// A transcript close to Claude Code's retention cut-off.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct RetentionRisk {
    /// How old the transcript is, in days.
    pub age_days: u64,
    /// Claude Code's `cleanupPeriodDays` (30 unless set).
    pub cleanup_period_days: u64,
}

/// A running session's file is a few hundred bytes; more than this is not one.
pub const SESSION_FILE_BYTES: u64 = 64 * 1024;
/// A settings file larger than this is not read for `cleanupPeriodDays`.
pub const SETTINGS_BYTES: u64 = 4 << 20;

/// `cleanupPeriodDays` from `<config dir>/settings.json`, else the default. The file is read
/// as Claude Code reads it (through a symlink), but never waited on, and not past
/// [`SETTINGS_BYTES`].
pub fn cleanup_period_days(config_dir: &Utf8Path) -> u64 {
    safe_open::read_head(
        config_dir.join("settings.json").as_std_path(),
        Symlinks::Follow,
        SETTINGS_BYTES,
    )
    .ok()
    .and_then(|part| serde_json::from_slice::<serde_json::Value>(&part.bytes).ok())
    .and_then(|settings| settings.get("cleanupPeriodDays")?.as_u64())
    .unwrap_or(DEFAULT_CLEANUP_DAYS)
}

/// Flags a transcript last written within [`RETENTION_MARGIN_DAYS`] of the cut-off, or past it.
pub fn retention_risk(
    transcript: &Utf8Path,
    cleanup_period_days: u64,
    now: std::time::SystemTime,
) -> Option<RetentionRisk> {
    let modified = fs::metadata(transcript).ok()?.modified().ok()?;
    let age_days = now.duration_since(modified).ok()?.as_secs() / 86_400;
    (age_days + RETENTION_MARGIN_DAYS >= cleanup_period_days).then_some(RetentionRisk {
        age_days,
        cleanup_period_days,
    })
}
