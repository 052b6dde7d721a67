//! One module per command; `run` dispatches to them. Each command validates its input at the
//! edge, calls the library crates, and prints.

mod doctor;
mod forget;
mod hints;
mod hook;
mod install;
mod list;
mod lookup;
mod ours;
mod path;
mod preflight;
mod prune;
mod record;
mod restore;
mod resume_cmd;
mod service;
mod tmux_start;
mod touch;

use anyhow::anyhow;
use clap::CommandFactory;
use index_core::SurfaceId;

use crate::args::{Agent, Cli, Command, HookCommand};
use crate::context::{Context, Outcome};
use crate::error::Failure;

pub fn run(cli: Cli) -> Outcome {
    let cx = &Context::new(cli.global);
    // What prints something else than a document says so rather than ignore `--json`.
    let other_form = match &cli.command {
        Command::Completions { .. } => Some(("completions", "a shell script")),
        Command::Man => Some(("man", "a roff page")),
        _ => None,
    };
    if let Some((name, form)) = other_form.filter(|_| cx.json) {
        return Err(Failure::Usage(anyhow!(
            "`{name}` has no JSON form (it prints {form}); run it without --json"
        )));
    }
    match cli.command {
        Command::Record(args) => record::run(cx, args),
        Command::Lookup { surface } => lookup::run(cx, SurfaceId::new(surface)?.as_str()),
        Command::ResumeCmd { surface, max_age } => {
            resume_cmd::run(cx, SurfaceId::new(surface)?.as_str(), max_age.as_deref())
        }
        Command::Touch { surface } => touch::run(cx, SurfaceId::new(surface)?.as_str()),
        Command::Forget { surface } => forget::run(cx, SurfaceId::new(surface)?.as_str()),
        Command::Prune { max_age } => prune::run(cx, &max_age),
        Command::List => list::run(cx),
        Command::Preflight(args) => preflight::run(cx, args),
        Command::Path => path::run(cx),
        Command::Doctor => doctor::run(cx),
        Command::Restore(args) => restore::run(cx, &args),
        Command::Service(command) => service::run(cx, command),
        Command::Hook(HookCommand::Claude { payload }) => {
            hook::run(cx, Agent::Claude, payload.as_deref());
            Ok(())
        }
        Command::Hook(HookCommand::Codex { payload }) => {
            hook::run(cx, Agent::Codex, payload.as_deref());
            Ok(())
        }
        Command::Hook(HookCommand::Gemini { payload }) => {
            hook::run(cx, Agent::Gemini, payload.as_deref());
            Ok(())
        }
        Command::Hook(HookCommand::Qwen { payload }) => {
            hook::run(cx, Agent::Qwen, payload.as_deref());
            Ok(())
        }
        Command::Hook(HookCommand::Copilot { event }) => {
            hook::run_for_event(cx, Agent::Copilot, event.as_deref());
            Ok(())
        }
        Command::Hook(HookCommand::Install {
            target,
            settings,
            dry_run,
            retention,
            codex_title,
        }) => match target.agent() {
            Some(agent) if codex_title && agent.facts().dialect != agent_paths::Dialect::Codex => {
                Err(Failure::Usage(anyhow!(
                    "--codex-title is Codex's setting; {} has no daemon to find panes for",
                    agent.name()
                )))
            }
            Some(agent) => {
                install::run(cx, agent, settings, dry_run, false, retention, codex_title)
            }
            None if codex_title => Err(Failure::Usage(anyhow!(
                "--codex-title is Codex's setting; tmux has no title to set"
            ))),
            None if retention.is_some() => Err(Failure::Usage(anyhow!(
                "--retention is Gemini's setting; tmux has no start-up cleanup to turn off"
            ))),
            None => tmux_start::run(cx, settings, dry_run, false),
        },
        Command::Hook(HookCommand::Uninstall {
            target,
            settings,
            dry_run,
        }) => match target.agent() {
            Some(agent) => install::run(cx, agent, settings, dry_run, true, None, false),
            None => tmux_start::run(cx, settings, dry_run, true),
        },
        // Both are made in memory, then written: a closed pipe is then one write that fails
        // (and is not an error), not a panic inside the generator.
        Command::Completions { shell } => {
            let mut command = Cli::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "crash-resume", &mut script);
            crate::output::print_bytes(&script)
        }
        Command::Man => {
            let mut page = Vec::new();
            crate::man::render(Cli::command(), &mut page).map_err(|error| {
                Failure::Failed(anyhow!(error).context("cannot render the man page"))
            })?;
            crate::output::print_bytes(&page)
        }
    }
}
