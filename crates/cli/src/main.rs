//! The `crash-resume` binary: parses the command line, wires the library crates together,
//! prints, and maps every outcome to the exit-code table of docs/commands.md.
//!
//! No rule a library user would need lives here (they are in `resume-plan`): `args` is the
//! command line, `context` what every command works with, `commands/` one module per command,
//! `error` the failures and their exit codes; this file only maps the outcome to an `ExitCode`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod codex;
mod commands;
mod context;
mod copilot;
mod error;
mod gemini;
mod man;
mod output;
mod qwen;
mod surface;
mod table;

use std::process::ExitCode;

use clap::Parser;

use crate::error::{Failure, error_text};

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version on stdout with exit 0, usage errors on stderr with 2;
            // but an agent's hook exits 0 whatever it was given.
            let json = std::env::args_os()
                .take_while(|arg| arg != "--")
                .any(|arg| arg == "--json");
            // Help and the version are for people: under `--json`, on stderr, and stdout has
            // the error document saying there is no JSON form.
            if json && !error.use_stderr() {
                eprint!("{}", error.render());
                output::print_error_json(
                    "help and --version have no JSON form; run them without --json",
                    2,
                );
                return ExitCode::from(2);
            }
            let _ = error.print();
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
                output::print_error_json(&usage_message(&error.to_string()), 2);
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

/// A usage error as clap says it, on one line for `--json`: every line up to the advice to try
/// `--help` (what is missing or wrong, the possible values), then the usage line.
fn usage_message(text: &str) -> String {
    let mut message = String::new();
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
        if line.starts_with("For more information") {
            continue;
        }
        match line.strip_prefix("Usage: ") {
            Some(usage) => message.push_str(&format!("; usage: {usage}")),
            None if message.is_empty() => message.push_str(line.trim_start_matches("error: ")),
            None => message.push_str(&format!(" {line}")),
        }
    }
    message
}
