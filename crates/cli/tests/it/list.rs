//! `crash-resume list` for people and for scripts: on a terminal (a real pseudo-terminal as
//! stdout) an aligned table with a header row, wide characters counted as two columns; piped,
//! tab-separated values with no header; `--json` the same either way; one line per entry and the
//! age of its latest activity. The terminal helpers are `restore`'s too.

use std::fs::File;
use std::io::Read;
use std::process::{Command, Stdio};

use predicates::str::is_empty;
use unicode_width::UnicodeWidthStr;

use crate::restore::{run_as_agent, three_surfaces};
use crate::snapshot::assert_cli_snapshot;
use crate::{Sandbox, check, crash_resume, crash_resume_std, record};

/// Runs `command` with a pseudo-terminal as its stdout; returns what it printed there (with the
/// terminal's `\r\n` turned back into `\n`).
pub fn on_terminal(mut command: Command) -> String {
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

pub fn piped(mut command: Command) -> String {
    let output = command.stdin(Stdio::null()).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Each line's cells start at the same display column as the header's labels.
pub fn check_aligned(text: &str, labels: &[&str]) {
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
    assert_cli_snapshot!(&env, ages, "table_on_a_terminal", &table);
    check_aligned(&table, &["SURFACE", "SESSION", "REPO", "ROLE", "ACTIVE"]);

    let mut list = crash_resume_std(&env);
    list.arg("list");
    assert_cli_snapshot!(&env, ages, "tsv_when_piped", piped(list));

    // --json is the same on a terminal as piped.
    let mut json = crash_resume_std(&env);
    json.args(["--json", "list"]);
    let mut json_piped = crash_resume_std(&env);
    json_piped.args(["--json", "list"]);
    assert_eq!(on_terminal(json), piped(json_piped));
}

#[test]
fn list_prints_one_line_per_entry() {
    let env = Sandbox::default();
    check(&env, &["list"], 0, is_empty(), is_empty());
    record(&env, "B", "sid-b", "repo-b");
    crash_resume(&env)
        .args(["record", "A", "sid-a", "repo-a", "lead"])
        .assert()
        .success();
    let listed = crash_resume(&env).arg("list").assert().success().stderr("");
    let listed = String::from_utf8(listed.get_output().stdout.clone()).unwrap();
    let lines: Vec<Vec<&str>> = listed
        .lines()
        .map(|line| line.split('\t').collect())
        .collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert_eq!(lines[0][..4], ["A", "sid-a", "repo-a", "lead"]);
    assert_eq!(lines[1][..4], ["B", "sid-b", "repo-b", "-"]);
    assert!(lines[0][4].ends_with(" ago"), "{listed}");
}

#[test]
fn list_shows_the_age_of_the_latest_activity() {
    let env = three_surfaces();
    let output = run_as_agent(&env, &["list"]);
    let text = String::from_utf8_lossy(&output.stdout);
    let line = |surface: &str| {
        text.lines()
            .find(|line| line.starts_with(surface))
            .unwrap_or_else(|| panic!("{surface} in {text}"))
            .to_string()
    };
    assert!(line("busy").contains("1m"), "{text}");
    assert!(line("idle").contains("3h"), "{text}");
}
