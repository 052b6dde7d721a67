//! The launcher registry: agent defaults, repo launchers and profiles, and the rule that picks
//! one of them for a session and renders it.

use std::collections::BTreeMap;

use agent_paths::expand_home;
use camino::{Utf8Path, Utf8PathBuf};

use crate::config::{self, ConfigFile};
use crate::error::{ConfigError, RenderError};
use crate::launcher::{AgentDefault, Launcher, Profile};
use crate::target::{RenderContext, Target};
use crate::template::Values;

/// The agent assumed when a session has none recorded (the JavaScript tool knew only Claude).
pub const DEFAULT_AGENT: &str = agent_paths::DEFAULT_AGENT;

/// The built-in launchers, in the `launchers.toml` format.
const BUILTIN: &str = include_str!("builtin.toml");

/// Which command resumes which session: the built-in defaults, plus a `launchers.toml` if any.
///
/// A launcher is chosen in this order, first match wins (a launcher with a `provider` key only
/// matches sessions of that agent):
///
/// 1. the selected profile's launcher for the session's repo,
/// 2. the config's `[repos]` launcher for the repo,
/// 3. the selected profile's `fallback` (sessions with a repo) or `no_repo` (sessions without),
/// 4. the agent's default.
#[derive(Debug, Clone)]
pub struct Registry {
    pub(crate) providers: BTreeMap<String, AgentDefault>,
    /// Keyed by repo name, trimmed and lower-cased.
    pub(crate) repos: BTreeMap<String, Launcher>,
    pub(crate) profiles: BTreeMap<String, Profile>,
    /// The selected profile; always a key of `profiles`.
    pub(crate) profile: Option<String>,
}

impl Registry {
    /// The built-in launchers: defaults for `claude`, `codex` and `gemini`, the `golems`
    /// profile, and no profile selected.
    pub fn builtin() -> Registry {
        let mut registry = Registry {
            providers: BTreeMap::new(),
            repos: BTreeMap::new(),
            profiles: BTreeMap::new(),
            profile: None,
        };
        // Each agent's default launcher, from the agent registry, then the profiles.
        let mut builtin = String::new();
        for facts in &agent_paths::AGENTS {
            builtin.push_str(&format!(
                "[providers.{}]\ncommand = \"{}\"\n\n",
                facts.name, facts.launcher
            ));
        }
        builtin.push_str(BUILTIN);
        config::parse(&builtin, Utf8Path::new("<built-in launchers>"))
            .and_then(|file| registry.apply(file))
            .expect("the built-in launchers are a valid launcher config");
        for facts in agent_paths::AGENTS {
            if let Some(default) = registry.providers.get_mut(facts.name) {
                default.config_env = Some(facts.config_env.to_owned());
                default.default_config_dir = Some(facts.default_config_dir.to_owned());
            }
        }
        registry
    }

    /// The built-in launchers with the launcher config `text` applied on top; `origin` is the
    /// path named in errors.
    pub fn from_toml(text: &str, origin: &Utf8Path) -> Result<Registry, ConfigError> {
        let mut registry = Registry::builtin();
        registry.apply(config::parse(text, origin)?)?;
        Ok(registry)
    }

    /// Reads the launcher config at `path`; a missing file means the built-in launchers alone.
    /// The file may be a symlink (a dotfile manager's), but a FIFO or device there is an error
    /// at once, never a wait.
    pub fn load(path: &Utf8Path) -> Result<Registry, ConfigError> {
        let read =
            safe_open::read(path.as_std_path(), safe_open::Symlinks::Follow).and_then(|bytes| {
                String::from_utf8(bytes)
                    .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
            });
        match read {
            Ok(text) => Registry::from_toml(&text, path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Registry::builtin()),
            Err(source) => Err(ConfigError::Read {
                path: Utf8PathBuf::from(path),
                source,
            }),
        }
    }

    /// Applies a validated launcher config on top of this registry: its agents override
    /// (field by field) the ones of the same name, its repo launchers are added, its profiles
    /// replace those of the same name, and its `profile` is selected. Nothing is changed when
    /// the file is refused.
    pub(crate) fn apply(&mut self, file: ConfigFile) -> Result<(), ConfigError> {
        let mut next = self.clone();
        for (name, patch) in file.providers {
            let merged = patch.merge(next.providers.get(&name))?;
            next.providers.insert(name, merged);
        }
        next.repos.extend(file.repos);
        next.profiles.extend(file.profiles);
        if let Some(name) = file.profile {
            if !next.profiles.contains_key(&name) {
                return Err(ConfigError::UnknownProfile {
                    known: next.profile_names(),
                    name,
                    file: Some(file.origin),
                });
            }
            next.profile = Some(name);
        }
        *self = next;
        Ok(())
    }

    /// Selects the profile named `name`, replacing the config's choice.
    pub fn select_profile(&mut self, name: &str) -> Result<(), ConfigError> {
        if !self.profiles.contains_key(name) {
            return Err(ConfigError::UnknownProfile {
                name: name.to_owned(),
                known: self.profile_names(),
                file: None,
            });
        }
        self.profile = Some(name.to_owned());
        Ok(())
    }

    /// The selected profile, if any.
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    pub(crate) fn profile_names(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }

    /// The one shell line that resumes `target`. Every value in it is shell-quoted; recorded
    /// paths have a leading `~` expanded to `cx.home`. The agent's default launcher starts it
    /// as `target.start` says ([`Start`](crate::Start)); a profile's or a repo's launcher is
    /// the whole command.
    pub fn render(&self, target: &Target<'_>, cx: &RenderContext) -> Result<String, RenderError> {
        let agent_name = target
            .agent
            .map(str::trim)
            .filter(|agent_name| !agent_name.is_empty())
            .unwrap_or(DEFAULT_AGENT);
        let repo = target.repo.map(str::trim).filter(|repo| !repo.is_empty());
        let home = cx.home.as_deref();
        let expand = |path: Option<&str>| {
            path.filter(|path| !path.is_empty())
                .map(|path| expand_home(path, home).into_string())
        };
        let values = Values {
            session: target.session,
            repo,
            repo_lower: repo.map(str::to_lowercase),
            cwd: expand(target.cwd),
            config_dir: expand(target.config_dir),
            home,
        };

        if let Some(launcher) = self.launcher_for(agent_name, repo) {
            return launcher.render(&values, None);
        }
        let default = self
            .providers
            .get(agent_name)
            .ok_or_else(|| RenderError::NoLauncher {
                agent: agent_name.to_owned(),
            })?;
        let config_env = default.config_env_for(values.config_dir.as_deref(), home);
        default
            .launcher
            .render_started(&values, config_env, &target.start)
    }

    /// The profile or repo launcher for a session, if one applies (steps 1 to 3 of the order).
    fn launcher_for(&self, agent_name: &str, repo: Option<&str>) -> Option<&Launcher> {
        let profile = self
            .profile
            .as_ref()
            .and_then(|name| self.profiles.get(name));
        let applies = |launcher: &&Launcher| launcher.applies_to(agent_name);
        let Some(repo) = repo else {
            return profile
                .and_then(|profile| profile.no_repo.as_ref())
                .filter(applies);
        };
        let key = repo.to_lowercase();
        profile
            .and_then(|profile| profile.repos.get(&key))
            .filter(applies)
            .or_else(|| self.repos.get(&key).filter(applies))
            .or_else(|| {
                profile
                    .and_then(|profile| profile.fallback.as_ref())
                    .filter(applies)
            })
    }
}

impl Default for Registry {
    /// The built-in launchers.
    fn default() -> Registry {
        Registry::builtin()
    }
}
