//! Integration tests of the preflight: folder-name vectors, reachability rows, the verdict
//! table row by row, agreement with a spawn simulator, and conformance with the real CLI.

mod claude_cli;
mod codex_layout;
mod folder_names;
mod reachability;
mod spawn_sim;
mod verdicts;
