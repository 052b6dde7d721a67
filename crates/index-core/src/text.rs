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
            '\t' => quoted.push_str("\\t"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\u{1b}' => quoted.push_str("\\e"),
            c if c.is_ascii_control() => {
                let _ = write!(quoted, "\\x{:02x}", u32::from(c));
            }
            c if non_printable(c) => {
                let _ = write!(quoted, "\\u{{{:x}}}", u32::from(c));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    Cow::Owned(quoted)
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
