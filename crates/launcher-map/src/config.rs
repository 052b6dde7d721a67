//! The `launchers.toml` format (a compatibility promise: these types are the file) and how a
//! file is applied on top of a registry.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use serde::Deserialize;

use crate::error::{ConfigError, toml_key};
use crate::launcher::{AgentDefault, Launcher, Profile};
use crate::template::{Template, is_shell_name};

/// A launcher config, read and validated; the registry applies it
/// ([`crate::Registry`]'s `apply`).
#[derive(Debug)]
pub(crate) struct ConfigFile {
    /// The file it was read from, for errors.
    pub(crate) origin: Utf8PathBuf,
    /// AgentName defaults, each to be merged over the one of the same name.
    pub(crate) providers: Vec<(String, AgentPatch)>,
    /// Repo launchers, keyed by repo name trimmed and lower-cased.
    pub(crate) repos: BTreeMap<String, Launcher>,
    /// Profiles, each replacing the one of the same name.
    pub(crate) profiles: Vec<(String, Profile)>,
    /// The profile the file selects.
    pub(crate) profile: Option<String>,
}

/// An agent default as a file gives it: fields left out keep the values of the agent it
/// overrides.
#[derive(Debug)]
pub(crate) struct AgentPatch {
    origin: Utf8PathBuf,
    label: String,
    template: Option<Template>,
    config_env: Option<String>,
    default_config_dir: Option<String>,
    cd: Option<bool>,
}

impl AgentPatch {
    /// The agent default this patch makes over `overridden` (the agent of the same name
    /// so far, if any).
    pub(crate) fn merge(
        self,
        overridden: Option<&AgentDefault>,
    ) -> Result<AgentDefault, ConfigError> {
        let template = match (self.template, overridden) {
            (Some(template), _) => template,
            (None, Some(overridden)) => overridden.launcher.template.clone(),
            (None, None) => {
                return Err(ConfigError::Invalid {
                    path: self.origin,
                    key: self.label,
                    reason: "has no `command`; give the command that resumes a session, such as \
                             \"tool --resume {session}\""
                        .to_owned(),
                });
            }
        };
        Ok(AgentDefault {
            launcher: Launcher {
                label: self.label,
                template,
                cd: self
                    .cd
                    .or(overridden.map(|overridden| overridden.launcher.cd))
                    .unwrap_or(true),
                agent: None,
            },
            config_env: self
                .config_env
                .or_else(|| overridden.and_then(|overridden| overridden.config_env.clone())),
            default_config_dir: self.default_config_dir.or_else(|| {
                overridden.and_then(|overridden| overridden.default_config_dir.clone())
            }),
        })
    }
}

/// The only format version there is; a file may say `version = 1`.
const VERSION: u32 = 1;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: Option<u32>,
    profile: Option<String>,
    #[serde(default)]
    providers: BTreeMap<String, AgentEntry>,
    #[serde(default)]
    repos: BTreeMap<String, LauncherEntry>,
    #[serde(default)]
    profiles: BTreeMap<String, ProfileEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentEntry {
    command: Option<String>,
    config_env: Option<String>,
    default_config_dir: Option<String>,
    cd: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LauncherEntry {
    command: String,
    cd: Option<bool>,
    /// The agent the launcher is for (`provider` in `launchers.toml`).
    #[serde(rename = "provider")]
    agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileEntry {
    #[serde(default)]
    repos: BTreeMap<String, LauncherEntry>,
    fallback: Option<LauncherEntry>,
    no_repo: Option<LauncherEntry>,
}

/// Applies the launcher config `text` (read from `origin`) on top of `registry`.
///
/// Nothing is changed when the file is refused.
pub(crate) fn parse(text: &str, origin: &Utf8Path) -> Result<ConfigFile, ConfigError> {
    let file: File = toml::from_str(text).map_err(|source| syntax_error(text, origin, source))?;
    let cx = Origin(origin);
    if let Some(version) = file.version.filter(|&version| version != VERSION) {
        return Err(cx.invalid(
            "version".to_owned(),
            format!(
                "is {version}, but this crash-resume reads version {VERSION}; upgrade \
                 crash-resume or write the file for version {VERSION}"
            ),
        ));
    }
    let providers = file
        .providers
        .into_iter()
        .map(|(name, entry)| Ok((name.clone(), cx.agent(&name, entry)?)))
        .collect::<Result<_, ConfigError>>()?;
    let repos = cx.repos("repos", file.repos)?;
    let profiles = file
        .profiles
        .into_iter()
        .map(|(name, entry)| {
            let key = format!("profiles.{}", toml_key(&name));
            Ok((name, cx.profile(&key, entry)?))
        })
        .collect::<Result<_, ConfigError>>()?;
    Ok(ConfigFile {
        origin: origin.to_owned(),
        providers,
        repos,
        profiles,
        profile: file.profile,
    })
}

fn syntax_error(text: &str, origin: &Utf8Path, source: toml::de::Error) -> ConfigError {
    let offset = source.span().map_or(0, |span| span.start).min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |last| last.chars().count())
        + 1;
    ConfigError::Syntax {
        path: origin.to_owned(),
        line,
        column,
        message: source.message().trim_end().to_owned(),
        toml: Box::new(source),
    }
}

/// The file being applied, for the errors it may cause.
#[derive(Clone, Copy)]
struct Origin<'a>(&'a Utf8Path);

impl Origin<'_> {
    fn invalid(self, key: String, reason: String) -> ConfigError {
        ConfigError::Invalid {
            path: self.0.to_owned(),
            key,
            reason,
        }
    }

    fn template(self, key: &str, command: &str) -> Result<Template, ConfigError> {
        Template::parse(command).map_err(|problem| ConfigError::Template {
            path: self.0.to_owned(),
            key: format!("{key}.command"),
            problem,
        })
    }

    /// An agent default as the file gives it; fields left out are filled from the agent
    /// it overrides when it is applied ([`AgentPatch::merge`]).
    fn agent(self, name: &str, entry: AgentEntry) -> Result<AgentPatch, ConfigError> {
        let key = format!("providers.{}", toml_key(name));
        if name.trim().is_empty() {
            return Err(self.invalid(key, "is not an agent name; name the agent".to_owned()));
        }
        if let Some(env) = entry
            .config_env
            .as_deref()
            .filter(|env| !is_shell_name(env))
        {
            return Err(self.invalid(
                format!("{key}.config_env"),
                format!(
                    "is `{env}`, not an environment variable name; use letters, digits and `_`, \
                     not starting with a digit"
                ),
            ));
        }
        Ok(AgentPatch {
            template: entry
                .command
                .map(|command| self.template(&key, &command))
                .transpose()?,
            origin: self.0.to_owned(),
            label: key,
            config_env: entry.config_env,
            default_config_dir: entry.default_config_dir,
            cd: entry.cd,
        })
    }

    fn launcher(self, key: String, entry: LauncherEntry) -> Result<Launcher, ConfigError> {
        if let Some(agent_name) = entry.agent.as_deref().filter(|p| p.trim().is_empty()) {
            return Err(self.invalid(
                format!("{key}.provider"),
                format!("is `{agent_name}`, not an agent name; name one, such as \"claude\", or leave the key out"),
            ));
        }
        Ok(Launcher {
            template: self.template(&key, &entry.command)?,
            cd: entry.cd.unwrap_or(true),
            agent: entry.agent,
            label: key,
        })
    }

    /// Repo launchers, keyed by their repo name trimmed and lower-cased.
    fn repos(
        self,
        table: &str,
        entries: BTreeMap<String, LauncherEntry>,
    ) -> Result<BTreeMap<String, Launcher>, ConfigError> {
        let mut repos: BTreeMap<String, (String, Launcher)> = BTreeMap::new();
        for (name, entry) in entries {
            let key = format!("{table}.{}", toml_key(&name));
            let normalized = name.trim().to_lowercase();
            if normalized.is_empty() {
                return Err(self.invalid(key, "is not a repo name; name the repo".to_owned()));
            }
            if let Some((other, _)) = repos.get(&normalized) {
                return Err(self.invalid(
                    key,
                    format!(
                        "names the same repo as `{table}.{}` (repo names match ignoring case and \
                         surrounding spaces); keep one of them",
                        toml_key(other)
                    ),
                ));
            }
            let launcher = self.launcher(key, entry)?;
            repos.insert(normalized, (name, launcher));
        }
        Ok(repos
            .into_iter()
            .map(|(normalized, (_, launcher))| (normalized, launcher))
            .collect())
    }

    fn profile(self, key: &str, entry: ProfileEntry) -> Result<Profile, ConfigError> {
        Ok(Profile {
            repos: self.repos(&format!("{key}.repos"), entry.repos)?,
            fallback: entry
                .fallback
                .map(|fallback| self.launcher(format!("{key}.fallback"), fallback))
                .transpose()?,
            no_repo: entry
                .no_repo
                .map(|no_repo| self.launcher(format!("{key}.no_repo"), no_repo))
                .transpose()?,
        })
    }
}
