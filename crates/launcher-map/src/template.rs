//! Command templates: a launcher's command, split into words once at load time, rendered as one
//! shell-quoted line with its placeholders filled in.
//!
//! A template is one simple command, not a shell script: every word is quoted on output, so
//! `&&`, `|` or `$VAR` in a template reach the program literally. Two word forms keep their
//! shell meaning: a leading `NAME=` (an environment assignment; only its value is quoted) and a
//! leading `~` or `~/` (expanded to the home dir, or left bare for the shell when home is
//! unknown).

use std::borrow::Cow;

use agent_paths::expand_home;
use camino::Utf8Path;

use crate::error::{RenderError, TemplateError};

/// A value a template can ask for, written `{name}` in the template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Session,
    Repo,
    RepoLower,
    Cwd,
    ConfigDir,
}

impl Field {
    const ALL: [Field; 5] = [
        Field::Session,
        Field::Repo,
        Field::RepoLower,
        Field::Cwd,
        Field::ConfigDir,
    ];

    /// The placeholder's name inside the braces.
    fn name(self) -> &'static str {
        match self {
            Field::Session => "session",
            Field::Repo => "repo",
            Field::RepoLower => "repo_lower",
            Field::Cwd => "cwd",
            Field::ConfigDir => "config_dir",
        }
    }

    /// What the value is, for people reading an error.
    fn describe(self) -> &'static str {
        match self {
            Field::Session => "session id",
            Field::Repo | Field::RepoLower => "repo",
            Field::Cwd => "working dir",
            Field::ConfigDir => "config dir",
        }
    }

    fn from_name(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|field| field.name() == name)
    }

    /// Paths get home expansion when they start a word.
    fn is_path(self) -> bool {
        matches!(self, Field::Cwd | Field::ConfigDir)
    }
}

/// The values one rendering fills placeholders with.
#[derive(Debug)]
pub(crate) struct Values<'a> {
    pub(crate) session: &'a str,
    /// Trimmed; `None` when unknown or blank.
    pub(crate) repo: Option<&'a str>,
    pub(crate) repo_lower: Option<String>,
    /// Home-expanded; `None` when unknown or empty.
    pub(crate) cwd: Option<String>,
    /// Home-expanded; `None` when unknown or empty.
    pub(crate) config_dir: Option<String>,
    pub(crate) home: Option<&'a Utf8Path>,
}

impl Values<'_> {
    /// The value of `field`, or an error naming the launcher that asked for a value the session
    /// does not have.
    fn get(&self, field: Field, launcher: &str) -> Result<&str, RenderError> {
        let value = match field {
            Field::Session => Some(self.session),
            Field::Repo => self.repo,
            Field::RepoLower => self.repo_lower.as_deref(),
            Field::Cwd => self.cwd.as_deref(),
            Field::ConfigDir => self.config_dir.as_deref(),
        };
        let value = value.ok_or_else(|| RenderError::MissingValue {
            launcher: launcher.to_owned(),
            placeholder: field.name(),
            value: field.describe(),
        })?;
        if value.contains('\0') {
            return Err(RenderError::Unquotable {
                value: field.describe(),
            });
        }
        Ok(value)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Field(Field),
}

/// One word of a command: an optional `NAME=` assignment prefix, then text and placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    assignment: Option<String>,
    pieces: Vec<Piece>,
}

impl Word {
    /// A word that is just one placeholder (the `cd` target).
    pub(crate) fn field(field: Field) -> Word {
        Word {
            assignment: None,
            pieces: vec![Piece::Field(field)],
        }
    }

    /// `NAME=<placeholder>`; `name` must be a shell identifier.
    pub(crate) fn assignment(name: &str, field: Field) -> Word {
        Word {
            assignment: Some(format!("{name}=")),
            pieces: vec![Piece::Field(field)],
        }
    }

    fn parse(word: &str) -> Result<Word, TemplateError> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '}' => return Err(TemplateError::StrayBrace),
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => name.push(c),
                            None => return Err(TemplateError::UnclosedBrace),
                        }
                    }
                    let field = Field::from_name(&name)
                        .ok_or(TemplateError::UnknownPlaceholder { name })?;
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Field(field));
                }
                c => text.push(c),
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        let assignment = split_assignment(&mut pieces);
        Ok(Word { assignment, pieces })
    }

    fn uses(&self, field: Field) -> bool {
        self.pieces.contains(&Piece::Field(field))
    }

    /// Appends this word, quoted, to `out`.
    pub(crate) fn render(
        &self,
        values: &Values<'_>,
        launcher: &str,
        out: &mut String,
    ) -> Result<(), RenderError> {
        let mut value = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => value.push_str(text),
                Piece::Field(field) => value.push_str(values.get(*field, launcher)?),
            }
        }
        // Only a word that starts with template text or a path may mean the home dir: a session
        // id or repo that happens to start with `~/` is passed on as it is.
        let may_mean_home = match self.pieces.first() {
            Some(Piece::Text(_)) => true,
            Some(Piece::Field(field)) => field.is_path(),
            None => false,
        };
        if may_mean_home {
            value = expand_home(&value, values.home).into_string();
        }
        if let Some(assignment) = &self.assignment {
            out.push_str(assignment);
        }
        match value.strip_prefix('~') {
            // Home is unknown: leave the tilde bare so the shell expands it.
            Some("") if may_mean_home => out.push('~'),
            Some(rest) if may_mean_home && rest.starts_with('/') => {
                out.push_str("~/");
                if rest.len() > 1 {
                    out.push_str(&quote(&rest[1..])?);
                }
            }
            _ if value.is_empty() && self.assignment.is_some() => {}
            _ => out.push_str(&quote(&value)?),
        }
        Ok(())
    }
}

/// Moves a leading `NAME=` out of the first text piece.
fn split_assignment(pieces: &mut Vec<Piece>) -> Option<String> {
    let Some(Piece::Text(text)) = pieces.first_mut() else {
        return None;
    };
    let (name, rest) = text.split_once('=')?;
    if !is_shell_name(name) {
        return None;
    }
    let assignment = format!("{name}=");
    let rest = rest.to_owned();
    if rest.is_empty() {
        pieces.remove(0);
    } else {
        *text = rest;
    }
    Some(assignment)
}

/// A POSIX shell name: a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Shell-quotes one value; a value that needs no quoting stays bare.
pub(crate) fn quote(value: &str) -> Result<Cow<'_, str>, RenderError> {
    shlex::try_quote(value).map_err(|_| RenderError::Unquotable { value: "command" })
}

/// A launcher's command: its words, with placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    words: Vec<Word>,
}

impl Template {
    /// Splits `command` into words as a POSIX shell would and finds the placeholders.
    pub(crate) fn parse(command: &str) -> Result<Template, TemplateError> {
        if command.contains('\0') {
            return Err(TemplateError::Nul);
        }
        let words = shlex::split(command).ok_or(TemplateError::Unsplittable)?;
        if words.is_empty() {
            return Err(TemplateError::Empty);
        }
        let words = words
            .iter()
            .map(|word| Word::parse(word))
            .collect::<Result<Vec<_>, _>>()?;
        if !words.iter().any(|word| word.uses(Field::Session)) {
            return Err(TemplateError::NoSession);
        }
        Ok(Template { words })
    }

    /// Appends the rendered command to `out`, words separated by one space, with `program`
    /// (quoted) in place of the first word that is not an assignment, when given.
    pub(crate) fn render_with(
        &self,
        values: &Values<'_>,
        launcher: &str,
        program: Option<&str>,
        out: &mut String,
    ) -> Result<(), RenderError> {
        let mut program = program;
        for (index, word) in self.words.iter().enumerate() {
            if index > 0 {
                out.push(' ');
            }
            match program.filter(|_| word.assignment.is_none()) {
                Some(replacement) => {
                    out.push_str(&quote(replacement)?);
                    program = None;
                }
                None => word.render(values, launcher, out)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(word: &str, expected_assignment: Option<&str>, expected: &[Piece]) {
        let parsed = Word::parse(word).unwrap();
        assert_eq!(
            parsed.assignment.as_deref(),
            expected_assignment,
            "{word:?}"
        );
        assert_eq!(parsed.pieces, expected, "{word:?}");
    }

    fn text(text: &str) -> Piece {
        Piece::Text(text.to_owned())
    }

    #[test]
    fn words_split_into_text_and_placeholders() {
        check("claude", None, &[text("claude")]);
        check("{session}", None, &[Piece::Field(Field::Session)]);
        check(
            "{repo_lower}Claude",
            None,
            &[Piece::Field(Field::RepoLower), text("Claude")],
        );
        check(
            "--dir={cwd}/x",
            None,
            &[text("--dir="), Piece::Field(Field::Cwd), text("/x")],
        );
        check("{{literal}}", None, &[text("{literal}")]);
        check("", None, &[]);
    }

    #[test]
    fn a_leading_name_is_an_assignment() {
        check(
            "CLAUDE_CONFIG_DIR={config_dir}",
            Some("CLAUDE_CONFIG_DIR="),
            &[Piece::Field(Field::ConfigDir)],
        );
        check("_X=a", Some("_X="), &[text("a")]);
        check("X=", Some("X="), &[]);
        check("1X=a", None, &[text("1X=a")]);
        check("--x=a", None, &[text("--x=a")]);
        check("{repo}=a", None, &[Piece::Field(Field::Repo), text("=a")]);
    }

    #[test]
    fn bad_braces_are_refused() {
        assert_eq!(
            Word::parse("{nope}"),
            Err(TemplateError::UnknownPlaceholder {
                name: "nope".into()
            })
        );
        assert_eq!(Word::parse("{session"), Err(TemplateError::UnclosedBrace));
        assert_eq!(Word::parse("a}b"), Err(TemplateError::StrayBrace));
    }
}
