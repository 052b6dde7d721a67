//! The scoped write of `Store::update_entries` (a record parses only the entries it touches
//! and copies every other as it was) against the full path of `Store::update`: over random
//! files (ours, the JavaScript tool's layout, damaged, with unusable entries, sessions held
//! twice, unknown fields) and random records, both give the same index, warnings and
//! outcome, and byte for byte the same file when the file was written by us.

use index_core::{Record, Value};
use index_store::{Scope, Store, StoreError, Updated, format};
use proptest::prelude::*;
use serde_json::json;

use crate::{rec, store_at, temp_dir};

const SURFACES: [&str; 5] = ["a", "b", "cmux-7", "tmux:%1", "é"];
const SESSIONS: [&str; 5] = ["s1", "s2", "s3", "-s", "s\"q"];

/// Mostly valid session ids; one that is not, one written with an escape.
fn session() -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => proptest::sample::select(&SESSIONS[..3]), 1 => Just(SESSIONS[3]), 1 => Just(SESSIONS[4])]
}

fn millis() -> impl Strategy<Value = Value> {
    prop_oneof![
        16 => (0..4_000_000_000_000u64).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => (0.0..4e12f64).prop_map(Value::from),
    ]
}

/// An entry as we, the JavaScript tool, or a damaged disk could leave it.
fn entry() -> impl Strategy<Value = (String, Value)> {
    (
        proptest::sample::select(SURFACES.to_vec()),
        session(),
        prop_oneof![8 => Just(Value::from("repo")), 1 => Just(Value::from("")), 1 => Just(json!(3))],
        millis(),
        proptest::option::of(millis()),
        proptest::option::of(prop_oneof![Just("claude"), Just("codex"), Just("")]),
        proptest::option::of("[a-z/ ]{0,6}"),
        proptest::collection::vec(session(), 0..3),
        proptest::option::of(prop_oneof![
            Just(("from_the_future", json!({"note": 1}))),
            Just(("ended_at", json!(5))),
            Just(("restore_claimed_by", json!({"pid": 4, "started": 5}))),
            Just(("restore_claimed_by", json!("x"))),
            Just(("role", json!("lead"))),
            Just(("window_layout", json!(7))),
            Just(("launch", json!({"args": ["--model", "o\"pus"], "env": {"M": "a b"}}))),
            Just(("launch", json!({}))),
            Just(("launch", json!(null))),
            Just(("launch", json!({"args": "--model", "from_the_future": 1}))),
        ]),
    )
        .prop_map(
            |(surface, session, repo, captured, last, provider, cwd, earlier, extra)| {
                let mut entry = json!({
                    "surfaceId": surface, "sessionId": session, "repo": repo,
                    "captured_at": captured,
                });
                let object = entry.as_object_mut().unwrap();
                if let Some(last) = last {
                    object.insert("last_active".into(), last);
                }
                if let Some(provider) = provider {
                    object.insert("provider".into(), provider.into());
                }
                if let Some(cwd) = cwd {
                    object.insert("cwd".into(), cwd.into());
                }
                if !earlier.is_empty() {
                    object.insert("previous_sessions".into(), earlier.into());
                }
                if let Some((name, value)) = extra {
                    object.insert(name.into(), value);
                }
                (surface.to_string(), entry)
            },
        )
}

/// A file's bytes: written by us (the full path's own serialization), pretty or compact as
/// another writer lays it out, or cut short.
fn file() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(entry(), 0..6),
        proptest::option::weighted(0.15, Just(json!("someone"))),
        0..4u8,
        0..200usize,
    )
        .prop_map(|(entries, unknown, layout, cut)| {
            let entries: serde_json::Map<String, Value> = entries.into_iter().collect();
            let mut document = json!({ "version": 1, "entries": entries });
            if let Some(unknown) = unknown {
                document["written_by"] = unknown;
            }
            let pretty = serde_json::to_vec_pretty(&document).unwrap();
            match layout {
                0 => match format::parse(&pretty) {
                    Ok(parsed) => format::serialize(&parsed),
                    Err(_) => pretty,
                },
                1 => pretty,
                2 => serde_json::to_vec(&document).unwrap(),
                _ => pretty[..cut.min(pretty.len())].to_vec(),
            }
        })
}

fn record() -> impl Strategy<Value = Record> {
    (
        proptest::sample::select(SURFACES.to_vec()),
        proptest::sample::select(&SESSIONS[..3]),
        proptest::option::of(Just("/w".to_string())),
        proptest::option::of(prop_oneof![
            Just(index_core::Launch::default()),
            Just(index_core::Launch {
                args: vec!["--model".into(), "opus".into()],
                env: [("ANTHROPIC_MODEL".to_string(), "x y".to_string())].into(),
                wrapper: None,
            }),
        ]),
    )
        .prop_map(|(surface, session, cwd, launch)| {
            let mut record = rec(surface, session, "repo");
            record.cwd = cwd;
            record.launch = launch;
            record
        })
}

fn scoped(store: &Store, record: &Record, now: u64) -> Result<Updated<Value>, StoreError> {
    let scope = Scope {
        surfaces: &[record.surface.as_str()],
        sessions: &[record.session.as_str()],
    };
    store.update_entries(scope, |index| {
        let recorded = index.record(record.clone(), now);
        json!(format!(
            "{recorded:?} {:?}",
            index.lookup(record.surface.as_str())
        ))
    })
}

fn full(store: &Store, record: &Record, now: u64) -> Result<Updated<Value>, StoreError> {
    store.update(|index| {
        let recorded = index.record(record.clone(), now);
        json!(format!(
            "{recorded:?} {:?}",
            index.lookup(record.surface.as_str())
        ))
    })
}

/// A warning with the store's own dir taken out, so two stores' warnings compare.
fn warnings(updated: &Updated<Value>, dir: &str) -> Vec<String> {
    let mut said: Vec<String> = updated
        .warnings
        .iter()
        .map(|warning| format!("{warning:?}").replace(dir, "<dir>"))
        .collect();
    // The kept corrupt file is named by the time.
    said.iter_mut().for_each(|text| {
        if let Some(at) = text.find(".corrupt-") {
            text.truncate(at);
        }
    });
    said
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Each record of a sequence gives, through the scoped path, the index, warnings and
    /// outcome the full path gives, and the same bytes whenever the file was ours.
    #[test]
    fn a_scoped_record_gives_what_the_full_path_gives(
        bytes in file(),
        records in proptest::collection::vec(record(), 1..4),
    ) {
        let (_scoped_guard, scoped_dir) = temp_dir();
        let (_full_guard, full_dir) = temp_dir();
        let scoped_path = scoped_dir.join("index.json");
        let full_path = full_dir.join("index.json");
        std::fs::write(&scoped_path, &bytes).unwrap();
        std::fs::write(&full_path, &bytes).unwrap();
        let scoped_store = store_at(&scoped_path);
        let full_store = store_at(&full_path);
        for (n, record) in records.iter().enumerate() {
            let now = 1_800_000_000_000 + n as u64;
            let before = std::fs::read(&scoped_path).unwrap_or_default();
            let ours = before == std::fs::read(&full_path).unwrap_or_default()
                && format::parse(&before).is_ok_and(|parsed| format::serialize(&parsed) == before);
            let (a, b) = (scoped(&scoped_store, record, now), full(&full_store, record, now));
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    prop_assert_eq!(&a.value, &b.value);
                    prop_assert_eq!(
                        warnings(&a, scoped_dir.as_str()),
                        warnings(&b, full_dir.as_str())
                    );
                    let (after_a, after_b) =
                        (std::fs::read(&scoped_path).unwrap(), std::fs::read(&full_path).unwrap());
                    let (parsed_a, parsed_b) =
                        (format::parse(&after_a).unwrap(), format::parse(&after_b).unwrap());
                    prop_assert_eq!(&parsed_a.index, &parsed_b.index);
                    prop_assert_eq!(&parsed_a.unusable, &parsed_b.unusable);
                    prop_assert_eq!(&parsed_a.unknown_fields, &parsed_b.unknown_fields);
                    if ours {
                        prop_assert_eq!(a.written, b.written);
                        prop_assert_eq!(
                            String::from_utf8_lossy(&after_a),
                            String::from_utf8_lossy(&after_b)
                        );
                    }
                }
                (Err(a), Err(b)) => {
                    prop_assert_eq!(std::mem::discriminant(&a), std::mem::discriminant(&b));
                    break;
                }
                (a, b) => prop_assert!(false, "scoped {:?}, full {:?}", a.map(|a| a.value), b.map(|b| b.value)),
            }
        }
    }
}

/// An entry the record does not touch is copied as it was, in whatever layout (the full path
/// rewrites it in ours); the entry recorded is written as the full path writes it.
#[test]
fn an_entry_out_of_scope_is_copied_as_it_was() {
    let (_guard, dir) = temp_dir();
    let path = dir.join("index.json");
    let untouched =
        r#"{"sessionId": "s1", "repo": "r", "captured_at": 1, "last_active": 2, "note": [1,2]}"#;
    std::fs::write(
        &path,
        format!("{{\"version\": 1, \"entries\": {{\"a\": {untouched}}}}}"),
    )
    .unwrap();
    let store = store_at(&path);
    let updated = scoped(&store, &rec("b", "s2", "repo"), 5).unwrap();
    assert!(updated.written);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("\"a\": {untouched}")), "{text}");
    let parsed = format::parse(text.as_bytes()).unwrap();
    assert_eq!(parsed.index.lookup("b").unwrap().session.as_str(), "s2");
    assert_eq!(parsed.index.lookup("a").unwrap().session.as_str(), "s1");
    // The full path gives the same index.
    let (_full_guard, full_dir) = temp_dir();
    let full_path = full_dir.join("index.json");
    std::fs::write(
        &full_path,
        format!("{{\"version\": 1, \"entries\": {{\"a\": {untouched}}}}}"),
    )
    .unwrap();
    full(&store_at(&full_path), &rec("b", "s2", "repo"), 5).unwrap();
    let full_text = std::fs::read_to_string(&full_path).unwrap();
    assert!(!full_text.contains(untouched));
    assert_eq!(
        format::parse(full_text.as_bytes()).unwrap().index,
        parsed.index
    );
}

/// A record of a session another surface holds drops that surface's entry, as the full path
/// does (the one-surface-per-session rule reaches the holder through the scope).
#[test]
fn a_session_moved_from_another_surface_drops_its_entry() {
    let (_guard, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = store_at(&path);
    for (surface, session) in [("a", "s1"), ("b", "s2"), ("c", "s3")] {
        full(&store, &rec(surface, session, "repo"), 1).unwrap();
    }
    let updated = scoped(&store, &rec("c", "s1", "repo"), 2).unwrap();
    assert!(updated.written);
    let index = store.load().unwrap().index;
    assert!(index.lookup("a").is_none());
    assert_eq!(index.lookup("b").unwrap().session.as_str(), "s2");
    assert_eq!(index.lookup("c").unwrap().session.as_str(), "s1");
}
