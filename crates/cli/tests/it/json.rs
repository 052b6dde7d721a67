//! `--json`: every command prints exactly one JSON document on stdout, with `"version": 1`. One
//! table across every command (the promise is the same for each), so it stays one file.

use serde_json::{Value, json};

use crate::snapshot::{assert_cli_json_snapshot, assert_cli_snapshot};
use crate::{HOUR, Sandbox, crash_resume, entry, now_millis};

/// Runs `crash-resume --json ARGS`, checks the exit code and that stdout is one JSON document
/// with `"version": 1`, and returns it.
pub(crate) fn json_of(env: &Sandbox, args: &[&str], code: i32) -> Value {
    let assert = crash_resume(env)
        .arg("--json")
        .args(args)
        .assert()
        .code(code);
    let output = assert.get_output();
    let document: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "`--json {}` printed not one JSON document ({error}): {:?}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout)
        )
    });
    assert_eq!(
        document["version"],
        json!(1),
        "`--json {}`: {document}",
        args.join(" ")
    );
    document
}

#[test]
fn every_command_prints_one_versioned_json_document() {
    let env = Sandbox::default();
    let now = now_millis();
    env.write_index(&[entry(
        "old",
        "sid-old",
        "REPO",
        now - 5 * HOUR,
        now - 5 * HOUR,
    )]);

    let recorded = json_of(&env, &["record", "S", "SID", "REPO", "lead"], 0);
    assert_cli_json_snapshot!(&env, "record", &recorded);
    assert_eq!(recorded["recorded"], env.entry("S").unwrap());

    let again = json_of(&env, &["record", "S", "SID-2", "REPO"], 0);
    assert_cli_json_snapshot!(&env, "record_again", &again);

    let looked_up = json_of(&env, &["lookup", "S"], 0);
    assert_cli_json_snapshot!(&env, "lookup", &looked_up);
    assert_eq!(looked_up["entry"], env.entry("S").unwrap());

    let resume = json_of(&env, &["resume-cmd", "S"], 0);
    assert_cli_json_snapshot!(&env, "resume_cmd", &resume);

    let touched = json_of(&env, &["touch", "S"], 0);
    assert_cli_json_snapshot!(&env, "touch", &touched);

    let listed = json_of(&env, &["list"], 0);
    assert_cli_json_snapshot!(&env, "list", &listed);

    let pruned = json_of(&env, &["prune", "1h"], 0);
    assert_cli_json_snapshot!(&env, "prune", &pruned);

    let forgotten = json_of(&env, &["forget", "S"], 0);
    assert_cli_json_snapshot!(&env, "forget", &forgotten);
    assert!(env.entries().is_empty());

    let path = json_of(&env, &["path"], 0);
    assert_cli_json_snapshot!(&env, "path", &path);
}

#[test]
fn nothing_found_is_still_one_json_document() {
    let env = Sandbox::default();
    let looked_up = json_of(&env, &["lookup", "nope"], 4);
    assert_eq!(looked_up["entry"], Value::Null);
    let touched = json_of(&env, &["touch", "nope"], 4);
    assert_eq!(touched["touched"], false);
    let forgotten = json_of(&env, &["forget", "nope"], 4);
    assert_eq!(forgotten["forgotten"], Value::Null);
    let listed = json_of(&env, &["list"], 0);
    assert_eq!(listed["entries"], json!([]));
}

#[test]
fn hook_install_prints_one_versioned_json_document() {
    let env = Sandbox::default();
    let settings = env.root().join("settings.json");
    let settings = settings.to_str().unwrap();
    let dry = json_of(
        &env,
        &[
            "hook",
            "install",
            "claude",
            "--settings",
            settings,
            "--dry-run",
        ],
        0,
    );
    assert_cli_json_snapshot!(&env, "hook_install_dry_run", &dry);
    let installed = json_of(
        &env,
        &["hook", "install", "claude", "--settings", settings],
        0,
    );
    assert_cli_json_snapshot!(&env, "hook_install", &installed);
    let again = json_of(
        &env,
        &["hook", "install", "claude", "--settings", settings],
        0,
    );
    assert_cli_json_snapshot!(&env, "hook_install_again", &again);
}

/// A failure that printed no document of its own prints the error document: the message said on
/// stderr and the exit code.
fn error_of(env: &Sandbox, args: &[&str], code: i32) -> Value {
    let document = json_of(env, args, code);
    assert_eq!(
        document["error"]["exit_code"],
        json!(code),
        "`--json {}`: {document}",
        args.join(" ")
    );
    assert!(
        document["error"]["message"]
            .as_str()
            .is_some_and(|message| !message.is_empty()),
        "`--json {}` says why: {document}",
        args.join(" ")
    );
    document
}

#[test]
fn every_failing_command_prints_one_versioned_json_document() {
    let env = Sandbox::default();
    let fifo = env.root().join("fifo.json");
    test_support::sandbox::mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    // Every command that reads the index: `path` only names it, and the hooks print nothing.
    // Each document is checked by `error_of`; what they say, all of them in one snapshot.
    let mut said = String::new();
    let mut say = |args: &[&str], document: Value| {
        said += &format!("--json {}\n{document:#}\n\n", args.join(" "));
    };
    for command in crate::bad_input::matrix::COMMANDS
        .into_iter()
        .filter(|command| !matches!(command[0], "path" | "hook"))
    {
        let args = [&["--path", fifo][..], command].concat();
        say(&args, error_of(&env, &args, 1));
    }
    say(&["path", "extra"], error_of(&env, &["path", "extra"], 2));
    let args = ["record", "S", "", "REPO"];
    say(&args, error_of(&env, &args, 2));
    let settings = env.root().join("settings.json");
    std::fs::write(&settings, "not json").unwrap();
    let args = [
        "hook",
        "install",
        "claude",
        "--settings",
        settings.to_str().unwrap(),
    ];
    say(&args, error_of(&env, &args, 1));
    // What the review found: nothing for a surface to preflight, and a refused entry.
    say(
        &["preflight", "nosuch"],
        error_of(&env, &["preflight", "nosuch"], 4),
    );
    let mut refused = entry("bad", "sid-bad", "REPO", now_millis(), now_millis());
    refused["cwd"] = json!("/var/tmp/\u{1b}]0;x\u{7}");
    env.write_index(&[refused]);
    say(
        &["resume-cmd", "bad"],
        error_of(&env, &["resume-cmd", "bad"], 1),
    );
    assert_cli_snapshot!(&env, "every_failing_command", said);
}

/// A usage error's document says it whole: what is missing (or the values allowed), and the
/// usage line, not only clap's first line.
#[test]
fn a_usage_error_document_names_what_is_missing() {
    let env = Sandbox::default();
    let document = error_of(&env, &["resume-cmd"], 2);
    assert_cli_json_snapshot!(&env, "usage_error_missing_argument", &document);
    let document = error_of(&env, &["restore", "--apply", "screen"], 2);
    assert_cli_json_snapshot!(&env, "usage_error_invalid_value", &document);
}

#[test]
fn a_document_printed_before_a_failure_is_the_only_one() {
    let env = Sandbox::default();
    let looked_up = json_of(&env, &["lookup", "nope"], 4);
    assert!(looked_up.get("error").is_none(), "{looked_up}");
}

/// What a command prints under `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Its own document.
    Document,
    /// The error document: it has no JSON form, or failed.
    Error,
    /// Nothing, ever: an agent's hook (Claude Code would add it to the conversation).
    Nothing,
}

/// Every command and subcommand with `--json`, in the order they run (each sees what the one
/// before it left): one JSON document on stdout, or the error document, never anything else.
/// The table is checked against the commands `--help` lists, so a new command needs a row.
#[test]
fn every_command_and_subcommand_prints_one_json_document_or_says_it_has_none() {
    use Form::{Document, Error, Nothing};
    let env = Sandbox::default();
    let root = env.root().to_str().unwrap().to_string();
    let file = |name: &str| format!("{root}/{name}");
    let (settings, hooks, tmux) = (file("settings.json"), file("hooks.json"), file("tmux.conf"));
    std::fs::write(&tmux, "set -g mouse on\n").unwrap();
    let owned: Vec<(Vec<String>, i32, Form)> = [
        (&["record", "S", "SID", "REPO"][..], 0, Document),
        (&["lookup", "S"], 0, Document),
        (&["resume-cmd", "S"], 0, Document),
        (&["touch", "S"], 0, Document),
        (&["preflight", "S"], 0, Document),
        (
            &["preflight", "--cwd", &root, "--session", "SID"],
            4,
            Document,
        ),
        (&["list"], 0, Document),
        (&["restore"], 0, Document),
        (&["restore", "--all"], 0, Document),
        (&["prune", "1d"], 0, Document),
        (&["path"], 0, Document),
        // No hook is installed in the sandbox: something needs doing.
        (&["doctor"], 1, Document),
        (&["forget", "S"], 0, Document),
        (
            &[
                "hook",
                "install",
                "claude",
                "--settings",
                &settings,
                "--dry-run",
            ],
            0,
            Document,
        ),
        (
            &["hook", "install", "claude", "--settings", &settings],
            0,
            Document,
        ),
        (
            &[
                "hook",
                "uninstall",
                "claude",
                "--settings",
                &settings,
                "--dry-run",
            ],
            0,
            Document,
        ),
        (
            &["hook", "uninstall", "claude", "--settings", &settings],
            0,
            Document,
        ),
        (
            &[
                "hook",
                "install",
                "gemini",
                "--settings",
                &settings,
                "--retention",
                "off",
            ],
            0,
            Document,
        ),
        (
            &["hook", "install", "copilot", "--settings", &hooks],
            0,
            Document,
        ),
        (
            &["hook", "uninstall", "copilot", "--settings", &hooks],
            0,
            Document,
        ),
        (
            &["hook", "install", "codex", "--codex-title", "--dry-run"],
            0,
            Document,
        ),
        (&["hook", "install", "codex", "--codex-title"], 0, Document),
        (&["hook", "uninstall", "codex"], 0, Document),
        (
            &["hook", "install", "tmux", "--settings", &tmux, "--dry-run"],
            0,
            Document,
        ),
        (
            &["hook", "install", "tmux", "--settings", &tmux],
            0,
            Document,
        ),
        (
            &["hook", "install", "tmux", "--settings", &tmux],
            0,
            Document,
        ),
        (
            &[
                "hook",
                "uninstall",
                "tmux",
                "--settings",
                &tmux,
                "--dry-run",
            ],
            0,
            Document,
        ),
        (
            &["hook", "uninstall", "tmux", "--settings", &tmux],
            0,
            Document,
        ),
        (
            &[
                "hook",
                "uninstall",
                "tmux",
                "--settings",
                &file("none.conf"),
            ],
            0,
            Document,
        ),
        (&["service", "status"], 0, Document),
        (&["service", "uninstall"], 0, Document),
        (&["completions", "bash"], 2, Error),
        (&["man"], 2, Error),
        (&["help"], 2, Error),
        (&["hook", "help"], 2, Error),
        (&["--version"], 2, Error),
        (&["hook", "claude"], 0, Nothing),
        (&["hook", "codex"], 0, Nothing),
        (&["hook", "gemini"], 0, Nothing),
        (&["hook", "copilot", "sessionStart"], 0, Nothing),
        (&["hook", "qwen"], 0, Nothing),
    ]
    .into_iter()
    .map(|(args, code, form)| (args.iter().map(|arg| arg.to_string()).collect(), code, form))
    .collect();
    let (mut said, mut shapes) = (String::new(), String::new());
    for (args, code, form) in &owned {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let shown = args.join(" ");
        let document = match form {
            Document => json_of(&env, &args, *code),
            Error => error_of(&env, &args, *code),
            Nothing => {
                crash_resume(&env)
                    .arg("--json")
                    .args(&args)
                    .write_stdin("{}")
                    .assert()
                    .code(*code)
                    .stdout("");
                continue;
            }
        };
        assert_eq!(
            document.get("error").is_some(),
            *form == Error,
            "`--json {shown}`: {document}"
        );
        if *form == Error {
            said += &format!("--json {shown}\n{document:#}\n\n");
        }
        if shown.contains("tmux") || shown.contains("--codex-title") {
            shapes += &format!("--json {shown}\n{document:#}\n\n");
        }
    }
    assert_cli_snapshot!(&env, "no_json_form", said);
    assert_cli_snapshot!(&env, "hook_tmux_and_codex_title", shapes);

    // Every command `--help` lists, and every `hook` subcommand, has a row.
    let listed = |args: &[&str]| -> Vec<String> {
        let help = crash_resume(&env).args(args).output().unwrap().stdout;
        let help = String::from_utf8(help).unwrap();
        help.split("Commands:\n")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap()
            .lines()
            .filter_map(|line| line.strip_prefix("  "))
            .filter(|line| !line.starts_with(' '))
            .map(|line| line.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    let covered = |words: &[&str]| {
        owned.iter().any(|(args, ..)| {
            args.starts_with(
                &words
                    .iter()
                    .map(|word| word.to_string())
                    .collect::<Vec<_>>(),
            )
        })
    };
    for command in listed(&["--help"]) {
        assert!(covered(&[&command]), "no row for `{command}`");
    }
    for command in listed(&["hook", "--help"]) {
        assert!(covered(&["hook", &command]), "no row for `hook {command}`");
    }
}
