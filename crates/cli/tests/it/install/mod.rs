//! `crash-resume hook install|uninstall claude|codex`: merged into Claude Code's settings with
//! every other setting kept (in its order), idempotent, backed up, `--dry-run` writes nothing, a
//! file it cannot parse is refused and left byte for byte; installs at once and the agent's own
//! writes are not lost; a full disk leaves no backup; and the command it installs really records;
//! the advice fits what was typed; aborted or failing at each point of the write path, the settings
//! stay whole. Gemini's install: `gemini`; tmux's restore at server start: `tmux`.

mod copilot;
mod gemini;
mod qwen;
mod tmux;

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use predicates::prelude::*;
use predicates::str::{contains, is_empty};
use rustix::process::Signal;
use serde_json::{Value, json};

use crate::crash_points::POINTS;
use crate::harness::{
    agent_command, claude_dir, codex_home, crash_resume_agent, git_work_dir, hook_log, make_dir,
    run_with_stdin, session_end, session_start, uuid,
};
use crate::messages::{TERMINAL_CONTROL, once, refused, shown_escaped};
use crate::snapshot::assert_cli_snapshot;
use crate::{BIN, Reaped, Sandbox, crash_resume, crash_resume_std};

/// Settings a user already has: another tool's SessionStart and Stop hooks, and unrelated keys
/// before and after `hooks`.
const EXISTING: &str = r#"{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(cargo test:*)", "Read(~/notes/**)"],
    "deny": ["Bash(rm -rf:*)"]
  },
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "notify-send 'Claude is done'" } ] }
    ],
    "SessionStart": [
      { "matcher": "startup", "hooks": [ { "type": "command", "command": "other-tool session-start", "timeout": 5 } ] }
    ]
  },
  "env": { "DISABLE_TELEMETRY": "1", "EDITOR": "vim" },
  "cleanupPeriodDays": 45
}
"#;

fn install(env: &Sandbox, args: &[&str]) -> assert_cmd::assert::Assert {
    assert_cmd::Command::from_std(crash_resume_agent(env))
        .args(["hook", "install", "claude"])
        .args(args)
        .assert()
}

/// The backups install made of `path`: `<name>.crash-resume-<UTC time>.bak` beside it.
fn backups_of(path: &Path) -> Vec<PathBuf> {
    let prefix = format!(
        "{}.crash-resume-",
        path.file_name().unwrap().to_str().unwrap()
    );
    let mut found: Vec<PathBuf> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|item| item.unwrap().path())
        .filter(|item| {
            let name = item.file_name().unwrap().to_str().unwrap();
            name.starts_with(&prefix) && name.ends_with(".bak")
        })
        .collect();
    found.sort();
    for backup in &found {
        let name = backup.file_name().unwrap().to_str().unwrap();
        let stamp = &name[prefix.len()..name.len() - ".bak".len()];
        assert!(is_backup_stamp(stamp), "{name}: not named by its UTC time");
    }
    found
}

/// `20261202T213645Z`, or `20261202T213645Z-2` for a second backup in the same second: a UTC
/// time to the second, within a few minutes of now.
fn is_backup_stamp(stamp: &str) -> bool {
    let time = stamp.split('-').next().unwrap_or_default();
    let Some(time) = time
        .strip_suffix('Z')
        .filter(|time| time.len() == 15 && time.as_bytes()[8] == b'T')
    else {
        return false;
    };
    let rfc3339 = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &time[0..4],
        &time[4..6],
        &time[6..8],
        &time[9..11],
        &time[11..13],
        &time[13..15]
    );
    humantime::parse_rfc3339(&rfc3339).is_ok_and(|time| {
        let now = std::time::SystemTime::now();
        let age = now
            .duration_since(time)
            .unwrap_or_else(|error| error.duration());
        age < std::time::Duration::from_secs(600)
    })
}

/// The one backup install made of `path`.
fn backup_of(path: &Path) -> PathBuf {
    let found = backups_of(path);
    assert_eq!(
        found.len(),
        1,
        "one backup of {}: {found:?}",
        path.display()
    );
    found[0].clone()
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// The command of crash-resume's hook for `event` in `settings` (there must be exactly one).
fn our_command(settings: &Value, event: &str) -> String {
    let ours: Vec<&str> = settings["hooks"][event]
        .as_array()
        .unwrap_or_else(|| panic!("hooks.{event} is a list: {settings}"))
        .iter()
        .flat_map(|group| group["hooks"].as_array().unwrap())
        .filter_map(|hook| hook["command"].as_str())
        .filter(|command| command.contains("hook claude"))
        .collect();
    assert_eq!(
        ours.len(),
        1,
        "one crash-resume hook in {event}: {settings}"
    );
    ours[0].to_string()
}

#[test]
fn install_merges_into_existing_settings_keeps_a_backup_and_is_idempotent() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    fs::write(&settings_path, EXISTING).unwrap();
    let settings_arg = settings_path.to_str().unwrap();

    install(&env, &["--settings", settings_arg])
        .success()
        .stdout(
            contains("installed SessionStart and SessionEnd hooks into")
                .and(contains(settings_arg))
                .and(contains(BIN)),
        )
        // The next step, last.
        .stderr(
            contains("next: start Claude Code in a terminal pane")
                .and(contains("crash-resume list")),
        );
    let bytes = fs::read(&settings_path).unwrap();
    let merged: Value = serde_json::from_slice(&bytes).unwrap();
    let existing: Value = serde_json::from_str(EXISTING).unwrap();

    // Every other key is kept, in its order; theirs stay first within each event.
    assert_eq!(
        keys(&merged),
        ["model", "permissions", "hooks", "env", "cleanupPeriodDays"]
    );
    for key in ["model", "permissions", "env", "cleanupPeriodDays"] {
        assert_eq!(merged[key], existing[key], "{key}");
    }
    assert_eq!(
        keys(&merged["hooks"]),
        ["Stop", "SessionStart", "SessionEnd"]
    );
    assert_eq!(merged["hooks"]["Stop"], existing["hooks"]["Stop"]);
    let session_start = merged["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(session_start.len(), 2, "{merged}");
    assert_eq!(session_start[0], existing["hooks"]["SessionStart"][0]);
    let command = our_command(&merged, "SessionStart");
    assert_eq!(
        session_start[1],
        json!({ "hooks": [ { "type": "command", "command": command } ] })
    );
    assert_eq!(
        merged["hooks"]["SessionEnd"],
        json!([ { "hooks": [ { "type": "command", "command": command } ] } ])
    );
    // The command runs this binary by its absolute path, on the index chosen at install time.
    assert!(command.starts_with(BIN), "{command}");
    assert!(command.ends_with(" hook claude"), "{command}");
    assert!(
        command.contains(env.index_path().to_str().unwrap()),
        "{command}"
    );
    assert_eq!(
        fs::read(backup_of(&settings_path)).unwrap(),
        EXISTING.as_bytes()
    );

    // A second run finds it installed and writes nothing.
    install(&env, &["--settings", settings_arg])
        .success()
        .stdout(format!("already installed in {settings_arg}\n"))
        .stderr(contains("next: "));
    assert_eq!(fs::read(&settings_path).unwrap(), bytes, "byte-identical");
    assert_eq!(
        fs::read(backup_of(&settings_path)).unwrap(),
        EXISTING.as_bytes(),
        "the backup still holds the settings before the install"
    );
}

#[test]
fn dry_run_prints_the_merged_settings_and_writes_nothing() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    fs::write(&settings_path, EXISTING).unwrap();
    let settings_arg = settings_path.to_str().unwrap();

    let assert = install(&env, &["--settings", settings_arg, "--dry-run"])
        .success()
        .stderr(
            contains("would add SessionStart and SessionEnd")
                .and(contains("dry run"))
                .and(contains(settings_arg)),
        );
    let printed: Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(fs::read_to_string(&settings_path).unwrap(), EXISTING);
    assert_eq!(backups_of(&settings_path), Vec::<PathBuf>::new());

    // What it printed is what the real install writes.
    install(&env, &["--settings", settings_arg]).success();
    let written: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    assert_eq!(printed, written);
    assert_eq!(keys(&printed), keys(&written));

    // Once installed, a dry run says so and still writes nothing.
    let bytes = fs::read(&settings_path).unwrap();
    install(&env, &["--settings", settings_arg, "--dry-run"])
        .success()
        .stderr(contains("already installed").and(contains("dry run")));
    assert_eq!(fs::read(&settings_path).unwrap(), bytes);
}

/// (what the file holds, pieces of the message on stderr besides the file's path)
#[rustfmt::skip]
const REFUSED: &[(&str, &[&str])] = &[
    ("{\n  \"model\": \"opus\",\n",                     &["cannot parse", "left untouched"]),
    ("{ \"model\": \"opus\" } trailing",                &["cannot parse", "left untouched"]),
    ("// settings\n{ \"model\": \"opus\" }\n",          &["cannot parse", "left untouched"]),
    ("[\"not\", \"an\", \"object\"]\n",                 &["is not a JSON object", "left untouched"]),
    ("{ \"hooks\": [\"SessionStart\"] }\n",              &["`hooks` is not a JSON object", "left untouched"]),
    ("{ \"hooks\": { \"SessionEnd\": { \"x\": 1 } } }\n", &["`hooks.SessionEnd` is not a list", "left untouched"]),
    ("{ \"model\": \"opus\", \"model\": \"sonnet\" }\n", &["holds a key twice", "`model` appears twice", "left untouched"]),
    ("{ \"env\": { \"A\": \"1\", \"B\": [ { \"x\": 1, \"x\": 1 } ] } }\n", &["`env.B[0].x` appears twice", "left untouched"]),
];

#[test]
fn a_settings_file_it_cannot_use_is_refused_and_left_untouched() {
    for (content, pieces) in REFUSED {
        let env = Sandbox::default();
        let settings_path = env.root().join("settings.json");
        fs::write(&settings_path, content).unwrap();
        let settings_arg = settings_path.to_str().unwrap();
        for dry_run in [false, true] {
            let mut args = vec!["--settings", settings_arg];
            if dry_run {
                args.push("--dry-run");
            }
            let assert = install(&env, &args).code(1).stdout(is_empty());
            let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
            assert!(stderr.contains(settings_arg), "{content:?}: {stderr}");
            for piece in *pieces {
                assert!(
                    stderr.contains(piece),
                    "{content:?}: lacks {piece:?}: {stderr}"
                );
            }
            assert_eq!(
                fs::read_to_string(&settings_path).unwrap(),
                *content,
                "byte-identical"
            );
            let mut files: Vec<String> = fs::read_dir(env.root())
                .unwrap()
                .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with("settings"))
                .collect();
            files.sort();
            assert_eq!(
                files,
                ["settings.json"],
                "{content:?}: no backup, no temp file"
            );
        }
    }
}

#[test]
fn a_missing_settings_file_is_created_with_its_dir() {
    let env = Sandbox::default();
    let settings_path = env
        .root()
        .join("fresh")
        .join("claude")
        .join("settings.json");
    install(&env, &["--settings", settings_path.to_str().unwrap()])
        .success()
        .stdout(contains("installed SessionStart and SessionEnd hooks"));
    let written: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    assert_eq!(keys(&written), ["hooks"]);
    assert_eq!(keys(&written["hooks"]), ["SessionStart", "SessionEnd"]);
    assert_eq!(
        our_command(&written, "SessionStart"),
        our_command(&written, "SessionEnd")
    );
    assert_eq!(
        backups_of(&settings_path),
        Vec::<PathBuf>::new(),
        "nothing to back up"
    );
}

#[test]
fn without_settings_flag_it_uses_the_claude_config_dir() {
    // CLAUDE_CONFIG_DIR set: its settings.json.
    let env = Sandbox::default();
    install(&env, &[]).success().stdout(contains(
        claude_dir(&env).join("settings.json").to_str().unwrap(),
    ));
    assert!(claude_dir(&env).join("settings.json").is_file());
    assert!(!env.home().join(".claude").exists());

    // Unset: ~/.claude/settings.json.
    let env = Sandbox::default();
    assert_cmd::Command::from_std(crash_resume_agent(&env))
        .env_remove("CLAUDE_CONFIG_DIR")
        .args(["hook", "install", "claude"])
        .assert()
        .success();
    let default = env.home().join(".claude").join("settings.json");
    let written: Value = serde_json::from_slice(&fs::read(&default).unwrap()).unwrap();
    our_command(&written, "SessionEnd");
    assert!(!claude_dir(&env).exists());
}

#[test]
fn install_refuses_bad_usage() {
    let env = Sandbox::default();
    install(&env, &["--settings", ""])
        .code(2)
        .stdout(is_empty())
        .stderr(contains("--settings is empty"));
    assert!(!claude_dir(&env).exists(), "nothing written");
    assert_cmd::Command::from_std(crash_resume_agent(&env))
        .args(["hook", "install", "codex", "--settings", ""])
        .assert()
        .code(2)
        .stdout(is_empty())
        .stderr(contains("--settings is empty"));
    assert!(!codex_home(&env).exists(), "nothing written");
}

/// Codex keeps its hooks in `$CODEX_HOME/hooks.json`, shaped like Claude Code's settings:
/// merged with the user's own hooks, idempotent, backed up; the trust step is spelled out.
#[test]
fn install_codex_writes_hooks_json_merged_backed_up_and_idempotent() {
    let env = Sandbox::default();
    let hooks_path = codex_home(&env).join("hooks.json");
    fs::create_dir_all(codex_home(&env)).unwrap();
    let existing = r#"{
  "hooks": {
    "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ],
    "SessionStart": [ { "matcher": "startup", "hooks": [ { "type": "command", "command": "other-tool start" } ] } ]
  }
}
"#;
    fs::write(&hooks_path, existing).unwrap();
    let codex_install = || {
        assert_cmd::Command::from_std(crash_resume_agent(&env))
            .args(["hook", "install", "codex"])
            .assert()
    };
    codex_install()
        .success()
        .stdout(
            contains("installed SessionStart and SessionEnd hooks")
                .and(contains(hooks_path.to_str().unwrap())),
        )
        .stderr(
            contains("Hooks need")
                .and(contains("Trust all and continue"))
                .and(contains(format!(
                    "{}:session_start:0:0",
                    hooks_path.display()
                )))
                .and(contains("--no-daemon"))
                .and(contains("--codex-title")),
        );
    assert_eq!(
        fs::read_to_string(backup_of(&hooks_path)).unwrap(),
        existing
    );
    let written: Value = serde_json::from_slice(&fs::read(&hooks_path).unwrap()).unwrap();
    assert_eq!(
        written["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    assert_eq!(
        written["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        "other-tool start"
    );
    for event in ["SessionStart", "SessionEnd"] {
        let ours: Vec<&str> = written["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|group| group["hooks"].as_array().unwrap())
            .filter_map(|hook| hook["command"].as_str())
            .filter(|command| command.ends_with(" hook codex"))
            .collect();
        assert_eq!(ours.len(), 1, "one crash-resume hook in {event}: {written}");
    }
    let bytes = fs::read(&hooks_path).unwrap();
    codex_install()
        .success()
        .stdout(contains("already installed"));
    assert_eq!(fs::read(&hooks_path).unwrap(), bytes, "idempotent");
    // A Claude install alongside does not count as the Codex one, nor the reverse.
    install(&env, &[])
        .success()
        .stdout(contains("installed SessionStart and SessionEnd"));
    assert_eq!(fs::read(&hooks_path).unwrap(), bytes);
}

/// The thread id in Codex's pane titles is never added silently: a plain install only explains
/// it; `--codex-title` adds it to the user's items (Codex's defaults when none are set), keeps
/// the rest of config.toml as written, backs it up, and is idempotent; `--dry-run` writes
/// nothing; a title setting Codex would not read is refused and left alone.
#[test]
fn install_codex_title_adds_the_thread_id_on_request_only() {
    let env = Sandbox::default();
    let config = codex_home(&env).join("config.toml");
    fs::create_dir_all(codex_home(&env)).unwrap();
    let existing = "# my settings\nmodel = \"gpt-5\"\n\n[tui]\nterminal_title = [\"spinner\", \"project\"] # mine\n";
    fs::write(&config, existing).unwrap();
    let codex_install = |extra: &[&str]| {
        assert_cmd::Command::from_std(crash_resume_agent(&env))
            .args(["hook", "install", "codex"])
            .args(extra)
            .assert()
    };
    codex_install(&[])
        .success()
        .stderr(contains("\"thread-id\"").and(contains("--codex-title")));
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        existing,
        "not silently"
    );
    codex_install(&["--codex-title", "--dry-run"])
        .success()
        .stdout(contains("\"spinner\", \"project\", \"thread-id\""));
    assert_eq!(fs::read_to_string(&config).unwrap(), existing, "dry run");
    codex_install(&["--codex-title"])
        .success()
        .stderr(contains("set terminal_title").and(contains("kept as")));
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "# my settings\nmodel = \"gpt-5\"\n\n[tui]\nterminal_title = [\"spinner\", \"project\", \"thread-id\"] # mine\n"
    );
    assert_eq!(fs::read_to_string(backup_of(&config)).unwrap(), existing);
    let bytes = fs::read(&config).unwrap();
    codex_install(&["--codex-title"])
        .success()
        .stderr(contains("already show the thread id").and(contains("(set there)")));
    assert_eq!(fs::read(&config).unwrap(), bytes, "idempotent");

    // No setting yet: Codex's own defaults are kept before the thread id.
    fs::remove_file(&config).unwrap();
    codex_install(&["--codex-title"]).success();
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "[tui]\nterminal_title = [\"activity\", \"project-name\", \"thread-id\"]\n"
    );

    // A setting Codex would not read is refused, the file left alone.
    let odd = "[tui]\nterminal_title = \"thread-id\"\n";
    fs::write(&config, odd).unwrap();
    codex_install(&["--codex-title"])
        .code(1)
        .stderr(contains("not a list of title items").and(contains("left untouched")));
    assert_eq!(fs::read_to_string(&config).unwrap(), odd);
    // It is Codex's setting only.
    assert_cmd::Command::from_std(crash_resume_agent(&env))
        .args(["hook", "install", "claude", "--codex-title"])
        .assert()
        .code(2)
        .stderr(contains("--codex-title is Codex's setting"));
}

/// The exact command string written into the settings runs as Claude Code would run it
/// (`sh -c`, the payload on stdin), without `CRASH_RESUME_INDEX_PATH`: it names the index itself.
#[test]
fn the_installed_command_records_and_ends_sessions() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    fs::write(&settings_path, EXISTING).unwrap();
    install(&env, &["--settings", settings_path.to_str().unwrap()]).success();
    let settings: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    let cwd = git_work_dir(&env, "installed", "src");
    let session = uuid(42);

    let run = |event: &str, payload: String| {
        let mut command: Command = agent_command(&env, "sh");
        command
            .arg("-c")
            .arg(our_command(&settings, event))
            .env_remove("CRASH_RESUME_INDEX_PATH")
            .env("CMUX_SURFACE_ID", "installed-surface")
            .current_dir(&cwd);
        run_with_stdin(command, &payload).assert_silent_success(event);
    };
    run("SessionStart", session_start(&session, &cwd, "startup"));
    let entry = env.entry("cmux:installed-surface").expect("recorded");
    assert_eq!(entry["sessionId"], session);
    assert_eq!(entry["repo"], "installed");
    assert_eq!(entry["provider"], "claude");
    assert_eq!(entry["config_dir"], json!(claude_dir(&env)));
    assert_eq!(entry.get("ended_at"), None);

    run(
        "SessionEnd",
        session_end(&session, &cwd, "prompt_input_exit"),
    );
    let entry = env.entry("cmux:installed-surface").unwrap();
    assert!(entry["ended_at"].is_u64(), "{entry}");
    assert!(!hook_log(&env).contains("error"), "{}", hook_log(&env));
}

/// A dotfile manager keeps `settings.json` as a symlink into its repository: the install writes
/// through the link (as the index does), and the link stays a link.
#[test]
fn a_symlinked_settings_file_is_written_through_the_link() {
    let env = Sandbox::default();
    let dotfiles = env.root().join("dotfiles");
    fs::create_dir(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    fs::write(&real, EXISTING).unwrap();
    let link = claude_dir(&env).join("settings.json");
    fs::create_dir_all(claude_dir(&env)).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();

    install(&env, &[]).success();
    assert!(
        fs::symlink_metadata(&link).unwrap().is_symlink(),
        "the settings file is still a symlink"
    );
    let written: Value = serde_json::from_slice(&fs::read(&real).unwrap()).unwrap();
    our_command(&written, "SessionStart");
    our_command(&written, "SessionEnd");
    assert_eq!(written["model"], "opus");
    install(&env, &[])
        .success()
        .stdout(contains("already installed"));
}

#[test]
fn the_users_own_files_are_never_overwritten_and_values_are_kept_as_written() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    // Numbers JSON parsers round (a 23-digit integer, a trailing zero, an exponent), kept as
    // written; and the user's own `settings.json.bak`, which is not ours to replace.
    let original = "{\n  \"big\": 12345678901234567890123,\n  \"ratio\": 1.50,\n  \"tiny\": 1e-7,\n  \"hooks\": {}\n}\n";
    fs::write(&settings_path, original).unwrap();
    let users_backup = env.root().join("settings.json.bak");
    fs::write(&users_backup, "the user's own backup").unwrap();
    install(&env, &["--settings", settings_path.to_str().unwrap()])
        .success()
        .stdout(contains("the previous version is kept as"));
    let text = fs::read_to_string(&settings_path).unwrap();
    for written in [
        "\"big\": 12345678901234567890123,",
        "\"ratio\": 1.50,",
        "\"tiny\": 1e-7,",
    ] {
        assert!(text.contains(written), "{written} kept in {text}");
    }
    assert_eq!(
        fs::read_to_string(&users_backup).unwrap(),
        "the user's own backup"
    );
    assert_eq!(
        fs::read_to_string(backup_of(&settings_path)).unwrap(),
        original
    );
}

#[test]
fn only_its_own_exact_command_counts_as_installed() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    let lookalike = json!({ "hooks": { "SessionStart": [ { "hooks": [
        { "type": "command", "command": "echo crash-resume is not run here; hook claude" }
    ] } ] } });
    fs::write(&settings_path, lookalike.to_string()).unwrap();
    install(&env, &["--settings", settings_path.to_str().unwrap()])
        .success()
        .stdout(contains("installed SessionStart and SessionEnd hooks"));
    let merged: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    assert_eq!(merged["hooks"]["SessionStart"].as_array().unwrap().len(), 2);
    our_command(&merged, "SessionEnd");
}

#[cfg(unix)]
#[test]
fn a_read_only_settings_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    fs::write(&settings_path, EXISTING).unwrap();
    fs::set_permissions(&settings_path, fs::Permissions::from_mode(0o444)).unwrap();
    let settings_arg = settings_path.to_str().unwrap();
    install(&env, &["--settings", settings_arg])
        .code(1)
        .stdout(is_empty())
        .stderr(
            contains(settings_arg)
                .and(contains("is read-only"))
                .and(contains("chmod u+w")),
        );
    assert_eq!(fs::read_to_string(&settings_path).unwrap(), EXISTING);
    assert_eq!(backups_of(&settings_path), Vec::<PathBuf>::new());
}

#[cfg(unix)]
#[test]
fn a_fifo_or_an_unsafe_symlink_for_settings_is_refused_at_once() {
    use std::os::unix::fs::PermissionsExt;
    let env = Sandbox::default();
    let fifo = env.root().join("fifo.json");
    crate::harness::mkfifo(&fifo);
    install(&env, &["--settings", fifo.to_str().unwrap()])
        .code(1)
        .stderr(contains("a FIFO, not a regular file"));
    // A link in a dir others can write to could be swapped under us: not followed.
    let shared = env.root().join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    let target = env.root().join("real.json");
    fs::write(&target, "{}").unwrap();
    let link = shared.join("settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    install(&env, &["--settings", link.to_str().unwrap()])
        .code(1)
        .stderr(contains("can be written by others").and(contains("not followed")));
    assert_eq!(fs::read_to_string(&target).unwrap(), "{}");
}

#[cfg(unix)]
#[test]
fn directories_it_creates_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Sandbox::default();
    let settings_path = env.root().join("new-a/new-b/settings.json");
    install(&env, &["--settings", settings_path.to_str().unwrap()]).success();
    for dir in ["new-a", "new-a/new-b"] {
        let mode = fs::metadata(env.root().join(dir))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700, "{dir}");
    }
}

/// The crash-resume hook commands in `settings` for `event`.
fn commands_in(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .unwrap_or_else(|| panic!("hooks.{event} is a list: {settings}"))
        .iter()
        .flat_map(|group| group["hooks"].as_array().unwrap())
        .filter_map(|hook| hook["command"].as_str().map(str::to_string))
        .collect()
}

/// Installs at once into one file, each with its own index (`--path`): every one lands, none
/// is lost to another's write (each is a locked read-merge-write).
#[test]
fn concurrent_installs_with_different_paths_all_land() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    fs::write(&settings_path, EXISTING).unwrap();
    let settings_arg = settings_path.to_str().unwrap();
    let indexes: Vec<String> = (0..8)
        .map(|n| {
            env.root()
                .join(format!("index-{n}/index.json"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let children: Vec<Reaped> = indexes
        .iter()
        .map(|index| {
            Reaped::new(
                crash_resume_agent(&env)
                    .args(["--path", index])
                    .args(["hook", "install", "claude", "--settings", settings_arg])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap(),
            )
        })
        .collect();
    for child in children {
        let output = child.wait_with_output();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(String::from_utf8_lossy(&output.stdout).contains("installed"));
    }
    let settings: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    for event in ["SessionStart", "SessionEnd"] {
        let commands = commands_in(&settings, event);
        for index in &indexes {
            assert_eq!(
                commands
                    .iter()
                    .filter(|command| command.contains(index.as_str()))
                    .count(),
                1,
                "{event} runs the install for {index} once: {settings:#}"
            );
        }
    }
    assert_eq!(settings["model"], "opus");
    assert_eq!(backups_of(&settings_path).len(), indexes.len());
}

/// The agent writes its own settings between the install's read and its rename (the install
/// stopped right before the rename): the install sees the change, merges into the new settings
/// and keeps them; the backup it leaves holds the agent's version, not a stale one.
#[test]
fn settings_the_agent_writes_during_an_install_are_merged_into_not_lost() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    fs::write(&settings_path, EXISTING).unwrap();
    let settings_arg = settings_path.to_str().unwrap();
    let install = Reaped::new(
        crash_resume_std(&env)
            .env("CRASH_RESUME_FAULT", "backup-written:stop")
            .args(["hook", "install", "claude", "--settings", settings_arg])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    install.wait_until_stopped();
    let mut agents: Value = serde_json::from_str(EXISTING).unwrap();
    agents["model"] = json!("sonnet");
    agents["theme"] = json!("dark");
    let agents_text = serde_json::to_string_pretty(&agents).unwrap();
    fs::write(&settings_path, &agents_text).unwrap();
    install.signal(Signal::CONT);
    // The second attempt, made from the agent's settings, stops at the same point.
    install.wait_until_stopped();
    install.signal(Signal::CONT);
    let output = install.wait_with_output();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let settings: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    assert_eq!(settings["model"], "sonnet", "{settings:#}");
    assert_eq!(settings["theme"], "dark", "{settings:#}");
    our_command(&settings, "SessionStart");
    our_command(&settings, "SessionEnd");
    assert_eq!(
        fs::read_to_string(backup_of(&settings_path)).unwrap(),
        agents_text,
        "the one backup holds what the install replaced"
    );
}

/// A disk that fills while the install writes (a 64 KiB tmpfs: the new settings fit, the
/// backup does not): it fails, says so of the settings file, and leaves the settings as they
/// were and no backup, whole or cut short. Mounting needs root (CI runs as root): without it
/// this test fails, it does not skip.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_the_settings_intact_and_no_backup_needs_root() {
    let env = Sandbox::default();
    let disk = make_dir(&env.root().join("small-disk"));
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&disk)
        .output()
        .expect("run mount");
    assert!(
        mounted.status.success(),
        "this test needs root to mount a small tmpfs: {}",
        String::from_utf8_lossy(&mounted.stderr)
    );
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&disk);
    // 24 KiB of settings: the file and its new version fit in 64 KiB, a third copy does not.
    let mut settings: Value = serde_json::from_str(EXISTING).unwrap();
    settings["notes"] = json!("x".repeat(24 * 1024));
    let original = serde_json::to_string_pretty(&settings).unwrap();
    let settings_path = disk.join("settings.json");
    fs::write(&settings_path, &original).unwrap();
    let settings_arg = settings_path.to_str().unwrap();
    install(&env, &["--settings", settings_arg])
        .code(1)
        .stdout(is_empty())
        .stderr(
            contains(settings_arg)
                .and(contains("No space left on device"))
                .and(contains("--settings"))
                .and(contains("index").not())
                .and(contains("--path").not()),
        );
    assert_eq!(fs::read_to_string(&settings_path).unwrap(), original);
    let left: Vec<String> = fs::read_dir(&disk)
        .unwrap()
        .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["settings.json"], "no backup and no temp file left");
}

/// `hook uninstall` with `args`.
fn uninstall(env: &Sandbox, agent: &str, args: &[&str]) -> assert_cmd::assert::Assert {
    assert_cmd::Command::from_std(crash_resume_agent(env))
        .args(["hook", "uninstall", agent])
        .args(args)
        .assert()
}

/// The binary under test, copied to `dir` (another install of it, as from a second
/// `cargo install --root`).
fn second_binary(dir: &Path) -> PathBuf {
    make_dir(dir);
    let copy = dir.join("crash-resume");
    fs::copy(BIN, &copy).unwrap();
    copy
}

/// An install from a second binary path replaces the first one's hooks instead of adding a
/// second pair; `hook uninstall` then removes every hook of ours, whichever binary installed
/// it, keeps everything else as written, backs up as install does, and is idempotent.
#[test]
fn uninstall_removes_every_hook_of_ours_and_keeps_the_rest() {
    let env = Sandbox::default();
    let settings_path = env.root().join("settings.json");
    fs::write(&settings_path, EXISTING).unwrap();
    let settings_arg = settings_path.to_str().unwrap();

    install(&env, &["--settings", settings_arg]).success();
    let other = second_binary(&env.root().join("other-bin"));
    let other_install = agent_command(&env, &other)
        .args(["hook", "install", "claude", "--settings", settings_arg])
        .output()
        .unwrap();
    assert!(
        other_install.status.success(),
        "{}",
        String::from_utf8_lossy(&other_install.stderr)
    );
    let stdout = String::from_utf8_lossy(&other_install.stdout);
    assert!(
        stdout.contains("replacing the SessionStart hook (") && stdout.contains(BIN),
        "{stdout}"
    );
    let settings: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    for event in ["SessionStart", "SessionEnd"] {
        let ours: Vec<String> = commands_in(&settings, event)
            .into_iter()
            .filter(|command| command.contains("crash-resume"))
            .collect();
        assert_eq!(ours.len(), 1, "{event}: {settings:#}");
        assert!(ours[0].starts_with(other.to_str().unwrap()), "{ours:?}");
    }
    // And the first binary's install puts its own back, replacing the second's.
    install(&env, &["--settings", settings_arg]).success();

    let before = backups_of(&settings_path).len();
    let dry = uninstall(&env, "claude", &["--settings", settings_arg, "--dry-run"]).success();
    let dry_stdout: Value = serde_json::from_slice(&dry.get_output().stdout).unwrap();
    assert_eq!(dry_stdout, serde_json::from_str::<Value>(EXISTING).unwrap());
    assert!(
        String::from_utf8_lossy(&dry.get_output().stderr)
            .contains("would remove the SessionStart hook"),
        "{dry:?}"
    );
    assert_eq!(
        backups_of(&settings_path).len(),
        before,
        "a dry run writes nothing"
    );

    uninstall(&env, "claude", &["--settings", settings_arg])
        .success()
        .stdout(
            contains("removed the SessionStart hook (")
                .and(contains("and the SessionEnd hook ("))
                .and(contains("(the previous version is kept as ")),
        );
    let left: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::from_str::<Value>(EXISTING).unwrap(),
        "everything else kept"
    );
    assert_eq!(backups_of(&settings_path).len(), before + 1);

    // Again: nothing to remove, nothing written.
    let bytes = fs::read(&settings_path).unwrap();
    uninstall(&env, "claude", &["--settings", settings_arg])
        .success()
        .stdout(format!(
            "no hooks of crash-resume in {settings_arg}; nothing to remove\n"
        ));
    assert_eq!(fs::read(&settings_path).unwrap(), bytes);
    assert_eq!(backups_of(&settings_path).len(), before + 1);

    // A file that is not there is left so.
    let missing = env.root().join("none").join("settings.json");
    uninstall(&env, "claude", &["--settings", missing.to_str().unwrap()])
        .success()
        .stderr(contains("does not exist"));
    assert!(!missing.parent().unwrap().exists());
}

/// A hook of ours that shares its group with another tool's hook: only ours goes, and the
/// group stays with the other. Codex's hooks.json (its default place, under `CODEX_HOME`) is
/// handled the same; `--json` lists what was removed.
#[test]
fn uninstall_takes_only_our_hook_out_of_a_shared_group_for_every_agent() {
    let env = Sandbox::default();
    for agent in ["claude", "codex"] {
        let path = match agent {
            "claude" => claude_dir(&env).join("settings.json"),
            _ => codex_home(&env).join("hooks.json"),
        };
        make_dir(path.parent().unwrap());
        let shared = json!({
            "model": "x",
            "hooks": {
                "SessionStart": [
                    { "matcher": "startup", "hooks": [
                        { "type": "command", "command": "other-tool start", "timeout": 5 },
                        { "type": "command", "command": format!("/old/bin/crash-resume hook {agent}") }
                    ] }
                ],
                "SessionEnd": [
                    { "hooks": [ { "type": "command", "command": format!("'/opt/my tools/crash-resume' --path /var/x/index.json hook {agent}") } ] }
                ]
            }
        });
        fs::write(&path, serde_json::to_vec_pretty(&shared).unwrap()).unwrap();
        let output = crash_resume_agent(&env)
            .args(["--json", "hook", "uninstall", agent])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let document: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(document["written"], true, "{document}");
        assert_eq!(document["settings"], path.to_str().unwrap());
        assert_eq!(
            document["removed"],
            json!([
                { "event": "SessionStart", "command": format!("/old/bin/crash-resume hook {agent}") },
                { "event": "SessionEnd", "command": format!("'/opt/my tools/crash-resume' --path /var/x/index.json hook {agent}") },
            ])
        );
        let left: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(
            left,
            json!({
                "model": "x",
                "hooks": {
                    "SessionStart": [
                        { "matcher": "startup", "hooks": [
                            { "type": "command", "command": "other-tool start", "timeout": 5 }
                        ] }
                    ]
                }
            }),
            "{agent}"
        );
    }
}

#[test]
fn settings_advice_fits_what_was_typed() {
    let env = Sandbox::default();
    let settings = env.root().join("settings.json");
    fs::write(&settings, "{ not json").unwrap();
    let given = refused_install(&env, Some(&settings));
    assert_cli_snapshot!(&env, "settings_given_cannot_parse", &given);
    let default = env.home().join(".claude/settings.json");
    fs::create_dir_all(default.parent().unwrap()).unwrap();
    fs::write(&default, "{ not json").unwrap();
    let not_given = refused_install(&env, None);
    assert_cli_snapshot!(&env, "settings_not_given_cannot_parse", &not_given);
}

fn refused_install(env: &Sandbox, settings: Option<&Path>) -> String {
    let mut command = crash_resume(env);
    command.args(["hook", "install", "claude"]);
    if let Some(settings) = settings {
        command.arg("--settings").arg(settings);
    }
    let stderr = refused(command, 1);
    once(&stderr, "cannot parse");
    stderr
}

#[test]
fn hook_install_shows_a_control_character_in_the_settings_path_escaped() {
    let env = Sandbox::default();
    let dir = env.root().join(TERMINAL_CONTROL);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("s.json"), "{}\n").unwrap();
    let output = crash_resume(&env)
        .args(["hook", "install", "claude", "--settings"])
        .arg(dir.join("s.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    shown_escaped(&[output.stdout, output.stderr].concat());
    let settings = fs::read_to_string(dir.join("s.json")).unwrap();
    assert!(settings.contains("SessionStart"), "installed: {settings}");
}

/// `hook install` replaces Claude Code's settings the way the index is written (temp file,
/// sync, backup, rename, sync), under a lock of its own: the points after `locked` apply. A
/// failure before the rename leaves the settings as they were and no backup.
#[test]
fn hook_install_aborted_or_failing_at_every_point_leaves_whole_settings() {
    for action in ["abort", "fail"] {
        for point in POINTS {
            let context = format!("hook install, {action} at {point}");
            let env = Sandbox::default();
            let settings: PathBuf = env.root().join("claude").join("settings.json");
            fs::create_dir_all(settings.parent().unwrap()).unwrap();
            let original = b"{\n  \"model\": \"opus\"\n}\n".to_vec();
            fs::write(&settings, &original).unwrap();
            let settings_text = settings.to_str().unwrap();
            let output = crash_resume_std(&env)
                .args(["hook", "install", "claude", "--settings", settings_text])
                .env("CRASH_RESUME_FAULT", format!("{point}:{action}"))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            let after = fs::read(&settings).unwrap();
            let installed = serde_json::from_slice::<Value>(&after)
                .unwrap_or_else(|error| panic!("{context}: settings do not parse: {error}"));
            let replaced = after != original;
            match (point, action) {
                // No lock is taken: the point is never reached.
                ("locked", _) => assert!(output.status.success() && replaced, "{context}"),
                (_, "abort") => {
                    assert_eq!(
                        output.status.signal(),
                        Some(Signal::ABORT.as_raw()),
                        "{context}"
                    );
                    assert_eq!(replaced, point == "renamed", "{context}");
                }
                ("renamed", _) => {
                    assert_eq!(output.status.code(), Some(1), "{context}");
                    assert!(replaced, "{context}");
                    assert!(
                        stderr.contains(settings_text) && stderr.contains("is in place"),
                        "{context}: {stderr}"
                    );
                }
                _ => {
                    assert_eq!(output.status.code(), Some(1), "{context}");
                    assert_eq!(after, original, "{context}: the settings are as they were");
                    assert!(
                        stderr.contains(&format!("injected fault at {point}"))
                            && stderr.contains(settings.parent().unwrap().to_str().unwrap())
                            && stderr.contains("left as it was"),
                        "{context}: {stderr}"
                    );
                    assert!(
                        stderr.contains("--settings")
                            && !stderr.contains("index")
                            && !stderr.contains("--path"),
                        "{context}: said of the settings file: {stderr}"
                    );
                    // Neither a temp file nor a backup is left: the backup of a failed install
                    // is taken away again.
                    let names: Vec<String> = fs::read_dir(settings.parent().unwrap())
                        .unwrap()
                        .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
                        .filter(|name| name.ends_with(".tmp") || name.ends_with(".bak"))
                        .collect();
                    assert_eq!(names, Vec::<String>::new(), "{context}");
                }
            }
            assert_eq!(
                installed["model"], "opus",
                "{context}: other settings are kept"
            );
            // The next install goes through (or finds the hooks there).
            crash_resume(&env)
                .args(["hook", "install", "claude", "--settings", settings_text])
                .assert()
                .success();
            // Nor is a temp file a killed install left: the next one removes it.
            let temps: Vec<String> = fs::read_dir(settings.parent().unwrap())
                .unwrap()
                .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".tmp"))
                .collect();
            assert_eq!(temps, Vec::<String>::new(), "{context}");
            let settings: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
            assert_eq!(settings["model"], "opus", "{context}");
            assert!(settings["hooks"]["SessionStart"].is_array(), "{context}");
        }
    }
}

/// The binary under test copied to `dir/name`: another name it is installed under (Nix's
/// wrapper runs `.crash-resume-wrapped`; a user may rename it).
fn binary_named(dir: &Path, name: &str) -> PathBuf {
    make_dir(dir);
    let copy = dir.join(name);
    fs::copy(BIN, &copy).unwrap();
    copy
}

/// `hook VERB AGENT --settings FILE` run by `program`, which must succeed.
fn hook_by(env: &Sandbox, program: &Path, verb: &str, agent: &str, settings: &str) -> String {
    let output = agent_command(env, program)
        .args(["hook", verb, agent, "--settings", settings])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{program:?} hook {verb} {agent}: {output:?}"
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Every command of `settings` (either shape: a group's `command`s, Copilot's `bash`).
fn all_commands(settings: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for groups in settings["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|hooks| hooks.values())
    {
        for group in groups.as_array().into_iter().flatten() {
            if let Some(bash) = group["bash"].as_str() {
                found.push(bash.to_string());
            }
            for hook in group["hooks"].as_array().into_iter().flatten() {
                found.extend(hook["command"].as_str().map(str::to_string));
            }
        }
    }
    found.sort();
    found
}

/// Hooks a binary not named `crash-resume` installed (Nix's `.crash-resume-wrapped`, a renamed
/// copy) are ours by the shape of their command: an install from another path replaces them
/// (not doubled), and uninstall removes them; another tool's command with `hook claude` in it
/// stays through all of it. For the agents' settings and Copilot's hooks file alike.
#[test]
fn hooks_of_a_binary_under_another_name_are_ours_and_another_tools_are_not() {
    let env = Sandbox::default();
    let wrapped = binary_named(&env.root().join("nix-bin"), ".crash-resume-wrapped");
    let renamed = binary_named(&env.root().join("my-bin"), "cr");
    let theirs = [
        "other-tool hook claude",
        "/usr/bin/notify --verbose hook claude",
        "/usr/bin/logger hook claude started",
    ];
    for (agent, events) in [
        ("claude", ["SessionStart", "SessionEnd"]),
        ("copilot", ["sessionStart", "sessionEnd"]),
    ] {
        let path = env.root().join(format!("{agent}.json"));
        let existing = match agent {
            "claude" => json!({ "hooks": { "SessionStart": theirs.map(|command| json!({
                "hooks": [ { "type": "command", "command": command } ]
            })) } }),
            _ => json!({ "version": 1, "hooks": { "sessionStart": theirs.map(|command| json!({
                "type": "command", "bash": command
            })) } }),
        };
        fs::write(&path, serde_json::to_vec_pretty(&existing).unwrap()).unwrap();
        let settings = path.to_str().unwrap();
        // Ours are one per event, each by `program`; theirs are all still there.
        let check = |program: &Path, context: &str| {
            let now = all_commands(&serde_json::from_slice(&fs::read(&path).unwrap()).unwrap());
            let (mine, others): (Vec<String>, Vec<String>) = now
                .into_iter()
                .partition(|command| !theirs.contains(&command.as_str()));
            assert_eq!(others.len(), theirs.len(), "{agent} {context}: {others:?}");
            assert_eq!(mine.len(), events.len(), "{agent} {context}: {mine:?}");
            for event in events {
                let tail = match agent {
                    "copilot" => format!(" hook {agent} {event}"),
                    _ => format!(" hook {agent}"),
                };
                assert!(
                    mine.iter()
                        .any(|command| command.starts_with(program.to_str().unwrap())
                            && command.ends_with(&tail)),
                    "{agent} {context}: {event}: {mine:?}"
                );
            }
        };
        hook_by(&env, &wrapped, "install", agent, settings);
        check(&wrapped, "installed");
        let said = hook_by(&env, Path::new(BIN), "install", agent, settings);
        assert!(said.contains("replacing the"), "{agent}: {said}");
        check(Path::new(BIN), "replaced, not doubled");
        hook_by(&env, &renamed, "install", agent, settings);
        check(&renamed, "replaced, not doubled");

        let said = hook_by(&env, Path::new(BIN), "uninstall", agent, settings);
        assert!(said.starts_with("removed the "), "{agent}: {said}");
        let now = all_commands(&serde_json::from_slice(&fs::read(&path).unwrap()).unwrap());
        let mut left = theirs.map(str::to_string).to_vec();
        left.sort();
        assert_eq!(now, left, "{agent}: every one of ours removed, theirs kept");
    }
}

/// An index a reboot wipes (under /tmp) makes every hook fail and keeps nothing over a reboot:
/// `hook install` refuses it with the reason and the way out, writing nothing; with
/// `--allow-volatile` it installs, and the hook carries the flag as it carries `--path`. The
/// same for the tmux block.
#[test]
fn a_volatile_index_is_refused_at_install_unless_allowed_and_then_written_into_the_hook() {
    let env = Sandbox::default();
    let volatile = std::env::temp_dir()
        .join(format!("crash-resume-volatile-{}", std::process::id()))
        .join("index.json");
    let volatile = volatile.to_str().unwrap();
    let settings = env.root().join("settings.json");
    let tmux = env.root().join("tmux.conf");
    let mut said = String::new();
    for (target, file) in [("claude", &settings), ("tmux", &tmux)] {
        let args = [
            "--path",
            volatile,
            "hook",
            "install",
            target,
            "--settings",
            file.to_str().unwrap(),
        ];
        let output = crash_resume_agent(&env).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{target}: {output:?}");
        assert!(output.stdout.is_empty(), "{target}: {output:?}");
        said += &format!(
            "hook install {target}\n{}\n",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!file.exists(), "{target}: nothing written");

        let output = crash_resume_agent(&env)
            .args(["--allow-volatile"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{target}: {output:?}");
        let written = fs::read_to_string(file).unwrap();
        assert!(
            written.contains(&format!("--path {volatile} --allow-volatile ")),
            "{target}: {written}"
        );
    }
    assert!(
        !Path::new(volatile).exists(),
        "the index is not made by an install"
    );
    let settings: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    assert!(our_command(&settings, "SessionStart").ends_with(" --allow-volatile hook claude"));
    assert_cli_snapshot!(
        &env,
        "volatile_index_refused",
        said.replace(volatile, "[VOLATILE]")
    );
}

/// What an install made is taken away again whole: a settings file it created goes with the
/// hooks (its backup stays), the `hooks` key it added to a file of the user's goes when
/// nothing else is in it, and Copilot's hooks file of ours and a tmux config it created go too.
#[test]
fn uninstall_leaves_nothing_the_install_made() {
    let env = Sandbox::default();
    let run = |verb: &str, target: &str, file: &Path| {
        let output = crash_resume_agent(&env)
            .args(["hook", verb, target, "--settings", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(output.status.success(), "{verb} {target}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    for (target, name) in [
        ("claude", "created.json"),
        ("codex", "hooks.json"),
        ("gemini", "gemini.json"),
        ("copilot", "copilot.json"),
        ("qwen", "qwen.json"),
        ("tmux", "tmux.conf"),
    ] {
        let file = env.root().join(name);
        run("install", target, &file);
        assert!(file.exists(), "{target}");
        let said = run("uninstall", target, &file);
        assert!(
            said.contains(", and the file, which held nothing else"),
            "{target}: {said}"
        );
        assert!(
            !file.exists(),
            "{target}: the file the install created is gone"
        );
        assert_eq!(
            backups_of(&file).len(),
            1,
            "{target}: its last content is kept"
        );
    }
    let users = env.root().join("users.json");
    let theirs = "{\n  \"model\": \"opus\"\n}\n";
    fs::write(&users, theirs).unwrap();
    run("install", "claude", &users);
    let said = run("uninstall", "claude", &users);
    assert!(!said.contains("held nothing else"), "{said}");
    assert_eq!(
        fs::read_to_string(&users).unwrap(),
        theirs,
        "no empty `hooks` left"
    );
}
