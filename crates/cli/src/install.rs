//! `crash-resume hook install claude|codex`: adds the SessionStart and SessionEnd command hooks
//! to the agent's hook file (Claude Code's `settings.json`, Codex's `hooks.json`, which has the
//! same shape), keeping every other setting, idempotently, written atomically with a backup; a
//! file it cannot parse is refused and left untouched.

use anyhow::{Context as _, anyhow};
use camino::Utf8PathBuf;
use serde_json::{Map, Value, json};

use crate::args::Global;
use crate::hook::{Agent, config_dir};
use crate::{Failure, commands, output};

/// The hook events crash-resume installs itself for.
const EVENTS: [&str; 2] = ["SessionStart", "SessionEnd"];

/// The agent's hook file in its config dir.
fn hook_file_name(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude => "settings.json",
        Agent::Codex => "hooks.json",
    }
}

/// What the user must still do in the agent once the hooks are in its file.
fn next_steps(agent: Agent, path: &camino::Utf8Path) -> Option<String> {
    match agent {
        Agent::Claude => None,
        Agent::Codex => Some(format!(
            "Codex runs a new hook only once it is trusted: start `codex`, and at \"Hooks need \
             review\" choose \"Trust all and continue\" (Codex saves the trust in config.toml \
             under [hooks.state.\"{path}:session_start:0:0\"]); `codex exec` skips untrusted hooks \
             silently. By default Codex runs hooks in its shared daemon, which cannot tell which \
             pane a session runs in, so nothing is recorded: run `codex --no-daemon`, or set \
             `daemon_auto_start = false` under [features] in config.toml"
        )),
    }
}

pub fn install(
    global: &Global,
    agent: Agent,
    settings: Option<String>,
    dry_run: bool,
) -> Result<(), Failure> {
    let settings_given = settings.is_some();
    let path = match settings {
        Some(path) if path.trim().is_empty() => {
            return Err(Failure::Usage(anyhow!(
                "--settings is empty; give the settings file's path"
            )));
        }
        Some(path) => Utf8PathBuf::from(path),
        None => Utf8PathBuf::from(config_dir(agent).map_err(Failure::Failed)?)
            .join(hook_file_name(agent)),
    };
    // A dotfile manager may keep the settings as a symlink: read and replace the file it
    // points to, so that the link stays a link.
    let path = index_store::resolve_path(&path)?;
    let mut settings = read_settings(&path, settings_given)?;
    let command = hook_command(global, agent)?;
    let added = merge(&mut settings, &command, agent).map_err(|reason| {
        Failure::Failed(anyhow!("{path}: {reason}; the file was left untouched"))
    })?;
    let mut bytes =
        serde_json::to_vec_pretty(&settings).map_err(|error| Failure::Failed(error.into()))?;
    bytes.push(b'\n');
    let report = |written: bool| {
        let merged = dry_run.then_some(&settings);
        commands::print_json(&output::Installed::new(
            path.as_str(),
            &added,
            &command,
            written,
            merged,
        ))
    };
    if dry_run && global.json {
        return report(false);
    }
    if dry_run {
        eprintln!(
            "{} (dry run: {path} was not written)",
            if added.is_empty() {
                "already installed".to_string()
            } else {
                format!("would add {}", added.join(" and "))
            }
        );
        return commands::print_line(String::from_utf8_lossy(&bytes).trim_end());
    }
    if let Some(note) = next_steps(agent, &path) {
        eprintln!("{note}");
    }
    if added.is_empty() && global.json {
        return report(false);
    }
    if added.is_empty() {
        return commands::print_line(&format!("already installed in {path}"));
    }
    if let Some(dir) = path.parent().filter(|dir| !dir.as_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {dir}"))
            .map_err(Failure::Failed)?;
    }
    index_store::replace_file(&path, &bytes)?;
    if global.json {
        return report(true);
    }
    commands::print_line(&format!(
        "installed {} hooks into {path}: {command}",
        added.join(" and ")
    ))
}

/// `given`: the path came from `--settings`, so the advice does not suggest it.
fn read_settings(path: &camino::Utf8Path, given: bool) -> Result<Value, Failure> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(json!({})),
        Err(error) => {
            return Err(Failure::Failed(
                anyhow!(error).context(format!("cannot read {path}")),
            ));
        }
    };
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(Failure::Failed(anyhow!(
            "{path} is not a JSON object; fix it by hand, the file was left untouched"
        ))),
        Err(error) => Err(Failure::Failed(anyhow!(
            "cannot parse {path} ({error}); fix it by hand{}, the file was left untouched",
            if given {
                ""
            } else {
                " or choose another file with --settings"
            }
        ))),
    }
}

/// The command the agent runs: this binary, by absolute path, with the index path when one was
/// chosen, every word shell-quoted.
fn hook_command(global: &Global, agent: Agent) -> Result<String, Failure> {
    let exe = std::env::current_exe()
        .context("cannot find this program's path")
        .map_err(Failure::Failed)?;
    let exe = exe
        .into_os_string()
        .into_string()
        .map_err(|_| Failure::Failed(anyhow!("this program's path is not valid UTF-8")))?;
    let mut words = vec![exe];
    if let Some(path) = &global.path {
        let absolute = std::path::absolute(path)
            .map_err(|error| Failure::Failed(error.into()))?
            .into_os_string()
            .into_string()
            .map_err(|_| Failure::Usage(anyhow!("the index path is not valid UTF-8")))?;
        words.extend(["--path".to_string(), absolute]);
    }
    words.extend(["hook".to_string(), agent.provider().to_string()]);
    shlex::try_join(words.iter().map(String::as_str))
        .map_err(|error| Failure::Usage(anyhow!("cannot quote the hook command: {error}")))
}

/// Whether a hook entry already runs crash-resume's hook for `agent`.
fn is_ours(hook: &Value, agent: Agent) -> bool {
    let words = format!("hook {}", agent.provider());
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|command| command.contains("crash-resume") && command.contains(&words))
}

/// Adds the command hook to each event that lacks it; returns the events it was added to.
fn merge(settings: &mut Value, command: &str, agent: Agent) -> Result<Vec<&'static str>, String> {
    let root = settings
        .as_object_mut()
        .ok_or("the settings are not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("`hooks` is not a JSON object")?;
    let mut added = Vec::new();
    for event in EVENTS {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| format!("`hooks.{event}` is not a list"))?;
        let present = groups.iter().any(|group| {
            group
                .get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|entries| entries.iter().any(|hook| is_ours(hook, agent)))
        });
        if !present {
            groups.push(json!({ "hooks": [ { "type": "command", "command": command } ] }));
            added.push(event);
        }
    }
    Ok(added)
}
