//! `crash-resume forget`: one entry dropped, the rest kept; an entry the index cannot use is
//! forgotten (and pruned by its readable age) too.

use predicates::prelude::*;
use predicates::str::{contains, is_empty};

use crate::{Sandbox, check, record};

#[test]
fn forget_drops_one_entry() {
    let env = Sandbox::default();
    record(&env, "A", "sid-a", "REPO");
    record(&env, "B", "sid-b", "REPO");
    check(
        &env,
        &["forget", "A"],
        0,
        predicate::eq("forgot A → sid-a (REPO)\n"),
        is_empty(),
    );
    assert_eq!(env.entries().keys().collect::<Vec<_>>(), ["B"]);
    check(
        &env,
        &["lookup", "A"],
        4,
        predicate::eq("null\n"),
        contains("no entry"),
    );
}

/// An entry the tool keeps verbatim but cannot use is refused with advice to `forget` it:
/// `forget` drops it (and says so), and `prune` drops one only when its own readable
/// timestamps are older than the age; one whose age cannot be read stays.
#[test]
fn unusable_entries_can_be_forgotten_and_pruned_by_their_readable_age() {
    let env = Sandbox::default();
    let unusable = |surface: &str, last_active: serde_json::Value| {
        serde_json::json!({
            "surfaceId": surface,
            "sessionId": "s",
            "repo": "r",
            "role": null,
            "captured_at": "not a time",
            "last_active": last_active,
            "previous_sessions": ["-x"],
        })
    };
    let now = crate::now_millis();
    env.write_index(&[
        unusable("t", 2.into()),
        unusable("old", 2.into()),
        unusable("recent", now.into()),
        unusable("ageless", serde_json::Value::Null),
    ]);
    check(
        &env,
        &["resume-cmd", "t"],
        1,
        is_empty(),
        contains("refused").and(contains("crash-resume forget")),
    );
    check(
        &env,
        &["forget", "t"],
        0,
        contains("forgot t, an entry that could not be used"),
        contains("entry t is not usable").not(),
    );
    assert!(env.entry("t").is_none());
    check(
        &env,
        &["forget", "t"],
        4,
        is_empty(),
        contains("nothing forgotten"),
    );
    let pruned = crate::json::json_of(&env, &["prune", "1d"], 0);
    assert_eq!(pruned["pruned"], serde_json::json!([]));
    assert_eq!(pruned["pruned_unusable"], serde_json::json!(["old"]));
    assert!(env.entry("old").is_none());
    assert!(env.entry("recent").is_some(), "active within the age");
    assert!(env.entry("ageless").is_some(), "no readable time: kept");
    let forgotten = crate::json::json_of(&env, &["forget", "ageless"], 0);
    assert_eq!(forgotten["forgotten"], serde_json::Value::Null);
    assert_eq!(forgotten["forgotten_unusable"]["surfaceId"], "ageless");
    assert!(env.entry("ageless").is_none());
}

/// An entry recorded over an unusable one of the same surface masks it; forgetting the new
/// entry must not bring the old one back.
#[test]
fn forgetting_an_entry_recorded_over_an_unusable_one_leaves_neither() {
    let env = Sandbox::default();
    env.write_index(&[serde_json::json!({
        "surfaceId": "t",
        "sessionId": "-x",
        "repo": "r",
    })]);
    record(&env, "t", "sid-t", "REPO");
    check(
        &env,
        &["forget", "t"],
        0,
        contains("forgot t → sid-t"),
        predicate::always(),
    );
    assert!(env.entry("t").is_none());
    check(
        &env,
        &["resume-cmd", "t"],
        4,
        is_empty(),
        predicate::always(),
    );
}
