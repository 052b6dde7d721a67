//! One function per command: validate the input at the edge, call the library crates, print.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, anyhow};
use camino::{Utf8Path, Utf8PathBuf};
use clap::CommandFactory;
use etcetera::BaseStrategy;
use index_core::text::escape;
use index_core::{Entry, Millis, Provider, Record, Repo, Role, SessionId, SurfaceId};
use index_store::{Durability, Forgotten, Store, StoreOptions, Warning};
use launcher_map::{Context, Registry, RenderError, Target};

use crate::Failure;
use crate::args::{Cli, Command, Global, HookCommand, PreflightArgs, RecordArgs};
use crate::hook::{self, Agent};
use crate::output;

type Outcome = Result<(), Failure>;

pub fn run(cli: Cli) -> Outcome {
    let global = &cli.global;
    match cli.command {
        Command::Record(args) => record(global, args),
        Command::Lookup { surface } => lookup(global, SurfaceId::new(surface)?.as_str()),
        Command::ResumeCmd { surface, max_age } => resume_cmd(
            global,
            SurfaceId::new(surface)?.as_str(),
            max_age.as_deref(),
        ),
        Command::Touch { surface } => touch(global, SurfaceId::new(surface)?.as_str()),
        Command::Forget { surface } => forget(global, SurfaceId::new(surface)?.as_str()),
        Command::Prune { max_age } => prune(global, &max_age),
        Command::List => list(global),
        Command::Preflight(args) => preflight(global, args),
        Command::Path => path(global),
        Command::Restore(args) => crate::restore::restore(global, &args),
        Command::Hook(HookCommand::Claude { payload }) => {
            hook::run(global, Agent::Claude, payload.as_deref());
            Ok(())
        }
        Command::Hook(HookCommand::Codex { payload }) => {
            hook::run(global, Agent::Codex, payload.as_deref());
            Ok(())
        }
        Command::Hook(HookCommand::Install {
            agent,
            settings,
            dry_run,
        }) => crate::install::install(global, agent, settings, dry_run),
        Command::Completions { shell } => {
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "crash-resume", &mut std::io::stdout());
            Ok(())
        }
        Command::Man => crate::man::render(Cli::command(), &mut std::io::stdout())
            .map_err(|error| Failure::Failed(anyhow!(error).context("cannot write to stdout"))),
    }
}

pub fn now() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as Millis)
        .unwrap_or_default()
}

/// Milliseconds as a plain number (as the JavaScript tool took), or a duration such as `90s`,
/// `30m`, `2h`, `7d`.
pub fn parse_duration(text: &str, what: &str) -> Result<Duration, Failure> {
    parse_duration_in(text, what, "")
}

/// [`parse_duration`] of a value that came from `source` (such as ` in CRASH_RESUME_LOCK_TIMEOUT`,
/// or nothing when the user typed it), which an error names.
pub fn parse_duration_in(text: &str, what: &str, source: &str) -> Result<Duration, Failure> {
    let trimmed = text.trim();
    let parsed = if !trimmed.is_empty() && trimmed.bytes().all(|byte| byte.is_ascii_digit()) {
        trimmed.parse::<u64>().map(Duration::from_millis).ok()
    } else {
        humantime::parse_duration(trimmed).ok()
    };
    parsed.ok_or_else(|| {
        let given = if trimmed.is_empty() {
            format!("the {what}{source} is empty")
        } else {
            // As typed, unless a character a terminal would act on needs the quoted escape.
            format!("invalid {what} {}{source}", escape(trimmed))
        };
        Failure::Usage(anyhow!(
            "{given}: give milliseconds (a plain number) or a duration such as 90s, 30m, 2h, 7d"
        ))
    })
}

pub fn millis(duration: Duration) -> Millis {
    Millis::try_from(duration.as_millis()).unwrap_or(Millis::MAX)
}

/// How long a command waits for the index lock unless told otherwise.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// Where an option that also has a variable came from, for messages that name what the user
/// actually gave: ` in VARIABLE` when the variable set it, else nothing (the flag was typed, or
/// the default used).
pub fn from_variable(flag: &str, variable: &str) -> String {
    let typed = std::env::args_os()
        .skip(1)
        .take_while(|arg| arg != "--")
        .any(|arg| {
            arg.to_str()
                .is_some_and(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))
        });
    if typed || std::env::var_os(variable).is_none() {
        String::new()
    } else {
        format!(" in {variable}")
    }
}

pub fn open_store(global: &Global) -> Result<Store, Failure> {
    let path = index_path(global)?;
    let source = from_variable("--lock-timeout", "CRASH_RESUME_LOCK_TIMEOUT");
    let options = StoreOptions {
        lock_timeout: match &global.lock_timeout {
            Some(text) => parse_duration_in(text, "lock timeout", &source)?,
            None => DEFAULT_LOCK_TIMEOUT,
        },
        allow_volatile: global.allow_volatile,
    };
    Ok(Store::open(&path, options)?)
}

/// The index file in use: `--path` / `CRASH_RESUME_INDEX_PATH`, else the default.
pub fn index_path(global: &Global) -> Result<Utf8PathBuf, Failure> {
    match &global.path {
        Some(path) if path.trim().is_empty() => Err(Failure::Usage(anyhow!(
            "the index path is empty; give a file path with --path or CRASH_RESUME_INDEX_PATH"
        ))),
        Some(path) => Ok(Utf8PathBuf::from(path)),
        None => Ok(index_store::default_index_path()?),
    }
}

fn report(warnings: &[Warning]) {
    let mut stderr = std::io::stderr().lock();
    for warning in warnings {
        let _ = writeln!(stderr, "warning: {warning}");
    }
}

pub fn print_line(text: &str) -> Outcome {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}")
        .and_then(|()| stdout.flush())
        .map_err(|error| Failure::Failed(anyhow!(error).context("cannot write to stdout")))
}

pub fn print_json(value: &impl serde::Serialize) -> Outcome {
    let text =
        serde_json::to_string_pretty(value).map_err(|error| Failure::Failed(error.into()))?;
    print_line(&text)
}

/// Turns a relative directory into an absolute one (against the current dir); `~` forms are
/// kept, to be expanded where the path is used.
fn absolute_dir(dir: &str, what: &str) -> Result<String, Failure> {
    if dir.trim().is_empty() || dir.contains('\0') {
        return Err(Failure::Usage(anyhow!("{what} is empty; give a directory")));
    }
    if dir.starts_with('~') || Utf8Path::new(dir).is_absolute() {
        return Ok(dir.to_string());
    }
    let absolute = std::path::absolute(dir)
        .with_context(|| format!("cannot make {what} {dir} absolute"))
        .map_err(Failure::Failed)?;
    absolute
        .into_os_string()
        .into_string()
        .map_err(|_| Failure::Usage(anyhow!("{what} {dir} is not valid UTF-8")))
}

fn record(global: &Global, args: RecordArgs) -> Outcome {
    let mut record = Record::new(
        SurfaceId::new(args.surface)?,
        SessionId::new(args.session)?,
        Repo::new(args.repo)?,
    );
    record.role = args
        .role
        .filter(|role| !role.is_empty())
        .map(Role::new)
        .transpose()?;
    record.provider = args.provider.map(Provider::new).transpose()?;
    record.cwd = args
        .cwd
        .as_deref()
        .map(|dir| absolute_dir(dir, "--cwd"))
        .transpose()?;
    record.config_dir = args
        .config_dir
        .as_deref()
        .map(|dir| absolute_dir(dir, "--config-dir"))
        .transpose()?;
    index_core::check_dirs(record.cwd.as_deref(), record.config_dir.as_deref())?;
    let store = open_store(global)?;
    let surface = record.surface.clone();
    let updated = store.update(|index| {
        let recorded = index.record(record, now());
        (recorded, index.lookup(surface.as_str()).cloned())
    })?;
    report(&updated.warnings);
    let (recorded, entry) = updated.value;
    let entry = entry.expect("a recorded surface is in the index");
    if global.json {
        return print_json(&output::Recorded::new(&entry, &recorded));
    }
    print_line(&format!(
        "recorded {} → {} ({})",
        escape(entry.surface.as_str()),
        escape(entry.session.as_str()),
        escape(entry.repo.as_str())
    ))
}

pub fn load(global: &Global) -> Result<index_core::Index, Failure> {
    let snapshot = open_store(global)?.load()?;
    report(&snapshot.warnings);
    Ok(snapshot.index)
}

/// One surface's entry (the store reads only that entry when it can).
fn load_entry(global: &Global, surface: &str) -> Result<Option<Entry>, Failure> {
    load_entry_checked(global, surface).map(|(entry, _)| entry)
}

/// One surface's entry, and why the file's entry for it is not usable, when it is not.
fn load_entry_checked(
    global: &Global,
    surface: &str,
) -> Result<(Option<Entry>, Option<String>), Failure> {
    let (entry, warnings) = open_store(global)?.load_entry(surface)?;
    report(&warnings);
    let unusable = warnings.into_iter().find_map(|warning| match warning {
        Warning::Problem {
            problem:
                index_store::Problem::UnusableEntry {
                    surface: at,
                    reason,
                },
            ..
        } if at == surface => Some(reason),
        _ => None,
    });
    Ok((entry, unusable))
}

/// Refuses an entry whose values would reach a shell or a terminal as something other than
/// text (an index written by another tool may hold one): it is not resumed, and its values
/// are not shown.
pub fn refusal(entry: &Entry) -> Option<String> {
    entry.check_dirs().err().map(|error| {
        format!(
            "the entry of surface {} is refused: its {error}; record the surface again or drop it with `crash-resume forget`",
            escape(entry.surface.as_str())
        )
    })
}

fn lookup(global: &Global, surface: &str) -> Outcome {
    let entry = load_entry(global, surface)?;
    let entry = entry.as_ref();
    if global.json {
        print_json(&output::Lookup::new(surface, entry))?;
    } else {
        print_json(&entry.map(output::EntryJson::from))?;
    }
    match entry {
        Some(_) => Ok(()),
        None => Err(Failure::NotFound(format!("no entry for surface {surface}"))),
    }
}

fn resume_cmd(global: &Global, surface: &str, max_age: Option<&str>) -> Outcome {
    let max_age = max_age
        .map(|text| parse_duration(text, "max age"))
        .transpose()?;
    let (entry, unusable) = load_entry_checked(global, surface)?;
    if let Some(reason) = unusable {
        return Err(Failure::Failed(anyhow!(
            "the entry of surface {} is refused: {reason}; record the surface again or drop it with `crash-resume forget`",
            escape(surface)
        )));
    }
    if let Some(message) = entry.as_ref().and_then(refusal) {
        return Err(Failure::Failed(anyhow!(message)));
    }
    let now = now();
    let found = match (entry.as_ref(), max_age) {
        (None, _) => Err(format!(
            "no session recorded for surface {}",
            escape(surface)
        )),
        (Some(entry), Some(max_age)) => {
            let age = entry.activity_age(conversation_active(entry), now);
            if age > millis(max_age) {
                Err(format!(
                    "the session of surface {} was last active {} ago, longer than the max age {}; nothing to resume",
                    escape(surface),
                    format_age(age),
                    humantime::format_duration(max_age),
                ))
            } else {
                Ok(entry)
            }
        }
        (Some(entry), None) => Ok(entry),
    };
    let command = found
        .as_ref()
        .ok()
        .map(|entry| render(global, entry))
        .transpose()?;
    if global.json {
        print_json(&output::ResumeCmd::new(
            surface,
            found.as_ref().ok().copied(),
            command.as_deref(),
        ))?;
    }
    match (found, command) {
        (Ok(_), Some(command)) if !global.json => print_line(&command),
        (Ok(_), _) => Ok(()),
        (Err(message), _) => Err(Failure::NotFound(message)),
    }
}

/// When the entry's conversation last changed on disk (its transcript's modification time, as
/// the preflight finds the transcript), in epoch milliseconds; `None` when no transcript is
/// known. A max age is measured from the latest of this and `last_active`
/// ([`Entry::last_activity`]): typing prompts runs no hook that records.
pub fn conversation_active(entry: &Entry) -> Option<Millis> {
    let modified = preflight::transcript_modified(&entry_input(entry))?;
    Some(millis(modified.duration_since(UNIX_EPOCH).ok()?))
}

/// An age for people, to the second: `3h 2m 5s`.
fn format_age(age: Millis) -> humantime::FormattedDuration {
    humantime::format_duration(Duration::from_secs(age / 1000))
}

/// The launcher registry: `$XDG_CONFIG_HOME/crash-resume/launchers.toml` over the built-ins,
/// with the profile chosen on the command line.
pub fn registry(global: &Global) -> Result<Registry, Failure> {
    let config = etcetera::base_strategy::Xdg::new()
        .ok()
        .map(|strategy| {
            strategy
                .config_dir()
                .join("crash-resume")
                .join("launchers.toml")
        })
        .and_then(|path| Utf8PathBuf::from_path_buf(path).ok());
    // A file that cannot be read is a failure (1); one that says something wrong, or a profile
    // that does not exist, is invalid input (2).
    let config_failure = |error: launcher_map::ConfigError| match error {
        launcher_map::ConfigError::Read { .. } => Failure::Failed(error.into()),
        _ => Failure::Usage(error.into()),
    };
    let mut registry = match config {
        Some(path) => Registry::load(&path).map_err(config_failure)?,
        None => Registry::builtin(),
    };
    if let Some(profile) = &global.profile {
        let variable = from_variable("--profile", "CRASH_RESUME_PROFILE");
        registry
            .select_profile(profile)
            .map_err(|error| match config_failure(error) {
                Failure::Usage(error) if !variable.is_empty() => {
                    Failure::Usage(error.context(format!("the profile{variable}")))
                }
                other => other,
            })?;
    }
    Ok(registry)
}

pub fn render(global: &Global, entry: &Entry) -> Result<String, Failure> {
    render_with(&registry(global)?, entry)
}

/// The entry's resume command from a registry already loaded (a restore renders many).
pub fn render_with(registry: &Registry, entry: &Entry) -> Result<String, Failure> {
    let target = Target {
        provider: entry.provider.as_ref().map(Provider::as_str),
        session: entry.session.as_str(),
        repo: Some(entry.repo.as_str()),
        cwd: entry.cwd.as_deref(),
        config_dir: entry.config_dir.as_deref(),
    };
    let context = Context { home: home() };
    registry
        .render(&target, &context)
        .map_err(|error| match error {
            RenderError::NoLauncher { .. } => Failure::NotFound(format!("{error}")),
            other => Failure::Failed(other.into()),
        })
}

pub fn home() -> Option<Utf8PathBuf> {
    etcetera::home_dir()
        .ok()
        .and_then(|home| Utf8PathBuf::from_path_buf(home).ok())
}

/// The config dir a provider uses when none is recorded: its variable, else its default dir.
fn default_config_dir(provider: &str) -> Option<String> {
    let agent = match provider {
        "claude" => Agent::Claude,
        "codex" => Agent::Codex,
        _ => return None,
    };
    hook::config_dir(agent).ok()
}

/// The preflight's input for an index entry: its provider, working dir, config dir (else the
/// provider's default), held id and chain; other surfaces' ids are excluded from recovery.
pub fn preflight_input(index: &index_core::Index, entry: &Entry) -> preflight::Input {
    preflight_input_excluding(entry, excluded_ids(index, Some(entry.session.as_str())))
}

/// The preflight's input for an entry with the set of excluded ids given (a restore builds it
/// once for all entries instead of once per entry).
pub fn preflight_input_excluding(
    entry: &Entry,
    excluded: std::collections::BTreeSet<String>,
) -> preflight::Input {
    preflight::Input {
        chain: entry.chain().map(SessionId::to_string).collect(),
        excluded,
        ..entry_input(entry)
    }
}

/// An entry's own part of the preflight's input: provider, held id, working dir, config dir
/// (else the provider's default) and home; no chain, nothing excluded.
fn entry_input(entry: &Entry) -> preflight::Input {
    let provider = crate::restore::provider_of(entry);
    preflight::Input {
        provider: provider.to_string(),
        session: Some(entry.session.to_string()),
        cwd: entry.cwd.clone().unwrap_or_default(),
        config_dir: entry
            .config_dir
            .clone()
            .or_else(|| default_config_dir(provider)),
        home: home(),
        ..preflight::Input::default()
    }
}

/// Every session bound in the index, but `own`.
fn excluded_ids(
    index: &index_core::Index,
    own: Option<&str>,
) -> std::collections::BTreeSet<String> {
    index
        .entries()
        .into_iter()
        .map(|entry| entry.session.to_string())
        .filter(|session| Some(session.as_str()) != own)
        .collect()
}

fn preflight(global: &Global, args: PreflightArgs) -> Outcome {
    let index = load(global)?;
    let input = match &args.surface {
        Some(surface) => {
            let surface = SurfaceId::new(surface.as_str())?;
            let Some(entry) = index.lookup(surface.as_str()) else {
                return Err(Failure::NotFound(format!("no entry for surface {surface}")));
            };
            preflight_input(&index, entry)
        }
        None => {
            let session = args.session.map(SessionId::new).transpose()?;
            let history = args.history_session.map(SessionId::new).transpose()?;
            let cwd = args
                .cwd
                .as_deref()
                .map(|dir| absolute_dir(dir, "--cwd"))
                .transpose()?;
            preflight::Input {
                config_dir: args
                    .config_dir
                    .or_else(|| default_config_dir(&args.provider)),
                excluded: excluded_ids(&index, session.as_ref().map(SessionId::as_str)),
                session: session.map(SessionId::into_string),
                history_session: history.map(SessionId::into_string),
                cwd: cwd.unwrap_or_default(),
                provider: args.provider,
                chain: Vec::new(),
                home: home(),
            }
        }
    };
    let outcome = preflight::preflight(&input);
    if global.json {
        print_json(&output::Preflight::new(args.surface.as_deref(), &outcome))?;
    } else {
        print_line(&output::preflight_text(&outcome))?;
    }
    match outcome.verdict {
        preflight::Verdict::Fresh => Err(Failure::NotFound(String::new())),
        _ => Ok(()),
    }
}

fn touch(global: &Global, surface: &str) -> Outcome {
    let updated = open_store(global)?.update(|index| index.touch(surface, now()))?;
    report(&updated.warnings);
    if global.json {
        print_json(&output::Touched::new(surface, updated.value))?;
    }
    if !updated.value {
        return Err(Failure::NotFound(format!(
            "no entry for surface {surface}; nothing touched"
        )));
    }
    if !global.json {
        print_line(&format!("touched {}", escape(surface)))?;
    }
    Ok(())
}

fn forget(global: &Global, surface: &str) -> Outcome {
    let updated = open_store(global)?.forget(surface)?;
    report(&updated.warnings);
    if global.json {
        print_json(&output::Forgotten::new(surface, updated.value.as_ref()))?;
    }
    let text = match updated.value {
        None => {
            return Err(Failure::NotFound(format!(
                "no entry for surface {surface}; nothing forgotten"
            )));
        }
        Some(Forgotten::Entry(entry)) => format!(
            "forgot {} → {} ({})",
            escape(entry.surface.as_str()),
            escape(entry.session.as_str()),
            escape(entry.repo.as_str())
        ),
        Some(Forgotten::Unusable(_)) => format!(
            "forgot {}, an entry that could not be used (kept as it was in the file until now)",
            escape(surface)
        ),
    };
    if !global.json {
        print_line(&text)?;
    }
    Ok(())
}

fn prune(global: &Global, max_age: &str) -> Outcome {
    let max_age = millis(parse_duration(max_age, "max age")?);
    let updated = open_store(global)?.prune(max_age, now(), conversation_active)?;
    report(&updated.warnings);
    let pruned = updated.value;
    if global.json {
        return print_json(&output::Pruned::new(&pruned));
    }
    let mut text = format!(
        "pruned {} entries",
        pruned.entries.len() + pruned.unusable.len()
    );
    for entry in &pruned.entries {
        text.push_str(&format!(
            "\n{}\t{}\t{}",
            escape(entry.surface.as_str()),
            escape(entry.session.as_str()),
            escape(entry.repo.as_str())
        ));
    }
    for surface in &pruned.unusable {
        text.push_str(&format!(
            "\n{}\t(an entry that could not be used)",
            escape(surface)
        ));
    }
    print_line(&text)
}

fn list(global: &Global) -> Outcome {
    let index = load(global)?;
    let entries = index.entries();
    if global.json {
        return print_json(&output::List::new(&entries));
    }
    let now = now();
    let cells: Vec<[String; 6]> = entries
        .iter()
        .map(|entry| {
            let age = format_age(entry.activity_age(conversation_active(entry), now));
            let role = escape(entry.role.as_ref().map_or("-", Role::as_str));
            let ended = if entry.ended_at.is_some() {
                "ended"
            } else {
                ""
            };
            [
                escape(entry.surface.as_str()).into_owned(),
                escape(entry.session.as_str()).into_owned(),
                escape(entry.repo.as_str()).into_owned(),
                role.into_owned(),
                format!("{age} ago"),
                ended.to_string(),
            ]
        })
        .collect();
    if cells.is_empty() {
        return Ok(());
    }
    let rows: Vec<Vec<&str>> = cells
        .iter()
        .map(|row| row.iter().map(String::as_str).collect())
        .collect();
    print_line(&crate::table::render(
        &["SURFACE", "SESSION", "REPO", "ROLE", "ACTIVE", "ENDED"],
        &rows,
    ))
}

fn path(global: &Global) -> Outcome {
    let path = index_path(global)?;
    let resolved = index_store::resolve_path(&path)?;
    let durability = index_store::durability(&path);
    if global.json {
        return print_json(&output::PathInfo::new(
            &resolved,
            &durability,
            global.allow_volatile,
        ));
    }
    let note = match &durability {
        Durability::Durable => "durable".to_string(),
        Durability::Volatile(reason) if global.allow_volatile => {
            format!("volatile: {reason}; a reboot wipes it (allowed by --allow-volatile)")
        }
        Durability::Volatile(reason) => {
            format!(
                "volatile: {reason}; a reboot wipes it, so every command that reads or writes the index refuses it without --allow-volatile"
            )
        }
    };
    print_line(&format!("{resolved}\n{note}"))
}
