//! `crash-resume hook install gemini` without the real CLI: merged, idempotent, backed up, what
//! Gemini needs said plainly, `--retention off` only on request, a file JSON does not allow
//! (a byte-order mark, comments) named and left alone, a huge one refused unread, another
//! user's left to them.

use std::fs;
use std::path::PathBuf;

use predicates::str::contains;
use serde_json::{Value, json};

use crate::harness::{crash_resume_agent, make_dir};
use crate::{Sandbox, crash_resume};

/// Settings a user already has: an unrelated `general` key and another tool's hook.
const EXISTING: &str = r#"{
  "general": { "vimMode": true },
  "hooks": {
    "SessionStart": [ { "hooks": [ { "type": "command", "command": "other-tool start" } ] } ]
  },
  "ui": { "theme": "GitHub" }
}
"#;

fn settings_path(env: &Sandbox) -> PathBuf {
    env.home().join(".gemini/settings.json")
}

fn install(env: &Sandbox, args: &[&str]) -> std::process::Output {
    crash_resume_agent(env)
        .args(["hook", "install", "gemini"])
        .args(args)
        .output()
        .unwrap()
}

fn settings(env: &Sandbox) -> Value {
    serde_json::from_slice(&fs::read(settings_path(env)).unwrap()).unwrap()
}

fn backups(env: &Sandbox) -> usize {
    fs::read_dir(env.home().join(".gemini"))
        .unwrap()
        .flatten()
        .filter(|item| {
            item.file_name()
                .to_string_lossy()
                .starts_with("settings.json.crash-resume-")
        })
        .count()
}

#[test]
fn hook_install_gemini_merges_idempotently_and_says_what_gemini_needs() {
    let env = Sandbox::default();
    make_dir(&env.home().join(".gemini"));
    fs::write(settings_path(&env), EXISTING).unwrap();

    let first = install(&env, &[]);
    assert!(first.status.success(), "{first:?}");
    let said = String::from_utf8_lossy(&first.stderr);
    for words in [
        "no hook in an untrusted folder",
        "GITHUB_SHA",
        "TMUX_PANE",
        "general.sessionRetention",
        "--retention off",
    ] {
        assert!(said.contains(words), "the install says {words:?}: {said}");
    }
    let merged = settings(&env);
    assert_eq!(
        merged["general"],
        json!({ "vimMode": true }),
        "never silently"
    );
    assert_eq!(merged["ui"]["theme"], "GitHub");
    let starts = merged["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(starts[0]["hooks"][0]["command"], "other-tool start");
    let command = starts[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.ends_with(" hook gemini"), "{command}");
    assert_eq!(
        merged["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
        command
    );
    assert_eq!(backups(&env), 1);

    let again = install(&env, &[]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("already installed in "));
    assert_eq!(backups(&env), 1);

    // On request only: the cleanup off, every other `general` key kept.
    let off = install(&env, &["--retention", "off"]);
    assert!(off.status.success(), "{off:?}");
    let said = String::from_utf8_lossy(&off.stderr);
    assert!(
        said.contains("set general.sessionRetention.enabled = false in "),
        "{said}"
    );
    assert!(said.contains("cleanup is off in this file"), "{said}");
    let merged = settings(&env);
    assert_eq!(
        merged["general"],
        json!({ "vimMode": true, "sessionRetention": { "enabled": false } })
    );
    assert_eq!(backups(&env), 2);
    let again = install(&env, &["--retention", "off"]);
    assert!(again.status.success());
    assert_eq!(backups(&env), 2, "nothing left to change");
}

#[test]
fn retention_is_geminis_setting_alone() {
    let env = Sandbox::default();
    crash_resume(&env)
        .args(["hook", "install", "claude", "--retention", "off"])
        .assert()
        .code(2)
        .stderr(contains("--retention is Gemini's setting"));
    assert!(!env.home().join(".claude").exists());
}

/// A settings file Gemini reads but JSON does not allow (a byte-order mark, comments) is left
/// untouched, and the message says what is in the way.
#[test]
fn a_bom_or_a_comment_is_named_and_the_file_left_untouched() {
    for (content, words) in [
        (
            "\u{feff}{\"ui\": {}}\n",
            "it begins with a byte-order mark (U+FEFF)",
        ),
        ("{\n  // mine\n  \"ui\": {}\n}\n", "it holds a comment"),
        ("{\n  \"ui\": {} /* mine */\n}\n", "it holds a comment"),
    ] {
        let env = Sandbox::default();
        make_dir(&env.home().join(".gemini"));
        fs::write(settings_path(&env), content).unwrap();
        let output = install(&env, &[]);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(
            said.contains(words) && said.contains("the file was left untouched"),
            "{content:?}: {said}"
        );
        assert_eq!(fs::read_to_string(settings_path(&env)).unwrap(), content);
        assert_eq!(backups(&env), 0);
    }
}

/// A settings file larger than any agent's (64 MiB of holes here) is not read into memory: it
/// is refused, saying its size, and left untouched.
#[test]
fn a_huge_settings_file_is_refused_unread() {
    let env = Sandbox::default();
    make_dir(&env.home().join(".gemini"));
    let file = fs::File::create(settings_path(&env)).unwrap();
    file.set_len(64 << 20).unwrap();
    drop(file);
    for args in [
        &["hook", "install", "gemini"][..],
        &["hook", "uninstall", "gemini"],
    ] {
        let output = crash_resume_agent(&env).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(
            said.contains("is 67108864 bytes, more than the 16777216 bytes"),
            "{args:?}: {said}"
        );
    }
    assert_eq!(fs::metadata(settings_path(&env)).unwrap().len(), 64 << 20);
    assert_eq!(backups(&env), 0);
}

/// A settings path with a newline is shown escaped everywhere the install names it.
#[test]
fn an_odd_settings_path_is_shown_escaped() {
    let env = Sandbox::default();
    let path = env.root().join("odd\nname.json");
    let output = install(&env, &["--settings", path.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!said.contains("odd\nname"), "{said}");
    assert!(said.contains(r"odd\nname.json"), "{said}");
}

/// A settings file another user owns (root running the install with that user's `$HOME`, as
/// `sudo` may leave it) is left to its owner: rewritten, it would have become root's.
#[test]
fn a_settings_file_another_user_owns_is_left_as_it_is() {
    let env = Sandbox::default();
    make_dir(&env.home().join(".gemini"));
    fs::write(settings_path(&env), EXISTING).unwrap();
    std::os::unix::fs::chown(settings_path(&env), Some(65534), Some(65534)).unwrap();
    let output = install(&env, &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("belongs to uid 65534, not to you (uid 0)"),
        "{said}"
    );
    assert_eq!(fs::read_to_string(settings_path(&env)).unwrap(), EXISTING);
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&fs::metadata(settings_path(&env)).unwrap()),
        65534
    );
    assert_eq!(backups(&env), 0);
}
