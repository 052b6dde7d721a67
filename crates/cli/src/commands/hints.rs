//! The next step, said on a terminal after a command's output (on stderr, only when stdout is
//! a terminal: piped output and `--json` stay as they are): why an empty `list` may be empty,
//! how to apply a `restore` plan, how to attach to the sessions a `restore --apply` created.

use index_core::text::escape;
use mux::{Created, Surface};
use resume_plan::PlanItem;
use resume_plan::outcome::Applied;

use crate::context::{self, Context};
use crate::output;

/// Whether a person reads the output: stdout is a terminal and no `--json` was asked for.
pub fn on_terminal(cx: &Context) -> bool {
    !cx.json && crate::table::stdout_is_terminal()
}

/// After an empty `list`: what it means, what may be wrong, and the command that checks.
pub fn empty_list(cx: &Context) {
    if !on_terminal(cx) {
        return;
    }
    let index = context::index_path(cx)
        .map(|path| escape(path.as_str()).into_owned())
        .unwrap_or_default();
    let errors = context::index_path(cx)
        .ok()
        .map(|path| setup_check::hook_log(&path))
        .filter(|log| !log.last_errors.is_empty())
        .map_or_else(String::new, |log| {
            format!(
                "; {} holds hook errors (the last: {})",
                escape(&log.path),
                escape(
                    log.last_errors
                        .last()
                        .map(String::as_str)
                        .unwrap_or_default()
                )
            )
        });
    let hooked: Vec<String> = super::doctor::with_inputs(cx, setup_check::hooks)
        .unwrap_or_default()
        .into_iter()
        .filter(|hook| hook.installed && hook.target != "tmux")
        .map(|hook| hook.target)
        .collect();
    let why = match hooked.as_slice() {
        [] => "no agent's hook is installed (`crash-resume hook install claude`, or codex, \
               gemini, copilot, qwen)"
            .to_string(),
        hooked => format!(
            "the hooks of {} are installed; a session is recorded when its agent starts in a \
             terminal pane",
            hooked.join(", ")
        ),
    };
    output::print_message(&format!(
        "nothing recorded in {index} yet: {why}{errors}. `crash-resume doctor` checks the \
         hooks, the index and the log"
    ));
}

/// After a plan without `--apply`: the command that applies it, for each multiplexer (and tmux
/// server) a resumable surface belongs to.
pub fn how_to_apply(cx: &Context, plan: &[PlanItem]) {
    if !on_terminal(cx) {
        return;
    }
    let mut commands: Vec<String> = Vec::new();
    for item in plan.iter().filter(|item| item.resumable()) {
        let Ok(surface) = Surface::parse(&item.surface) else {
            continue;
        };
        let command = match &surface {
            Surface::Tmux(pane) => match &pane.server {
                Some(server) if *server != mux::tmux::default_socket_path() => format!(
                    "crash-resume restore --apply tmux --tmux-socket {}",
                    mux::script::quote(server)
                ),
                _ => "crash-resume restore --apply tmux".to_string(),
            },
            Surface::Kitty(_) => {
                "crash-resume restore --apply kitty --kitty-socket unix:PATH".to_string()
            }
            other => match other.multiplexer() {
                Some(multiplexer) => format!("crash-resume restore --apply {multiplexer}"),
                None => continue,
            },
        };
        if !commands.contains(&command) {
            commands.push(command);
        }
    }
    let resumable = plan.iter().filter(|item| item.resumable()).count();
    match commands.as_slice() {
        [] if resumable == 0 => output::print_message(
            "next: nothing here is resumed (each row says why); `crash-resume preflight SURFACE` \
             shows the steps behind a verdict",
        ),
        [] => output::print_message(
            "next: these surfaces name no multiplexer to restore into; resume one with `cmd=$(crash-resume resume-cmd SURFACE) && eval \"$cmd\"`",
        ),
        commands => output::print_message(&format!(
            "next: {} re-opens {}",
            commands
                .iter()
                .map(|command| format!("`{command}`"))
                .collect::<Vec<_>>()
                .join(", "),
            match resumable {
                1 => "the surface marked resume or recover".to_string(),
                count => format!("the {count} surfaces marked resume or recover"),
            }
        )),
    }
}

/// The commands that attach to the sessions applying created (a server the restore started
/// has no client yet), one per session, in plan order.
pub fn attach_commands(backend: &dyn mux::Backend, plan: &[PlanItem]) -> Vec<String> {
    let mut commands = Vec::new();
    for item in plan {
        let created = match &item.outcome {
            Some(Applied::Started { created, .. } | Applied::Shell { created }) => created,
            _ => continue,
        };
        if !created.contains(&Created::Session) {
            continue;
        }
        let command = Surface::parse(&item.surface)
            .ok()
            .and_then(|surface| backend.attach_command(&surface));
        if let Some(command) = command.filter(|command| !commands.contains(command)) {
            commands.push(command);
        }
    }
    commands
}

/// After an apply that created sessions: how to see them.
pub fn attach(cx: &Context, commands: &[String]) {
    if !on_terminal(cx) || commands.is_empty() {
        return;
    }
    output::print_message(&format!(
        "next: the restore created {}; attach with {}",
        match commands.len() {
            1 => "a session".to_string(),
            count => format!("{count} sessions"),
        },
        commands
            .iter()
            .map(|command| format!("`{}`", escape(command)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
}
