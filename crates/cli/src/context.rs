//! What every command works with, built once from the global flags and the environment: the
//! flags, the environment as `resume_plan::Environment` (read here and nowhere else), the clock,
//! and the index store and launcher registry they lead to.

use std::ops::Deref;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, anyhow};
use camino::{Utf8Path, Utf8PathBuf};
use index_core::text::escape;
use index_core::{Entry, Millis};
use index_store::{Store, StoreOptions, Warning};
use launcher_map::Registry;
use resume_plan::Environment;

use crate::args::Global;
use crate::error::Failure;

/// What a command returns: done, or a failure with its exit code.
pub type Outcome = Result<(), Failure>;

/// The global flags and the environment, read once at start.
#[derive(Debug)]
pub struct Context {
    flags: Global,
    env: Environment,
    /// `CRASH_RESUME_ROLE`: the role a hook records.
    pub role: Option<String>,
    /// Whether this process is a hook's background retry (`CRASH_RESUME_HOOK_RETRY`).
    pub is_hook_retry: bool,
}

/// How long a command waits for the index lock unless told otherwise.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// Set in the environment of a hook's background retry, which must not hand off again.
pub const RETRY_VARIABLE: &str = "CRASH_RESUME_HOOK_RETRY";

impl Context {
    /// Reads the environment once: the home dir, the XDG dirs and the agents' config-dir
    /// variables.
    pub fn new(flags: Global) -> Context {
        let env =
            Environment::from_lookup(etcetera::home_dir().ok(), |name| std::env::var_os(name));
        Context {
            flags,
            env,
            role: std::env::var("CRASH_RESUME_ROLE").ok(),
            is_hook_retry: std::env::var_os(RETRY_VARIABLE).is_some(),
        }
    }

    /// The config dir `agent` runs with: its variable, else its default under the home dir.
    pub fn config_dir(&self, agent: crate::args::Agent) -> anyhow::Result<String> {
        self.env
            .config_dir(agent.name())?
            .ok_or_else(|| anyhow!("cannot find the home directory"))
    }

    /// The environment the command runs in.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// The user's home dir, when it is known.
    pub fn home(&self) -> Option<Utf8PathBuf> {
        self.env.home()
    }
}

impl Deref for Context {
    type Target = Global;

    /// The global flags.
    fn deref(&self) -> &Global {
        &self.flags
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

/// A max age as [`parse_duration`] reads it; a plain number from 1 to 999 is said back as the
/// milliseconds it is, in a warning (`90` is 90 ms, not 90 minutes).
pub fn parse_max_age(text: &str, what: &str) -> Result<Duration, Failure> {
    let duration = parse_duration(text, what)?;
    let trimmed = text.trim();
    if trimmed.bytes().all(|byte| byte.is_ascii_digit())
        && !duration.is_zero()
        && duration < Duration::from_secs(1)
    {
        crate::output::print_message(&format!(
            "warning: the {what} {trimmed} is {trimmed} milliseconds (a plain number is milliseconds); write {trimmed}s, {trimmed}m, {trimmed}h or {trimmed}d for longer"
        ));
    }
    Ok(duration)
}

/// What to say after "no entry for surface S": the nearest recorded surface when one is close
/// (a typo), else where to find the recorded ones. Best effort: an index that cannot be read
/// gives the plain hint.
pub fn surface_hint(cx: &Context, surface: &str) -> String {
    let index = open_store(cx).ok().and_then(|store| store.load().ok());
    let Some(index) = index.map(|snapshot| snapshot.index) else {
        return "; `crash-resume list` shows the recorded surfaces".to_string();
    };
    if index.is_empty() {
        return "; the index is empty (the hook records a session when its agent starts in a pane; `crash-resume path` shows which index is read)".to_string();
    }
    let nearest = index
        .entries()
        .into_iter()
        .map(|entry| entry.surface.as_str())
        .map(|known| (strsim::damerau_levenshtein(surface, known), known))
        .min();
    match nearest {
        Some((distance, known)) if distance <= surface.chars().count().div_ceil(3).max(2) => {
            format!(
                "; did you mean {}? (`crash-resume list` shows every surface)",
                escape(known)
            )
        }
        _ => "; `crash-resume list` shows the recorded surfaces".to_string(),
    }
}

pub fn millis(duration: Duration) -> Millis {
    Millis::try_from(duration.as_millis()).unwrap_or(Millis::MAX)
}

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

/// The index store, waiting for its lock as `--lock-timeout` / `CRASH_RESUME_LOCK_TIMEOUT`
/// say, else [`DEFAULT_LOCK_TIMEOUT`].
pub fn open_store(cx: &Context) -> Result<Store, Failure> {
    let lock_timeout = match &cx.lock_timeout {
        Some(text) => {
            let source = from_variable("--lock-timeout", "CRASH_RESUME_LOCK_TIMEOUT");
            parse_duration_in(text, "lock timeout", &source)?
        }
        None => DEFAULT_LOCK_TIMEOUT,
    };
    open_store_with(cx, lock_timeout)
}

/// The index store, waiting for its lock up to `lock_timeout` (a hook decides its own wait).
pub fn open_store_with(cx: &Context, lock_timeout: Duration) -> Result<Store, Failure> {
    let options = StoreOptions {
        lock_timeout,
        allow_volatile: cx.allow_volatile,
    };
    Ok(Store::open(&index_path(cx)?, options)?)
}

/// The index file in use: `--path` / `CRASH_RESUME_INDEX_PATH`, else the default.
pub fn index_path(cx: &Context) -> Result<Utf8PathBuf, Failure> {
    Ok(cx.env().index_path(cx.path.as_deref())?)
}

/// The launcher registry: `launchers.toml` over the built-ins, with the profile chosen on the
/// command line.
pub fn registry(cx: &Context) -> Result<Registry, Failure> {
    // A file that cannot be read is a failure (1); one that says something wrong, or a profile
    // that does not exist, is invalid input (2).
    let config_failure = |error: launcher_map::ConfigError| match error {
        launcher_map::ConfigError::Read { .. } => Failure::Failed(error.into()),
        _ => Failure::Usage(error.into()),
    };
    let mut registry = cx.env().registry(None).map_err(config_failure)?;
    if let Some(profile) = &cx.profile {
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

/// When the entry's conversation last changed on disk (see
/// [`resume_plan::input::conversation_active`]), the agents' files read through `cache`, which
/// a command asking about many entries shares among them.
pub fn conversation_active(
    cx: &Context,
    entry: &Entry,
    cache: &preflight::Cache,
) -> Option<Millis> {
    resume_plan::input::conversation_active_with(entry, cx.env(), cache)
}

pub fn report(warnings: &[Warning]) {
    for warning in warnings {
        crate::output::print_message(&format!("warning: {warning}"));
    }
}

pub fn load(cx: &Context) -> Result<index_core::Index, Failure> {
    let snapshot = open_store(cx)?.load()?;
    report(&snapshot.warnings);
    Ok(snapshot.index)
}

/// One surface's entry (the store reads only that entry when it can).
pub fn load_entry(cx: &Context, surface: &str) -> Result<Option<Entry>, Failure> {
    load_entry_checked(cx, surface).map(|(entry, _)| entry)
}

/// One surface's entry, and why the file's entry for it is not usable, when it is not.
pub fn load_entry_checked(
    cx: &Context,
    surface: &str,
) -> Result<(Option<Entry>, Option<String>), Failure> {
    let (entry, warnings) = open_store(cx)?.load_entry(surface)?;
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

/// Turns a relative directory into an absolute one (against the current dir); `~` forms are
/// kept, to be expanded where the path is used.
pub fn absolute_dir(dir: &str, what: &str) -> Result<String, Failure> {
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

/// This boot's id (`CRASH_RESUME_BOOT_ID` replaces it, for tests only).
pub fn boot_id() -> Option<String> {
    let replacement = std::env::var(resume_plan::boot::BOOT_ID_VARIABLE).ok();
    resume_plan::boot::current_boot_id(replacement.as_deref())
}
