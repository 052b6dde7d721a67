//! The `crash-resume` binary: parses the command line, wires the library crates together,
//! prints, and maps every outcome to the README's exit-code table.
//!
//! No rule a library user would need lives here (they are in `resume-plan`): `args` is the
//! command line, `context` what every command works with, `commands/` one module per command,
//! `error` the failures and their exit codes; this file only maps the outcome to an `ExitCode`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod codex;
mod commands;
mod context;
mod error;
mod gemini;
mod man;
mod output;
mod procfs;
mod surface;
mod table;
mod tmux;

use std::process::ExitCode;

use clap::Parser;

use crate::error::{Failure, error_text};

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version on stdout with exit 0, usage errors on stderr with 2;
            // but an agent's hook exits 0 whatever it was given.
            let _ = error.print();
            let json = std::env::args_os()
                .take_while(|arg| arg != "--")
                .any(|arg| arg == "--json");
            let is_hook = std::env::args_os()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|pair| {
                    pair[0] == "hook"
                        && pair[1]
                            .to_str()
                            .is_some_and(|name| agent_paths::Agent::from_name(name).is_some())
                });
            if error.use_stderr() && !is_hook && json {
                let text = error.to_string();
                let first = text.lines().next().unwrap_or_default();
                output::print_error_json(first.trim_start_matches("error: "), 2);
            }
            return ExitCode::from(if error.use_stderr() && !is_hook { 2 } else { 0 });
        }
    };
    let json = cli.global.json;
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let code = failure.exit_code();
            let message = match &failure {
                Failure::Failed(error) | Failure::Usage(error) => error_text(error),
                Failure::NotFound(message) => message.clone(),
            };
            match &failure {
                Failure::Failed(_) | Failure::Usage(_) => {
                    output::print_message(&format!("error: {message}"));
                }
                Failure::NotFound(message) if message.is_empty() => {}
                Failure::NotFound(message) => output::print_message(message),
            }
            if json {
                output::print_error_json(&message, code);
            }
            ExitCode::from(code)
        }
    }
}
