//! Snapshots of what the binary prints (insta): messages, tables and JSON documents are checked
//! whole against `tests/it/snapshots/`, with filters for what differs from run to run (the
//! sandbox's temp dir, the binary's path, epoch times, measured times and ages, pids), as uv's
//! tests do.
//!
//! `cargo insta review` (or `INSTA_UPDATE=always`) accepts a changed snapshot; in CI (`CI` set)
//! insta writes nothing and a missing or changed snapshot fails the test.

use crate::{BIN, Sandbox};

/// The filters every snapshot of this binary takes: (regex, replacement), applied in order.
pub fn filters(env: &Sandbox) -> Vec<(String, String)> {
    [
        (escape(&env.root().to_string_lossy()), "[SANDBOX]"),
        (escape(BIN), "[BIN]"),
        // Epoch milliseconds, as the index and `--json` keep times.
        (r"\b1[0-9]{12}\b".to_string(), "[MILLIS]"),
        // A time measured while it ran, which the binary shows with a decimal (`gave up after
        // 51.0ms`, `made 20.1s ago`); a duration typed on the command line has none.
        (
            r"\b[0-9]+\.[0-9]+(ns|µs|ms|s|m|h)\b".to_string(),
            "[ELAPSED]",
        ),
        (r"\bpid [0-9]+\b".to_string(), "pid [PID]"),
        (r#""pid": [0-9]+"#.to_string(), r#""pid": [PID]"#),
    ]
    .into_iter()
    .map(|(regex, replacement)| (regex, replacement.to_string()))
    .collect()
}

/// An age as the tables show it (`5s`, `3h 2m 5s`), which depends on how long the test took, and
/// the padding of a table's columns, whose width depends on the ages' (the alignment itself is
/// checked by `list::check_aligned`): filters for the snapshots that show an age only, since a
/// duration typed on the command line is stable and worth seeing.
pub const AGES: [(&str, &str); 2] = [
    (r"\b[0-9]+(ms|s|m|h|d)( [0-9]+(ms|s|m|h|d))*\b", "[AGE]"),
    (" {2,}", "  "),
];

/// insta's settings for a snapshot of what ran in `env`: the shared snapshot dir and the
/// filters.
pub fn settings(env: &Sandbox) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/snapshots"));
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    for (regex, replacement) in filters(env) {
        settings.add_filter(&regex, replacement);
    }
    settings
}

/// `text` as a literal regex.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(character) {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

/// Asserts the snapshot `name` of `text`, printed in the sandbox `env`, with [`settings`] (and
/// [`AGES`] after `ages,`).
macro_rules! assert_cli_snapshot {
    ($env:expr, $name:expr, $text:expr $(,)?) => {
        $crate::snapshot::settings($env).bind(|| insta::assert_snapshot!($name, $text))
    };
    ($env:expr, ages, $name:expr, $text:expr $(,)?) => {{
        let mut settings = $crate::snapshot::settings($env);
        for (regex, replacement) in $crate::snapshot::AGES {
            settings.add_filter(regex, replacement);
        }
        settings.bind(|| insta::assert_snapshot!($name, $text))
    }};
}

/// Asserts the snapshot `name` of the JSON `value`, printed in the sandbox `env`, with
/// [`settings`].
macro_rules! assert_cli_json_snapshot {
    ($env:expr, $name:expr, $value:expr $(,)?) => {
        $crate::snapshot::settings($env).bind(|| insta::assert_json_snapshot!($name, $value))
    };
}

pub(crate) use {assert_cli_json_snapshot, assert_cli_snapshot};
