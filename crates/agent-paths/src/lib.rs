//! Where AI coding agents keep their files: each provider's config-dir variable and default,
//! and home-dir expansion of recorded paths.
//!
//! These facts are written here once; the launcher registry (`launcher-map`), the preflight and
//! the `crash-resume` binary all read them from this crate. Pure: no IO, no environment reads;
//! callers pass the home dir and the variables' values they read.

#![deny(missing_docs)]

use camino::{Utf8Path, Utf8PathBuf};

/// What is known of one agent CLI's config dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderFacts {
    /// The provider's name as the index records it: `claude`, `codex`.
    pub name: &'static str,
    /// The environment variable that points the agent at a config dir.
    pub config_env: &'static str,
    /// The config dir the agent uses when the variable is unset, as written (`~/.claude`).
    pub default_config_dir: &'static str,
}

impl ProviderFacts {
    /// The config dir the agent runs with: `variable` (the value of [`Self::config_env`]) when
    /// it is set and not blank, else the default under `home`; `None` when neither is known.
    pub fn config_dir(
        &self,
        variable: Option<&str>,
        home: Option<&Utf8Path>,
    ) -> Option<Utf8PathBuf> {
        match variable.filter(|value| !value.trim().is_empty()) {
            Some(value) => Some(Utf8PathBuf::from(value)),
            None => home.map(|home| expand_home(self.default_config_dir, Some(home))),
        }
    }
}

/// The providers whose config dirs crash-resume knows, in a fixed order.
pub const PROVIDERS: [ProviderFacts; 2] = [
    ProviderFacts {
        name: "claude",
        config_env: "CLAUDE_CONFIG_DIR",
        default_config_dir: "~/.claude",
    },
    ProviderFacts {
        name: "codex",
        config_env: "CODEX_HOME",
        default_config_dir: "~/.codex",
    },
];

/// The provider assumed when a session has none recorded (the JavaScript tool knew only Claude).
pub const DEFAULT_PROVIDER: &str = "claude";

/// The facts of the provider named `name`, if it is one of [`PROVIDERS`].
pub fn provider(name: &str) -> Option<&'static ProviderFacts> {
    PROVIDERS.iter().find(|facts| facts.name == name)
}

/// Replaces a leading `~` (the whole path) or `~/` by `home`.
///
/// Agents and hooks record paths as the user typed them (`~/.claude-work`). Before such a path
/// is checked on disk or quoted for a shell (where a quoted `~` no longer expands), its leading
/// `~` is replaced by the home dir. Only the current user's home is known: anything else is
/// returned unchanged: a `~user/...` form, a `~` that is not the first character, and every
/// path when `home` is `None` (the caller could not tell where home is). A trailing `/` on
/// `home` is not doubled.
///
/// ```
/// use camino::{Utf8Path, Utf8PathBuf};
/// use agent_paths::expand_home;
///
/// let home = Utf8Path::new("/home/u");
/// assert_eq!(expand_home("~/.claude", Some(home)), Utf8PathBuf::from("/home/u/.claude"));
/// assert_eq!(expand_home("~bob/x", Some(home)), Utf8PathBuf::from("~bob/x"));
/// assert_eq!(expand_home("~/.claude", None), Utf8PathBuf::from("~/.claude"));
/// ```
pub fn expand_home(path: &str, home: Option<&Utf8Path>) -> Utf8PathBuf {
    let Some(home) = home else {
        return Utf8PathBuf::from(path);
    };
    if path == "~" {
        return home.to_path_buf();
    }
    match path.strip_prefix('~').filter(|rest| rest.starts_with('/')) {
        // `rest` keeps its leading slash; joining with `Utf8Path::join` would drop `home`
        // when `rest` is `//x`, which a shell expands to `<home>//x`.
        Some(rest) => Utf8PathBuf::from(format!("{}{rest}", home.as_str().trim_end_matches('/'))),
        None => Utf8PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, home: Option<&str>, expected: &str) {
        let actual = expand_home(input, home.map(Utf8Path::new));
        assert_eq!(actual, expected, "expand_home({input:?}, {home:?})");
    }

    #[test]
    fn tilde_alone_is_home() {
        check("~", Some("/home/u"), "/home/u");
        check("~", Some("/home/u/"), "/home/u/");
        check("~", Some("/"), "/");
    }

    #[test]
    fn leading_tilde_slash_is_replaced() {
        check("~/", Some("/home/u"), "/home/u/");
        check("~/.claude", Some("/home/u"), "/home/u/.claude");
        check("~/.claude/", Some("/home/u"), "/home/u/.claude/");
        check("~/my proj/sub", Some("/home/u"), "/home/u/my proj/sub");
        check("~/.claude", Some("/home/u/"), "/home/u/.claude");
        check("~/.claude", Some("/"), "/.claude");
        check("~//x", Some("/home/u"), "/home/u//x");
        check("~/~/x", Some("/home/u"), "/home/u/~/x");
        check("~/café 🦀", Some("/home/ü"), "/home/ü/café 🦀");
    }

    #[test]
    fn other_tildes_are_left_alone() {
        check("~bob", Some("/home/u"), "~bob");
        check("~bob/x", Some("/home/u"), "~bob/x");
        check("~.claude", Some("/home/u"), "~.claude");
        check("/srv/~/x", Some("/home/u"), "/srv/~/x");
        check("a~/x", Some("/home/u"), "a~/x");
        check(" ~/x", Some("/home/u"), " ~/x");
    }

    #[test]
    fn paths_without_tilde_are_unchanged() {
        check("", Some("/home/u"), "");
        check("/home/u/.claude", Some("/home/u"), "/home/u/.claude");
        check("relative/dir", Some("/home/u"), "relative/dir");
    }

    #[test]
    fn unknown_home_changes_nothing() {
        check("~", None, "~");
        check("~/", None, "~/");
        check("~/.claude", None, "~/.claude");
        check("~bob/x", None, "~bob/x");
        check("/abs", None, "/abs");
    }
}

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
