//! Integration tests of the preflight: folder-name vectors, reachability rows, the verdict
//! table row by row, agreement with a spawn simulator, and conformance with the real CLI.

#[cfg(feature = "real-cli")]
mod claude_cli;
#[cfg(feature = "real-cli")]
mod codex_cli;
mod codex_layout;
#[cfg(feature = "real-cli")]
mod copilot_cli;
mod folder_names;
#[cfg(feature = "real-cli")]
mod gemini_cli;
#[cfg(feature = "real-cli")]
mod opencode_cli;
#[cfg(feature = "real-cli")]
mod qwen_cli;
mod reachability;
#[cfg(feature = "real-cli")]
mod real_cli;
mod spawn_sim;
mod verdicts;

/// Without the `real-cli` feature the conformance tests against the real agent CLIs are not
/// compiled: they need the pinned CLIs in the build dir. This says how to run them.
#[cfg(not(feature = "real-cli"))]
#[test]
#[allow(clippy::print_stderr)]
fn real_cli_conformance_is_off() {
    eprintln!(
        "the conformance tests against the real agent CLIs are off: run `cargo xtask test` \
         (it installs the pinned CLIs into the build dir and enables them), or install them \
         with `cargo xtask claude-cli install` and run `cargo test -p preflight --features real-cli`"
    );
}
