//! Gemini CLI's layout, as 0.61 reads it when asked to `--resume <id>`.
//!
//! The config dir crash-resume records for Gemini is a home dir (`GEMINI_CLI_HOME`, else the
//! user's home); Gemini's files are in `<home>/.gemini`. A working dir's project is named by a
//! slug that is not a function of the path: `<root>/projects.json` maps the physical working
//! dir (symlinks resolved) to it, checked against the `.project_root` marker files in
//! `<root>/tmp/<slug>/` and `<root>/history/<slug>/`; when the registry has lost it, the
//! markers find it again, else a new slug is claimed (the dir's name lower-cased, runs outside
//! `[a-z0-9]` turned to `-`, `-1`, `-2`, ... on collision). The project's conversations are
//! `<root>/tmp/<slug>/chats/session-*.json[l]`; `--resume <id>` reads every one of them and
//! matches the id in their content (never in the file name), and loads a session only when,
//! after replaying `$set` and `$rewindTo` records, it holds a user message that is not start-up
//! context (nor a `/` or `?` command) or a model message; a subagent's session never loads.
//!
//! At every start Gemini deletes, in its project, each `session-*` file without such content
//! and every other file whose name ends with the same `-<first 8 characters of the id>`
//! (`general.sessionRetention`, on by default): [`cleanup_hazard`] says when that would take a
//! conversation with it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs;
use std::rc::Rc;

use camino::{Utf8Path, Utf8PathBuf};
use safe_open::Symlinks;
use serde_json::{Map, Value};

/// Gemini's dir inside the home it is given.
pub const GEMINI_DIR: &str = ".gemini";
/// The marker file naming a project dir's owner.
pub const PROJECT_ROOT_FILE: &str = ".project_root";
/// The prefix of every conversation file.
pub const SESSION_FILE_PREFIX: &str = "session-";
/// A settings file or registry larger than this is not read.
pub const SETTINGS_BYTES: u64 = 4 << 20;

/// `<home>/.gemini`.
pub fn root(home: &Utf8Path) -> Utf8PathBuf {
    home.join(GEMINI_DIR)
}

/// The working dir as Gemini keys its project: `~` expanded, symlinks resolved (Gemini runs in
/// the physical dir); a dir that does not exist is kept as given.
pub fn project_root(cwd: &str, home: Option<&Utf8Path>) -> Utf8PathBuf {
    let expanded = crate::paths::expand_home(cwd, home);
    match fs::canonicalize(&expanded)
        .ok()
        .and_then(|path| Utf8PathBuf::from_path_buf(path).ok())
    {
        Some(physical) => physical,
        None => normalize(&expanded, &expanded),
    }
}

/// Node's `path.resolve`: `path` made absolute against `base`, `.` and `..` resolved by name,
/// no trailing `/`.
fn normalize(path: &Utf8Path, base: &Utf8Path) -> Utf8PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.as_str().split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    Utf8PathBuf::from(format!("/{}", parts.join("/")))
}

/// How the project's slug was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlugSource {
    /// `projects.json` maps the dir to it, and no marker says otherwise.
    Registry,
    /// A `.project_root` marker names the dir (the registry lost it).
    Marker,
    /// Nothing names the dir: Gemini would claim this slug for it at its next start.
    New,
    /// Nothing names the dir, and none of the [`MAX_SLUG_ATTEMPTS`] slugs Gemini tries is free
    /// (a marker of each is another project's, or cannot be read: `tmp` or `history` is not a
    /// dir one can read): Gemini cannot start there, and the slug is the first it tries.
    Unclaimable,
}

/// How many slugs Gemini's project registry tries for a new project before it gives up.
pub const MAX_SLUG_ATTEMPTS: usize = 1000;

/// A project's slug and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The slug: the name of the project's dir under `<root>/tmp`.
    pub slug: String,
    /// How it was found.
    pub source: SlugSource,
}

/// The slug Gemini's start-up gives `project` (a physical dir) under `root`, found as its
/// project registry finds it, without writing anything.
pub fn project_slug(root: &Utf8Path, project: &Utf8Path) -> Project {
    let bases = [root.join("tmp"), root.join("history")];
    let mut projects = read_registry(&root.join("projects.json"));
    if let Some(slug) = projects.remove(project.as_str())
        && owns(&bases, &slug, project)
    {
        return Project {
            slug,
            source: SlugSource::Registry,
        };
    }
    if let Some(slug) = slug_from_markers(&bases, project) {
        return Project {
            slug,
            source: SlugSource::Marker,
        };
    }
    let taken: std::collections::HashSet<String> = projects.into_values().collect();
    let base_name = project.file_name().unwrap_or_default();
    let slug = slugify(if base_name.is_empty() {
        "project"
    } else {
        base_name
    });
    let free = (0..MAX_SLUG_ATTEMPTS)
        .map(|counter| match counter {
            0 => slug.clone(),
            _ => format!("{slug}-{counter}"),
        })
        .find(|candidate| {
            !taken.contains(candidate)
                && bases.iter().all(|base| {
                    match marker_owner(&base.join(candidate).join(PROJECT_ROOT_FILE)) {
                        Marker::Missing => true,
                        Marker::Owner(owner) => normalize(&owner, project) == project,
                        Marker::Unreadable => false,
                    }
                })
        });
    match free {
        Some(free) => Project {
            slug: free,
            source: SlugSource::New,
        },
        None => Project {
            slug,
            source: SlugSource::Unclaimable,
        },
    }
}

/// Gemini's slug of a dir name: lower-cased, each character outside `[a-z0-9]` a `-`, runs of
/// `-` one, none at either end; `project` when nothing is left.
pub fn slugify(name: &str) -> String {
    let mut slug = String::new();
    // JavaScript lower-cases by UTF-16 unit; a character that is not ASCII becomes `-` either
    // way, one per UTF-16 unit, and runs of them collapse.
    for character in name.chars().flat_map(char::to_lowercase) {
        let mapped = if character.is_ascii_lowercase() || character.is_ascii_digit() {
            character
        } else {
            '-'
        };
        if mapped == '-' && slug.ends_with('-') {
            continue;
        }
        slug.push(mapped);
    }
    let trimmed = slug.trim_matches('-');
    if trimmed.is_empty() {
        "project".to_string()
    } else {
        trimmed.to_string()
    }
}

/// `projects.json`'s map; empty when it is missing or not the registry's schema (as Gemini
/// resets it).
fn read_registry(path: &Utf8Path) -> HashMap<String, String> {
    let Some(value) = read_json(path) else {
        return HashMap::new();
    };
    let Some(projects) = value.get("projects").and_then(Value::as_object) else {
        return HashMap::new();
    };
    let valid = |slug: &str| {
        !slug.is_empty()
            && slug
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
    };
    let mut map = HashMap::new();
    for (dir, slug) in projects {
        match slug.as_str() {
            Some(slug) if valid(slug) => {
                map.insert(dir.clone(), slug.to_string());
            }
            _ => return HashMap::new(),
        }
    }
    map
}

/// A JSON file Gemini reads with `JSON.parse` (`projects.json`), whole, at most
/// [`SETTINGS_BYTES`].
fn read_json(path: &Utf8Path) -> Option<Value> {
    serde_json::from_slice(&read_whole(path)?).ok()
}

/// A `settings.json`, which Gemini reads with its `//` and `/* */` comments stripped (the
/// strip-json-comments package; `#` is no comment there).
fn read_settings(path: &Utf8Path) -> Option<Value> {
    let bytes = read_whole(path)?;
    serde_json::from_reader(json_comments::CommentSettings::c_style().strip_comments(&bytes[..]))
        .ok()
}

fn read_whole(path: &Utf8Path) -> Option<Vec<u8>> {
    let part = safe_open::read_head(path.as_std_path(), Symlinks::Follow, SETTINGS_BYTES).ok()?;
    part.is_whole().then_some(part.bytes)
}

enum Marker {
    Missing,
    Owner(Utf8PathBuf),
    Unreadable,
}

fn marker_owner(path: &Utf8Path) -> Marker {
    match safe_open::read_head(path.as_std_path(), Symlinks::Follow, SETTINGS_BYTES) {
        Ok(part) => Marker::Owner(Utf8PathBuf::from(
            js_trim(&String::from_utf8_lossy(&part.bytes)).to_string(),
        )),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Marker::Missing,
        Err(_) => Marker::Unreadable,
    }
}

/// Whether the markers of `slug` (where there are any) name `project`.
fn owns(bases: &[Utf8PathBuf], slug: &str, project: &Utf8Path) -> bool {
    bases.iter().all(
        |base| match marker_owner(&base.join(slug).join(PROJECT_ROOT_FILE)) {
            Marker::Missing => true,
            Marker::Owner(owner) => normalize(&owner, project) == project,
            Marker::Unreadable => false,
        },
    )
}

/// The first dir, in listing order, of `tmp` then `history` whose marker names `project`.
fn slug_from_markers(bases: &[Utf8PathBuf], project: &Utf8Path) -> Option<String> {
    for base in bases {
        let Ok(listing) = fs::read_dir(base) else {
            continue;
        };
        for item in listing.flatten() {
            let Ok(name) = item.file_name().into_string() else {
                continue;
            };
            if let Marker::Owner(owner) = marker_owner(&base.join(&name).join(PROJECT_ROOT_FILE))
                && normalize(&owner, project) == project
            {
                return Some(name);
            }
        }
    }
    None
}

/// The project's conversations dir: `<root>/tmp/<slug>/chats`.
pub fn chats_dir(root: &Utf8Path, slug: &str) -> Utf8PathBuf {
    root.join("tmp").join(slug).join("chats")
}

/// What one `session-*` file holds, as Gemini's session list reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The file's name in the chats dir.
    pub name: String,
    /// Its path.
    pub path: Utf8PathBuf,
    /// The session id its content gives; `None` when Gemini cannot read one (an empty file, a
    /// torn first line).
    pub session: Option<String>,
    /// Whether it holds a conversation Gemini resumes.
    pub resumable: bool,
    /// A subagent's session (never listed).
    pub subagent: bool,
    /// The `lastUpdated` it gives, as written.
    pub last_updated: Option<String>,
}

impl SessionFile {
    /// Whether Gemini's session list shows it (and so can resume it).
    pub fn listed(&self) -> bool {
        self.session.is_some() && self.resumable && !self.subagent
    }

    /// The 8 characters after the last `-` of its name that Gemini's cleanup groups files by.
    pub fn short_id(&self) -> Option<&str> {
        short_id(&self.name)
    }
}

/// `-([a-zA-Z0-9]{8})\.jsonl?$` of a `session-*.json[l]` name.
pub fn short_id(name: &str) -> Option<&str> {
    if !name.starts_with(SESSION_FILE_PREFIX) {
        return None;
    }
    let stem = name
        .strip_suffix(".jsonl")
        .or_else(|| name.strip_suffix(".json"))?;
    let short = stem.get(stem.len().checked_sub(8)?..)?;
    let dash = stem.len().checked_sub(9)?;
    (stem.as_bytes()[dash] == b'-' && short.bytes().all(|byte| byte.is_ascii_alphanumeric()))
        .then_some(short)
}

/// The longest line of a session file that is read: a longer one (no message of a conversation
/// is near it) is skipped as a line that does not parse, so a file of any size is read in
/// bounded memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The largest session file tried as the legacy single JSON document (whole, in memory).
pub const MAX_LEGACY_BYTES: u64 = 64 << 20;

/// Every `session-*.json` and `session-*.jsonl` in `chats`, in name order, read (line by line,
/// each line at most [`MAX_LINE_BYTES`]).
pub fn session_files(chats: &Utf8Path) -> Vec<SessionFile> {
    let Ok(listing) = fs::read_dir(chats) else {
        return Vec::new();
    };
    let mut names: Vec<String> = listing
        .flatten()
        .filter_map(|item| item.file_name().into_string().ok())
        .filter(|name| {
            name.starts_with(SESSION_FILE_PREFIX)
                && (name.ends_with(".json") || name.ends_with(".jsonl"))
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let path = chats.join(&name);
            match read_session_file(&path) {
                Some(record) => SessionFile {
                    name,
                    path,
                    session: record.session,
                    resumable: record.resumable,
                    subagent: record.kind.as_deref() == Some("subagent"),
                    last_updated: record.last_updated,
                },
                None => SessionFile {
                    name,
                    path,
                    session: None,
                    resumable: false,
                    subagent: false,
                    last_updated: None,
                },
            }
        })
        .collect()
}

/// [`read_record`] of the file at `path`, streamed: its lines are replayed as they are read,
/// and only a file of at most [`MAX_LEGACY_BYTES`] is read whole for the legacy format.
fn read_session_file(path: &Utf8Path) -> Option<Record> {
    let file = safe_open::open_read(path.as_std_path(), Symlinks::Follow).ok()?;
    let mut reader = std::io::BufReader::new(file);
    let mut replay = Replay::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let (read, whole) = read_line(&mut reader, &mut line, MAX_LINE_BYTES).ok()?;
        if read == 0 {
            break;
        }
        if whole {
            replay.line(&String::from_utf8_lossy(&line));
        }
    }
    replay.finish().or_else(|| {
        let part =
            safe_open::read_head(path.as_std_path(), Symlinks::Follow, MAX_LEGACY_BYTES).ok()?;
        part.is_whole()
            .then(|| read_legacy(&String::from_utf8_lossy(&part.bytes)))?
    })
}

/// Reads one line (through its `\n`) into `line`, keeping at most `cap` bytes of it: the bytes
/// consumed, and whether the line was kept whole (a longer one is consumed to its end and
/// dropped).
fn read_line(
    reader: &mut impl std::io::BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<(usize, bool)> {
    let mut consumed = 0;
    let mut whole = true;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            return Ok((consumed, whole));
        }
        let (taken, ended) = match buffer.iter().position(|byte| *byte == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        if whole && line.len() + taken <= cap {
            line.extend_from_slice(&buffer[..taken]);
        } else {
            whole = false;
            line.clear();
        }
        reader.consume(taken);
        consumed += taken;
        if ended {
            return Ok((consumed, whole));
        }
    }
}

/// What a conversation file's content says, after replaying it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Record {
    session: Option<String>,
    resumable: bool,
    kind: Option<String>,
    last_updated: Option<String>,
}

/// Gemini's `loadConversationRecord` with `metadataOnly`: each line a record (one that does
/// not parse is skipped); `$rewindTo` drops the messages from the one named on (all of them
/// when it is not there), `$set.messages` replaces them, other `$set` keys and the header's
/// fields are metadata. Without a `sessionId` and `projectHash`, the whole file is tried as the
/// legacy single JSON document. `None`: Gemini cannot read a session from it.
#[cfg(test)]
fn read_record(text: &str) -> Option<Record> {
    let mut replay = Replay::default();
    for line in text.split('\n') {
        replay.line(line);
    }
    replay.finish().or_else(|| read_legacy(text))
}

/// The replay of a conversation file's lines ([`read_record`]), one line at a time.
#[derive(Default)]
struct Replay {
    metadata: Map<String, Value>,
    /// Message ids in order.
    ids: Vec<String>,
    /// Whether each message id is resumable (by id, the last write winning).
    kinds: HashMap<String, bool>,
}

impl Replay {
    /// Replays one line (`\r` breaks a line too, as Gemini's `readline` reads it).
    fn line(&mut self, line: &str) {
        for line in line.split(['\n', '\r']) {
            self.record(line);
        }
    }

    fn record(&mut self, line: &str) {
        if js_trim(line).is_empty() {
            return;
        }
        let Ok(Value::Object(record)) = serde_json::from_str::<Value>(line) else {
            return;
        };
        if let Some(Value::String(rewind)) = record.get("$rewindTo") {
            match self.ids.iter().position(|id| id == rewind) {
                Some(at) => {
                    for removed in self.ids.split_off(at) {
                        self.kinds.remove(&removed);
                    }
                }
                None => {
                    self.ids.clear();
                    self.kinds.clear();
                }
            }
        } else if let Some(Value::String(id)) = record.get("id") {
            self.ids.push(id.clone());
            self.kinds.insert(id.clone(), is_resumable_message(&record));
        } else if let Some(set @ (Value::Object(_) | Value::Array(_))) = record.get("$set") {
            if let Some(Value::Array(messages)) = set.get("messages") {
                self.ids.clear();
                self.kinds.clear();
                self.messages(messages);
            }
            if let Value::Object(set) = set {
                self.metadata.extend(set.clone());
            }
        } else if matches!(record.get("sessionId"), Some(Value::String(_)))
            && matches!(record.get("projectHash"), Some(Value::String(_)))
        {
            if let Some(Value::Array(messages)) = record.get("messages") {
                self.messages(messages);
            }
            self.metadata.extend(record);
        }
    }

    fn messages(&mut self, messages: &[Value]) {
        for message in messages {
            if let Some(Value::String(id)) = message.get("id") {
                self.ids.push(id.clone());
                self.kinds.insert(id.clone(), message_resumable(message));
            }
        }
    }

    /// The record, or `None` without a `sessionId` and `projectHash` (then the file is tried as
    /// the legacy document).
    fn finish(self) -> Option<Record> {
        let metadata = self.metadata;
        if !truthy(metadata.get("sessionId")) || !truthy(metadata.get("projectHash")) {
            return None;
        }
        Some(Record::of(
            &metadata,
            self.kinds.values().any(|resumable| *resumable),
        ))
    }
}

impl Record {
    /// The record whose metadata (a header, or the legacy document) is `metadata`.
    fn of(metadata: &Map<String, Value>, resumable: bool) -> Record {
        let text = |key: &str| metadata.get(key).and_then(Value::as_str);
        Record {
            session: text("sessionId")
                .filter(|id| !id.is_empty())
                .map(str::to_string),
            resumable,
            kind: text("kind").map(str::to_string),
            last_updated: text("lastUpdated").map(str::to_string),
        }
    }
}

/// The legacy format: the whole file one JSON object with a `sessionId` and `messages`.
fn read_legacy(text: &str) -> Option<Record> {
    let Ok(Value::Object(record)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    record.get("sessionId")?;
    let resumable = match record.get("messages") {
        None | Some(Value::Null) => false,
        Some(Value::Array(messages)) => messages.iter().any(message_resumable),
        // `messages.some` is not a function: Gemini's read fails.
        Some(_) => return None,
    };
    Some(Record::of(&record, resumable))
}

fn message_resumable(message: &Value) -> bool {
    match message {
        Value::Object(message) => is_resumable_message(message),
        _ => false,
    }
}

/// Gemini's `isResumableMessageRecord`: a user message whose text is not empty, a `/` or `?`
/// command, or start-up or hook context; a model message with text, tool calls or thoughts.
fn is_resumable_message(message: &Map<String, Value>) -> bool {
    let content = message
        .get("content")
        .filter(|content| truthy(Some(content)))
        .map(part_text)
        .unwrap_or_default();
    let content = js_trim(&content);
    match message.get("type").and_then(Value::as_str) {
        Some("user") => {
            !(content.is_empty()
                || content.starts_with('/')
                || content.starts_with('?')
                || content.starts_with("<session_context>")
                || content.starts_with("<hook_context>"))
        }
        Some("gemini") => {
            let count = |key: &str| match message.get(key) {
                Some(Value::Array(items)) => items.len(),
                Some(Value::String(text)) => text.encode_utf16().count(),
                _ => 0,
            };
            !content.is_empty() || count("toolCalls") > 0 || count("thoughts") > 0
        }
        _ => false,
    }
}

/// Gemini's `partListUnionToString` (verbose): a string as it is, a list joined, a part's text
/// or a bracketed name for what is not text.
fn part_text(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(false) => String::new(),
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().map(part_text).collect(),
        Value::Object(part) => {
            let labels = [
                ("videoMetadata", "[Video Metadata]"),
                ("thought", "[Thought]"),
                ("codeExecutionResult", "[Code Execution Result]"),
                ("executableCode", "[Executable Code]"),
                ("fileData", "[File Data]"),
                ("functionCall", "[Function Call]"),
                ("functionResponse", "[Function Response]"),
                ("inlineData", "[Media]"),
            ];
            if let Some((_, label)) = labels.iter().find(|(key, _)| part.contains_key(*key)) {
                return (*label).to_string();
            }
            match part.get("text") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
            }
        }
        Value::Bool(true) | Value::Number(_) => String::new(),
    }
}

/// JavaScript's truthiness of a JSON value (`undefined` for a missing one).
fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Number(number)) => number.as_f64().is_some_and(|n| n != 0.0),
        Some(_) => true,
    }
}

/// JavaScript's `String.prototype.trim`: Unicode white space and line terminators, and the
/// byte-order mark, but not U+0085.
fn js_trim(text: &str) -> &str {
    text.trim_matches(|character: char| {
        character == '\u{feff}' || (character.is_whitespace() && character != '\u{85}')
    })
}

/// Why Gemini would not resume a session, or that it would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reachability {
    /// A listed session has the id: `--resume` loads it.
    Reachable,
    /// The project has no listed session at all ("No previous sessions found for this
    /// project").
    NoSessions,
    /// No file of the project gives the id ("Invalid session identifier").
    NotFound,
    /// Files give the id but none holds a conversation Gemini resumes.
    NoConversation,
    /// Only a subagent's session gives the id.
    Subagent,
}

impl Reachability {
    /// Whether `--resume` loads it.
    pub fn is_reachable(&self) -> bool {
        *self == Reachability::Reachable
    }

    /// What was found, in words.
    pub fn describe(&self) -> &'static str {
        match self {
            Reachability::Reachable => "a conversation Gemini resumes",
            Reachability::NoSessions => {
                "the project has no resumable session (Gemini: No previous sessions found for \
                 this project)"
            }
            Reachability::NotFound => {
                "no session file of this project holds this id (Gemini: Invalid session \
                 identifier)"
            }
            Reachability::NoConversation => {
                "its file holds no conversation Gemini resumes: no prompt and no answer (Gemini: \
                 Invalid session identifier)"
            }
            Reachability::Subagent => "a subagent's session, which Gemini does not resume",
        }
    }
}

/// Where Gemini would load a session from, and what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Whether Gemini would load it, and why not.
    pub reachability: Reachability,
    /// The file it would load; else the chats dir it looked in.
    pub path: Utf8PathBuf,
}

/// Gemini's `--resume <session>` against the files of `chats`: the id trimmed, matched against
/// each listed session's id (the most recently updated file of an id wins), else, when it is
/// a whole positive number within the list, the session at that place, oldest first.
pub fn locate_in(chats: &Utf8Path, files: &[SessionFile], session: &str) -> Located {
    let wanted = js_trim(session);
    let listed: Vec<&SessionFile> = files.iter().filter(|file| file.listed()).collect();
    let found = |reachability, path: &Utf8Path| Located {
        reachability,
        path: path.to_path_buf(),
    };
    if listed.is_empty() {
        return found(Reachability::NoSessions, chats);
    }
    let mut matching: Vec<&&SessionFile> = listed
        .iter()
        .filter(|file| file.session.as_deref() == Some(wanted))
        .collect();
    matching.sort_by(|a, b| a.last_updated.cmp(&b.last_updated));
    if let Some(file) = matching.last() {
        return found(Reachability::Reachable, &file.path);
    }
    let by_place = wanted
        .parse::<usize>()
        .ok()
        .filter(|place| *place > 0 && place.to_string() == wanted && *place <= listed.len());
    if by_place.is_some() {
        return found(Reachability::Reachable, chats);
    }
    let with_id: Vec<&SessionFile> = files
        .iter()
        .filter(|file| file.session.as_deref() == Some(wanted))
        .collect();
    match with_id.first() {
        None => found(Reachability::NotFound, chats),
        Some(file) if with_id.iter().all(|file| file.subagent && file.resumable) => {
            found(Reachability::Subagent, &file.path)
        }
        Some(file) => found(Reachability::NoConversation, &file.path),
    }
}

/// `general.sessionRetention` as Gemini applies it: the user's settings
/// (`<root>/settings.json`), then the project's (`<project>/.gemini/settings.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// Whether the start-up cleanup runs (on unless set off, or set to something Gemini
    /// refuses).
    pub enabled: bool,
    /// `maxAge`, in days (30 by default).
    pub max_age_days: u64,
}

/// Reads the cleanup's settings for `project` under `root`.
pub fn retention(root: &Utf8Path, project: &Utf8Path) -> Retention {
    let mut enabled = true;
    let mut max_age = Some("30d".to_string());
    for path in [
        root.join("settings.json"),
        project.join(GEMINI_DIR).join("settings.json"),
    ] {
        let Some(settings) = read_settings(&path) else {
            continue;
        };
        let Some(setting) = settings.pointer("/general/sessionRetention") else {
            continue;
        };
        if let Some(value) = setting.get("enabled") {
            enabled = truthy(Some(value));
        }
        if let Some(value) = setting.get("maxAge") {
            max_age = value.as_str().map(str::to_string);
        }
    }
    let max_age_days = match max_age.as_deref() {
        Some(text) => match retention_days(text) {
            Some(days) => days,
            // Gemini refuses the setting and turns the cleanup off.
            None => {
                return Retention {
                    enabled: false,
                    max_age_days: 0,
                };
            }
        },
        None => 0,
    };
    Retention {
        enabled,
        max_age_days,
    }
}

/// `^(\d+)([dhwm])$` in whole days (hours rounded down; a month is 30 days).
fn retention_days(text: &str) -> Option<u64> {
    let unit = text.chars().last()?;
    let digits = &text[..text.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let number: u64 = digits.parse().ok()?;
    match unit {
        'h' => Some(number / 24),
        'd' => Some(number),
        'w' => Some(number.saturating_mul(7)),
        'm' => Some(number.saturating_mul(30)),
        _ => None,
    }
}

/// What the next Gemini start in the project would delete along with `session`'s files:
/// `None` when nothing threatens it; else the files that already put it at risk (files named
/// with its `-<id8>` that hold no conversation, such as the stub a resume leaves), possibly
/// none yet.
pub fn cleanup_hazard(files: &[SessionFile], session: &str) -> Vec<String> {
    let Some(short) = session.get(..8) else {
        return Vec::new();
    };
    files
        .iter()
        .filter(|file| file.short_id() == Some(short) && !file.listed())
        .map(|file| file.name.clone())
        .collect()
}

/// What a batch of preflights reads once: each project's slug and each chats dir's files.
#[derive(Debug, Default)]
pub struct Cache {
    projects: RefCell<HashMap<(Utf8PathBuf, Utf8PathBuf), Project>>,
    chats: RefCell<HashMap<Utf8PathBuf, Rc<[SessionFile]>>>,
}

impl Cache {
    /// [`project_slug`], once per root and project.
    pub fn project(&self, root: &Utf8Path, project: &Utf8Path) -> Project {
        self.projects
            .borrow_mut()
            .entry((root.to_path_buf(), project.to_path_buf()))
            .or_insert_with(|| project_slug(root, project))
            .clone()
    }

    /// [`session_files`], once per chats dir.
    pub fn files(&self, chats: &Utf8Path) -> Rc<[SessionFile]> {
        self.chats
            .borrow_mut()
            .entry(chats.to_path_buf())
            .or_insert_with(|| session_files(chats).into())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_the_clis() {
        for (name, slug) in [
            ("proj", "proj"),
            ("My Project", "my-project"),
            ("a__b--c", "a-b-c"),
            ("-x-", "x"),
            ("café", "caf"),
            ("日本", "project"),
            ("", "project"),
        ] {
            assert_eq!(slugify(name), slug, "{name:?}");
        }
    }

    #[test]
    fn settings_are_read_with_their_comments_stripped_as_gemini_reads_them() {
        let temp = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(temp.path()).unwrap();
        let project = root.join("project");
        fs::create_dir_all(project.join(GEMINI_DIR)).unwrap();
        let write = |path: Utf8PathBuf, text: &str| fs::write(path, text).unwrap();
        write(
            root.join("settings.json"),
            "// mine\n{ /* cleanup */ \"general\": {\"sessionRetention\": {\"enabled\": false}}}",
        );
        assert!(!retention(root, &project).enabled);
        // A `#` is no comment to Gemini: the file does not parse, and the default holds.
        write(
            root.join("settings.json"),
            "# mine\n{\"general\": {\"sessionRetention\": {\"enabled\": false}}}",
        );
        assert!(retention(root, &project).enabled);
        // A `//` inside a string is text, not a comment.
        write(
            project.join(GEMINI_DIR).join("settings.json"),
            "{\"general\": {\"sessionRetention\": {\"enabled\": false, \"maxAge\": \"7d\"}}, \"x\": \"http://h\"}",
        );
        assert_eq!(
            retention(root, &project),
            Retention {
                enabled: false,
                max_age_days: 7
            }
        );
    }

    #[test]
    fn short_ids_are_the_last_eight_characters_after_a_dash() {
        assert_eq!(
            short_id("session-2026-12-01T16-01-790578d5.jsonl"),
            Some("790578d5")
        );
        assert_eq!(short_id("session-x-790578d5.json"), Some("790578d5"));
        assert_eq!(short_id("session-790578d5.jsonl"), Some("790578d5"));
        assert_eq!(short_id("session-x790578d5.jsonl"), None);
        assert_eq!(short_id("other-x-790578d5.jsonl"), None);
    }

    #[test]
    fn records_replay_as_the_cli_does() {
        let header = r#"{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}"#;
        let context = r#"{"$set":{"messages":[{"id":"c","type":"user","content":[{"text":"<session_context>x</session_context>"}]}]}}"#;
        let prompt = r#"{"id":"m1","type":"user","content":[{"text":"hello"}]}"#;
        let check = |lines: &[&str], expected: Option<bool>| {
            let text = lines.join("\n");
            assert_eq!(
                read_record(&text).map(|record| record.resumable),
                expected,
                "{text}"
            );
        };
        check(&[header], Some(false));
        check(&[header, context], Some(false));
        check(&[header, context, prompt], Some(true));
        check(&[header, prompt, r#"{"$rewindTo":"m1"}"#], Some(false));
        check(&[header, prompt, r#"{"$rewindTo":"zz"}"#], Some(false));
        check(
            &[
                header,
                prompt,
                r#"{"id":"m2","type":"user","content":"/quit"}"#,
            ],
            Some(true),
        );
        check(
            &[header, r#"{"id":"m2","type":"gemini","content":"ok"}"#],
            Some(true),
        );
        check(
            &[header, r#"{"id":"m2","type":"info","content":"ok"}"#],
            Some(false),
        );
        check(&[&header[..20], prompt], None);
        check(&[header, prompt, "{\"id\":\"m3\",\"ty"], Some(true));
        check(&[header, prompt, context], Some(false));
        check(&[""], None);
    }

    #[test]
    fn retention_periods_are_the_clis() {
        assert_eq!(retention_days("30d"), Some(30));
        assert_eq!(retention_days("2w"), Some(14));
        assert_eq!(retention_days("1m"), Some(30));
        assert_eq!(retention_days("48h"), Some(2));
        assert_eq!(retention_days("d"), None);
        assert_eq!(retention_days("3y"), None);
        assert_eq!(retention_days("-3d"), None);
    }
}
