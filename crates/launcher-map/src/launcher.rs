//! The pieces a registry is made of: a launcher (a command template, run in the session's dir
//! or not), an agent's default launcher with its config-dir variable, and a profile.

use std::collections::BTreeMap;

use agent_paths::expand_home;
use camino::Utf8Path;

use crate::error::RenderError;
use crate::target::Start;
use crate::template::{Field, Template, Values, Word, is_shell_name, quote};

/// One way to resume a session: a command template, optionally run in the session's dir.
#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    /// Where it was defined, such as `repos.api`, for error messages.
    pub(crate) label: String,
    pub(crate) template: Template,
    /// Prefix `cd <cwd> &&` when the working dir is known.
    pub(crate) cd: bool,
    /// Used only for sessions of this agent; `None` for any.
    pub(crate) agent: Option<String>,
}

impl Launcher {
    pub(crate) fn applies_to(&self, agent_name: &str) -> bool {
        self.agent.as_deref().is_none_or(|only| only == agent_name)
    }

    /// The whole line: `[cd <cwd> && ][<env>=<config dir> ]<command>`.
    pub(crate) fn render(
        &self,
        values: &Values<'_>,
        config_env: Option<&str>,
    ) -> Result<String, RenderError> {
        self.render_started(values, config_env, &Start::default())
    }

    /// The whole line, started as `start` says: `[cd <cwd> && ][<env>=<config dir> ][<name>=<value>
    /// ...]<program or the command's first word> <the command's other words>[ <args>]`.
    pub(crate) fn render_started(
        &self,
        values: &Values<'_>,
        config_env: Option<&str>,
        start: &Start<'_>,
    ) -> Result<String, RenderError> {
        let mut line = String::new();
        if let Some(cwd) = values.cwd.as_deref().filter(|_| self.cd) {
            line.push_str("cd ");
            if cwd.starts_with('-') {
                line.push_str("-- ");
            }
            Word::field(Field::Cwd).render(values, &self.label, &mut line)?;
            line.push_str(" && ");
        }
        if let Some(env) = config_env {
            Word::assignment(env, Field::ConfigDir).render(values, &self.label, &mut line)?;
            line.push(' ');
        }
        let variables = start.env.into_iter().flatten();
        for (name, value) in
            variables.filter(|(name, _)| is_shell_name(name) && Some(name.as_str()) != config_env)
        {
            line.push_str(name);
            line.push('=');
            line.push_str(&quote(value)?);
            line.push(' ');
        }
        self.template
            .render_with(values, &self.label, start.program, &mut line)?;
        for arg in start.args {
            line.push(' ');
            line.push_str(&quote(arg)?);
        }
        Ok(line)
    }
}

/// An agent's default launcher and how it finds its config dir.
#[derive(Debug, Clone)]
pub(crate) struct AgentDefault {
    pub(crate) launcher: Launcher,
    /// The environment variable that points the agent at a config dir.
    pub(crate) config_env: Option<String>,
    /// The config dir the agent uses when `config_env` is unset, as written (`~/.claude`).
    pub(crate) default_config_dir: Option<String>,
}

impl AgentDefault {
    /// The variable to set, when the session's config dir is known and not the default one.
    pub(crate) fn config_env_for(
        &self,
        config_dir: Option<&str>,
        home: Option<&Utf8Path>,
    ) -> Option<&str> {
        let config_env = self.config_env.as_deref()?;
        let config_dir = config_dir?;
        let is_default = self.default_config_dir.as_deref().is_some_and(|default| {
            let default = expand_home(default, home);
            same_dir(config_dir, default.as_str())
        });
        (!is_default).then_some(config_env)
    }
}

/// Equal paths, ignoring trailing slashes.
fn same_dir(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// A named set of launchers, chosen with `--profile` or the config's `profile` key.
#[derive(Debug, Clone, Default)]
pub(crate) struct Profile {
    /// Keyed by repo name, trimmed and lower-cased.
    pub(crate) repos: BTreeMap<String, Launcher>,
    /// For sessions with a repo that `repos` does not list.
    pub(crate) fallback: Option<Launcher>,
    /// For sessions without a repo.
    pub(crate) no_repo: Option<Launcher>,
}
