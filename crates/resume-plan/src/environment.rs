//! Where the files live and which config dir each agent uses, from values the caller read
//! from its environment: this crate reads no environment variable itself.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use camino::{Utf8Path, Utf8PathBuf};
use launcher_map::{ConfigError, Registry};

/// The directory under the config and state dirs that holds crash-resume's files.
const APP_DIR: &str = "crash-resume";

/// What is known of the environment a command runs in: the home dir, the XDG base dirs and each
/// known agent's config-dir variable, as values. Build it with [`Environment::from_lookup`]
/// from the process environment, or fill it in (tests, a program with its own settings).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// The user's home dir.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`; ignored unless absolute (as the XDG spec says).
    pub xdg_config_home: Option<PathBuf>,
    /// `$XDG_STATE_HOME`; ignored unless absolute.
    pub xdg_state_home: Option<PathBuf>,
    /// The values of the agents' config-dir variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`),
    /// keyed by variable name; unset variables are absent.
    pub config_vars: BTreeMap<&'static str, OsString>,
}

/// A file whose place [`Environment`] works out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// The index (`index.json`).
    Index,
    /// `launchers.toml`.
    Launchers,
}

impl std::fmt::Display for Placed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Placed::Index => "the index",
            Placed::Launchers => "launchers.toml",
        })
    }
}

/// A file location that cannot be worked out.
#[derive(Debug, thiserror::Error)]
pub enum LocationError {
    /// No home dir, and no variable that would make it unnecessary (nor an explicit path, for
    /// the index: the caller names its own way to give one).
    #[error("cannot find the home directory to place {what} in; set HOME, {instead}")]
    NoHome {
        /// What was to be placed.
        what: Placed,
        /// The variable that says where it goes instead: `XDG_STATE_HOME`.
        instead: &'static str,
    },
    /// An explicit index path that is blank.
    #[error("the index path is empty")]
    EmptyIndexPath,
    /// A path or variable that is not UTF-8.
    #[error("{what} {value:?} is not valid UTF-8; crash-resume needs a UTF-8 path")]
    NotUtf8 {
        /// What the value is: a variable's name or a description.
        what: String,
        /// The value as given.
        value: OsString,
    },
}

impl Environment {
    /// The environment as `lookup` (such as `std::env::var_os`) reports it, with the home dir
    /// given separately (the caller knows how its platform finds it).
    pub fn from_lookup(home: Option<PathBuf>, lookup: impl Fn(&str) -> Option<OsString>) -> Self {
        let absolute = |name: &str| {
            lookup(name)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        Environment {
            home: home.filter(|home| !home.as_os_str().is_empty()),
            xdg_config_home: absolute("XDG_CONFIG_HOME"),
            xdg_state_home: absolute("XDG_STATE_HOME"),
            config_vars: agent_paths::AGENTS
                .iter()
                .filter_map(|facts| Some((facts.config_env, lookup(facts.config_env)?)))
                .collect(),
        }
    }

    /// The home dir as UTF-8, when it is known and is UTF-8.
    pub fn home(&self) -> Option<Utf8PathBuf> {
        self.home
            .clone()
            .and_then(|home| Utf8PathBuf::from_path_buf(home).ok())
    }

    /// The config dir `provider` runs with: its variable, else its default under the home dir.
    /// `Ok(None)` for an agent whose config dir is not known, or when there is no home dir.
    pub fn config_dir(&self, agent_name: &str) -> Result<Option<String>, LocationError> {
        let Some(facts) = agent_paths::facts_of(agent_name) else {
            return Ok(None);
        };
        let variable = match self.config_vars.get(facts.config_env) {
            Some(value) => Some(value.to_str().ok_or_else(|| LocationError::NotUtf8 {
                what: facts.config_env.to_owned(),
                value: value.clone(),
            })?),
            None => None,
        };
        let home = self.home();
        // Qwen Code takes `QWEN_HOME` from its home `.env` files when its environment lacks it.
        if facts.agent == agent_paths::Agent::Qwen && variable.is_none() {
            let dir = preflight::qwen::config_dir(None, None, home.as_deref());
            return Ok(dir.map(Utf8PathBuf::into_string));
        }
        Ok(facts
            .config_dir(variable, home.as_deref())
            .map(Utf8PathBuf::into_string))
    }

    /// `$XDG_STATE_HOME/crash-resume/index.json`, else `~/.local/state/crash-resume/index.json`
    /// (XDG on every platform, as the JavaScript tool did, so the path is the same on a Mac).
    pub fn default_index_path(&self) -> Result<Utf8PathBuf, LocationError> {
        let state = self
            .base_dir(self.xdg_state_home.as_ref(), ".local/state")
            .map_err(|error| match error {
                LocationError::NoHome { .. } => LocationError::NoHome {
                    what: Placed::Index,
                    instead: "XDG_STATE_HOME",
                },
                other => other,
            })?;
        Ok(state.join(APP_DIR).join(index_store::FILE_NAME))
    }

    /// The index file: `explicit` (`--path`, `CRASH_RESUME_INDEX_PATH`) when given, else the
    /// default. A blank explicit path is an error, not the default.
    pub fn index_path(&self, explicit: Option<&str>) -> Result<Utf8PathBuf, LocationError> {
        match explicit {
            Some(path) if path.trim().is_empty() => Err(LocationError::EmptyIndexPath),
            Some(path) => Ok(Utf8PathBuf::from(path)),
            None => self.default_index_path(),
        }
    }

    /// `$XDG_CONFIG_HOME/crash-resume/launchers.toml`, else `~/.config/crash-resume/launchers.toml`.
    pub fn launchers_path(&self) -> Result<Utf8PathBuf, LocationError> {
        let config = self.base_dir(self.xdg_config_home.as_ref(), ".config")?;
        Ok(config.join(APP_DIR).join("launchers.toml"))
    }

    /// The launcher registry: the built-ins with `launchers.toml` on top (when its location is
    /// known and it exists), and `profile` selected when given.
    pub fn registry(&self, profile: Option<&str>) -> Result<Registry, ConfigError> {
        let mut registry = match self.launchers_path() {
            Ok(path) => Registry::load(&path)?,
            Err(_) => Registry::builtin(),
        };
        if let Some(profile) = profile {
            registry.select_profile(profile)?;
        }
        Ok(registry)
    }

    /// An XDG base dir: the variable's absolute value, else `default` under the home dir.
    fn base_dir(
        &self,
        variable: Option<&PathBuf>,
        default: &str,
    ) -> Result<Utf8PathBuf, LocationError> {
        let dir = match variable {
            Some(dir) => dir.clone(),
            None => self
                .home
                .as_ref()
                .ok_or(LocationError::NoHome {
                    what: Placed::Launchers,
                    instead: "XDG_CONFIG_HOME",
                })?
                .join(default),
        };
        Utf8PathBuf::from_path_buf(dir).map_err(|dir| LocationError::NotUtf8 {
            what: "the directory".to_owned(),
            value: dir.into_os_string(),
        })
    }
}

/// The hook's log: `hook.log` beside the index.
pub fn hook_log_path(index: &Utf8Path) -> Option<Utf8PathBuf> {
    Some(index.parent()?.join("hook.log"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Environment {
        let vars: BTreeMap<String, OsString> = vars
            .iter()
            .map(|(name, value)| (name.to_string(), OsString::from(value)))
            .collect();
        Environment::from_lookup(Some(PathBuf::from("/home/u")), |name| {
            vars.get(name).cloned()
        })
    }

    #[test]
    fn files_default_under_home() {
        let env = env(&[]);
        assert_eq!(
            env.default_index_path().unwrap(),
            "/home/u/.local/state/crash-resume/index.json"
        );
        assert_eq!(
            env.launchers_path().unwrap(),
            "/home/u/.config/crash-resume/launchers.toml"
        );
        assert_eq!(
            env.config_dir("claude").unwrap().as_deref(),
            Some("/home/u/.claude")
        );
        assert_eq!(
            env.config_dir("codex").unwrap().as_deref(),
            Some("/home/u/.codex")
        );
        assert_eq!(
            env.config_dir("gemini").unwrap().as_deref(),
            Some("/home/u")
        );
        assert_eq!(env.config_dir("aider").unwrap(), None);
    }

    #[test]
    fn variables_move_them() {
        let env = env(&[
            ("XDG_STATE_HOME", "/s"),
            ("XDG_CONFIG_HOME", "/c"),
            ("CLAUDE_CONFIG_DIR", "~/.claude-work"),
            ("CODEX_HOME", " "),
        ]);
        assert_eq!(
            env.default_index_path().unwrap(),
            "/s/crash-resume/index.json"
        );
        assert_eq!(
            env.launchers_path().unwrap(),
            "/c/crash-resume/launchers.toml"
        );
        assert_eq!(
            env.config_dir("claude").unwrap().as_deref(),
            Some("~/.claude-work")
        );
        assert_eq!(
            env.config_dir("codex").unwrap().as_deref(),
            Some("/home/u/.codex")
        );
    }

    #[test]
    fn relative_xdg_dirs_are_ignored() {
        let env = env(&[("XDG_STATE_HOME", "rel")]);
        assert_eq!(
            env.default_index_path().unwrap(),
            "/home/u/.local/state/crash-resume/index.json"
        );
    }

    #[test]
    fn no_home_and_blank_paths_are_errors() {
        let env = Environment::default();
        assert_eq!(
            env.default_index_path().unwrap_err().to_string(),
            "cannot find the home directory to place the index in; set HOME, XDG_STATE_HOME"
        );
        assert!(matches!(
            env.index_path(Some(" ")),
            Err(LocationError::EmptyIndexPath)
        ));
        assert_eq!(env.index_path(Some("/x/i.json")).unwrap(), "/x/i.json");
        assert_eq!(env.config_dir("claude").unwrap(), None);
        assert_eq!(
            hook_log_path(Utf8Path::new("/x/i.json")).unwrap(),
            "/x/hook.log"
        );
    }
}
