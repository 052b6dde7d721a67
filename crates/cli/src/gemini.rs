//! Gemini CLI specifics of capture: its environment sanitizing, which hides the pane.
//!
//! Gemini CLI 0.61 runs its hooks with its own environment, except that when `GITHUB_SHA` is
//! set (or `SURFACE=Github`) it passes only an allow-list of variables (`PATH`, `HOME`, `TERM`,
//! ..., and `GEMINI_CLI_*`): `TMUX_PANE`, `TMUX` and `CRASH_RESUME_SURFACE` are stripped, and
//! `GITHUB_SHA` itself too, so the hook cannot name its pane. The hook sees it in the
//! environment Gemini started with, one of its ancestors' (`/proc/<pid>/environ` on Linux,
//! `ps -E` on macOS).

use std::os::unix::ffi::OsStrExt as _;
use std::time::Instant;

/// How many ancestors are looked at (Gemini runs a hook through a shell).
const MAX_ANCESTORS: usize = 8;

/// The pid of the nearest ancestor that was started with `GITHUB_SHA` set (or `SURFACE=Github`),
/// when this process itself does not see it: Gemini stripped the hook's environment. Read from
/// the process table (`ps`, where there is no `/proc`, given up on at `deadline`).
pub fn stripped_by(own: impl Fn(&str) -> Option<String>, deadline: Instant) -> Option<u32> {
    if own("GITHUB_SHA").is_some() {
        return None;
    }
    let table = proc_table::table();
    let ancestry = table.ancestry(std::process::id(), MAX_ANCESTORS, deadline)?;
    ancestry.ancestors.iter().find_map(|ancestor| {
        let environment = table
            .environment(ancestor.pid, deadline)
            .unwrap_or_default();
        let strict = environment.iter().any(|variable| {
            let variable = variable.as_bytes();
            (variable.starts_with(b"GITHUB_SHA=") && variable.len() > b"GITHUB_SHA=".len())
                || variable == b"SURFACE=Github"
        });
        strict.then_some(ancestor.pid)
    })
}

/// What the hook log says when Gemini stripped the hook's environment.
pub fn stripped_message(pid: u32) -> String {
    format!(
        "Gemini (pid {pid}) runs its hooks with only an allow-list of variables because \
         GITHUB_SHA (or SURFACE=Github) is set in its environment: TMUX_PANE and TMUX are \
         hidden, so the pane cannot be named; unset GITHUB_SHA where Gemini starts, or add \
         \"TMUX_PANE\", \"TMUX\" and \"CRASH_RESUME_SURFACE\" to \
         security.environmentVariableRedaction.allowed in Gemini's settings.json"
    )
}
