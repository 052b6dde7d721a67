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
