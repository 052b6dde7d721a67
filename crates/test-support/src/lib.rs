//! What the tests of crash-resume share, so that each piece is written once: the CLI's
//! integration tests (`crates/cli/tests/it`), the preflight's tests (`crates/preflight/tests`)
//! and the reboot simulation (`cargo xtask reboot-sim`).
//!
//! - [`sandbox`]: one test's own directory with a home, state and config dir and an index
//!   path, on a durable filesystem that other users can reach; a command confined to it.
//! - [`process`]: a program run with stdin, and what the process table (`proc-table`) says
//!   about a process.
//! - [`transcript`]: the pinned agent versions and Claude Code transcript lines as the CLI
//!   writes them.
//! - [`random`]: a small generator that replays from its seed.
//! - [`records`]: index records and sizes for the benchmarks.
//! - [`world`]: around a sandbox, an agent's environment, the stand-in agent as `claude`, a
//!   private tmux server with panes at given places, and waits with deadlines.
//! - [`tmux`]: commands to a private tmux server and its panes by surface id.
//! - [`zellij`]: the pinned zellij the live tests run, and an instance confined to one dir.
//! - [`claude_model`]: Claude Code as measured, the one model the spawn simulation and the
//!   stand-in agent judge `--resume` with.
//! - [`stand_in`]: the stand-in agent (the `stand-in-agent` binary): finding it, its `claude`
//!   wrapper, its log.
//! - [`fake_mux`]: a fake multiplexer backend, to test the apply protocol without one.
//! - [`fake_terminal`]: a fake `wezterm` program and a fake cmux socket that behave as the real
//!   ones were measured to, and start what they are asked to start.
//! - [`claude_offline`], [`codex_offline`], [`gemini_offline`], [`copilot_offline`],
//!   [`qwen_offline`] and [`opencode_offline`]: the offline setups for the real agent CLIs.
//!
//! Test code only: `publish = false`, a dev-dependency of the crates and a dependency of the
//! xtask. Helpers panic on failure (a failed test), except where the xtask needs an answer.

#![warn(missing_docs)]

pub mod claude_model;
pub mod claude_offline;
pub mod codex_offline;
pub mod copilot_offline;
pub mod fake_mux;
pub mod fake_terminal;
pub mod gemini_offline;
pub mod opencode_offline;
pub mod process;
pub mod qwen_offline;
pub mod random;
pub mod records;
pub mod sandbox;
pub mod stand_in;
pub mod tmux;
pub mod transcript;
pub mod world;
pub mod zellij;

/// The arguments of `crash-resume --json restore --apply tmux --tmux-socket SOCKET`: the
/// restore that brings every pane back on the private tmux server named `socket`.
pub fn restore_apply_args(socket: &str) -> [&str; 6] {
    [
        "--json",
        "restore",
        "--apply",
        "tmux",
        "--tmux-socket",
        socket,
    ]
}
