//! How the agent was started: the default launcher passes the kept flags after the resume
//! arguments and sets the recorded variables before the program, every value quoted; a
//! profile's or a repo's launcher is the whole command.

use std::collections::BTreeMap;

use launcher_map::{Start, Target};

use crate::{S, check, check_in, registry};

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

fn words(line: &[&str]) -> Vec<String> {
    line.iter().map(ToString::to_string).collect()
}

#[test]
fn the_kept_flags_follow_the_resume_arguments_and_the_variables_precede_the_program() {
    let args = words(&["--model", "opus", "--add-dir", "../my dir"]);
    let vars = env(&[
        ("ANTHROPIC_MODEL", "claude $(x)"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
    ]);
    check(
        Target {
            cwd: Some("/home/u/proj"),
            config_dir: Some("/home/u/.claude-work"),
            start: Start {
                args: &args,
                env: Some(&vars),
                program: None,
            },
            ..S
        },
        "cd /home/u/proj && CLAUDE_CONFIG_DIR=/home/u/.claude-work \
         ANTHROPIC_BASE_URL=http://127.0.0.1:9 ANTHROPIC_MODEL='claude $(x)' claude --resume s1 \
         --model opus --add-dir '../my dir'",
    );
    let codex = words(&["-s", "workspace-write", "-c", "model=\"o3\""]);
    check(
        Target {
            agent: Some("codex"),
            start: Start {
                args: &codex,
                ..Start::default()
            },
            ..S
        },
        "codex resume s1 -s workspace-write -c 'model=\"o3\"'",
    );
}

#[test]
fn a_variable_that_is_no_shell_name_or_is_the_config_dirs_is_left_out() {
    let vars = env(&[
        ("CLAUDE_CONFIG_DIR", "/elsewhere"),
        ("A B", "x"),
        ("X;rm", "y"),
        ("ANTHROPIC_MODEL", "m"),
    ]);
    check(
        Target {
            config_dir: Some("/home/u/.claude-work"),
            start: Start {
                env: Some(&vars),
                ..Start::default()
            },
            ..S
        },
        "CLAUDE_CONFIG_DIR=/home/u/.claude-work ANTHROPIC_MODEL=m claude --resume s1",
    );
}

#[test]
fn a_wrapper_runs_in_place_of_the_program() {
    let args = words(&["--model", "opus"]);
    check(
        Target {
            start: Start {
                args: &args,
                env: None,
                program: Some("/home/u/bin/my claude"),
            },
            ..S
        },
        "'/home/u/bin/my claude' --resume s1 --model opus",
    );
}

#[test]
fn a_repo_launcher_is_the_whole_command() {
    let file = registry(
        r#"
        [repos.api]
        command = "run-agent --resume {session}"
        cd = false
        "#,
    );
    let args = words(&["--model", "opus"]);
    let vars = env(&[("ANTHROPIC_MODEL", "m")]);
    check_in(
        &file,
        Target {
            repo: Some("api"),
            start: Start {
                args: &args,
                env: Some(&vars),
                program: None,
            },
            ..S
        },
        "run-agent --resume s1",
    );
}
