//! `crash-resume forget`: one entry dropped, the rest kept.

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
