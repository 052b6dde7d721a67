//! The on-disk JSON format, version 1: the JavaScript crash-resume-index's file, plus optional
//! fields of our own that its reader ignores.
//!
//! ```json
//! { "version": 1,
//!   "entries": { "<surface>": { "surfaceId": "...", "sessionId": "...", "repo": "...",
//!                                "role": null, "captured_at": 1700000000000,
//!                                "last_active": 1700000005000 } } }
//! ```
//!
//! This module is a compatibility promise: it converts between the file and `index-core` types,
//! keeps every field it does not know (top level and per entry), and keeps an entry it cannot
//! use as it was, so a rewrite never drops anything.

use index_core::{Entry, Index, Map, Millis, Provider, Repo, Role, SessionId, SurfaceId, Value};
use serde::Serialize;

/// The newest format version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// Per-entry field names, as the JavaScript tool wrote them, then our additions.
pub mod field {
    pub const SURFACE: &str = "surfaceId";
    pub const SESSION: &str = "sessionId";
    pub const REPO: &str = "repo";
    pub const ROLE: &str = "role";
    pub const CAPTURED_AT: &str = "captured_at";
    pub const LAST_ACTIVE: &str = "last_active";
    pub const PROVIDER: &str = "provider";
    pub const CWD: &str = "cwd";
    pub const CONFIG_DIR: &str = "config_dir";
    pub const PREVIOUS_SESSIONS: &str = "previous_sessions";
    pub const ENDED_AT: &str = "ended_at";
    pub const RESTORE_CLAIMED_AT: &str = "restore_claimed_at";

    pub const KNOWN: [&str; 12] = [
        SURFACE,
        SESSION,
        REPO,
        ROLE,
        CAPTURED_AT,
        LAST_ACTIVE,
        PROVIDER,
        CWD,
        CONFIG_DIR,
        PREVIOUS_SESSIONS,
        ENDED_AT,
        RESTORE_CLAIMED_AT,
    ];
}

/// Why a file is not a usable index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Not JSON, or not the shape of an index.
    Corrupt(String),
    /// A version this build does not understand.
    NewerVersion(u64),
}

/// An index file as read: the usable index plus everything needed to write the rest back.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub index: Index,
    /// Entries that could not be used (missing or invalid required fields), kept verbatim.
    pub unusable: Map<String, Value>,
    /// Top-level fields other than `version` and `entries`.
    pub unknown_fields: Map<String, Value>,
    /// Problems found while reading, for the caller to report.
    pub problems: Vec<Problem>,
}

/// A problem with part of a file that was otherwise read.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// An entry kept verbatim but not used.
    UnusableEntry { surface: String, reason: String },
    /// Two entries held one session; the older was dropped.
    DuplicateSession {
        session: String,
        dropped: String,
        kept: String,
    },
}

/// Parses an index file's bytes.
pub fn parse(bytes: &[u8]) -> Result<Document, ParseError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|error| ParseError::Corrupt(format!("not valid JSON: {error}")))?;
    let Value::Object(mut top) = value else {
        return Err(ParseError::Corrupt(
            "the top level is not a JSON object".into(),
        ));
    };
    match top.remove("version") {
        None => {}
        Some(Value::Number(number)) => match number.as_u64() {
            Some(version) if version <= FORMAT_VERSION => {}
            Some(version) => return Err(ParseError::NewerVersion(version)),
            None => {
                return Err(ParseError::Corrupt(format!(
                    "`version` is {number}, not a whole number"
                )));
            }
        },
        Some(other) => {
            return Err(ParseError::Corrupt(format!(
                "`version` is {other}, not a number"
            )));
        }
    }
    let raw_entries = match top.remove("entries") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(entries)) => entries,
        Some(_) => return Err(ParseError::Corrupt("`entries` is not a JSON object".into())),
    };

    let mut document = Document {
        unknown_fields: top,
        ..Document::default()
    };
    let mut entries = Vec::with_capacity(raw_entries.len());
    for (surface, raw) in raw_entries {
        match entry_from_json(&surface, raw) {
            Ok(entry) => entries.push(entry),
            Err((raw, reason)) => {
                document.problems.push(Problem::UnusableEntry {
                    surface: surface.clone(),
                    reason,
                });
                document.unusable.insert(surface, raw);
            }
        }
    }
    let (index, conflicts) = Index::from_entries(entries);
    document.index = index;
    document.problems.extend(
        conflicts
            .into_iter()
            .map(|conflict| Problem::DuplicateSession {
                session: conflict.dropped.session.into_string(),
                dropped: conflict.dropped.surface.into_string(),
                kept: conflict.kept.into_string(),
            }),
    );
    Ok(document)
}

fn entry_from_json(surface: &str, raw: Value) -> Result<Entry, (Value, String)> {
    let Value::Object(mut object) = raw else {
        return Err((raw, "the entry is not a JSON object".into()));
    };
    match read_fields(surface, &object) {
        Ok(mut entry) => {
            object.retain(|key, _| !field::KNOWN.contains(&key.as_str()));
            entry.unknown_fields = object;
            Ok(entry)
        }
        Err(reason) => Err((Value::Object(object), reason)),
    }
}

fn read_fields(surface: &str, object: &Map<String, Value>) -> Result<Entry, String> {
    let surface = SurfaceId::new(surface).map_err(|error| error.to_string())?;
    let session = required_str(object, field::SESSION)?;
    let repo = required_str(object, field::REPO)?;
    Ok(Entry {
        surface,
        session: SessionId::new(session).map_err(|error| error.to_string())?,
        repo: Repo::new(repo).map_err(|error| error.to_string())?,
        role: optional_str(object, field::ROLE)?
            .filter(|role| !role.is_empty())
            .map(Role::new)
            .transpose()
            .map_err(|error| error.to_string())?,
        captured_at: optional_millis(object, field::CAPTURED_AT)?
            .ok_or_else(|| format!("`{}` is missing", field::CAPTURED_AT))?,
        last_active: optional_millis(object, field::LAST_ACTIVE)?,
        provider: optional_str(object, field::PROVIDER)?
            .map(Provider::new)
            .transpose()
            .map_err(|error| error.to_string())?,
        cwd: optional_str(object, field::CWD)?.map(str::to_string),
        config_dir: optional_str(object, field::CONFIG_DIR)?.map(str::to_string),
        previous_sessions: previous_sessions(object)?,
        ended_at: optional_millis(object, field::ENDED_AT)?,
        restore_claimed_at: optional_millis(object, field::RESTORE_CLAIMED_AT)?,
        unknown_fields: Map::new(),
    })
}

fn required_str<'a>(object: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    optional_str(object, name)?.ok_or_else(|| format!("`{name}` is missing"))
}

fn optional_str<'a>(object: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!("`{name}` is {other}, not a string")),
    }
}

/// Epoch milliseconds; JavaScript numbers may carry a fraction, which is dropped.
fn optional_millis(object: &Map<String, Value>, name: &str) -> Result<Option<Millis>, String> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => {
            if let Some(millis) = number.as_u64() {
                return Ok(Some(millis));
            }
            match number.as_f64() {
                Some(float) if float >= 0.0 && float < u64::MAX as f64 => Ok(Some(float as u64)),
                _ => Err(format!(
                    "`{name}` is {number}, not a time in epoch milliseconds"
                )),
            }
        }
        Some(other) => Err(format!("`{name}` is {other}, not a number")),
    }
}

fn previous_sessions(object: &Map<String, Value>) -> Result<Vec<SessionId>, String> {
    match object.get(field::PREVIOUS_SESSIONS) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(ids)) => ids
            .iter()
            .map(|id| match id {
                Value::String(id) => SessionId::new(id.as_str()).map_err(|error| error.to_string()),
                other => Err(format!(
                    "`{}` holds {other}, not a string",
                    field::PREVIOUS_SESSIONS
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "`{}` is {other}, not a list",
            field::PREVIOUS_SESSIONS
        )),
    }
}

/// One entry as written: the JavaScript tool's six fields always, ours when set, then the
/// fields we do not know.
#[derive(Debug, Serialize)]
pub struct EntryV1<'a> {
    #[serde(rename = "surfaceId")]
    pub surface_id: &'a str,
    #[serde(rename = "sessionId")]
    pub session_id: &'a str,
    pub repo: &'a str,
    pub role: Option<&'a str>,
    pub captured_at: Millis,
    pub last_active: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_dir: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub previous_sessions: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restore_claimed_at: Option<Millis>,
    #[serde(flatten)]
    pub unknown_fields: &'a Map<String, Value>,
}

impl<'a> From<&'a Entry> for EntryV1<'a> {
    fn from(entry: &'a Entry) -> Self {
        EntryV1 {
            surface_id: entry.surface.as_str(),
            session_id: entry.session.as_str(),
            repo: entry.repo.as_str(),
            role: entry.role.as_ref().map(Role::as_str),
            captured_at: entry.captured_at,
            last_active: entry.last_seen(),
            provider: entry.provider.as_ref().map(Provider::as_str),
            cwd: entry.cwd.as_deref(),
            config_dir: entry.config_dir.as_deref(),
            previous_sessions: entry
                .previous_sessions
                .iter()
                .map(SessionId::as_str)
                .collect(),
            ended_at: entry.ended_at,
            restore_claimed_at: entry.restore_claimed_at,
            unknown_fields: &entry.unknown_fields,
        }
    }
}

/// An entry in the file: one we use, or one kept verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum StoredEntry<'a> {
    Used(EntryV1<'a>),
    Verbatim(&'a Value),
}

#[derive(Debug, Serialize)]
struct FileV1<'a> {
    version: u64,
    entries: std::collections::BTreeMap<&'a str, StoredEntry<'a>>,
    #[serde(flatten)]
    unknown_fields: &'a Map<String, Value>,
}

/// Serializes a document: entries sorted by surface, two-space indent (as the JavaScript tool's
/// `JSON.stringify(data, null, 2)`), a final newline.
pub fn serialize(document: &Document) -> Vec<u8> {
    let mut entries: std::collections::BTreeMap<&str, StoredEntry<'_>> = document
        .unusable
        .iter()
        .filter(|(surface, _)| document.index.lookup(surface).is_none())
        .map(|(surface, raw)| (surface.as_str(), StoredEntry::Verbatim(raw)))
        .collect();
    for entry in document.index.entries() {
        entries.insert(entry.surface.as_str(), StoredEntry::Used(entry.into()));
    }
    let file = FileV1 {
        version: FORMAT_VERSION,
        entries,
        unknown_fields: &document.unknown_fields,
    };
    let mut bytes = serde_json::to_vec_pretty(&file).expect("an index always serializes");
    bytes.push(b'\n');
    bytes
}
