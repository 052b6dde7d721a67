//! Running a program with a deadline, for every crate of crash-resume that runs one (`tmux`,
//! `ps`): the program is waited for at most the time given, killed and reaped past it, and its
//! stdout and stderr are read while it runs, so a large output never blocks it on a full pipe.
//!
//! The waiting, killing and reading are `process_control`'s; this crate fixes how they are used
//! (stdin from `/dev/null`, both outputs captured, a timed-out program always killed) and says
//! which program did not answer in its error.

#![deny(missing_docs)]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use process_control::{ChildExt as _, Control as _};

/// Why a program run with a deadline gave no output.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be started (missing, not executable).
    #[error("cannot run {program}: {source}")]
    Start {
        /// The program's name, as the command gives it.
        program: String,
        /// What starting it said.
        source: std::io::Error,
    },
    /// The program did not finish within its time; it was killed and reaped (or, with no
    /// time left at all, never started).
    #[error("{program} did not answer within {}", duration_text(*.limit))]
    TimedOut {
        /// The program's name, as the command gives it.
        program: String,
        /// The time it had.
        limit: Duration,
    },
    /// Waiting for the program or reading its output failed.
    #[error("cannot wait for {program}: {source}")]
    Wait {
        /// The program's name, as the command gives it.
        program: String,
        /// What waiting said.
        source: std::io::Error,
    },
}

impl RunError {
    /// Whether the program did not answer in time (as opposed to not starting at all).
    pub fn is_timeout(&self) -> bool {
        matches!(self, RunError::TimedOut { .. })
    }
}

/// [`output`] with what is left until `deadline` (a budget shared by several programs).
pub fn output_by(command: &mut Command, deadline: Instant) -> Result<Output, RunError> {
    output(command, deadline.saturating_duration_since(Instant::now()))
}

/// Runs `command` with stdin from `/dev/null` and its stdout and stderr captured, waiting at
/// most `limit`: past it the program is killed and reaped and [`RunError::TimedOut`] returned.
/// With no time left (`limit` zero) nothing is started. Returns the output whatever the exit
/// status; the caller judges it.
pub fn output(command: &mut Command, limit: Duration) -> Result<Output, RunError> {
    let program = program_name(command);
    if limit.is_zero() {
        return Err(RunError::TimedOut { program, limit });
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| RunError::Start {
            program: program.clone(),
            source,
        })?;
    let finished = child
        .controlled_with_output()
        .time_limit(limit)
        .terminate_for_timeout()
        .wait()
        .map_err(|source| RunError::Wait {
            program: program.clone(),
            source,
        })?;
    let Some(output) = finished else {
        return Err(RunError::TimedOut { program, limit });
    };
    Ok(output.into_std_lossy())
}

/// The program's base name (`/usr/bin/tmux` is `tmux`), for messages.
fn program_name(command: &Command) -> String {
    let program = std::path::Path::new(command.get_program());
    program
        .file_name()
        .unwrap_or(program.as_os_str())
        .to_string_lossy()
        .into_owned()
}

/// A duration as people say it: `2s`, `1.5s`, `250ms`.
fn duration_text(duration: Duration) -> String {
    if duration.subsec_millis() == 0 && duration.as_secs() > 0 {
        format!("{}s", duration.as_secs())
    } else if duration.as_secs() > 0 {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
