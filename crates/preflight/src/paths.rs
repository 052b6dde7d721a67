//! Home-dir expansion of recorded paths: the one rule that the preflight and the resume command
//! share, so both look in the same place.
//!
//! Agents and hooks record paths as the user typed them (`~/.claude-work`). Before such a path is
//! checked on disk or quoted for a shell (where a quoted `~` no longer expands), its leading `~`
//! is replaced by the home dir. Only the current user's home is known: `~user/...` is left as is.

use camino::{Utf8Path, Utf8PathBuf};

/// Replaces a leading `~` (the whole path) or `~/` by `home`.
///
/// Anything else is returned unchanged: a `~user/...` form, a `~` that is not the first
/// character, and every path when `home` is `None` (the caller could not tell where home is).
/// A trailing `/` on `home` is not doubled. Pure: no IO, no environment.
///
/// ```
/// use camino::{Utf8Path, Utf8PathBuf};
/// use preflight::paths::expand_home;
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
