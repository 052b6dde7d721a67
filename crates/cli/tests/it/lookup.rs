//! `crash-resume lookup`: the entry in the JavaScript tool's index format, and a surface that is
//! not recorded, which finds nothing (exit 4) for every command that takes one, nor does an invalid
//! id, and neither writes.

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use serde_json::Value;

use crate::bad_input::with_one_entry;
use crate::{Sandbox, check, crash_resume, record};

#[test]
fn lookup_prints_the_entry_in_the_index_format() {
    let env = Sandbox::default();
    record(&env, "S", "SID", "REPO");
    let output = crash_resume(&env)
        .args(["lookup", "S"])
        .assert()
        .success()
        .stderr("");
    let printed: Value = serde_json::from_slice(&output.get_output().stdout).unwrap();

    let mut fields: Vec<&str> = printed
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "boot_id",
            "captured_at",
            "last_active",
            "repo",
            "role",
            "sessionId",
            "surfaceId"
        ]
    );
    assert_eq!(printed["surfaceId"], "S");
    assert_eq!(printed["sessionId"], "SID");
    assert_eq!(printed["repo"], "REPO");
    assert_eq!(printed["role"], Value::Null);
    assert_eq!(
        printed,
        env.entry("S").unwrap(),
        "lookup prints the stored entry"
    );
}

#[test]
fn unknown_surface_gives_nothing() {
    let env = Sandbox::default();
    // No index file at all, then an index without the surface.
    check(
        &env,
        &["lookup", "nope"],
        4,
        predicate::eq("null\n"),
        contains("nope"),
    );
    check(
        &env,
        &["resume-cmd", "nope"],
        4,
        is_empty(),
        contains("nope"),
    );
    assert_eq!(env.index_bytes(), None, "reads create no index");

    record(&env, "S", "SID", "REPO");
    let before = env.index_bytes();
    check(
        &env,
        &["lookup", "nope"],
        4,
        predicate::eq("null\n"),
        contains("no entry"),
    );
    check(
        &env,
        &["resume-cmd", "nope"],
        4,
        is_empty(),
        contains("no session recorded"),
    );
    check(
        &env,
        &["resume-cmd", "nope", "1h"],
        4,
        is_empty(),
        contains("nope"),
    );
    check(
        &env,
        &["touch", "nope"],
        4,
        is_empty(),
        contains("nothing touched"),
    );
    check(
        &env,
        &["forget", "nope"],
        4,
        is_empty(),
        contains("nothing forgotten"),
    );
    assert_eq!(env.index_bytes(), before);
}

#[test]
fn lookups_of_invalid_ids_find_nothing_and_write_nothing() {
    let (env, before) = with_one_entry();
    for args in [
        ["lookup", ""],
        ["lookup", "a\tb"],
        ["resume-cmd", " "],
        ["touch", ""],
        ["forget", "a\nb"],
    ] {
        let code = crash_resume(&env)
            .args(args)
            .assert()
            .get_output()
            .status
            .code();
        assert!(matches!(code, Some(2 | 4)), "{args:?}: exit {code:?}");
        assert_eq!(env.index_bytes().unwrap(), before);
    }
    check(&env, &["lookup", "S"], 0, contains("SID"), is_empty());
}
