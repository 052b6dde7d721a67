//! Whether a restore may take over an existing pane: only when its shell waits at its own prompt
//! with nothing typed. The multiplexer gathers what it can see of the pane ([`PaneState`]); this
//! module decides ([`judge`]), the same for every multiplexer.
//!
//! A shell with no child and no script can still be busy: in the `read` builtin (`read -p
//! "really delete? "`, a `while read` loop, a `select` menu), at a continuation prompt (a quote
//! or a heredoc left open), or at its prompt with half a command typed. Two signals tell these
//! apart from an idle prompt:
//!
//! - the terminal's mode: a line editor at the prompt (bash's readline, zsh's ZLE, fish) turns
//!   canonical mode off, while the `read` builtin and a shell without a line editor read in
//!   canonical mode;
//! - the cursor's line: at an idle prompt it ends in a prompt character (`$`, `#`, `%`, `>`,
//!   `❯`, ...) with nothing after the cursor; half-typed text ends in something else, and a
//!   continuation prompt (`> `, zsh's `dquote> `) is recognised as one.
//!
//! Both err on the side of leaving a pane alone: a prompt that does not end in a prompt
//! character, or a shell without a line editor, is reported busy with the reason, and the user
//! frees the pane or restores into another.

/// Shells a pane may sit at; anything else running there means the pane is busy.
pub const SHELLS: [&str; 10] = [
    "bash", "zsh", "sh", "fish", "dash", "ksh", "tcsh", "csh", "nu", "mksh",
];

/// The last characters of prompts: `$` and `#` (sh, bash, root), `%` (zsh, csh), `>` (fish,
/// PowerShell-like), and the arrows and symbols of common themes.
const PROMPT_ENDS: [char; 10] = ['$', '#', '%', '>', '❯', '➜', '»', 'λ', '›', '→'];

/// What a multiplexer sees of a pane, as far as telling an idle prompt needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneState {
    /// The pane's foreground command (`pane_current_command`), a login shell's `-` removed.
    pub foreground: String,
    /// A child process of the pane's own process, if it has one.
    pub child: Option<u32>,
    /// Whether the pane's own process is a shell at a prompt rather than one running a script
    /// or a `-c` command (every argument an option, none `-c`).
    pub interactive: bool,
    /// Whether the pane's terminal is in canonical mode (a line is read whole): `None` when it
    /// could not be read.
    pub canonical: Option<bool>,
    /// The cursor's line up to the cursor.
    pub before_cursor: String,
    /// The cursor's line from the cursor on.
    pub after_cursor: String,
}

/// Why a pane is left alone (facts: `resume_plan::apply` says them to people).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Busy {
    /// Another program runs in front.
    Program(String),
    /// The shell has a child process (a program, or a script waiting on `read`).
    Child(u32),
    /// The shell runs a script or a `-c` command.
    Script,
    /// The terminal reads whole lines: the shell is in the `read` builtin or a `select` menu,
    /// or it has no line editor, so its prompt cannot be told from a `read`.
    LineMode,
    /// The terminal's mode could not be read.
    UnknownMode,
    /// The cursor's line is a continuation prompt: a quote or a heredoc is open.
    Continuation,
    /// Text follows the cursor, or the line does not end in a prompt character: half-typed
    /// text (or a prompt this rule does not know).
    Typed(String),
    /// The cursor's line is empty: no prompt is shown.
    NoPrompt,
}

/// Whether the pane may be taken over: `Ok` when its shell waits at its own prompt with nothing
/// typed, else why not.
pub fn judge(pane: &PaneState) -> Result<(), Busy> {
    let foreground = pane.foreground.trim_start_matches('-');
    if !SHELLS.contains(&foreground) {
        return Err(Busy::Program(foreground.to_string()));
    }
    if let Some(child) = pane.child {
        return Err(Busy::Child(child));
    }
    if !pane.interactive {
        return Err(Busy::Script);
    }
    match pane.canonical {
        Some(true) => return Err(Busy::LineMode),
        None => return Err(Busy::UnknownMode),
        Some(false) => {}
    }
    judge_line(&pane.before_cursor, &pane.after_cursor)
}

/// The cursor's line: a prompt character last (spaces aside), nothing after the cursor, and not
/// a continuation prompt.
fn judge_line(before_cursor: &str, after_cursor: &str) -> Result<(), Busy> {
    let line = before_cursor.trim_end();
    if !after_cursor.trim().is_empty() {
        return Err(Busy::Typed(format!("{line}{after_cursor}")));
    }
    if line.is_empty() {
        return Err(Busy::NoPrompt);
    }
    if is_continuation(line) {
        return Err(Busy::Continuation);
    }
    match line.chars().last() {
        Some(last) if PROMPT_ENDS.contains(&last) => Ok(()),
        _ => Err(Busy::Typed(line.to_string())),
    }
}

/// A continuation prompt: bash's and sh's `>`, or zsh's `%_>` (`dquote>`, `heredoc>`, `for
/// dquote>`): lower-case words and a `>`.
fn is_continuation(line: &str) -> bool {
    line.strip_suffix('>').is_some_and(|words| {
        words
            .split(' ')
            .all(|word| word.chars().all(|character| character.is_ascii_lowercase()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_prompt(before_cursor: &str, after_cursor: &str) -> PaneState {
        PaneState {
            foreground: "bash".to_string(),
            child: None,
            interactive: true,
            canonical: Some(false),
            before_cursor: before_cursor.to_string(),
            after_cursor: after_cursor.to_string(),
        }
    }

    #[test]
    fn an_idle_prompt_may_be_taken_over() {
        for prompt in [
            "bash-5.2$ ",
            "root@host:~# ",
            "user@host ~ % ",
            "~/src/proj> ",
            "~/code/api main ❯ ",
            "➜  proj git:(main) ➜ ",
            "$",
        ] {
            assert_eq!(judge(&at_prompt(prompt, "")), Ok(()), "{prompt:?}");
            assert_eq!(judge(&at_prompt(prompt, "   ")), Ok(()), "{prompt:?}");
        }
    }

    #[test]
    fn typed_text_continuations_and_empty_lines_are_busy() {
        for (before, after, busy) in [
            (
                "bash-5.2$ touch x",
                "",
                Busy::Typed("bash-5.2$ touch x".into()),
            ),
            ("bash-5.2$ ls ", "", Busy::Typed("bash-5.2$ ls".into())),
            (
                "bash-5.2$ ",
                "rm -rf",
                Busy::Typed("bash-5.2$rm -rf".into()),
            ),
            ("> ", "", Busy::Continuation),
            ("dquote> ", "", Busy::Continuation),
            ("for dquote> ", "", Busy::Continuation),
            ("heredoc> ", "", Busy::Continuation),
            ("", "", Busy::NoPrompt),
            ("   ", "", Busy::NoPrompt),
        ] {
            assert_eq!(judge(&at_prompt(before, after)), Err(busy), "{before:?}");
        }
    }

    #[test]
    fn the_process_and_the_terminal_mode_come_first() {
        let idle = at_prompt("$ ", "");
        let cases = [
            (
                PaneState {
                    foreground: "vim".into(),
                    ..idle.clone()
                },
                Busy::Program("vim".into()),
            ),
            (
                PaneState {
                    child: Some(42),
                    ..idle.clone()
                },
                Busy::Child(42),
            ),
            (
                PaneState {
                    interactive: false,
                    ..idle.clone()
                },
                Busy::Script,
            ),
            (
                PaneState {
                    canonical: Some(true),
                    ..idle.clone()
                },
                Busy::LineMode,
            ),
            (
                PaneState {
                    canonical: None,
                    ..idle.clone()
                },
                Busy::UnknownMode,
            ),
        ];
        for (pane, busy) in cases {
            assert_eq!(judge(&pane), Err(busy));
        }
        let login_shell = PaneState {
            foreground: "-zsh".into(),
            ..idle
        };
        assert_eq!(judge(&login_shell), Ok(()));
    }
}
