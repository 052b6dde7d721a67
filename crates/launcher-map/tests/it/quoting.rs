//! Every value survives quoting: `shlex::split` and a real `sh` get back the exact words.

use std::process::Command;

use camino::Utf8PathBuf;
use launcher_map::{RenderContext, Target};
use proptest::prelude::*;
use test_support::process::stdout_of;

use crate::{S, check, registry, render_in};

/// Values that a shell would otherwise split, expand, glob, run or mangle.
const AWKWARD: &[&str] = &[
    "plain",
    "with space",
    "it's",
    "\"double\"",
    "$HOME",
    "${HOME}",
    "`id`",
    "$(id)",
    "a;b && c | d > e",
    "line\nbreak",
    "tab\there",
    "carriage\rreturn",
    "café",
    "🦀 emoji",
    "\u{a0}nbsp",
    "*?[glob]",
    "{braces},comma",
    "back\\slash",
    "!bang ^caret",
    "^caret",
    "#hash",
    "=eq",
    "%pct",
    "trailing\\",
    "'",
    "''",
];

fn split(line: &str) -> Vec<String> {
    shlex::split(line).unwrap_or_else(|| panic!("shlex cannot split {line:?}"))
}

#[test]
fn values_that_need_no_quoting_stay_bare() {
    check(
        Target {
            session: "01J-orc-lead-xyz",
            cwd: Some("/home/u/proj.d/a_b+c@d:e"),
            ..S
        },
        "cd /home/u/proj.d/a_b+c@d:e && claude --resume 01J-orc-lead-xyz",
    );
    check(Target { session: "", ..S }, "claude --resume ''");
}

#[test]
fn awkward_values_round_trip_through_shlex() {
    for value in AWKWARD {
        let line = render_in(
            &registry(""),
            Target {
                session: value,
                cwd: Some(value),
                config_dir: Some(value),
                ..S
            },
        )
        .unwrap();
        assert_eq!(
            split(&line),
            [
                "cd",
                value,
                "&&",
                &format!("CLAUDE_CONFIG_DIR={value}"),
                "claude",
                "--resume",
                value
            ],
            "{value:?} rendered as {line}"
        );
    }
}

#[test]
fn awkward_values_round_trip_through_templates() {
    let mut file = registry(
        r#"
        [profiles.all.fallback]
        command = "run {repo} x{repo}y --cwd={cwd} {config_dir} {session}"
        cd = false
        "#,
    );
    file.select_profile("all").unwrap();
    for value in AWKWARD.iter().filter(|value| !value.trim().is_empty()) {
        let target = Target {
            session: value,
            repo: Some(value),
            cwd: Some(value),
            config_dir: Some(value),
            ..S
        };
        let line = render_in(&file, target).unwrap();
        let repo = value.trim();
        assert_eq!(
            split(&line),
            [
                "run",
                repo,
                &format!("x{repo}y"),
                &format!("--cwd={value}"),
                value,
                value
            ],
            "{value:?} rendered as {line}"
        );
    }
}

#[test]
fn a_session_or_repo_that_looks_like_home_is_not_expanded() {
    let file = {
        let mut file =
            registry("[profiles.p.fallback]\ncommand = \"{repo} {session}\"\ncd = false");
        file.select_profile("p").unwrap();
        file
    };
    let line = render_in(
        &file,
        Target {
            session: "~/s",
            repo: Some("~"),
            ..S
        },
    )
    .unwrap();
    assert_eq!(line, "'~' '~/s'");
}

/// Runs `line` with `sh -c`, as a user pasting it would, and returns what it printed.
fn run_sh(line: &str, home: Option<&Utf8PathBuf>) -> String {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(line);
    if let Some(home) = home {
        sh.env("HOME", home);
    }
    stdout_of(&mut sh, "these tests need a POSIX `sh` on PATH")
}

#[test]
fn a_real_shell_sees_the_same_words() {
    let temp = tempfile::tempdir().unwrap();
    let root = Utf8PathBuf::try_from(temp.path().to_path_buf()).unwrap();
    // The command prints, one per line in <>, where it ran, the config dir it was given and
    // its arguments; the inner script is itself a template word, quoted like any other.
    let file = registry(
        r#"
        [providers.claude]
        command = "sh -c 'printf \"<%s>\\n\" \"$PWD\" \"$CLAUDE_CONFIG_DIR\" \"$@\"' sh {session} {repo}"
        "#,
    );
    for (index, value) in AWKWARD.iter().enumerate() {
        // One real dir per value (a name cannot hold `/`), so that `cd` works.
        let cwd = root.join(format!("{index} {value}"));
        std::fs::create_dir(&cwd).unwrap();
        let target = Target {
            session: value,
            repo: Some("r"),
            cwd: Some(cwd.as_str()),
            config_dir: Some(value),
            ..S
        };
        let line = render_in(&file, target).unwrap();
        let expected = format!("<{cwd}>\n<{value}>\n<{value}>\n<r>\n");
        assert_eq!(
            run_sh(&line, None),
            expected,
            "{value:?} rendered as {line}"
        );
    }
}

#[test]
fn a_real_shell_expands_a_bare_tilde() {
    let temp = tempfile::tempdir().unwrap();
    let home = Utf8PathBuf::try_from(temp.path().to_path_buf()).unwrap();
    std::fs::create_dir(home.join("my proj")).unwrap();
    let file = registry(
        r#"
        [providers.claude]
        command = "sh -c 'printf \"<%s>\\n\" \"$PWD\" \"$CLAUDE_CONFIG_DIR\" \"$@\"' sh {session}"
        "#,
    );
    let target = Target {
        cwd: Some("~/my proj"),
        config_dir: Some("~/.claude work"),
        ..S
    };
    let line = file.render(&target, &RenderContext { home: None }).unwrap();
    assert_eq!(
        line.split(" sh -c ").next(),
        Some("cd ~/'my proj' && CLAUDE_CONFIG_DIR=~/'.claude work'")
    );
    // The shell, not the renderer, finds home here: give it one.
    assert_eq!(
        run_sh(&line, Some(&home)),
        format!("<{home}/my proj>\n<{home}/.claude work>\n<s1>\n")
    );
}

proptest! {
    #[test]
    fn any_values_round_trip_through_shlex(
        session in "[^\0]*",
        cwd in "[^\0~-][^\0]*",
        config_dir in "[^\0~][^\0]*",
    ) {
        let line = render_in(
            &registry(""),
            Target { session: &session, cwd: Some(&cwd), config_dir: Some(&config_dir), ..S },
        )
        .unwrap();
        let assignment = format!("CLAUDE_CONFIG_DIR={config_dir}");
        let expected = if config_dir.trim_end_matches('/') == "/home/u/.claude" {
            vec!["cd", &cwd, "&&", "claude", "--resume", &session]
        } else {
            vec!["cd", &cwd, "&&", &assignment, "claude", "--resume", &session]
        };
        prop_assert_eq!(split(&line), expected, "rendered as {}", line);
    }
}
