//! `resume_check <INDEX> <SURFACE>`: the preflight's verdict for the surface's entry on the
//! first line, and the command that resumes it (if any) on the second, as
//! `crash-resume --json restore --all` gives them in the same environment.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use resume_plan::{Environment, plan::Planner};

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [index_path, surface] = args.as_slice() else {
        eprintln!("usage: resume_check <INDEX> <SURFACE>");
        return Ok(ExitCode::from(2));
    };
    let env = Environment::from_lookup(std::env::home_dir(), |name| std::env::var_os(name));
    let store = index_store::Store::open(index_path.as_str().into(), Default::default())?;
    let index = store.load()?.index;
    let Some(entry) = index.lookup(surface) else {
        eprintln!("no entry for surface {surface:?}");
        return Ok(ExitCode::from(4));
    };
    let registry = env.registry(std::env::var("CRASH_RESUME_PROFILE").ok().as_deref())?;
    let item = Planner::new(&index, &registry, &env).item(entry)?;
    println!("{}", item.verdict.as_str());
    if let Some(command) = item.command {
        println!("{command}");
    }
    Ok(ExitCode::SUCCESS)
}
