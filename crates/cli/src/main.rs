//! The `crash-resume` binary: parses the command line, wires the library crates together,
//! prints, and maps every outcome to the README's exit-code table.
//!
//! No rule a library user would need lives here; this file only decides which crate to call
//! and how to say what happened.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod codex;
mod commands;
mod hook;
mod install;
mod man;
mod output;
mod restore;
mod surface;
mod table;
mod tmux;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

/// An outcome other than success, with the exit code it maps to.
#[derive(Debug)]
pub enum Failure {
    /// 1: an I/O error, the lock not obtained in time, the index refused.
    Failed(anyhow::Error),
    /// 2: a usage error or invalid input; nothing was written.
    Usage(anyhow::Error),
    /// 4: nothing found: no such surface, or no resumable session.
    NotFound(String),
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Failed(_) => 1,
            Failure::Usage(_) => 2,
            Failure::NotFound(_) => 4,
        }
    }
}

impl Failure {
    /// The failure as an error, for code that only logs it (the hook).
    pub fn into_error(self) -> anyhow::Error {
        match self {
            Failure::Failed(error) | Failure::Usage(error) => error,
            Failure::NotFound(message) => anyhow::anyhow!(message),
        }
    }
}

impl From<index_store::StoreError> for Failure {
    fn from(error: index_store::StoreError) -> Self {
        Failure::Failed(error.into())
    }
}

impl From<index_core::InvalidId> for Failure {
    fn from(error: index_core::InvalidId) -> Self {
        Failure::Usage(error.into())
    }
}

/// An error and its causes on one line, each cause stated once: a cause whose text the message
/// already carries (a library error that names its cause in its own message) is not repeated.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.is_empty() {
            text = cause;
        } else if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version on stdout with exit 0, usage errors on stderr with 2;
            // but an agent's hook exits 0 whatever it was given.
            let _ = error.print();
            let is_hook = std::env::args_os()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|pair| pair[0] == "hook" && (pair[1] == "claude" || pair[1] == "codex"));
            return ExitCode::from(if error.use_stderr() && !is_hook { 2 } else { 0 });
        }
    };
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let code = failure.exit_code();
            let mut stderr = std::io::stderr().lock();
            let _ = match &failure {
                Failure::Failed(error) | Failure::Usage(error) => {
                    writeln!(stderr, "error: {}", error_text(error))
                }
                Failure::NotFound(message) if message.is_empty() => Ok(()),
                Failure::NotFound(message) => writeln!(stderr, "{message}"),
            };
            ExitCode::from(code)
        }
    }
}
