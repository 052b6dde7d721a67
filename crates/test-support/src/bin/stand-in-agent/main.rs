//! The stand-in agent: the `claude` that the sandboxes' panes run in the CLI's tests and the
//! reboot simulation (`test_support::stand_in` says how it is installed and found).
//!
//! `stand-in-agent claude [--real-cli PATH] ARGS` behaves like Claude Code (`claude`);
//! `stand-in-agent record --runs FILE --pwd DIR --oldpwd DIR [--stay-with HOOK-BIN] -- ARGS`
//! only writes down how it was started (`record`).

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod claude;
mod record;

use anyhow::{Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.split_first() {
        Some((mode, rest)) if mode == "claude" => claude::main(rest),
        Some((mode, rest)) if mode == "record" => record::main(rest),
        _ => bail!("usage: stand-in-agent claude|record ARGS (run through its `claude` wrapper)"),
    }
}
