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

use index_core::{
    AgentName, Claimant, Entry, Index, Launch, Map, Millis, Repo, Role, SessionId, SurfaceId,
    Value, Wrapper,
};
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The newest format version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// Per-entry field names, as the JavaScript tool wrote them, then our additions.
pub mod field {
    /// The surface id.
    pub const SURFACE: &str = "surfaceId";
    /// The session id.
    pub const SESSION: &str = "sessionId";
    /// The repo.
    pub const REPO: &str = "repo";
    /// The role.
    pub const ROLE: &str = "role";
    /// When the entry was recorded.
    pub const CAPTURED_AT: &str = "captured_at";
    /// When the session was last seen active.
    pub const LAST_ACTIVE: &str = "last_active";
    /// The agent.
    pub const PROVIDER: &str = "provider";
    /// The working dir.
    pub const CWD: &str = "cwd";
    /// The agent's config dir.
    pub const CONFIG_DIR: &str = "config_dir";
    /// The surface's earlier session ids, oldest first.
    pub const PREVIOUS_SESSIONS: &str = "previous_sessions";
    /// When the session ended cleanly.
    pub const ENDED_AT: &str = "ended_at";
    /// When a restore last claimed the surface.
    pub const RESTORE_CLAIMED_AT: &str = "restore_claimed_at";
    /// Which restore made that claim (`{"pid", "started", "opened"}`).
    pub const RESTORE_CLAIMED_BY: &str = "restore_claimed_by";
    /// The layout of the surface's multiplexer window.
    pub const WINDOW_LAYOUT: &str = "window_layout";
    /// The boot the surface's agent last recorded itself in.
    pub const BOOT_ID: &str = "boot_id";
    /// How the agent was started (`{"args", "env", "wrapper"}`).
    pub const LAUNCH: &str = "launch";

    /// Every field this version knows.
    pub const KNOWN: [&str; 16] = [
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
        RESTORE_CLAIMED_BY,
        WINDOW_LAYOUT,
        BOOT_ID,
        LAUNCH,
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
    /// The index the file holds.
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
    UnusableEntry {
        /// The entry's surface.
        surface: String,
        /// Why it could not be used.
        reason: String,
    },
    /// Two entries held one session; the older was dropped.
    DuplicateSession {
        /// The session id.
        session: String,
        /// The surface whose entry was dropped.
        dropped: String,
        /// The surface that keeps the session.
        kept: String,
    },
}

/// Parses an index file's bytes.
///
/// The common file (entries with only the fields this version knows, well typed) takes a fast
/// path that parses each entry straight into its fields; anything else, and every error, goes
/// through the general path over `serde_json::Value`, which keeps unknown fields and unusable
/// entries and says precisely what is wrong. Both give the same document.
pub fn parse(bytes: &[u8]) -> Result<Document, ParseError> {
    match fast::parse(bytes) {
        Some(parsed) => parsed,
        None => parse_general(bytes),
    }
}

/// Whether `bytes` begin as both tools begin an index, `{"version": <number>`, whatever
/// follows: a file of ours that was damaged (a torn write of a tool that writes in place, an
/// edit gone wrong) is still recognised by its start, so it is repaired, where any other file
/// that is not an index is refused.
pub fn begins_as_index(bytes: &[u8]) -> bool {
    let rest = bytes.trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"{") else {
        return false;
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(b"\"version\"") else {
        return false;
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(b":") else {
        return false;
    };
    rest.trim_ascii_start()
        .first()
        .is_some_and(u8::is_ascii_digit)
}

/// The members of `entries` that a damaged file still holds whole, in order: what a tool that
/// rewrites the file in place (the JavaScript crash-resume-index) had written before it was
/// killed, the entries it acknowledged since our last write among them. Reading stops at the
/// first member that is not whole JSON; the rest of the file is not looked at.
pub fn salvage(bytes: &[u8]) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    // The error is where the file is torn: everything before it has been kept.
    let _ = deserializer.deserialize_map(salvage::Top(&mut found));
    found
}

/// `document` (the backup generation, or an empty one) with the entries [`salvage`]d from the
/// damaged file over it: the file was written after the backup, so its whole entry replaces the
/// backup's of the same surface, and one surface per session is kept again.
pub fn merge_salvaged(document: Document, salvaged: Vec<(String, Value)>) -> Document {
    let salvaged_surfaces: std::collections::HashSet<String> = salvaged
        .iter()
        .map(|(surface, _)| surface.clone())
        .collect();
    let replaced = |surface: &str| salvaged_surfaces.contains(surface);
    let Document {
        index,
        mut unusable,
        unknown_fields,
        mut problems,
    } = document;
    unusable.retain(|surface, _| !replaced(surface));
    problems.retain(|problem| match problem {
        Problem::UnusableEntry { surface, .. } => !replaced(surface),
        Problem::DuplicateSession { .. } => true,
    });
    let mut entries: Vec<Entry> = index
        .entries()
        .into_iter()
        .filter(|entry| !replaced(entry.surface.as_str()))
        .cloned()
        .collect();
    let mut merged = Document {
        index: Index::default(),
        unusable,
        unknown_fields,
        problems,
    };
    for (surface, raw) in salvaged {
        add_entry(&mut merged, &mut entries, surface, raw);
    }
    let (index, conflicts) = Index::from_entries(entries);
    merged.index = index;
    merged
        .problems
        .extend(conflicts.into_iter().map(duplicate_session));
    merged
}

/// `document` with the entries of the surfaces in `removed` dropped (usable or not), then
/// `set` put over it as [`merge_salvaged`] does: how a journal of the backup is applied.
pub(crate) fn apply_change(
    mut document: Document,
    removed: &[String],
    set: Vec<(String, Value)>,
) -> Document {
    for surface in removed {
        document.index.forget(surface);
        document.unusable.remove(surface);
    }
    document.problems.retain(|problem| match problem {
        Problem::UnusableEntry { surface, .. } => !removed.contains(surface),
        Problem::DuplicateSession { .. } => true,
    });
    match set.is_empty() {
        true => document,
        false => merge_salvaged(document, set),
    }
}

/// The visitors [`salvage`] reads a torn file with: each whole entry is pushed as soon as it
/// is read, so an error further on keeps it.
mod salvage {
    use std::collections::HashMap;
    use std::fmt;

    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

    use super::Value;

    /// The top-level object: `entries` is read member by member, anything else skipped.
    pub(super) struct Top<'a>(pub(super) &'a mut Vec<(String, Value)>);

    /// The members read so far, and where each surface's is among them.
    struct Found<'a> {
        members: &'a mut Vec<(String, Value)>,
        position: HashMap<String, usize>,
    }

    impl<'de> Visitor<'de> for Top<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an index")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "entries" {
                    // The last of duplicate keys wins, as a JSON parser keeps it.
                    self.0.clear();
                    map.next_value_seed(Entries(Found {
                        members: &mut *self.0,
                        position: HashMap::new(),
                    }))?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(())
        }
    }

    /// The `entries` object, each member kept once it is whole.
    struct Entries<'a>(Found<'a>);

    impl<'de> DeserializeSeed<'de> for Entries<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for Entries<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the index's entries")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let Found {
                members,
                mut position,
            } = self.0;
            while let Some((surface, raw)) = map.next_entry::<String, Value>()? {
                match position.get(&surface) {
                    // The last of duplicate keys wins, as a JSON parser keeps it.
                    Some(&at) => members[at].1 = raw,
                    None => {
                        position.insert(surface.clone(), members.len());
                        members.push((surface, raw));
                    }
                }
            }
            Ok(())
        }
    }
}

/// One surface's entry, read without building the whole index: `Some(found)` when the file
/// is an ordinary one and the answer is certain; `None` when only a full [`parse`] can say
/// (anything unusual: a corrupt or newer file, an entry of unknown shape, or the entry's
/// session id also written elsewhere in the file, where the one-surface-per-session rule could
/// drop it).
pub fn parse_one(bytes: &[u8], surface: &str) -> Option<Option<Entry>> {
    fast::parse_one(bytes, surface)
}

/// The general path of [`parse`] alone, for tests that hold the fast path to it: a test hook,
/// public only with the `fault-injection` feature, and hidden from the docs.
#[cfg(feature = "fault-injection")]
#[doc(hidden)]
pub fn parse_general_for_tests(bytes: &[u8]) -> Result<Document, ParseError> {
    parse_general(bytes)
}

/// The general path of [`parse`] alone.
pub(crate) fn parse_general(bytes: &[u8]) -> Result<Document, ParseError> {
    let Some(mut top) = members(bytes)? else {
        return Err(ParseError::Corrupt(
            "the top level is not a JSON object".into(),
        ));
    };
    let version = top.shift_remove("version");
    let had_version = version.is_some();
    match version {
        None => {}
        Some(raw) => match member_value(raw)? {
            Value::Number(number) => match whole_number(&number) {
                Some(version) if version <= FORMAT_VERSION => {}
                Some(version) => return Err(ParseError::NewerVersion(version)),
                None => {
                    return Err(ParseError::Corrupt(format!(
                        "`version` is {number}, not a whole number"
                    )));
                }
            },
            other => {
                return Err(ParseError::Corrupt(format!(
                    "`version` is {other}, not a number"
                )));
            }
        },
    }
    if !top.0.iter().any(|(key, _)| key == "entries") && !had_version {
        return Err(ParseError::Corrupt(
            "it holds neither `version` nor `entries`, so it is not an index".into(),
        ));
    }
    let raw_entries = match top.shift_remove("entries") {
        None => Vec::new(),
        Some(raw) if raw.get() == "null" => Vec::new(),
        Some(raw) => match members(raw.get().as_bytes())? {
            Some(entries) => entries.into_iter().collect(),
            None => return Err(ParseError::Corrupt("`entries` is not a JSON object".into())),
        },
    };
    let top = top
        .into_iter()
        .map(|(key, raw)| Ok((key, member_value(raw)?)))
        .collect::<Result<Map<String, Value>, ParseError>>()?;
    let raw_entries = raw_entries
        .into_iter()
        .map(|(surface, raw)| Ok((surface, member_value(raw)?)))
        .collect::<Result<Vec<(String, Value)>, ParseError>>()?;

    let mut document = Document {
        unknown_fields: top,
        ..Document::default()
    };
    let mut entries = Vec::with_capacity(raw_entries.len());
    for (surface, raw) in raw_entries {
        add_entry(&mut document, &mut entries, surface, raw);
    }
    finish(document, entries)
}

/// A number that is whole, as JavaScript, which has one number type, reads it: `1`, `1.0` and
/// `1e0` alike.
fn whole_number(number: &serde_json::Number) -> Option<u64> {
    number.as_u64().or_else(|| {
        let float = number.as_f64()?;
        // Below 2^53 every whole float is exact.
        (float.fract() == 0.0 && (0.0..9_007_199_254_740_992.0).contains(&float))
            .then_some(float as u64)
    })
}

/// A JSON object as its members' raw text, in order.
pub(crate) struct RawObject<'a>(pub(crate) Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for RawObject<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<'de>(PhantomData<&'de ()>);
        impl<'de> Visitor<'de> for Members<'de> {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(RawObject(members))
            }
        }
        deserializer.deserialize_map(Members(PhantomData))
    }
}

/// An object's members as raw text: in order, the last of duplicate keys winning in the place
/// of the first, as `serde_json::Map` keeps them.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'a> From<Vec<(String, &'a RawValue)>> for Members<'a> {
    fn from(list: Vec<(String, &'a RawValue)>) -> Self {
        let mut members: Vec<(String, &'a RawValue)> = Vec::with_capacity(list.len());
        let mut position: std::collections::HashMap<String, usize> =
            std::collections::HashMap::new();
        for (key, raw) in list {
            match position.get(&key) {
                Some(&at) => members[at].1 = raw,
                None => {
                    position.insert(key.clone(), members.len());
                    members.push((key, raw));
                }
            }
        }
        Members(members)
    }
}

impl<'a> Members<'a> {
    fn shift_remove(&mut self, key: &str) -> Option<&'a RawValue> {
        let at = self.0.iter().position(|(name, _)| name == key)?;
        Some(self.0.remove(at).1)
    }
}

impl<'a> IntoIterator for Members<'a> {
    type Item = (String, &'a RawValue);
    type IntoIter = std::vec::IntoIter<(String, &'a RawValue)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// A JSON object's members as raw text, in order, the last of duplicate keys winning (as a
/// JSON parser keeps it). `None`: valid JSON, but not an object. Each member is parsed on its
/// own afterwards, so both paths of [`parse`] judge nesting per member alike.
fn members(bytes: &[u8]) -> Result<Option<Members<'_>>, ParseError> {
    match serde_json::from_slice::<RawObject<'_>>(bytes) {
        Ok(RawObject(list)) => Ok(Some(Members::from(list))),
        Err(error) => match serde_json::from_slice::<&RawValue>(bytes) {
            Ok(_) => Ok(None),
            Err(_) => Err(ParseError::Corrupt(format!("not valid JSON: {error}"))),
        },
    }
}

fn member_value(raw: &RawValue) -> Result<Value, ParseError> {
    serde_json::from_str(raw.get())
        .map_err(|error| ParseError::Corrupt(format!("not valid JSON: {error}")))
}

/// The latest of an entry's `captured_at` and `last_active` that is readable (a non-negative
/// integer), whatever else is wrong with it; `None` when neither is.
pub(crate) fn readable_last_seen(raw: &Value) -> Option<Millis> {
    [field::CAPTURED_AT, field::LAST_ACTIVE]
        .into_iter()
        .filter_map(|name| raw.get(name).and_then(Value::as_u64))
        .max()
}

/// Converts one stored entry, or keeps it verbatim as unusable.
fn add_entry(document: &mut Document, entries: &mut Vec<Entry>, surface: String, raw: Value) {
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

/// Builds the index from the usable entries (one surface per session).
fn finish(mut document: Document, entries: Vec<Entry>) -> Result<Document, ParseError> {
    let (index, conflicts) = Index::from_entries(entries);
    document.index = index;
    document
        .problems
        .extend(conflicts.into_iter().map(duplicate_session));
    Ok(document)
}

fn duplicate_session(conflict: index_core::Conflict) -> Problem {
    Problem::DuplicateSession {
        session: conflict.dropped.session.into_string(),
        dropped: conflict.dropped.surface.into_string(),
        kept: conflict.kept.into_string(),
    }
}

pub(crate) fn entry_from_json(surface: &str, raw: Value) -> Result<Entry, (Value, String)> {
    let Value::Object(mut object) = raw else {
        return Err((raw, "the entry is not a JSON object".into()));
    };
    match read_fields(surface, &object) {
        Ok(mut entry) => {
            // A launch this version cannot read (a later version's) is kept as it was.
            let keep_launch = entry.launch.is_none();
            object.retain(|key, value| {
                !field::KNOWN.contains(&key.as_str())
                    || (key == field::LAUNCH && keep_launch && !value.is_null())
            });
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
        agent: optional_str(object, field::PROVIDER)?
            .map(AgentName::new)
            .transpose()
            .map_err(|error| error.to_string())?,
        cwd: optional_str(object, field::CWD)?.map(str::to_string),
        config_dir: optional_str(object, field::CONFIG_DIR)?.map(str::to_string),
        previous_sessions: previous_sessions(object)?,
        ended_at: optional_millis(object, field::ENDED_AT)?,
        restore_claimed_at: optional_millis(object, field::RESTORE_CLAIMED_AT)?,
        // A claimant that does not read is no claimant: the claim is then judged as an
        // earlier version's.
        restore_claimed_by: object
            .get(field::RESTORE_CLAIMED_BY)
            .and_then(|value| ClaimantV1::deserialize(value).ok())
            .map(Claimant::from),
        window_layout: optional_str(object, field::WINDOW_LAYOUT)?.map(str::to_string),
        boot_id: optional_str(object, field::BOOT_ID)?.map(str::to_string),
        // A launch that does not read is kept as an unknown field (above), and unused.
        launch: object
            .get(field::LAUNCH)
            .and_then(|value| LaunchV1::deserialize(value).ok())
            .map(Launch::from),
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
    /// The surface id.
    pub surface_id: &'a str,
    #[serde(rename = "sessionId")]
    /// The session id.
    pub session_id: &'a str,
    /// The repo.
    pub repo: &'a str,
    /// The role, if any.
    pub role: Option<&'a str>,
    /// When the entry was recorded.
    pub captured_at: Millis,
    /// When the session was last seen active.
    pub last_active: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The agent, if recorded.
    pub provider: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The working dir, if recorded.
    pub cwd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The config dir, if recorded.
    pub config_dir: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    /// Earlier session ids, oldest first.
    pub previous_sessions: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// When the session ended cleanly.
    pub ended_at: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// When a restore last claimed the surface.
    pub restore_claimed_at: Option<Millis>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_claimant"
    )]
    /// Which restore made that claim.
    pub restore_claimed_by: Option<&'a Claimant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The layout of the surface's multiplexer window, if recorded.
    pub window_layout: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The boot the surface's agent last recorded itself in, if known.
    pub boot_id: Option<&'a str>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_launch"
    )]
    /// How the agent was started, if read.
    pub launch: Option<&'a Launch>,
    #[serde(flatten)]
    /// Fields this version does not know, written back as they were.
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
            provider: entry.agent.as_ref().map(AgentName::as_str),
            cwd: entry.cwd.as_deref(),
            config_dir: entry.config_dir.as_deref(),
            previous_sessions: entry
                .previous_sessions
                .iter()
                .map(SessionId::as_str)
                .collect(),
            ended_at: entry.ended_at,
            restore_claimed_at: entry.restore_claimed_at,
            restore_claimed_by: entry.restore_claimed_by.as_ref(),
            window_layout: entry.window_layout.as_deref(),
            boot_id: entry.boot_id.as_deref(),
            launch: entry.launch.as_ref(),
            unknown_fields: &entry.unknown_fields,
        }
    }
}

/// [`Launch`] in the file: `{"args": ["--model", "opus"], "env": {"ANTHROPIC_MODEL": "..."},
/// "wrapper": {"path": "/home/u/bin/cl", "passes_args": true}}`, each member absent when empty.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchV1 {
    /// The kept flags' words, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The model and provider variables, by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// The user's wrapper, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<WrapperV1>,
}

/// [`Wrapper`] in the file: `{"path": "/home/u/bin/cl", "passes_args": true}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrapperV1 {
    /// Its absolute path.
    pub path: String,
    /// Whether it passes its arguments on.
    pub passes_args: bool,
}

impl From<&Launch> for LaunchV1 {
    fn from(launch: &Launch) -> Self {
        LaunchV1 {
            args: launch.args.clone(),
            env: launch.env.clone(),
            wrapper: launch.wrapper.as_ref().map(|wrapper| WrapperV1 {
                path: wrapper.path.clone(),
                passes_args: wrapper.passes_args,
            }),
        }
    }
}

impl From<LaunchV1> for Launch {
    fn from(launch: LaunchV1) -> Self {
        Launch {
            args: launch.args,
            env: launch.env,
            wrapper: launch.wrapper.map(|wrapper| Wrapper {
                path: wrapper.path,
                passes_args: wrapper.passes_args,
            }),
        }
    }
}

/// Writes a launch as [`LaunchV1`], borrowing its values.
fn serialize_launch<S: serde::Serializer>(
    launch: &Option<&Launch>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct WrapperOut<'a> {
        path: &'a str,
        passes_args: bool,
    }
    #[derive(Serialize)]
    struct LaunchOut<'a> {
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        args: &'a [String],
        #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        env: &'a std::collections::BTreeMap<String, String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        wrapper: Option<WrapperOut<'a>>,
    }
    launch
        .map(|launch| LaunchOut {
            args: &launch.args,
            env: &launch.env,
            wrapper: launch.wrapper.as_ref().map(|wrapper| WrapperOut {
                path: &wrapper.path,
                passes_args: wrapper.passes_args,
            }),
        })
        .serialize(serializer)
}

/// [`Claimant`] in the file: `{"pid": 4242, "started": 1700000000000, "opened": true}`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ClaimantV1 {
    /// The restore's pid.
    pub pid: u32,
    /// When it started, in epoch milliseconds.
    pub started: Millis,
    /// Whether it started the surface's agent.
    #[serde(default)]
    pub opened: bool,
}

/// Writes a claimant as [`ClaimantV1`].
fn serialize_claimant<S: serde::Serializer>(
    claimant: &Option<&Claimant>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    claimant
        .map(|claimant| ClaimantV1::from(*claimant))
        .serialize(serializer)
}

impl From<Claimant> for ClaimantV1 {
    fn from(claimant: Claimant) -> Self {
        ClaimantV1 {
            pid: claimant.pid,
            started: claimant.started,
            opened: claimant.opened,
        }
    }
}

impl From<ClaimantV1> for Claimant {
    fn from(claimant: ClaimantV1) -> Self {
        Claimant {
            pid: claimant.pid,
            started: claimant.started,
            opened: claimant.opened,
        }
    }
}

/// An entry in the file: one we use, or one kept verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
#[expect(
    clippy::large_enum_variant,
    reason = "built once per entry for one write; boxing would allocate for each"
)]
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

/// The fast path of [`parse`]: `None` sends the whole file to the general path.
mod fast {
    use std::collections::HashSet;

    use index_core::{AgentName, Claimant, Entry, Map, Repo, Role, SessionId, SurfaceId, Value};
    use serde::Deserialize;
    use serde_json::value::RawValue;

    use super::{Document, FORMAT_VERSION, ParseError, RawObject, add_entry, finish};

    /// An entry with exactly the fields this version knows, well typed.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct KnownEntry {
        #[serde(rename = "surfaceId", default)]
        _surface_id: Option<String>,
        #[serde(rename = "sessionId")]
        session_id: String,
        repo: String,
        #[serde(default)]
        role: Option<String>,
        captured_at: u64,
        #[serde(default)]
        last_active: Option<u64>,
        #[serde(default)]
        provider: Option<String>,
        #[serde(default)]
        cwd: Option<String>,
        #[serde(default)]
        config_dir: Option<String>,
        #[serde(default)]
        previous_sessions: Option<Vec<String>>,
        #[serde(default)]
        ended_at: Option<u64>,
        #[serde(default)]
        restore_claimed_at: Option<u64>,
        #[serde(default)]
        restore_claimed_by: Option<super::ClaimantV1>,
        #[serde(default)]
        window_layout: Option<String>,
        #[serde(default)]
        boot_id: Option<String>,
        launch: Option<super::LaunchV1>,
    }

    impl KnownEntry {
        /// The core entry, when every id is valid; `None` leaves the entry to the general path.
        fn into_entry(self, surface: &str) -> Option<Entry> {
            Some(Entry {
                surface: SurfaceId::new(surface).ok()?,
                session: SessionId::new(self.session_id).ok()?,
                repo: Repo::new(self.repo).ok()?,
                role: match self.role.filter(|role| !role.is_empty()) {
                    Some(role) => Some(Role::new(role).ok()?),
                    None => None,
                },
                captured_at: self.captured_at,
                last_active: self.last_active,
                agent: match self.provider {
                    Some(provider) => Some(AgentName::new(provider).ok()?),
                    None => None,
                },
                cwd: self.cwd,
                config_dir: self.config_dir,
                previous_sessions: self
                    .previous_sessions
                    .unwrap_or_default()
                    .into_iter()
                    .map(|id| SessionId::new(id).ok())
                    .collect::<Option<_>>()?,
                ended_at: self.ended_at,
                restore_claimed_at: self.restore_claimed_at,
                restore_claimed_by: self.restore_claimed_by.map(Claimant::from),
                window_layout: self.window_layout,
                boot_id: self.boot_id,
                launch: self.launch.map(index_core::Launch::from),
                unknown_fields: Map::new(),
            })
        }
    }

    /// The top level's `entries` object as members, when the file is an ordinary version 1
    /// file: no key twice, a version this build reads.
    fn entry_members(bytes: &[u8]) -> Option<(Vec<(String, &RawValue)>, &RawValue)> {
        let top: RawObject<'_> = serde_json::from_slice(bytes).ok()?;
        let mut keys = HashSet::with_capacity(top.0.len());
        if !top.0.iter().all(|(key, _)| keys.insert(key.as_str())) {
            return None;
        }
        let mut entries = None;
        for (key, raw) in top.0 {
            match key.as_str() {
                "version" if serde_json::from_str::<u64>(raw.get()).ok()? > FORMAT_VERSION => {
                    return None;
                }
                "entries" => entries = Some(raw),
                _ => {}
            }
        }
        let raw = entries?;
        let members = serde_json::from_str::<RawObject<'_>>(raw.get()).ok()?.0;
        let mut surfaces = HashSet::with_capacity(members.len());
        members
            .iter()
            .all(|(surface, _)| surfaces.insert(surface.as_str()))
            .then_some((members, raw))
    }

    pub(super) fn parse_one(bytes: &[u8], surface: &str) -> Option<Option<Entry>> {
        let (members, raw_entries) = entry_members(bytes)?;
        let Some((_, raw)) = members.into_iter().find(|(name, _)| name == surface) else {
            return Some(None);
        };
        let entry = serde_json::from_str::<KnownEntry>(raw.get())
            .ok()?
            .into_entry(surface)?;
        // The session id written once in the whole entries object (and no `\u` escape that
        // could spell it differently): no other entry can hold it.
        let text = raw_entries.get();
        let needle = serde_json::to_string(entry.session.as_str()).ok()?;
        (!text.contains("\\u") && text.matches(needle.as_str()).count() == 1).then_some(Some(entry))
    }

    pub(super) fn parse(bytes: &[u8]) -> Option<Result<Document, ParseError>> {
        let top: RawObject<'_> = serde_json::from_slice(bytes).ok()?;
        // A key named twice: the general path decides which one counts.
        let mut keys = HashSet::with_capacity(top.0.len());
        if !top.0.iter().all(|(key, _)| keys.insert(key.as_str())) {
            return None;
        }
        let mut document = Document::default();
        let mut raw_entries = None;
        let mut has_version = false;
        for (key, raw) in top.0 {
            match key.as_str() {
                "version" => match serde_json::from_str::<u64>(raw.get()).ok()? {
                    version if version > FORMAT_VERSION => {
                        return Some(Err(ParseError::NewerVersion(version)));
                    }
                    _ => has_version = true,
                },
                "entries" => raw_entries = Some(raw),
                _ => {
                    let value: Value = serde_json::from_str(raw.get()).ok()?;
                    document.unknown_fields.insert(key, value);
                }
            }
        }
        // Neither member: not an index, which the general path says.
        if !has_version && raw_entries.is_none() {
            return None;
        }
        let members = match raw_entries {
            None => Vec::new(),
            Some(raw) if raw.get() == "null" => Vec::new(),
            Some(raw) => serde_json::from_str::<RawObject<'_>>(raw.get()).ok()?.0,
        };
        // A surface named twice: the general path decides which one counts.
        let mut surfaces = HashSet::with_capacity(members.len());
        if !members
            .iter()
            .all(|(surface, _)| surfaces.insert(surface.as_str()))
        {
            return None;
        }
        let mut entries = Vec::with_capacity(members.len());
        for (surface, raw) in members {
            let known = serde_json::from_str::<KnownEntry>(raw.get())
                .ok()
                .and_then(|known| known.into_entry(&surface));
            match known {
                Some(entry) => entries.push(entry),
                None => {
                    let value: Value = serde_json::from_str(raw.get()).ok()?;
                    add_entry(&mut document, &mut entries, surface, value);
                }
            }
        }
        Some(finish(document, entries))
    }
}
