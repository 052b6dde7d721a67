//! The agents and multiplexers on `PATH`, and the version each says it is (`--version`, each
//! run with a deadline, all at once), against the version the tests pin.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Serialize;

/// A multiplexer crash-resume restores into, the program that runs it, how it says its
/// version, and the version its backend was measured against (none for those only faked in
/// the tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiplexerProgram {
    /// The program looked for on `PATH`.
    pub program: &'static str,
    /// The arguments that print its version.
    pub version_args: &'static [&'static str],
    /// The version the tests run (a prefix: `0.26` is any 0.26.x).
    pub pinned: Option<&'static str>,
}

/// The zellij the live tests build and run (`cargo xtask zellij install`).
pub const ZELLIJ_VERSION: &str = "0.45.1";

/// The multiplexers, with the versions CI runs: tmux from Debian 12, kitty from its package.
pub const MULTIPLEXERS: [MultiplexerProgram; 5] = [
    MultiplexerProgram {
        program: "tmux",
        version_args: &["-V"],
        pinned: Some("3.3a"),
    },
    MultiplexerProgram {
        program: "zellij",
        version_args: &["--version"],
        pinned: Some(ZELLIJ_VERSION),
    },
    MultiplexerProgram {
        program: "kitty",
        version_args: &["--version"],
        pinned: Some("0.26"),
    },
    MultiplexerProgram {
        program: "wezterm",
        version_args: &["--version"],
        pinned: None,
    },
    MultiplexerProgram {
        program: "cmux",
        version_args: &["--version"],
        pinned: None,
    },
];

/// What a program is to crash-resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An agent CLI whose sessions are recorded.
    Agent,
    /// A multiplexer whose panes are recorded and restored into.
    Multiplexer,
}

/// How a program's version compares with the pinned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Not on `PATH`.
    Missing,
    /// The pinned version.
    Pinned,
    /// Another version: it may work, but crash-resume's rules were measured against the pinned one.
    Other,
    /// No version is pinned for it (a multiplexer the tests fake).
    NotPinned,
    /// It did not say its version (it failed, or did not answer in time).
    Unknown,
}

/// One program looked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Program {
    /// Its name, as looked for on `PATH`.
    pub name: String,
    /// What it is.
    pub kind: Kind,
    /// Where it was found.
    pub path: Option<String>,
    /// The version it said.
    pub version: Option<String>,
    /// The version the tests pin.
    pub pinned: Option<String>,
    /// How the two compare.
    pub standing: Standing,
    /// Why no version could be had, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The first executable file named `name` in the dirs of `search_path` (a `PATH` value).
pub fn find(name: &str, search_path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::split_paths(search_path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate).is_ok_and(|metadata| {
                metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
            })
        })
}

/// The version in a program's `--version` output: the first word that starts with a digit and
/// holds a dot (`tmux 3.3a`, `codex-cli 0.171.0`, `GitHub Copilot CLI 1.0.102.`), without a
/// trailing dot or comma.
pub fn version_in(output: &str) -> Option<String> {
    output
        .split_whitespace()
        .find(|word| word.starts_with(|first: char| first.is_ascii_digit()) && word.contains('.'))
        .map(|word| word.trim_end_matches(['.', ',']).to_string())
}

/// Whether `version` is the pinned one: equal, or within it when the pin is a prefix (`0.26`
/// takes `0.26.5`).
pub fn is_pinned(version: &str, pinned: &str) -> bool {
    version == pinned
        || version
            .strip_prefix(pinned)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// What to look for: a name, its kind, how it says its version, the pinned version.
pub(crate) struct Wanted {
    pub name: &'static str,
    pub kind: Kind,
    pub version_args: &'static [&'static str],
    pub pinned: Option<&'static str>,
}

/// Every agent of the registry that has a pinned version, then every multiplexer.
pub(crate) fn wanted() -> Vec<Wanted> {
    let agents = agent_paths::PINNED.iter().map(|pinned| Wanted {
        name: pinned.program,
        kind: Kind::Agent,
        version_args: &["--version"],
        pinned: Some(pinned.version),
    });
    let multiplexers = MULTIPLEXERS.iter().map(|multiplexer| Wanted {
        name: multiplexer.program,
        kind: Kind::Multiplexer,
        version_args: multiplexer.version_args,
        pinned: multiplexer.pinned,
    });
    agents.chain(multiplexers).collect()
}

/// Looks for each program on `search_path` and asks the ones found their version, all at once,
/// each within `limit`.
pub(crate) fn survey(
    wanted: &[Wanted],
    search_path: Option<&OsStr>,
    limit: Duration,
) -> Vec<Program> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = wanted
            .iter()
            .map(|wanted| scope.spawn(move || look_at(wanted, search_path, limit)))
            .collect();
        handles
            .into_iter()
            .zip(wanted)
            .map(|(handle, wanted)| {
                handle.join().unwrap_or_else(|_| Program {
                    name: wanted.name.to_string(),
                    kind: wanted.kind,
                    path: None,
                    version: None,
                    pinned: wanted.pinned.map(str::to_string),
                    standing: Standing::Unknown,
                    error: Some("the check of it failed".to_string()),
                })
            })
            .collect()
    })
}

fn look_at(wanted: &Wanted, search_path: Option<&OsStr>, limit: Duration) -> Program {
    let mut program = Program {
        name: wanted.name.to_string(),
        kind: wanted.kind,
        path: None,
        version: None,
        pinned: wanted.pinned.map(str::to_string),
        standing: Standing::Missing,
        error: None,
    };
    let Some(path) = find(wanted.name, search_path) else {
        return program;
    };
    program.path = Some(path.to_string_lossy().into_owned());
    let (version, error) = ask_version(&path, wanted.version_args, limit);
    program.standing = match (&version, wanted.pinned) {
        (None, _) => Standing::Unknown,
        (Some(_), None) => Standing::NotPinned,
        (Some(version), Some(pinned)) if is_pinned(version, pinned) => Standing::Pinned,
        (Some(_), Some(_)) => Standing::Other,
    };
    program.version = version;
    program.error = error;
    program
}

/// The version `path` prints when run with `args`, or why there is none.
fn ask_version(path: &Path, args: &[&str], limit: Duration) -> (Option<String>, Option<String>) {
    let output = match bounded_run::output(Command::new(path).args(args), limit) {
        Ok(output) => output,
        Err(error) => return (None, Some(error.to_string())),
    };
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    match (output.status.success(), version_in(&text)) {
        (true, Some(version)) => (Some(version), None),
        (true, None) => (None, Some("it printed no version".to_string())),
        (false, _) => (
            None,
            Some(format!(
                "`{} {}` failed: {}",
                path.display(),
                args.join(" "),
                output.status
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_each_program_prints_them() {
        let check = |output: &str, version: Option<&str>| {
            assert_eq!(version_in(output).as_deref(), version, "{output}");
        };
        check("tmux 3.3a\n", Some("3.3a"));
        check("2.1.328 (Claude Code)\n", Some("2.1.328"));
        check("codex-cli 0.171.0\n", Some("0.171.0"));
        check(
            "GitHub Copilot CLI 1.0.102.\nRun 'copilot update'",
            Some("1.0.102"),
        );
        check("kitty 0.26.5 created by Kovid Goyal\n", Some("0.26.5"));
        check("zellij 0.45.1\n", Some("0.45.1"));
        check("no version here 3\n", None);
    }

    #[test]
    fn a_pin_is_the_version_or_a_prefix_of_it() {
        assert!(is_pinned("3.3a", "3.3a"));
        assert!(is_pinned("0.26.5", "0.26"));
        assert!(!is_pinned("0.260", "0.26"));
        assert!(!is_pinned("3.4", "3.3a"));
    }
}
