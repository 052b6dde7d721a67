//! The write path of a change that touches a few entries ([`crate::Store::update_entries`]):
//! the file is validated with the skipping parser, only the entries in the change's scope are
//! parsed into an [`Index`], and every other entry is copied into the new file as the text it
//! was. The result is the file the full path (parse everything, change, serialize everything)
//! writes: byte for byte when the file was written by us, else an index that parses the same.
//!
//! Anything this path cannot be sure of is left to the full path: a file that is not an
//! ordinary version 1 file of `version` and `entries` alone (a damaged file, a newer version,
//! top-level fields of someone else's, a key or surface named twice), an entry it cannot read
//! as usable (it would be reported as unusable), an entry without `last_active` (the full path
//! writes one), a field this version knows but this path does not check, a string with an
//! escape, a session held twice, or a change that reached beyond its scope.

use std::collections::HashSet;
use std::fmt;

use index_core::{IdKind, Index, Value};
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::format::{self, Document, FORMAT_VERSION, RawObject, field};

/// The entries a change reads and writes: the entries of these surfaces, and those holding
/// these sessions (for the one-surface-per-session rule).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'s> {
    /// The surfaces whose entries the change may read, change or create.
    pub surfaces: &'s [&'s str],
    /// The sessions the change may bind, whose holders it may drop.
    pub sessions: &'s [&'s str],
}

/// An index file split for a change in a [`Scope`]: the entries in scope parsed, the others
/// kept as their text.
pub(crate) struct Split<'a> {
    /// The entries in scope, parsed.
    pub(crate) index: Index,
    /// The surfaces of the entries in scope.
    loaded: HashSet<&'a str>,
    /// The entries out of scope: surface and raw text.
    kept: Vec<(&'a str, &'a RawValue)>,
    /// The sessions the kept entries hold.
    kept_sessions: HashSet<&'a str>,
}

/// Splits `bytes` for a change in `scope`; `None` leaves the file to the full path.
pub(crate) fn split<'a>(bytes: &'a [u8], scope: Scope<'_>) -> Option<Split<'a>> {
    let top: RawObject<'a> = serde_json::from_slice(bytes).ok()?;
    // Exactly `version` (this version) and `entries`, in any order.
    if top.0.len() != 2 {
        return None;
    }
    let mut raw_entries = None;
    let mut version = None;
    for (key, raw) in &top.0 {
        match key.as_str() {
            "version" if version.is_none() => {
                version = Some(serde_json::from_str::<u64>(raw.get()).ok()?);
            }
            "entries" if raw_entries.is_none() => raw_entries = Some(*raw),
            _ => return None,
        }
    }
    if version? != FORMAT_VERSION {
        return None;
    }
    let members = borrowed_members(raw_entries?.get())?;
    let mut surfaces = HashSet::with_capacity(members.len());
    let mut sessions = HashSet::with_capacity(members.len());
    let mut loaded = HashSet::new();
    let mut kept = Vec::with_capacity(members.len());
    let mut kept_sessions = HashSet::with_capacity(members.len());
    let mut entries = Vec::new();
    for (surface, raw) in members {
        if !surfaces.insert(surface) {
            return None;
        }
        let session = usable_session(surface, raw.get())?;
        if !sessions.insert(session) {
            return None;
        }
        if scope.surfaces.contains(&surface) || scope.sessions.contains(&session) {
            let value: Value = serde_json::from_str(raw.get()).ok()?;
            entries.push(format::entry_from_json(surface, value).ok()?);
            loaded.insert(surface);
        } else {
            kept.push((surface, raw));
            kept_sessions.insert(session);
        }
    }
    let (index, conflicts) = Index::from_entries(entries);
    if !conflicts.is_empty() {
        return None;
    }
    Some(Split {
        index,
        loaded,
        kept,
        kept_sessions,
    })
}

/// What [`join`] makes of a change: the new file, and the change itself, which the entries of
/// the scope after it and the surfaces it dropped say exactly.
pub(crate) struct Joined {
    /// The new file.
    pub(crate) bytes: Vec<u8>,
    /// The entries in scope after the change, each as the new file holds it.
    pub(crate) set: Vec<(String, Box<RawValue>)>,
    /// The surfaces loaded in scope that the change dropped.
    pub(crate) removed: Vec<String>,
}

/// The new file: the kept entries as they were and the changed index's entries, sorted by
/// surface, laid out as [`format::serialize`] lays them out. `None` when the change reached
/// beyond its scope (an entry of a surface or a session it did not load), which only the full
/// path can apply.
pub(crate) fn join(split: &Split<'_>, changed: &Index) -> Option<Joined> {
    let kept_surfaces: HashSet<&str> = split.kept.iter().map(|(surface, _)| *surface).collect();
    for entry in changed.entries() {
        let surface = entry.surface.as_str();
        if !split.loaded.contains(surface) && kept_surfaces.contains(surface) {
            return None;
        }
        if split.kept_sessions.contains(entry.session.as_str()) {
            return None;
        }
    }
    // The changed entries serialized as the full path does, at the same depth, then cut out.
    let written = format::serialize(&Document {
        index: changed.clone(),
        ..Document::default()
    });
    let top: RawObject<'_> = serde_json::from_slice(&written).ok()?;
    let (_, raw) = top.0.into_iter().find(|(key, _)| key == "entries")?;
    let fresh = borrowed_members(raw.get())?;
    let set: Vec<(String, Box<RawValue>)> = fresh
        .iter()
        .map(|(surface, raw)| (surface.to_string(), (*raw).to_owned()))
        .collect();
    let mut removed: Vec<String> = split
        .loaded
        .iter()
        .filter(|surface| changed.lookup(surface).is_none())
        .map(|surface| surface.to_string())
        .collect();
    removed.sort_unstable();
    let mut all: Vec<(&str, &RawValue)> = Vec::with_capacity(split.kept.len() + fresh.len());
    all.extend(split.kept.iter().copied());
    all.extend(fresh);
    all.sort_unstable_by(|a, b| a.0.cmp(b.0));

    let size = all
        .iter()
        .map(|(s, raw)| s.len() + raw.get().len() + 16)
        .sum::<usize>();
    let mut bytes = Vec::with_capacity(size + 64);
    bytes.extend_from_slice(
        format!("{{\n  \"version\": {FORMAT_VERSION},\n  \"entries\": ").as_bytes(),
    );
    if all.is_empty() {
        bytes.extend_from_slice(b"{}");
    } else {
        bytes.push(b'{');
        for (at, (surface, raw)) in all.iter().enumerate() {
            if at > 0 {
                bytes.push(b',');
            }
            bytes.extend_from_slice(b"\n    ");
            serde_json::to_writer(&mut bytes, surface).ok()?;
            bytes.extend_from_slice(b": ");
            bytes.extend_from_slice(raw.get().as_bytes());
        }
        bytes.extend_from_slice(b"\n  }");
    }
    bytes.extend_from_slice(b"\n}\n");
    Some(Joined {
        bytes,
        set,
        removed,
    })
}

/// An object's members, keys borrowed (a key with an escape sends the file to the full path).
fn borrowed_members(text: &str) -> Option<Vec<(&str, &RawValue)>> {
    if text == "null" {
        return None;
    }
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(&'de str, &'de RawValue)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(member) = map.next_entry::<&'de str, &'de RawValue>()? {
                members.push(member);
            }
            Ok(members)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let members = serde::Deserializer::deserialize_map(&mut deserializer, Members).ok()?;
    deserializer.end().ok()?;
    Some(members)
}

/// The session of an entry the full path reads as usable and writes back as a text that
/// parses the same (its `last_active` written, every field of this version well typed), read
/// without allocating; `None` for any other entry.
fn usable_session<'a>(surface: &str, raw: &'a str) -> Option<&'a str> {
    index_core::validate(IdKind::Surface, surface).ok()?;
    let mut deserializer = serde_json::Deserializer::from_str(raw);
    let checked = serde::Deserializer::deserialize_map(&mut deserializer, Checked).ok()?;
    deserializer.end().ok()?;
    checked
}

/// The visitor of [`usable_session`]: `Ok(None)` for an entry this path leaves alone.
struct Checked;

/// The fields [`Checked`] reads, in [`field::KNOWN`]'s order.
const CHECKED: [&str; 16] = [
    field::SURFACE,
    field::SESSION,
    field::REPO,
    field::ROLE,
    field::CAPTURED_AT,
    field::LAST_ACTIVE,
    field::PROVIDER,
    field::CWD,
    field::CONFIG_DIR,
    field::PREVIOUS_SESSIONS,
    field::ENDED_AT,
    field::RESTORE_CLAIMED_AT,
    field::RESTORE_CLAIMED_BY,
    field::WINDOW_LAYOUT,
    field::BOOT_ID,
    field::LAUNCH,
];

impl<'de> Visitor<'de> for Checked {
    type Value = Option<&'de str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an index entry")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = [false; CHECKED.len()];
        let mut session = None;
        let mut repo = false;
        let mut captured_at = false;
        let mut last_active = false;
        while let Some(key) = map.next_key::<&'de str>()? {
            let Some(at) = CHECKED.iter().position(|name| *name == key) else {
                // A field this version knows that is not checked here: the full path reads it.
                if field::KNOWN.contains(&key) {
                    return Ok(None);
                }
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if std::mem::replace(&mut seen[at], true) {
                return Ok(None);
            }
            let fine = match key {
                // Neither is read by the full path: it writes the surface from the key, and a
                // claimant that does not read as one is no claimant either way. A launch is read
                // as one or kept as it was: copied, it reads the same.
                field::SURFACE | field::RESTORE_CLAIMED_BY | field::LAUNCH => {
                    map.next_value::<IgnoredAny>()?;
                    true
                }
                field::SESSION => {
                    let value = map.next_value::<&'de str>()?;
                    session = Some(value);
                    index_core::validate(IdKind::Session, value).is_ok()
                }
                field::REPO => {
                    repo = true;
                    index_core::validate(IdKind::Repo, map.next_value::<&'de str>()?).is_ok()
                }
                field::ROLE => match map.next_value::<Option<&'de str>>()? {
                    Some(role) if !role.is_empty() => {
                        index_core::validate(IdKind::Role, role).is_ok()
                    }
                    _ => true,
                },
                field::PROVIDER => match map.next_value::<Option<&'de str>>()? {
                    Some(agent) => index_core::validate(IdKind::Agent, agent).is_ok(),
                    None => true,
                },
                field::CAPTURED_AT => {
                    map.next_value::<u64>()?;
                    captured_at = true;
                    true
                }
                field::LAST_ACTIVE => {
                    map.next_value::<u64>()?;
                    last_active = true;
                    true
                }
                field::ENDED_AT | field::RESTORE_CLAIMED_AT => {
                    map.next_value::<Option<u64>>()?;
                    true
                }
                field::CWD | field::CONFIG_DIR | field::WINDOW_LAYOUT | field::BOOT_ID => {
                    map.next_value::<Option<&'de str>>()?;
                    true
                }
                field::PREVIOUS_SESSIONS => map
                    .next_value::<Option<SessionIds>>()?
                    .is_none_or(|ids| ids.0),
                _ => false,
            };
            if !fine {
                return Ok(None);
            }
        }
        Ok(session.filter(|_| repo && captured_at && last_active))
    }
}

/// A `previous_sessions` list whose ids are all valid.
struct SessionIds(bool);

impl<'de> serde::Deserialize<'de> for SessionIds {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Ids;
        impl<'de> Visitor<'de> for Ids {
            type Value = SessionIds;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of session ids")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SessionIds, A::Error> {
                let mut valid = true;
                while let Some(id) = seq.next_element::<&'de str>()? {
                    valid &= index_core::validate(IdKind::Session, id).is_ok();
                }
                Ok(SessionIds(valid))
            }
        }
        deserializer.deserialize_seq(Ids)
    }
}
