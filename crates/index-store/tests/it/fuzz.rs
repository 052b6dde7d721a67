//! Bounded fuzzing of the loader: arbitrary bytes, and near-valid mutations of a real index
//! (truncations, bit flips, wrong types per field, huge numbers, deep nesting), against
//! `format::parse` and `Store::load`/`Store::update`.
//!
//! - Neither ever panics.
//! - What parses is rewritten stably, keeping unusable entries and unknown fields.
//! - A file the loader cannot parse is never overwritten. One that is not recognisably an index
//!   of ours is refused and left as it was; a damaged one of ours is read from the backup (or
//!   as empty) without a write, and the next write keeps its bytes in `index.json.corrupt-*`.
//! - A file of a newer version is refused and left untouched.

use std::fs;

use camino::Utf8Path;
use index_core::{Index, Value};
use index_store::format::{self, ParseError};
use index_store::{Store, StoreError, StoreOptions, Warning};
use proptest::prelude::*;
use proptest::sample::Index as Pick;
use serde_json::json;

use crate::{rec, temp_dir};

const NOW: u64 = 1_700_000_000_000;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z0-9:._-]{1,10}",
        1 => "[ \\t]{0,2}[a-zé☃%\\\\\"]{0,4}",
        1 => Just(String::new()),
    ]
}

fn millis() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (0..4_000_000_000_000u64).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => (0.0..4e12f64).prop_map(Value::from),
    ]
}

/// One entry as the JavaScript tool or this one writes it, with optional fields and a field
/// neither knows.
fn entry() -> impl Strategy<Value = (String, Value)> {
    (
        text(),
        text(),
        text(),
        proptest::option::of(text()),
        millis(),
        proptest::option::of(millis()),
        proptest::option::of(prop_oneof![Just("claude"), Just("codex")]),
        proptest::option::of(text()),
        proptest::collection::vec(text(), 0..3),
        proptest::option::of(text()),
    )
        .prop_map(
            |(surface, session, repo, role, captured, last, provider, cwd, earlier, extra)| {
                let mut entry = json!({
                    "surfaceId": surface, "sessionId": session, "repo": repo, "role": role,
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
                if let Some(extra) = extra {
                    object.insert("from_the_future".into(), json!({ "note": extra }));
                }
                (surface, entry)
            },
        )
}

fn valid_document() -> impl Strategy<Value = Value> {
    (
        proptest::collection::vec(entry(), 0..5),
        proptest::option::of(text()),
    )
        .prop_map(|(entries, unknown)| {
            let entries: serde_json::Map<String, Value> = entries.into_iter().collect();
            let mut document = json!({ "version": 1, "entries": entries });
            if let Some(unknown) = unknown {
                document["written_by"] = unknown.into();
            }
            document
        })
}

/// A value of a type no field expects, or at the edge of what it expects.
fn junk() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(1e300)),
        Just(json!(-1e300)),
        Just(json!("")),
        Just(json!("   ")),
        Just(json!("a\u{0}b")),
        Just(json!("x".repeat(600))),
        Just(json!([])),
        Just(json!([1, "a", null])),
        Just(json!({})),
        Just(json!({ "a": { "b": [] } })),
        (0usize..200).prop_map(nested),
    ]
}

/// Arrays nested `depth` deep (past 128 the JSON reader refuses them).
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| json!([inner]))
}

/// Numbers a JavaScript writer or a damaged disk could leave in place of a timestamp.
const RAW_NUMBERS: [&str; 7] = [
    "18446744073709551616",
    "123456789012345678901234567890",
    "1e400",
    "-0",
    "1E2",
    "0.000001",
    "-18446744073709551617",
];

#[derive(Debug, Clone)]
enum Mutation {
    None,
    /// Cut the file short.
    Truncate(Pick),
    /// Flip one bit.
    FlipBit(Pick, u8),
    /// Give one field of one entry a value of the wrong type.
    Field(Pick, &'static str, Value),
    /// Give a top-level field a value of the wrong type.
    TopLevel(&'static str, Value),
    /// Replace a whole entry.
    Entry(Pick, Value),
    /// Replace a number in the text with a huge or odd one.
    RawNumber(Pick, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let field = proptest::sample::select(
        [
            "surfaceId",
            "sessionId",
            "repo",
            "role",
            "captured_at",
            "last_active",
            "provider",
            "cwd",
            "config_dir",
            "previous_sessions",
            "ended_at",
            "restore_claimed_at",
            "window_layout",
        ]
        .to_vec(),
    );
    prop_oneof![
        1 => Just(Mutation::None),
        3 => any::<Pick>().prop_map(Mutation::Truncate),
        3 => (any::<Pick>(), 0..8u8).prop_map(|(at, bit)| Mutation::FlipBit(at, bit)),
        6 => (any::<Pick>(), field, junk()).prop_map(|(at, field, value)| Mutation::Field(at, field, value)),
        2 => (proptest::sample::select(vec!["version", "entries"]), junk())
            .prop_map(|(field, value)| Mutation::TopLevel(field, value)),
        1 => (any::<Pick>(), junk()).prop_map(|(at, value)| Mutation::Entry(at, value)),
        2 => (any::<Pick>(), proptest::sample::select(RAW_NUMBERS.to_vec()))
            .prop_map(|(at, number)| Mutation::RawNumber(at, number)),
    ]
}

fn apply(mut document: Value, mutation: &Mutation) -> Vec<u8> {
    let nth_entry = |document: &mut Value, at: &Pick| -> Option<String> {
        let entries = document["entries"].as_object()?;
        (!entries.is_empty()).then(|| entries.keys().nth(at.index(entries.len())).unwrap().clone())
    };
    match mutation {
        Mutation::Field(at, field, value) => {
            if let Some(surface) = nth_entry(&mut document, at) {
                document["entries"][&surface][*field] = value.clone();
            }
        }
        Mutation::TopLevel(field, value) => document[*field] = value.clone(),
        Mutation::Entry(at, value) => {
            if let Some(surface) = nth_entry(&mut document, at) {
                document["entries"][&surface] = value.clone();
            }
        }
        _ => {}
    }
    let mut bytes = serde_json::to_vec_pretty(&document).unwrap();
    match mutation {
        Mutation::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
        Mutation::FlipBit(at, bit) => {
            let at = at.index(bytes.len());
            bytes[at] ^= 1 << bit;
        }
        Mutation::RawNumber(at, number) => {
            let text = String::from_utf8(bytes.clone()).unwrap();
            let starts: Vec<usize> = text
                .match_indices(": ")
                .map(|(at, _)| at + 2)
                .filter(|&at| text.as_bytes().get(at).is_some_and(u8::is_ascii_digit))
                .collect();
            if !starts.is_empty() {
                let start = starts[at.index(starts.len())];
                let end = start
                    + text[start..]
                        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                        .unwrap_or(text.len() - start);
                bytes = format!("{}{number}{}", &text[..start], &text[end..]).into_bytes();
            }
        }
        _ => {}
    }
    bytes
}

fn near_valid() -> impl Strategy<Value = Vec<u8>> {
    (valid_document(), mutation()).prop_map(|(document, mutation)| apply(document, &mutation))
}

/// Any input: random bytes, random text, or a near-valid index.
fn any_index_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..200),
        1 => "\\PC{0,80}".prop_map(String::into_bytes),
        4 => near_valid(),
    ]
}

/// Parsing never panics; what parses is rewritten to bytes that parse back to themselves.
fn check_parse(bytes: &[u8]) -> Result<(), TestCaseError> {
    match format::parse(bytes) {
        Ok(document) => {
            let written = format::serialize(&document);
            let reread = format::parse(&written);
            prop_assert!(reread.is_ok(), "a rewrite does not parse: {:?}", reread);
            let reread = reread.unwrap();
            prop_assert_eq!(&reread.unusable, &document.unusable);
            prop_assert_eq!(&reread.unknown_fields, &document.unknown_fields);
            prop_assert_eq!(format::serialize(&reread), written);
        }
        Err(ParseError::NewerVersion(version)) => prop_assert!(version > format::FORMAT_VERSION),
        Err(ParseError::Corrupt(reason)) => prop_assert!(!reason.is_empty()),
    }
    Ok(())
}

/// The file names in `dir`, sorted, but the lock file (which any write attempt creates and which
/// is never removed).
fn names_in(dir: &Utf8Path) -> Vec<String> {
    let mut names: Vec<String> = dir
        .read_dir_utf8()
        .unwrap()
        .map(|item| item.unwrap().file_name().to_string())
        .filter(|name| name != "index.json.lock" && name != "index.json.flock")
        .collect();
    names.sort();
    names
}

/// Loads `bytes` as an index file (with a good backup, or none), then updates it: never a panic,
/// never an overwritten file that did not parse, nothing known or unknown dropped.
fn check_store(bytes: &[u8], with_backup: bool) -> Result<(), TestCaseError> {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    let mut backup_index = Index::default();
    if with_backup {
        store
            .update(|index| index.record(rec("backed-up", "s-backed-up", "repo"), NOW))
            .unwrap();
        fs::copy(&path, store.backup_path()).unwrap();
        fs::remove_file(&path).unwrap();
        backup_index.record(rec("backed-up", "s-backed-up", "repo"), NOW);
    }
    fs::write(&path, bytes).unwrap();
    let files_before = names_in(&dir);

    let parsed = format::parse(bytes);
    let loaded = store.load();
    match parsed {
        Ok(document) => {
            let snapshot = loaded.unwrap();
            prop_assert_eq!(&snapshot.index, &document.index);
            prop_assert_eq!(
                fs::read(&path).unwrap(),
                bytes,
                "loading a good file wrote it"
            );
            prop_assert_eq!(names_in(&dir), files_before);

            // An update keeps every entry it cannot use and every field it does not know.
            store
                .update(|index| index.record(rec("fuzz-new", "s-fuzz-new", "repo"), NOW))
                .unwrap();
            let mut expected = document;
            expected
                .index
                .record(rec("fuzz-new", "s-fuzz-new", "repo"), NOW);
            expected.unusable.remove("fuzz-new");
            let written = String::from_utf8(fs::read(&path).unwrap()).unwrap();
            let expected = String::from_utf8(format::serialize(&expected)).unwrap();
            prop_assert_eq!(written, expected);
        }
        Err(ParseError::NewerVersion(found)) => {
            let refused =
                matches!(loaded, Err(StoreError::NewerVersion { found: f, .. }) if f == found);
            prop_assert!(refused, "{:?}", loaded);
            let update = store.update(|index| index.touch("x", NOW));
            prop_assert!(
                matches!(update, Err(StoreError::NewerVersion { .. })),
                "{:?}",
                update
            );
            prop_assert_eq!(fs::read(&path).unwrap(), bytes, "a newer file was touched");
            prop_assert_eq!(names_in(&dir), files_before);
        }
        // Not an index, nor recognisably a damaged one of ours: refused by reads and writes,
        // and left exactly as it was.
        Err(ParseError::Corrupt(_)) if !with_backup && !format::begins_as_index(bytes) => {
            prop_assert!(
                matches!(loaded, Err(StoreError::NotAnIndex { .. })),
                "{:?}",
                loaded
            );
            let update = store.update(|index| index.touch("x", NOW));
            prop_assert!(
                matches!(update, Err(StoreError::NotAnIndex { .. })),
                "{:?}",
                update
            );
            prop_assert_eq!(
                fs::read(&path).unwrap(),
                bytes,
                "a foreign file was touched"
            );
            prop_assert_eq!(names_in(&dir), files_before);
        }
        // A damaged index of ours: a read uses the backup (or an empty index), with the
        // entries a file that begins as an index still holds whole over it, and writes
        // nothing; the next write keeps the file aside as it was and repairs the index.
        Err(ParseError::Corrupt(_)) => {
            // What is read, and what the repair writes (read back as any later read sees it).
            let mut repaired_index = backup_index.clone();
            if format::begins_as_index(bytes) {
                let backup = format::Document {
                    index: backup_index,
                    ..format::Document::default()
                };
                let merged = format::merge_salvaged(backup, format::salvage(bytes));
                backup_index = merged.index.clone();
                repaired_index = format::parse(&format::serialize(&merged)).unwrap().index;
            }
            // Besides the damage, the entries it holds whole that cannot be used are named.
            let only_problems =
                |rest: &[Warning]| rest.iter().all(|w| matches!(w, Warning::Problem { .. }));
            let snapshot = loaded.unwrap();
            let read_from_backup = match &snapshot.warnings[..] {
                [Warning::Damaged { from_backup, .. }, rest @ ..] if only_problems(rest) => {
                    *from_backup
                }
                other => return Err(TestCaseError::fail(format!("warnings {other:?}"))),
            };
            prop_assert_eq!(read_from_backup, with_backup);
            prop_assert_eq!(&snapshot.index, &backup_index);
            prop_assert_eq!(fs::read(&path).unwrap(), bytes, "a read wrote the file");
            prop_assert_eq!(names_in(&dir), files_before);

            let updated = store.update(|_| ()).unwrap();
            let kept = match &updated.warnings[..] {
                [
                    Warning::Quarantined {
                        moved_to,
                        from_backup,
                        ..
                    },
                    rest @ ..,
                ] if only_problems(rest) => {
                    prop_assert_eq!(*from_backup, with_backup);
                    moved_to.clone()
                }
                other => return Err(TestCaseError::fail(format!("warnings {other:?}"))),
            };
            prop_assert!(kept.as_str().contains("index.json.corrupt-"), "{}", kept);
            prop_assert_eq!(
                fs::read(&kept).unwrap(),
                bytes,
                "the corrupt file is kept as it was"
            );
            // Repaired on disk: the next read has nothing to warn about but unusable entries.
            let again = store.load().unwrap();
            prop_assert!(only_problems(&again.warnings), "{:?}", again.warnings);
            prop_assert_eq!(again.index, repaired_index);
            prop_assert_eq!(fs::read(&kept).unwrap(), bytes);
        }
    }
    prop_assert!(
        names_in(&dir).iter().all(|name| !name.ends_with(".tmp")),
        "{:?}",
        names_in(&dir)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check_parse(&bytes)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn parse_never_panics_on_near_valid_indexes(bytes in near_valid()) {
        check_parse(&bytes)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn load_never_panics_and_never_overwrites_what_it_cannot_parse(
        bytes in any_index_bytes(),
        with_backup in any::<bool>(),
    ) {
        check_store(&bytes, with_backup)?;
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    for depth in [127, 128, 129, 10_000, 200_000] {
        let document = format!(
            "{{\"version\":1,\"entries\":{{}},\"deep\":{}1{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        check_parse(document.as_bytes()).unwrap();
    }
    check_store(format!("{}1", "[".repeat(100_000)).as_bytes(), true).unwrap();
}

/// Found by the fuzzing above: the fields of the file this version does not know used to come
/// back in another order on each rewrite, so an update that changed nothing wrote a new
/// generation every time, and the backup lost the previous one.
#[test]
fn unknown_top_level_fields_keep_their_order_so_an_update_that_changes_nothing_writes_nothing() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    store
        .update(|index| index.record(rec("p", "s", "r"), NOW))
        .unwrap();
    let mut document: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    document["a"] = json!(1);
    document["b"] = json!(2);
    document["c"] = json!(3);
    let mut bytes = serde_json::to_vec_pretty(&document).unwrap();
    bytes.push(b'\n');
    fs::write(&path, &bytes).unwrap();
    assert_eq!(format::serialize(&format::parse(&bytes).unwrap()), bytes);
    for _ in 0..3 {
        let updated = store.update(|index| index.touch("unknown", NOW)).unwrap();
        assert!(!updated.written);
        assert_eq!(fs::read(&path).unwrap(), bytes);
    }
}
