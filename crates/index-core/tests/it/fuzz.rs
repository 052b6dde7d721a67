//! Bounded fuzzing of the hook-payload reader: arbitrary bytes, arbitrary JSON and near-valid
//! payloads (wrong types, blank and huge values, unknown events) never make it panic, and what
//! it accepts is usable: a non-empty session id, every value byte for byte as sent (never
//! trimmed: a dir or an id may hold leading or trailing spaces), and a clean end only for the
//! reasons that mean one.

use index_core::capture::{CLEAN_END_REASONS, HookEvent, parse_hook_payload};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|number| json!(number)),
        "\\PC{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map("\\PC{0,8}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// A value for one payload field: mostly text a hook sends, sometimes anything at all.
fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop_oneof![
            Just("SessionStart".to_string()),
            Just("SessionEnd".to_string()),
            Just("UserPromptSubmit".to_string()),
            Just("prompt_input_exit".to_string()),
            Just("logout".to_string()),
            Just("clear".to_string()),
            "[ \\t\\n]{0,3}[a-zA-Z0-9_-]{0,12}[ \\t\\n]{0,3}",
            "\\PC{0,8}",
            Just("x".repeat(100_000)),
        ].prop_map(Value::from),
        1 => any_json(),
    ]
}

const KEYS: [&str; 9] = [
    "session_id",
    "thread_id",
    "thread-id",
    "hook_event_name",
    "type",
    "source",
    "reason",
    "cwd",
    "transcript_path",
];

fn near_valid_payload() -> impl Strategy<Value = Value> {
    proptest::collection::vec(
        (proptest::sample::select(KEYS.to_vec()), field_value()),
        0..8,
    )
    .prop_map(|fields| {
        let object: Map<String, Value> = fields
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect();
        Value::Object(object)
    })
}

fn check(value: &Value) -> Result<(), TestCaseError> {
    if let Ok(payload) = parse_hook_payload(value) {
        let sent = |key: &str| value.get(key).and_then(Value::as_str);
        prop_assert!(!payload.session.is_empty());
        let session_sent = ["session_id", "thread_id", "thread-id"]
            .into_iter()
            .find_map(|key| sent(key).filter(|text| !text.is_empty()));
        prop_assert_eq!(Some(payload.session.as_str()), session_sent);
        prop_assert_eq!(payload.cwd.as_deref(), sent("cwd"));
        prop_assert_eq!(
            payload.transcript_path.as_deref(),
            sent("transcript_path").filter(|text| !text.is_empty())
        );
        if let HookEvent::SessionEnd { reason, clean } = &payload.event {
            prop_assert_eq!(
                *clean,
                reason
                    .as_deref()
                    .is_some_and(|reason| CLEAN_END_REASONS.contains(&reason))
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut values = serde_json::Deserializer::from_slice(&bytes).into_iter::<Value>();
        if let Some(Ok(value)) = values.next() {
            check(&value)?;
        }
    }

    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        check(&value)?;
    }

    #[test]
    fn near_valid_payloads_never_panic(value in near_valid_payload()) {
        check(&value)?;
    }
}
