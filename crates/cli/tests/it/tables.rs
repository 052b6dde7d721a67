//! `list` and `restore` for people and for scripts: on a terminal (a real pseudo-terminal as
//! stdout) an aligned table with a header row, wide characters counted as two columns; piped,
//! tab-separated values with no header; `--json` the same either way.

use std::fs::File;
use std::io::Read;
use std::process::{Command, Stdio};

use unicode_width::UnicodeWidthStr;

use crate::harness::{crash_resume_agent, git_work_dir, run_hook, session_start, uuid};
use crate::{Sandbox, crash_resume_std, record};

/// Runs `command` with a pseudo-terminal as its stdout; returns what it printed there (with the
/// terminal's `\r\n` turned back into `\n`).
fn on_terminal(mut command: Command) -> String {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("open a pty");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = File::options()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .expect("open the pty's terminal side");
    let status = command
        .stdin(Stdio::null())
        .stdout(terminal)
        .stderr(Stdio::inherit())
        .status()
        .expect("run the binary");
    drop(command);
    assert!(status.success(), "{status}");
    // Every copy of the terminal side is closed now: the master reads what was written, then
    // fails (EIO) at the end.
    let mut master = File::from(master);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(read) = master.read(&mut chunk) {
        if read == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
    String::from_utf8(bytes).unwrap().replace("\r\n", "\n")
}

/// The TSV `command` prints when piped: no header, the lines starting with `starts`.
fn check_tsv(command: Command, starts: &[&str]) {
    let tsv = piped(command);
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines.len(), starts.len(), "no header: {tsv}");
    for (line, start) in lines.iter().zip(starts) {
        assert!(line.starts_with(start), "{start:?}: {tsv}");
    }
}

fn piped(mut command: Command) -> String {
    let output = command.stdin(Stdio::null()).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Each line's cells start at the same display column as the header's labels.
fn check_aligned(text: &str, labels: &[&str]) {
    let lines: Vec<&str> = text.lines().collect();
    let header = lines[0];
    let starts: Vec<usize> = labels
        .iter()
        .map(|label| {
            let at = header
                .find(label)
                .unwrap_or_else(|| panic!("{label} in {header}"));
            header[..at].width()
        })
        .collect();
    for line in &lines[1..] {
        for start in &starts[1..] {
            // The character before each column start is a space, and the text up to there is
            // exactly that many columns wide.
            let mut width = 0;
            let mut split = None;
            for (at, character) in line.char_indices() {
                if width == *start {
                    split = Some(at);
                    break;
                }
                width += character.to_string().width();
            }
            let Some(at) = split else {
                panic!("{line:?} is shorter than column {start}: {text}");
            };
            assert!(
                line[..at].ends_with("  "),
                "{line:?} at column {start}: {text}"
            );
            assert!(
                !line[at..].starts_with(' '),
                "{line:?} at column {start}: {text}"
            );
        }
    }
}

#[test]
fn list_is_a_table_on_a_terminal_and_tsv_when_piped() {
    let env = Sandbox::default();
    record(&env, "pane-日本語", "sid-1", "repo");
    record(&env, "p", "sid-😀😀", "a-much-longer-repo-name");
    let mut list = crash_resume_std(&env);
    list.arg("list");
    let table = on_terminal(list);
    let labels = ["SURFACE", "SESSION", "REPO", "ROLE", "ACTIVE"];
    assert!(table.starts_with("SURFACE "), "{table}");
    assert_eq!(table.lines().count(), 3, "{table}");
    check_aligned(&table, &labels);

    let mut list = crash_resume_std(&env);
    list.arg("list");
    check_tsv(
        list,
        &[
            "p\tsid-😀😀\ta-much-longer-repo-name\t-\t",
            "pane-日本語\tsid-1\trepo\t-\t",
        ],
    );

    // --json is the same on a terminal as piped.
    let mut json = crash_resume_std(&env);
    json.args(["--json", "list"]);
    let mut json_piped = crash_resume_std(&env);
    json_piped.args(["--json", "list"]);
    assert_eq!(on_terminal(json), piped(json_piped));
}

#[test]
fn restore_is_a_table_on_a_terminal_and_tsv_when_piped() {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    for (n, surface) in [(1, "tmux:main:0.0"), (2, "tmux:ワーク:1.0")] {
        run_hook(
            &env,
            "claude",
            &[("CRASH_RESUME_SURFACE", surface)],
            &session_start(&uuid(n), &cwd, "startup"),
        )
        .assert_silent_success(surface);
    }
    let mut restore = crash_resume_agent(&env);
    restore.arg("restore");
    let table = on_terminal(restore);
    assert!(table.starts_with("SURFACE "), "{table}");
    assert_eq!(table.lines().count(), 3, "{table}");
    check_aligned(
        &table,
        &["SURFACE", "VERDICT", "SESSION", "ACTIVE", "COMMAND"],
    );

    let mut restore = crash_resume_agent(&env);
    restore.arg("restore");
    check_tsv(
        restore,
        &["tmux:main:0.0\tfresh\t-\t", "tmux:ワーク:1.0\tfresh\t-\t"],
    );
}
