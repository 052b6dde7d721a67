//! Values shown to people: a recorded value may hold characters a terminal acts on (ESC, BEL,
//! a bidirectional override), so human output shows such a value quoted and escaped, the way
//! `git` quotes an unusual file name. `--json` output is exact and does not use this.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `value` as it is when every character is printable; otherwise in double quotes, with `\`
/// and `"` escaped, `\t`, `\n`, `\r` and `\e` spelled so, other C0 and DEL as `\xNN`, and any
/// other non-printable character (C1, a format character such as U+202E) as `\u{NNNN}`.
///
/// ```
/// use index_core::text::escape;
/// assert_eq!(escape("plain name"), "plain name");
/// assert_eq!(escape("a\u{1b}]0;x\u{7}b"), r#""a\e]0;x\x07b""#);
/// assert_eq!(escape("rtl\u{202e}txt"), r#""rtl\u{202e}txt""#);
/// ```
pub fn escape(value: &str) -> Cow<'_, str> {
    if !value.chars().any(non_printable) {
        return Cow::Borrowed(value);
    }
    let mut quoted = String::with_capacity(value.len() + 8);
    quoted.push('"');
    for character in value.chars() {
        match character {
            '\\' => quoted.push_str("\\\\"),
            '"' => quoted.push_str("\\\""),
            c => push_spelled(&mut quoted, c),
        }
    }
    quoted.push('"');
    Cow::Owned(quoted)
}

/// A message for a terminal or a log (an error, a warning, a note): every non-printable
/// character spelled as [`escape`] spells it, except the `'\n'` that separates the message's
/// lines. Not quoted: a message is prose around values, and the values in it are already where
/// the program put them; this only keeps ESC, BEL, CR, C1 and bidirectional overrides from
/// reaching the terminal, whichever value carried them.
///
/// ```
/// use index_core::text::escape_message;
/// assert_eq!(escape_message("cannot open /x\u{1b}]0;y\u{7}/f"), r"cannot open /x\e]0;y\x07/f");
/// assert_eq!(escape_message("line one\nline two"), "line one\nline two");
/// ```
pub fn escape_message(message: &str) -> Cow<'_, str> {
    if !message.chars().any(|c| c != '\n' && non_printable(c)) {
        return Cow::Borrowed(message);
    }
    let mut escaped = String::with_capacity(message.len() + 8);
    for character in message.chars() {
        match character {
            '\n' => escaped.push('\n'),
            c => push_spelled(&mut escaped, c),
        }
    }
    Cow::Owned(escaped)
}

/// `character` onto `out`, spelled with a backslash when it is not printable.
fn push_spelled(out: &mut String, character: char) {
    match character {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\u{1b}' => out.push_str("\\e"),
        c if c.is_ascii_control() => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c if non_printable(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// Whether a terminal could act on `character` or not show it: a control character, or one
/// Rust's own debug escaping treats as non-printable (unassigned, a format character, a
/// separator other than the space). A combining mark is printable after a base character, as
/// it is in a name.
fn non_printable(character: char) -> bool {
    if character.is_ascii() {
        return character.is_ascii_control();
    }
    if character.is_control() {
        return true;
    }
    let mut buffer = [0u8; 5];
    buffer[0] = b'x';
    let length = 1 + character.encode_utf8(&mut buffer[1..]).len();
    let after_base = std::str::from_utf8(&buffer[..length]).unwrap_or("x");
    after_base.escape_debug().count() != 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_keeps_its_line_breaks_and_printable_text() {
        assert!(matches!(
            escape_message("plain\nsecond, é ✓"),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape_message("a \"b\" \\ c"), "a \"b\" \\ c");
    }

    #[test]
    fn a_message_spells_every_character_a_terminal_acts_on() {
        assert_eq!(
            escape_message("x\u{1b}]0;PWN\u{7}\r\t\u{7f}\u{9b}\u{202e}\u{2066}y"),
            r"x\e]0;PWN\x07\r\t\x7f\u{9b}\u{202e}\u{2066}y"
        );
    }

    #[test]
    fn no_control_character_survives_escaping_a_message() {
        for code in (0u32..0x3000).chain(0xfff0..0x10000) {
            let Some(character) = char::from_u32(code) else {
                continue;
            };
            let message = format!("a{character}b");
            let escaped = escape_message(&message);
            let controls = escaped
                .chars()
                .filter(|c| *c != '\n' && non_printable(*c))
                .count();
            assert_eq!(controls, 0, "U+{code:04X} left {escaped:?}");
        }
    }
}
