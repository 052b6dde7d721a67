//! The built-in `golems` profile: exactly the JavaScript crash-resume-index's commands.

use launcher_map::{Registry, Target};

use crate::{S, check_in};

fn golems() -> Registry {
    let mut registry = Registry::builtin();
    registry.select_profile("golems").unwrap();
    assert_eq!(registry.profile(), Some("golems"));
    registry
}

fn check(target: Target<'_>, expected: &str) {
    check_in(&golems(), target, expected);
}

#[test]
fn repo_launchers_are_the_lower_cased_repo_plus_claude() {
    check(
        Target {
            repo: Some("golems"),
            ..S
        },
        "golemsClaude --resume s1",
    );
    check(
        Target {
            repo: Some("BrainLayer"),
            ..S
        },
        "brainlayerClaude --resume s1",
    );
    check(
        Target {
            repo: Some("brainlayer"),
            ..S
        },
        "brainlayerClaude --resume s1",
    );
    check(
        Target {
            repo: Some(" VoiceLayer "),
            ..S
        },
        "voicelayerClaude --resume s1",
    );
    check(
        Target {
            session: "01J-orc-lead-xyz",
            repo: Some("golems"),
            ..S
        },
        "golemsClaude --resume 01J-orc-lead-xyz",
    );
}

#[test]
fn the_orchestrator_is_orc() {
    check(
        Target {
            repo: Some("orchestrator"),
            ..S
        },
        "orcClaude --resume s1",
    );
    check(
        Target {
            repo: Some("Orchestrator"),
            ..S
        },
        "orcClaude --resume s1",
    );
    check(
        Target {
            session: "01J-orc-lead-xyz",
            repo: Some("orchestrator"),
            ..S
        },
        "orcClaude --resume 01J-orc-lead-xyz",
    );
}

#[test]
fn no_repo_is_repo_golem() {
    check(S, "repoGolem --resume s1");
    check(
        Target {
            repo: Some(""),
            ..S
        },
        "repoGolem --resume s1",
    );
    check(
        Target {
            repo: Some("   "),
            ..S
        },
        "repoGolem --resume s1",
    );
}

#[test]
fn no_cd_and_no_config_dir() {
    check(
        Target {
            repo: Some("golems"),
            cwd: Some("/home/u/my proj"),
            config_dir: Some("/home/u/.claude-work"),
            ..S
        },
        "golemsClaude --resume s1",
    );
    check(
        Target {
            cwd: Some("/w"),
            config_dir: Some("/c"),
            ..S
        },
        "repoGolem --resume s1",
    );
    check(
        Target {
            agent: Some("claude"),
            repo: Some("orchestrator"),
            ..S
        },
        "orcClaude --resume s1",
    );
}

#[test]
fn other_providers_keep_their_defaults() {
    check(
        Target {
            agent: Some("codex"),
            repo: Some("golems"),
            cwd: Some("/w"),
            ..S
        },
        "cd /w && codex resume s1",
    );
    check(
        Target {
            agent: Some("gemini"),
            ..S
        },
        "gemini --resume s1",
    );
}

#[test]
fn odd_repo_names_are_quoted() {
    check(
        Target {
            repo: Some("my repo"),
            ..S
        },
        "'my repoClaude' --resume s1",
    );
    check(
        Target {
            repo: Some("a;b"),
            ..S
        },
        "'a;bClaude' --resume s1",
    );
}
