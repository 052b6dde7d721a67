//! `crash-resume touch`: a long-running session stays resumable, and a rewrite keeps the fields of
//! an entry it does not know.

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use serde_json::json;

use crate::{DAY, HOUR, Sandbox, check, entry, now_millis};

#[test]
fn touch_keeps_a_long_running_session_resumable() {
    let env = Sandbox::default();
    let long_ago = now_millis() - 30 * DAY;
    env.write_index(&[entry("S", "sid-long", "REPO", long_ago, long_ago)]);
    check(
        &env,
        &["resume-cmd", "S", "1h"],
        4,
        is_empty(),
        contains("max age"),
    );

    let before = now_millis();
    check(
        &env,
        &["touch", "S"],
        0,
        predicate::eq("touched S\n"),
        is_empty(),
    );
    let stored = env.entry("S").unwrap();
    assert_eq!(
        stored["captured_at"],
        json!(long_ago),
        "touch keeps the first sight"
    );
    assert!(stored["last_active"].as_u64().unwrap() >= before);
    assert_eq!(stored["sessionId"], "sid-long");

    check(
        &env,
        &["resume-cmd", "S", "1h"],
        0,
        predicate::eq("claude --resume sid-long\n"),
        is_empty(),
    );
}

#[test]
fn unknown_fields_of_an_entry_are_kept_on_rewrite() {
    let env = Sandbox::default();
    let now = now_millis();
    let mut written = entry("S", "sid", "REPO", now - HOUR, now - HOUR);
    written["written_by"] = json!({ "tool": "crash-resume-index", "version": "0.9" });
    env.write_index(&[written]);
    let mut document = env.index();
    document["extra_top_level"] = json!([1, 2, 3]);
    env.write_index_bytes(&serde_json::to_vec(&document).unwrap());

    check(
        &env,
        &["touch", "S"],
        0,
        predicate::eq("touched S\n"),
        is_empty(),
    );
    let rewritten = env.index();
    assert_eq!(rewritten["extra_top_level"], json!([1, 2, 3]));
    assert_eq!(
        rewritten["entries"]["S"]["written_by"],
        json!({ "tool": "crash-resume-index", "version": "0.9" })
    );
}
