//! What reading its agent's launch adds to a hook: the walk up the hook's ancestors, each
//! one's command line read, and the agent's environment when one runs it. Measured from this
//! process, whose ancestors run no agent: every ancestor up to the limit is read, the most a
//! hook pays; and the reading of one command line and environment into a launch.

use std::ffi::OsString;
use std::hint::black_box;
use std::time::{Duration, Instant};

use agent_paths::Agent;
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let table = proc_table::table();
    let pid = std::process::id();
    c.bench_function(
        "resume-plan/read_launch no agent among the ancestors",
        |b| {
            b.iter(|| {
                let deadline = Instant::now() + Duration::from_secs(2);
                black_box(resume_plan::hook::read_launch(
                    Agent::Claude,
                    table,
                    pid,
                    deadline,
                ))
            })
        },
    );
    let words = |line: &str| -> Vec<OsString> { line.split(' ').map(OsString::from).collect() };
    let args = words("--model opus --permission-mode acceptEdits -p prompt --add-dir ../x");
    let environment: Vec<OsString> = std::env::vars_os()
        .map(|(name, value)| {
            let mut entry = name;
            entry.push("=");
            entry.push(value);
            entry
        })
        .chain(words("ANTHROPIC_MODEL=opus"))
        .collect();
    c.bench_function(
        "resume-plan/launch_from a command line and environment",
        |b| {
            b.iter(|| {
                black_box(resume_plan::hook::launch_from(
                    Agent::Claude,
                    black_box(&args),
                    Some(black_box(&environment)),
                ))
            })
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
