//! The table as `ps` shows it, where there is no `/proc` (macOS): one call per question, run
//! with the caller's deadline (an error or no answer in time is an empty answer). Its
//! columns are separated by blanks, so the last one (a name or a command line) is the one that
//! may hold them, and a command line comes back split at them.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt as _;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use crate::{Dev, Process, Running};

/// The columns of a [`Process`], the name last.
const COLUMNS: &str = "pid=,ppid=,stat=,tty=,comm=";

/// Every process: `ps -A`.
pub fn processes(deadline: Instant) -> Vec<Process> {
    run(&["-A", "-o", COLUMNS], deadline)
        .map(|listing| parse_processes(&listing))
        .unwrap_or_default()
}

/// Those of `pids` that exist: `ps -p` (not run when none exists).
pub fn processes_of(pids: &[u32], deadline: Instant) -> Vec<Process> {
    let Some(list) = existing(pids) else {
        return Vec::new();
    };
    run(&["-o", COLUMNS, "-p", &list], deadline)
        .map(|listing| parse_processes(&listing))
        .unwrap_or_default()
}

/// The command lines of those of `pids` that exist: `ps -ww -o pid=,args=`.
pub fn command_lines(pids: &[u32], deadline: Instant) -> Vec<(u32, Vec<OsString>)> {
    let Some(list) = existing(pids) else {
        return Vec::new();
    };
    run(&["-ww", "-o", "pid=,args=", "-p", &list], deadline)
        .map(|listing| parse_command_lines(&listing))
        .unwrap_or_default()
}

/// The command line and then the environment of `pid`: macOS's `ps -E`.
pub fn environment(pid: u32, deadline: Instant) -> Option<Vec<OsString>> {
    let list = existing(&[pid])?;
    let listing = run(&["-E", "-ww", "-o", "command=", "-p", &list], deadline)?;
    let words = words(&listing);
    (!words.is_empty()).then_some(words)
}

/// When `pid` started: now less its `etime=` (whole seconds, so up to a second late).
pub fn start_mark(pid: u32, deadline: Instant) -> Option<u64> {
    let list = existing(&[pid])?;
    let listing = run(&["-o", "lstart=", "-p", &list], deadline)?;
    let text = std::str::from_utf8(&listing).ok()?.trim();
    // FNV-1a of the start time as printed: the same text, the same number.
    (!text.is_empty()).then(|| {
        text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
    })
}

pub fn started(pid: u32, deadline: Instant) -> Option<SystemTime> {
    let list = existing(&[pid])?;
    let listing = run(&["-o", "etime=", "-p", &list], deadline)?;
    let elapsed = elapsed(std::str::from_utf8(&listing).ok()?.trim())?;
    SystemTime::now().checked_sub(elapsed)
}

/// Every running (not ended) process with its command line and start time (`ps -A -ww -o
/// pid=,stat=,etime=,args=`), and the environment of those whose command line
/// `wants_environment` picks (one `ps -E` for all of them, macOS's: there the command's words
/// come first).
pub fn running(deadline: Instant, wants_environment: &dyn Fn(&[OsString]) -> bool) -> Vec<Running> {
    let Some(listing) = run(&["-A", "-ww", "-o", "pid=,stat=,etime=,args="], deadline) else {
        return Vec::new();
    };
    let now = SystemTime::now();
    let mut running = parse_running(&listing, now);
    let wanted: Vec<u32> = running
        .iter()
        .filter(|process| wants_environment(&process.command_line))
        .map(|process| process.pid)
        .collect();
    let Some(list) = existing(&wanted) else {
        return running;
    };
    let environments = run(&["-E", "-ww", "-o", "pid=,command=", "-p", &list], deadline)
        .map(|listing| parse_command_lines(&listing))
        .unwrap_or_default();
    for process in &mut running {
        process.environment = environments
            .iter()
            .find(|(pid, _)| *pid == process.pid)
            .map(|(_, words)| words.clone());
    }
    running
}

/// The lines of a `pid stat etime args` listing, those of ended processes left out.
fn parse_running(listing: &[u8], now: SystemTime) -> Vec<Running> {
    listing
        .split(|byte| *byte == b'\n')
        .filter_map(|line| {
            let (pid, rest) = next_field(line)?;
            let (stat, rest) = next_field(rest)?;
            let (etime, rest) = next_field(rest)?;
            if matches!(stat.first(), Some(b'Z' | b'X')) {
                return None;
            }
            let started = std::str::from_utf8(etime)
                .ok()
                .and_then(elapsed)
                .and_then(|elapsed| now.checked_sub(elapsed));
            Some(Running {
                pid: number(pid)?,
                started,
                command_line: words(rest),
                environment: None,
            })
        })
        .collect()
}

/// `ps`'s elapsed time, `[[dd-]hh:]mm:ss`.
fn elapsed(etime: &str) -> Option<Duration> {
    let (days, clock) = match etime.split_once('-') {
        Some((days, clock)) => (days.parse::<u64>().ok()?, clock),
        None => (0, etime),
    };
    let mut seconds = 0_u64;
    let parts: Vec<&str> = clock.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    for part in parts {
        seconds = seconds * 60 + part.parse::<u64>().ok()?;
    }
    Some(Duration::from_secs(days * 86_400 + seconds))
}

/// The pids among `pids` that exist, comma-separated; `None` when none does (then `ps` need
/// not run).
fn existing(pids: &[u32]) -> Option<String> {
    let list: Vec<String> = pids
        .iter()
        .filter(|pid| crate::exists(**pid))
        .map(u32::to_string)
        .collect();
    (!list.is_empty()).then(|| list.join(","))
}

/// `ps ARGS`'s stdout, whatever its exit status (`ps -p` fails when one pid is gone, and
/// still lists the others); `None` when it could not run or did not answer by `deadline`.
fn run(args: &[&str], deadline: Instant) -> Option<Vec<u8>> {
    let output = bounded_run::output_by(Command::new("ps").args(args), deadline).ok()?;
    Some(output.stdout)
}

/// The lines of a `pid ppid stat tty comm` listing. A command is its path on macOS, its name
/// on Linux; a process without a terminal has `??`, `?` or `-`.
fn parse_processes(listing: &[u8]) -> Vec<Process> {
    listing
        .split(|byte| *byte == b'\n')
        .filter_map(|line| {
            let (pid, rest) = next_field(line)?;
            let (parent, rest) = next_field(rest)?;
            let (stat, rest) = next_field(rest)?;
            let (tty, rest) = next_field(rest)?;
            let command = rest.trim_ascii();
            let name = command
                .rsplit(|byte| *byte == b'/')
                .next()
                .unwrap_or(command);
            let state = match stat.first()? {
                b'U' => 'D',
                letter => char::from(*letter),
            };
            Some(Process {
                pid: number(pid)?,
                parent: number(parent)?,
                state,
                name: OsString::from_vec(name.to_vec()),
                terminal: terminal(tty),
            })
        })
        .collect()
}

/// The lines of a `pid args` listing.
fn parse_command_lines(listing: &[u8]) -> Vec<(u32, Vec<OsString>)> {
    listing
        .split(|byte| *byte == b'\n')
        .filter_map(|line| {
            let (pid, rest) = next_field(line)?;
            Some((number(pid)?, words(rest)))
        })
        .collect()
}

/// The device of the terminal `ps` names (`ttys003`, `pts/3`: a name under `/dev`).
fn terminal(tty: &[u8]) -> Option<Dev> {
    if matches!(tty, b"?" | b"??" | b"-") {
        return None;
    }
    let mut path = b"/dev/".to_vec();
    path.extend_from_slice(tty);
    rustix::fs::stat(OsString::from_vec(path).as_os_str())
        .ok()
        .map(|stat| stat.st_rdev)
}

/// The blank-separated words of `text`.
fn words(text: &[u8]) -> Vec<OsString> {
    text.split(u8::is_ascii_whitespace)
        .filter(|word| !word.is_empty())
        .map(|word| OsString::from_vec(word.to_vec()))
        .collect()
}

/// The first blank-separated field of `text`, and what follows it.
fn next_field(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let text = text.trim_ascii_start();
    let end = text.iter().position(u8::is_ascii_whitespace)?;
    Some(text.split_at(end))
}

fn number(field: &[u8]) -> Option<u32> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_macos_listing_with_paths_and_spaces() {
        let listing = b"    1     0 Ss   ??       /sbin/launchd\n  \
                        10     1 S    ??       /Applications/cmux.app/Contents/MacOS/cmux\n  \
                        20    10 Ss   ttys003  -zsh\n  \
                        30    20 S+   ttys003  /usr/local/bin/node my tool\n  \
                        40    30 U+   ttys003  /bin/sh\n";
        let processes = parse_processes(listing);
        let rows: Vec<(u32, u32, char, &str)> = processes
            .iter()
            .map(|process| {
                let name = process.name.to_str().unwrap();
                (process.pid, process.parent, process.state, name)
            })
            .collect();
        assert_eq!(
            rows,
            [
                (1, 0, 'S', "launchd"),
                (10, 1, 'S', "cmux"),
                (20, 10, 'S', "-zsh"),
                (30, 20, 'S', "node my tool"),
                (40, 30, 'D', "sh"),
            ]
        );
        assert_eq!(processes[0].terminal, None);
        // The ancestry of 40 in that listing, as `Table::Ps` walks it.
        let ancestry = crate::ancestry_by(40, 64, |pid| {
            processes.iter().find(|process| process.pid == pid).cloned()
        })
        .unwrap();
        let ancestors: Vec<(u32, &str)> = ancestry
            .ancestors
            .iter()
            .map(|process| (process.pid, process.name.to_str().unwrap()))
            .collect();
        assert_eq!(
            ancestors,
            [(30, "node my tool"), (20, "-zsh"), (10, "cmux")]
        );
        assert!(
            crate::ancestry_by(99, 64, |pid| {
                processes.iter().find(|process| process.pid == pid).cloned()
            })
            .is_none()
        );
    }

    #[test]
    fn elapsed_times_and_a_listing_of_running_processes() {
        assert_eq!(elapsed("00:07"), Some(Duration::from_secs(7)));
        assert_eq!(elapsed("01:02:03"), Some(Duration::from_secs(3723)));
        assert_eq!(elapsed("2-01:02:03"), Some(Duration::from_secs(176_523)));
        assert_eq!(elapsed("7"), None);
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let listing = b"  10 S    00:10 /usr/local/bin/claude --resume x\n  \
                        11 Z    00:01 [sh]\n";
        let running = parse_running(listing, now);
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].pid, 10);
        assert_eq!(
            running[0].started,
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(990))
        );
        assert_eq!(running[0].command_line.len(), 3);
    }

    #[test]
    fn a_macos_listing_of_command_lines() {
        let listing = b"  500 /Users/u/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex app-server --listen unix:// --managed-daemon\n  \
                        601 /usr/local/bin/crash-resume hook codex\n\
                        not a line\n";
        let lines = parse_command_lines(listing);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, 500);
        assert_eq!(lines[0].1.len(), 5);
        assert_eq!(lines[0].1[4], "--managed-daemon");
        assert_eq!(
            lines[1],
            (
                601,
                vec![
                    "/usr/local/bin/crash-resume".into(),
                    "hook".into(),
                    "codex".into()
                ]
            )
        );
    }
}
