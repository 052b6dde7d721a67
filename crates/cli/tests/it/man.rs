//! `crash-resume man`, `--help`, `--version` and `completions`: what the binary says about
//! itself. The manual documents every subcommand with each option its `--help` lists, and
//! examples; `--help` of the main commands shows examples.

use predicates::prelude::*;
use predicates::str::{contains, is_empty, starts_with};

use crate::{Sandbox, check, crash_resume};

/// Every subcommand, as typed after `crash-resume`.
const SUBCOMMANDS: &[&[&str]] = &[
    &["record"],
    &["lookup"],
    &["resume-cmd"],
    &["touch"],
    &["forget"],
    &["prune"],
    &["list"],
    &["preflight"],
    &["path"],
    &["doctor"],
    &["restore"],
    &["hook", "claude"],
    &["hook", "codex"],
    &["hook", "install"],
    &["hook", "uninstall"],
    &["completions"],
    &["man"],
];

/// The commands people use most, whose `--help` must show examples.
const MAIN_COMMANDS: &[&[&str]] = &[
    &[],
    &["record"],
    &["lookup"],
    &["resume-cmd"],
    &["prune"],
    &["list"],
    &["preflight"],
    &["doctor"],
    &["restore"],
    &["hook", "install"],
    &["hook", "uninstall"],
];

fn stdout_of(env: &Sandbox, args: &[&str]) -> String {
    let output = crash_resume(env).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The long options a `--help` text lists.
fn long_options(help: &str) -> Vec<String> {
    help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .map(|word| {
            word.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .split('=')
                .next()
                .unwrap()
                .to_string()
        })
        .filter(|option| option != "--help" && option != "--version")
        .collect()
}

#[test]
fn the_man_pages_environment_names_every_variable_crash_resume_reads() {
    let env = Sandbox::default();
    let page = stdout_of(&env, &["man"]).replace("\\-", "-");
    let section = page
        .split(".SH ENVIRONMENT")
        .nth(1)
        .and_then(|rest| rest.split(".SH ").next())
        .expect("an ENVIRONMENT section");
    let named: Vec<&str> = section
        .split("\\fB")
        .skip(1)
        .filter_map(|tag| tag.split("\\fR").next())
        .flat_map(|names| names.split(", "))
        .collect();
    let table = resume_plan::variables::all();
    for variable in &table {
        assert!(
            named.contains(&variable.name),
            "{} in ENVIRONMENT",
            variable.name
        );
    }
    assert_eq!(named.len(), table.len(), "each once: {named:?}");
    for name in [
        "CMUX_SOCKET_PATH",
        "KITTY_LISTEN_ON",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
    ] {
        assert!(named.contains(&name), "{name}");
    }
    let files = page.split(".SH FILES").nth(1).unwrap();
    for facts in &agent_paths::AGENTS {
        assert!(
            files.contains(&format!("${}", facts.config_env)),
            "{}",
            facts.name
        );
        assert!(files.contains(facts.hook_file), "{}", facts.name);
    }
}

#[test]
fn the_man_page_documents_every_subcommand_and_its_options() {
    let env = Sandbox::default();
    let page = stdout_of(&env, &["man"]);
    // roff writes a minus as `\-`; read the page as text.
    let text = page.replace("\\-", "-");
    assert!(text.contains("\n.TH crash-resume 1 "), "a title");
    let global = long_options(&stdout_of(&env, &["--help"]));
    assert!(global.contains(&"--path".to_string()), "{global:?}");
    for option in &global {
        assert!(
            text.contains(&format!("\\fB{option}\\fR")),
            "{option} documented"
        );
    }
    assert!(text.contains(".SH COMMANDS"), "a COMMANDS section");
    for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
        assert!(
            text.contains(&format!(".SH \"{section}\""))
                || text.contains(&format!(".SH {section}")),
            "{section}"
        );
    }
    for command in SUBCOMMANDS {
        let name = format!("crash-resume {}", command.join(" "));
        assert!(
            text.contains(&format!(".SS \"{name}\"")),
            "a section for {name}"
        );
        let section = text
            .split(".SS ")
            .find(|section| section.starts_with(&format!("\"{name}\"")))
            .unwrap();
        let mut args = command.to_vec();
        args.push("--help");
        let own = long_options(&stdout_of(&env, &args))
            .into_iter()
            .filter(|option| !global.contains(option));
        for option in own {
            assert!(
                section.contains(&format!("\\fB{option}\\fR")),
                "{name}: {option} documented in its section:\n{section}"
            );
        }
    }
    assert!(text.contains("\\fB--tmux-socket\\fR"));
    assert!(text.contains("CRASH_RESUME_TMUX_SOCKET"));
    let examples = text.matches("Examples:").count();
    assert!(
        examples >= MAIN_COMMANDS.len() - 1,
        "{examples} example blocks"
    );
}

#[test]
fn help_of_the_main_commands_shows_examples() {
    let env = Sandbox::default();
    for command in MAIN_COMMANDS {
        let mut args = command.to_vec();
        args.push("--help");
        let help = stdout_of(&env, &args);
        let (_, examples) = help
            .split_once("Examples:\n")
            .unwrap_or_else(|| panic!("{args:?} shows examples:\n{help}"));
        let first = examples.lines().next().unwrap();
        assert!(
            first.trim_start().starts_with("crash-resume ")
                || first.trim_start().starts_with("cmd="),
            "{args:?}: {first}"
        );
    }
}

/// A reader that stops reading (`crash-resume man | head -1`) is not an error: with stdout a
/// pipe whose reading end is closed before anything is written, every command that prints
/// exits 0 with nothing on stderr, as ripgrep does.
#[test]
fn a_closed_pipe_is_not_an_error() {
    let env = Sandbox::default();
    crate::record(&env, "S", "sid-1", "proj");
    for args in [
        &["man"][..],
        &["completions", "bash"],
        &["list"],
        &["--json", "list"],
        &["lookup", "S"],
        &["resume-cmd", "S"],
        &["restore"],
        &["path"],
        &["--help"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = crate::crash_resume_std(&env)
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
    }
}

/// The man page's FILES section names every file the tool leaves beside the index.
#[test]
fn the_man_page_names_the_files_beside_the_index() {
    let env = Sandbox::default();
    crate::record(&env, "S", "sid-1", "proj");
    let applied = crate::harness::crash_resume_agent(&env)
        .args(["restore", "--apply", "tmux", "--tmux-socket", "none"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{applied:?}");
    let once = crate::harness::crash_resume_agent(&env)
        .args([
            "restore",
            "--apply",
            "tmux",
            "--once-per-boot",
            "--tmux-socket",
            "none",
        ])
        .output()
        .unwrap();
    assert!(once.status.success(), "{once:?}");
    let page = stdout_of(&env, &["man"]);
    let files = env.index_dir_files();
    assert!(
        files.len() >= 5,
        "the index, its backup, its lock, the restore lock and the ledger of boots: {files:?}"
    );
    for file in files {
        assert!(page.contains(&file), "{file} is not in the man page");
    }
    assert!(
        !page.contains("index.json.lock and"),
        "the lock is index.json.flock"
    );
}

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
