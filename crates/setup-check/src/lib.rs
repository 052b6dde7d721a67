//! crash-resume's setup checked, for `crash-resume doctor`: which hooks are installed for
//! which agents and for tmux, and whether each runs this binary; whether the index survives a
//! reboot and its dir can be written; the agents and multiplexers on `PATH` against the pinned
//! versions; the last errors of `hook.log`. Each [`Problem`] carries the command that fixes it.
//!
//! Facts only, as types: the binary says them. A check reads and never writes (no probe file,
//! no lock); every file read is bounded and every program run has a deadline.

#![deny(missing_docs)]

pub mod codex_title;
pub mod ours;
pub mod programs;
pub mod tmux_block;

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use agent_paths::{Agent, HookShape};
use camino::{Utf8Path, Utf8PathBuf};
use index_store::Durability;
use resume_plan::Environment;
use serde::Serialize;

pub use programs::{Kind, Program, Standing};

/// The most of a hook file read (`hook install` refuses larger ones).
const MAX_SETTINGS_BYTES: u64 = 16 << 20;
/// The most of `hook.log` read, from its end.
const MAX_LOG_TAIL_BYTES: u64 = 64 << 10;
/// How many of its last errors are reported.
const LOG_ERRORS: usize = 5;
/// How long a program has to say its version.
pub const VERSION_DEADLINE: Duration = Duration::from_secs(5);

/// What the checks look at.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// The environment the binary runs in (home dir, XDG dirs, the agents' config-dir
    /// variables).
    pub env: &'a Environment,
    /// The index file in use.
    pub index_path: &'a Utf8Path,
    /// Whether a volatile index is accepted (`--allow-volatile`).
    pub allow_volatile: bool,
    /// This binary: what a hook should run.
    pub program: &'a Path,
    /// `PATH`, where the agents and multiplexers are looked for.
    pub search_path: Option<OsString>,
    /// `XDG_CONFIG_HOME`, where tmux's config may be.
    pub xdg_config_home: Option<String>,
    /// How the fixes start: `crash-resume`, with the global options this check ran with
    /// (`--path FILE`), so that each fix acts on the same index.
    pub command_prefix: &'a str,
    /// How long each program has to say its version.
    pub version_deadline: Duration,
}

/// Everything found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// One per agent of the registry, then tmux's start-up restore.
    pub hooks: Vec<Hook>,
    /// The index.
    pub index: IndexCheck,
    /// The agents and multiplexers looked for on `PATH`.
    pub programs: Vec<Program>,
    /// `hook.log`.
    pub hook_log: HookLog,
    /// What needs doing, each with its fix; empty when all is well.
    pub problems: Vec<Problem>,
    /// What is worth knowing and needs nothing done.
    pub notes: Vec<String>,
}

impl Report {
    /// Whether nothing needs doing.
    pub fn all_well(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The hooks of one agent (or tmux's restore at server start) in its file.
#[derive(Debug, Clone, Serialize)]
pub struct Hook {
    /// `claude`, `codex`, `gemini`, `copilot`, `qwen`, or `tmux`.
    pub target: String,
    /// The file they are in.
    pub file: String,
    /// Whether any hook of ours is there.
    pub installed: bool,
    /// The events hooked (the agent's names; for tmux, none).
    pub events: Vec<String>,
    /// The events `hook install` adds that are not hooked.
    pub missing_events: Vec<String>,
    /// The programs the hooks of ours run, as written.
    pub programs: Vec<String>,
    /// Whether every hook of ours runs this binary (`None` when there is none).
    pub runs_this_binary: Option<bool>,
    /// The `--path` a hook of ours records into, when it names one.
    pub index_path: Option<String>,
    /// Why the file could not be read, when it could not.
    pub error: Option<String>,
    /// Codex alone: whether the title items of its `config.toml` show the thread id, by which
    /// a hook in Codex's daemon finds the session's pane ([`codex_title`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title_shows_thread_id: Option<bool>,
}

/// The index's place.
#[derive(Debug, Clone, Serialize)]
pub struct IndexCheck {
    /// The index file.
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
    /// Whether it survives a reboot.
    pub durable: bool,
    /// Why not, when it does not.
    pub volatile_reason: Option<String>,
    /// Whether a volatile one is accepted (`--allow-volatile`).
    pub allow_volatile: bool,
    /// The dir that holds it (the state dir: the index, its locks, `hook.log`).
    pub state_dir: String,
    /// Whether the state dir exists.
    pub state_dir_exists: bool,
    /// Whether it can be written to (or, when missing, created: its nearest existing parent
    /// can be written to).
    pub state_dir_writable: bool,
}

/// The end of `hook.log`.
#[derive(Debug, Clone, Serialize)]
pub struct HookLog {
    /// Its path.
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
    /// Its last error lines (at most 5, oldest first), as logged.
    pub last_errors: Vec<String>,
    /// Whether the last line logged is an error: the latest hook that said anything failed.
    pub last_line_is_error: bool,
    /// Whether the index was written after the log's last line: a record since (a hook that
    /// records logs nothing unless it is slow).
    pub index_written_since: bool,
}

/// What a problem is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    /// A hook (missing, unreadable, running another program).
    Hook,
    /// The index's path or its dir.
    Index,
    /// The hook's log.
    HookLog,
}

/// Something that needs doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What it is about.
    pub area: Area,
    /// The agent, tmux, or the file it is about.
    pub subject: String,
    /// What is wrong.
    pub what: String,
    /// The command that fixes it.
    pub fix: String,
}

/// Runs every check.
pub fn check(inputs: &Inputs<'_>) -> Report {
    let wanted = programs::wanted();
    let programs = programs::survey(
        &wanted,
        inputs.search_path.as_deref(),
        inputs.version_deadline,
    );
    let hooks = hooks(inputs);
    let index = index_check(inputs);
    let hook_log = hook_log(inputs.index_path);
    let (problems, notes) = judge(inputs, &hooks, &index, &programs, &hook_log);
    Report {
        hooks,
        index,
        programs,
        hook_log,
        problems,
        notes,
    }
}

/// The hooks alone (each agent's, then tmux's), without running anything: what an empty
/// `list` looks at.
pub fn hooks(inputs: &Inputs<'_>) -> Vec<Hook> {
    let mut hooks: Vec<Hook> = Agent::ALL
        .into_iter()
        .map(|agent| agent_hook(inputs, agent))
        .collect();
    hooks.push(tmux_hook(inputs));
    hooks
}

/// The hook file of `agent` and the hooks of ours in it.
fn agent_hook(inputs: &Inputs<'_>, agent: Agent) -> Hook {
    let facts = agent.facts();
    let home = inputs.env.home();
    let dir = inputs
        .env
        .config_dir(agent.name())
        .ok()
        .flatten()
        .map(|dir| agent_paths::expand_home(&dir, home.as_deref()));
    let mut hook = Hook {
        target: agent.name().to_string(),
        file: String::new(),
        installed: false,
        events: Vec::new(),
        missing_events: Vec::new(),
        programs: Vec::new(),
        runs_this_binary: None,
        index_path: None,
        error: None,
        title_shows_thread_id: None,
    };
    let Some(dir) = dir else {
        hook.error = Some(format!(
            "no home dir and no {} to find its hook file in",
            facts.config_env
        ));
        return hook;
    };
    let file = facts.hook_file_in(&dir);
    hook.file = file.to_string();
    let commands = match read_json(&file) {
        Ok(None) => Vec::new(),
        Ok(Some(settings)) => hook_commands(&settings, facts.hook_shape),
        Err(error) => {
            hook.error = Some(error);
            Vec::new()
        }
    };
    let ours: Vec<(String, ours::OurHook)> = commands
        .into_iter()
        .filter_map(|(event, command)| {
            ours::parse(&command)
                .filter(|hook| hook.agent == agent)
                .map(|hook| (event, hook))
        })
        .collect();
    for (event, _) in &ours {
        if !hook.events.contains(event) {
            hook.events.push(event.clone());
        }
    }
    hook.installed = !ours.is_empty();
    if agent == Agent::Codex && hook.installed {
        let config = read_text(&dir.join("config.toml")).unwrap_or_default();
        hook.title_shows_thread_id = Some(codex_title::title_has_thread_id(
            config.as_deref().unwrap_or_default(),
        ));
    }
    if hook.installed {
        hook.missing_events = facts
            .hook_events
            .iter()
            .filter(|event| !hook.events.iter().any(|hooked| hooked == *event))
            .map(|event| event.to_string())
            .collect();
    }
    fill_programs(
        &mut hook,
        inputs,
        ours.into_iter()
            .map(|(_, ours)| (ours.program, ours.index_path)),
    );
    hook
}

/// tmux's restore at server start: the block in the config tmux reads.
fn tmux_hook(inputs: &Inputs<'_>) -> Hook {
    let mut hook = Hook {
        target: "tmux".to_string(),
        file: String::new(),
        installed: false,
        events: Vec::new(),
        missing_events: Vec::new(),
        programs: Vec::new(),
        runs_this_binary: None,
        index_path: None,
        error: None,
        title_shows_thread_id: None,
    };
    let Some(home) = inputs.env.home() else {
        hook.error = Some("no home dir to find the tmux config in".to_string());
        return hook;
    };
    let config = tmux_block::config_path(&home, inputs.xdg_config_home.as_deref());
    hook.file = config.to_string();
    let text = match read_text(&config) {
        Ok(text) => text.unwrap_or_default(),
        Err(error) => {
            hook.error = Some(error);
            return hook;
        }
    };
    let blocks = tmux_block::blocks(&text);
    hook.installed = !blocks.is_empty();
    if let Some(open) = blocks.iter().find(|block| !block.closed) {
        hook.error = Some(format!(
            "line {} begins a block of crash-resume with no end line after it",
            open.line
        ));
    }
    fill_programs(
        &mut hook,
        inputs,
        blocks
            .into_iter()
            .filter_map(|block| block.program.map(|program| (program, block.index_path))),
    );
    hook
}

/// The programs the hooks run, whether they are all this binary, and the index path they name.
fn fill_programs(
    hook: &mut Hook,
    inputs: &Inputs<'_>,
    found: impl Iterator<Item = (String, Option<String>)>,
) {
    let mut all_here = None;
    for (program, index_path) in found {
        let here = is_this_binary(&program, inputs);
        all_here = Some(all_here.unwrap_or(true) && here);
        if !hook.programs.contains(&program) {
            hook.programs.push(program);
        }
        if index_path.is_some() {
            hook.index_path = index_path;
        }
    }
    hook.runs_this_binary = all_here;
}

/// Whether `program` (an absolute path, or a name found on `PATH`) is this binary, both with
/// their symlinks resolved.
fn is_this_binary(program: &str, inputs: &Inputs<'_>) -> bool {
    let path = match program.starts_with('/') {
        true => Some(Path::new(program).to_path_buf()),
        false => programs::find(program, inputs.search_path.as_deref()),
    };
    let resolved = |path: &Path| std::fs::canonicalize(path).ok();
    path.and_then(|path| resolved(&path))
        .is_some_and(|path| Some(path) == resolved(inputs.program))
}

/// A settings file as JSON: `None` when it does not exist; the reason when it cannot be read or
/// parsed.
fn read_json(path: &Utf8Path) -> Result<Option<serde_json::Value>, String> {
    let Some(text) = read_text(path)? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|error| format!("{path} is not valid JSON: {error}"))
}

/// A file's text, at most [`MAX_SETTINGS_BYTES`]: `None` when it does not exist.
fn read_text(path: &Utf8Path) -> Result<Option<String>, String> {
    match safe_open::read_head(
        path.as_std_path(),
        safe_open::Symlinks::Follow,
        MAX_SETTINGS_BYTES,
    ) {
        Ok(part) if part.is_whole() => String::from_utf8(part.bytes)
            .map(Some)
            .map_err(|_| format!("{path} is not valid UTF-8")),
        Ok(_) => Err(format!("{path} is larger than 16 MiB")),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("cannot read {path}: {error}")),
    }
}

/// Every hook command in a settings document, with its event: `hooks.<Event>[].hooks[].command`
/// (Claude Code's shape), or `hooks.<event>[].bash` (Copilot's).
fn hook_commands(settings: &serde_json::Value, shape: HookShape) -> Vec<(String, String)> {
    let Some(events) = settings.get("hooks").and_then(serde_json::Value::as_object) else {
        return Vec::new();
    };
    let mut commands = Vec::new();
    for (event, entries) in events {
        let entries = entries.as_array().map(Vec::as_slice).unwrap_or_default();
        for entry in entries {
            let found: Vec<&serde_json::Value> = match shape {
                HookShape::CommandHooks => entry
                    .get("hooks")
                    .and_then(serde_json::Value::as_array)
                    .map(|hooks| {
                        hooks
                            .iter()
                            .filter_map(|hook| hook.get("command"))
                            .collect()
                    })
                    .unwrap_or_default(),
                HookShape::BashHooks => entry.get("bash").into_iter().collect(),
            };
            commands.extend(
                found
                    .into_iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(|command| (event.clone(), command.to_string())),
            );
        }
    }
    commands
}

fn index_check(inputs: &Inputs<'_>) -> IndexCheck {
    let path = inputs.index_path;
    let durability = index_store::durability(path);
    let state_dir = path.parent().unwrap_or(Utf8Path::new("/"));
    // The nearest dir that exists must be a dir this user may write into and enter (a file
    // where a dir should be cannot hold one).
    let writable = state_dir
        .ancestors()
        .find(|dir| dir.exists())
        .is_some_and(|dir| {
            dir.is_dir()
                && rustix::fs::access(
                    dir.as_std_path(),
                    rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
                )
                .is_ok()
        });
    let volatile_reason = match durability {
        Durability::Durable => None,
        Durability::Volatile(reason) => Some(reason),
    };
    IndexCheck {
        path: path.to_string(),
        exists: path.exists(),
        durable: volatile_reason.is_none(),
        volatile_reason,
        allow_volatile: inputs.allow_volatile,
        state_dir: state_dir.to_string(),
        state_dir_exists: state_dir.is_dir(),
        state_dir_writable: writable,
    }
}

/// The end of the `hook.log` beside the index at `index_path`: its last errors.
pub fn hook_log(index_path: &Utf8Path) -> HookLog {
    let path =
        resume_plan::hook_log_path(index_path).unwrap_or_else(|| Utf8PathBuf::from("hook.log"));
    let tail = safe_open::read_tail(
        path.as_std_path(),
        safe_open::Symlinks::Refuse,
        MAX_LOG_TAIL_BYTES,
    );
    let (exists, text) = match tail {
        Ok(part) => {
            // A first line cut by the bounded read is not a whole line.
            let text = String::from_utf8_lossy(&part.bytes).into_owned();
            let text = match part.is_whole() {
                true => text,
                false => text
                    .split_once('\n')
                    .map(|(_, rest)| rest.to_string())
                    .unwrap_or_default(),
            };
            (true, text)
        }
        Err(_) => (path.exists(), String::new()),
    };
    let is_error = |line: &str| line.contains(": error: ") || line.contains(" error: ");
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let errors: Vec<String> = lines
        .iter()
        .filter(|line| is_error(line))
        .map(|line| line.to_string())
        .collect();
    let modified = |path: &Utf8Path| {
        std::fs::symlink_metadata(path)
            .and_then(|metadata| metadata.modified())
            .ok()
    };
    let index_written_since = match (modified(index_path), modified(&path)) {
        (Some(index), Some(log)) => index > log,
        _ => false,
    };
    HookLog {
        path: path.to_string(),
        exists,
        last_errors: errors[errors.len().saturating_sub(LOG_ERRORS)..].to_vec(),
        last_line_is_error: lines.last().is_some_and(|line| is_error(line)),
        index_written_since,
    }
}

/// The fix of a volatile index: the hooks installed again recording into a durable one (the
/// state dir under the home dir when that survives a reboot, else `/var/tmp`'s), each agent
/// whose hook is installed, or Claude Code's when none is.
fn durable_reinstall(inputs: &Inputs<'_>, hooks: &[Hook]) -> String {
    let under_home = inputs
        .env
        .home()
        .map(|home| home.join(".local/state/crash-resume/index.json"))
        .filter(|path| index_store::durability(path) == Durability::Durable);
    let durable = under_home
        .map(Utf8PathBuf::into_string)
        .unwrap_or_else(|| "/var/tmp/crash-resume/index.json".to_string());
    let durable = shlex::try_quote(&durable)
        .map(|quoted| quoted.into_owned())
        .unwrap_or(durable);
    let mut targets: Vec<&str> = hooks
        .iter()
        .filter(|hook| hook.installed)
        .map(|hook| hook.target.as_str())
        .collect();
    if targets.is_empty() {
        targets.push("claude");
    }
    let installs: Vec<String> = targets
        .into_iter()
        .map(|target| {
            let extra = match target {
                "codex" => " --codex-title",
                _ => "",
            };
            format!("crash-resume --path {durable} hook install {target}{extra}")
        })
        .collect();
    format!(
        "{} (and set CRASH_RESUME_INDEX_PATH={durable} where you run list and restore)",
        installs.join(" && ")
    )
}

/// What needs doing, and what is only worth knowing.
fn judge(
    inputs: &Inputs<'_>,
    hooks: &[Hook],
    index: &IndexCheck,
    programs: &[Program],
    hook_log: &HookLog,
) -> (Vec<Problem>, Vec<String>) {
    let prefix = inputs.command_prefix;
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let on_path = |name: &str| {
        programs
            .iter()
            .find(|program| program.name == name && program.path.is_some())
    };
    for hook in hooks {
        let install = match hook.target.as_str() {
            "codex" => format!("{prefix} hook install codex --codex-title"),
            target => format!("{prefix} hook install {target}"),
        };
        let program_name = Agent::from_name(&hook.target)
            .and_then(Agent::pinned)
            .map_or(hook.target.as_str(), |pinned| pinned.program);
        let problem = |what: String, fix: String| Problem {
            area: Area::Hook,
            subject: hook.target.clone(),
            what,
            fix,
        };
        if let Some(error) = &hook.error {
            problems.push(problem(
                error.clone(),
                format!("fix or move {} by hand, then `{install}`", hook.file),
            ));
            continue;
        }
        match (hook.installed, hook.runs_this_binary, on_path(program_name)) {
            (false, _, Some(_)) if hook.target == "tmux" => notes.push(format!(
                "tmux is on PATH and restores nothing by itself when its server starts; \
                 `{prefix} hook install tmux` adds that"
            )),
            (false, _, Some(program)) => problems.push(problem(
                format!(
                    "{} is on PATH ({}) but its hook is not installed in {}: its sessions are \
                     not recorded",
                    program.name,
                    program.path.as_deref().unwrap_or_default(),
                    hook.file
                ),
                install,
            )),
            (false, _, None) => {}
            (true, Some(false), _) => problems.push(problem(
                format!(
                    "the hook in {} runs {}, not this binary ({})",
                    hook.file,
                    hook.programs.join(", "),
                    inputs.program.display()
                ),
                install,
            )),
            (true, _, _) if !hook.missing_events.is_empty() => problems.push(problem(
                format!(
                    "the hook in {} is not installed for {}",
                    hook.file,
                    hook.missing_events.join(", ")
                ),
                install,
            )),
            (true, _, _) if hook.title_shows_thread_id == Some(false) => problems.push(problem(
                "Codex runs its hooks in its shared daemon, where the pane is found by its \
                     title, and its title items (`terminal_title` under [tui] in config.toml) do \
                     not show the thread id: its sessions are not recorded (but under `codex \
                     --no-daemon`)"
                    .to_string(),
                install,
            )),
            (true, _, _) => {}
        }
        if let Some(path) = &hook.index_path
            && path.as_str() != index.path
        {
            problems.push(problem(
                format!(
                    "the hook in {} records into {path}, not into the index checked here ({})",
                    hook.file, index.path
                ),
                format!("{prefix} hook install {}", hook.target),
            ));
        }
    }
    if !hooks
        .iter()
        .any(|hook| hook.installed && hook.target != "tmux")
        && !problems.iter().any(|problem| problem.area == Area::Hook)
    {
        problems.push(Problem {
            area: Area::Hook,
            subject: "agents".to_string(),
            what: "no agent's hook is installed (and no agent is on PATH): nothing is recorded"
                .to_string(),
            fix: format!("{prefix} hook install claude"),
        });
    }
    match (&index.volatile_reason, index.allow_volatile) {
        (Some(reason), false) => problems.push(Problem {
            area: Area::Index,
            subject: index.path.clone(),
            what: format!(
                "the index is {reason}, which a reboot wipes: the hooks refuse it, and nothing \
                 would be left after a reboot"
            ),
            fix: durable_reinstall(inputs, hooks),
        }),
        (Some(reason), true) => notes.push(format!(
            "the index is {reason}: a reboot wipes it (accepted by --allow-volatile)"
        )),
        (None, _) => {}
    }
    if !index.state_dir_writable {
        problems.push(Problem {
            area: Area::Index,
            subject: index.state_dir.clone(),
            what: match index.state_dir_exists {
                true => format!("the state dir {} cannot be written to", index.state_dir),
                false => format!(
                    "the state dir {} does not exist and cannot be created",
                    index.state_dir
                ),
            },
            fix: {
                let dir = shlex::try_quote(&index.state_dir)
                    .map(|quoted| quoted.into_owned())
                    .unwrap_or_else(|_| index.state_dir.clone());
                match index.state_dir_exists {
                    true => format!(
                        "chmod u+rwx {dir} (as its owner), or choose another index with --path"
                    ),
                    false => format!(
                        "mkdir -p -m 700 {dir} (as a user who may), or choose another index with \
                         --path"
                    ),
                }
            },
        });
    }
    if hook_log.last_line_is_error && !hook_log.index_written_since {
        problems.push(Problem {
            area: Area::HookLog,
            subject: hook_log.path.clone(),
            what: "the latest hook that logged anything failed, and nothing was recorded since \
                   (its error is above, with what to do)"
                .to_string(),
            fix: format!(
                "tail -n 20 {}",
                shlex::try_quote(&hook_log.path)
                    .map(|quoted| quoted.into_owned())
                    .unwrap_or_else(|_| hook_log.path.clone())
            ),
        });
    }
    for program in programs {
        if program.standing == Standing::Other {
            notes.push(format!(
                "{} {} is not the version crash-resume is tested with ({}); its rules may not \
                 hold",
                program.name,
                program.version.as_deref().unwrap_or_default(),
                program.pinned.as_deref().unwrap_or_default()
            ));
        }
    }
    (problems, notes)
}
