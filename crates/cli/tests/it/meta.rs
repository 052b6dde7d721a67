//! What the binary says about itself: help, version, shell completions, the man page.

use predicates::prelude::*;
use predicates::str::{contains, is_empty, starts_with};

use crate::{Sandbox, check};

#[test]
fn help_version_completions_and_man() {
    let env = Sandbox::default();
    check(
        &env,
        &["--help"],
        0,
        contains("Usage: crash-resume")
            .and(contains("resume-cmd"))
            .and(contains("Exit codes")),
        is_empty(),
    );
    check(
        &env,
        &["record", "--help"],
        0,
        contains("<SURFACE>").and(contains("--cwd")),
        is_empty(),
    );
    check(
        &env,
        &["--version"],
        0,
        predicate::eq(format!("crash-resume {}\n", env!("CARGO_PKG_VERSION")).as_str()),
        is_empty(),
    );
    check(
        &env,
        &["completions", "bash"],
        0,
        contains("complete")
            .and(contains("crash-resume"))
            .and(contains("resume-cmd")),
        is_empty(),
    );
    check(
        &env,
        &["completions", "zsh"],
        0,
        starts_with("#compdef crash-resume"),
        is_empty(),
    );
    check(
        &env,
        &["man"],
        0,
        (starts_with(".TH").or(starts_with(".ie")))
            .and(contains("crash-resume"))
            .and(contains("resume\\-cmd")),
        is_empty(),
    );
    assert_eq!(env.index_bytes(), None, "none of these touches the index");
}
