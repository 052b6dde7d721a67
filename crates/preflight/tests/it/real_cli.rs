//! What the conformance tests against a real agent CLI share: a case's temp dirs, the damage
//! done to a session file's lines, and the check that the CLI's exit is the preflight's verdict.

use std::fmt::Debug;
use std::fs;

use camino::Utf8PathBuf;
use preflight::{Outcome, Verdict};
use test_support::codex_offline::Run;

/// A case's temp dir under the build's temp dir (`<agent>-<name>-…`): the dir (removed on
/// drop), its canonical path, and the project dir `proj` made in it.
pub(crate) fn case_dirs(agent: &str, name: &str) -> (tempfile::TempDir, Utf8PathBuf, Utf8PathBuf) {
    let temp = tempfile::Builder::new()
        .prefix(&format!("{agent}-{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("create the case's temp dir");
    let root = Utf8PathBuf::from_path_buf(temp.path().canonicalize().unwrap()).unwrap();
    let project = root.join("proj");
    fs::create_dir_all(&project).unwrap();
    (temp, root, project)
}

/// The lines with the first cut in half, each ended by a newline.
pub(crate) fn first_line_torn(lines: &[&str]) -> String {
    let torn = &lines[0][..lines[0].len() / 2];
    format!("{torn}\n{}\n", lines[1..].join("\n"))
}

/// The lines with the last cut in half, which has no newline.
pub(crate) fn last_line_torn(lines: &[&str]) -> String {
    let last = lines[lines.len() - 1];
    let kept = lines[..lines.len() - 1].join("\n");
    format!("{kept}\n{}", &last[..last.len() / 2])
}

/// The exit code of the `--resume` run of `agent`, which must be a resume (0) or a miss
/// (`miss`), nothing else.
pub(crate) fn resumed_or_missed(agent: &str, run: &Run, miss: i32) -> Option<i32> {
    assert!(
        run.code == Some(0) || run.code == Some(miss),
        "{agent} --resume neither resumed nor missed: {run:?}"
    );
    run.code
}

/// Holds the preflight's verdict in `state` equal to `agent`'s exit: `resume` exactly when it
/// exits 0.
pub(crate) fn assert_verdict_is_exit(
    agent: &str,
    state: impl Debug,
    outcome: &Outcome,
    code: Option<i32>,
) {
    assert_eq!(
        outcome.verdict == Verdict::Resume,
        code == Some(0),
        "{state:?}: the preflight said {:?} ({:#?}), {agent} exited {code:?}",
        outcome.verdict,
        outcome.steps
    );
}
