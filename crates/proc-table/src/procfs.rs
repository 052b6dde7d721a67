//! The table as Linux's `/proc` shows it: `/proc/<pid>/stat` (the one parser of its lines),
//! `cmdline`, `environ`, `fd/0`, `/proc/uptime` (for start times) and `/proc/locks`. A file that cannot be read means the
//! process is not there (or not ours to look at).

use std::ffi::OsString;
use std::fs::File;
use std::io::Read as _;
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::{Dev, LockHolder, LockKind, Process, READ_CAP, Running};

/// Whether this machine has a `/proc` that shows processes.
pub fn available() -> bool {
    Path::new("/proc/self/stat").exists()
}

/// The process `pid` from `/proc/<pid>/stat`.
pub fn process(pid: u32) -> Option<Process> {
    let stat = read_capped(&format!("/proc/{pid}/stat"), 4096)?;
    parse_stat(pid, &stat)
}

/// Every numbered dir of `/proc` that can still be read.
pub fn processes() -> Vec<Process> {
    let Ok(listing) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    listing
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(process)
        .collect()
}

/// When the process `pid` started: `starttime` of its `stat` line (clock ticks after boot)
/// against `/proc/uptime` (how long ago the boot was), so the boot time's whole seconds do not
/// blur it.
pub fn start_mark(pid: u32) -> Option<u64> {
    start_ticks(&read_capped(&format!("/proc/{pid}/stat"), 4096)?)
}

pub fn started(pid: u32) -> Option<SystemTime> {
    let stat = read_capped(&format!("/proc/{pid}/stat"), 4096)?;
    let ticks = start_ticks(&stat)?;
    let uptime = read_capped("/proc/uptime", 256)?;
    start_time(ticks, &uptime, SystemTime::now())
}

/// Every running (not ended) process with its command line and start time, and the
/// environment of those whose command line `wants_environment` picks.
pub fn running(wants_environment: &dyn Fn(&[OsString]) -> bool) -> Vec<Running> {
    let Ok(listing) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let now = SystemTime::now();
    let uptime = read_capped("/proc/uptime", 256);
    listing
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = read_capped(&format!("/proc/{pid}/stat"), 4096)?;
            if parse_stat(pid, &stat)?.has_ended() {
                return None;
            }
            let started = uptime
                .as_deref()
                .and_then(|uptime| start_time(start_ticks(&stat)?, uptime, now));
            let command_line = command_line(pid)?;
            let environment = wants_environment(&command_line)
                .then(|| environment(pid))
                .flatten();
            Some(Running {
                pid,
                started,
                command_line,
                environment,
            })
        })
        .collect()
}

/// The fields of a `stat` line after the name (state first).
fn stat_fields(stat: &[u8]) -> Option<Vec<&str>> {
    let close = stat.iter().rposition(|byte| *byte == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    Some(rest.split_whitespace().collect())
}

/// `starttime`, the 22nd field of a `stat` line (the 20th after the name).
fn start_ticks(stat: &[u8]) -> Option<u64> {
    stat_fields(stat)?.get(19)?.parse().ok()
}

/// The wall-clock time `ticks` after boot, the boot having been `uptime` (`/proc/uptime`'s
/// first number, in seconds) before `now`.
fn start_time(ticks: u64, uptime: &[u8], now: SystemTime) -> Option<SystemTime> {
    let uptime: f64 = std::str::from_utf8(uptime)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let hertz = rustix::param::clock_ticks_per_second().max(1);
    let since_boot = Duration::from_secs(ticks / hertz)
        + Duration::from_secs_f64((ticks % hertz) as f64 / hertz as f64);
    let running_for = Duration::try_from_secs_f64(uptime)
        .ok()?
        .checked_sub(since_boot)
        .unwrap_or_default();
    now.checked_sub(running_for)
}

/// A `/proc/<pid>/stat` line: `pid (name) state parent group session tty_nr ...`. The name
/// may hold spaces and parentheses, so the fields are those after the last `)`.
fn parse_stat(pid: u32, stat: &[u8]) -> Option<Process> {
    let open = stat.iter().position(|byte| *byte == b'(')?;
    let close = stat.iter().rposition(|byte| *byte == b')')?;
    let name = stat.get(open + 1..close)?.to_vec();
    let fields = stat_fields(stat)?;
    Some(Process {
        pid,
        parent: fields.get(1)?.parse().ok()?,
        state: fields.first()?.chars().next()?,
        name: OsString::from_vec(name),
        terminal: terminal_device(fields.get(4)?.parse().ok()?),
    })
}

/// The device of a `tty_nr` (0: no terminal), which the kernel packs as minor bits 0-7, major
/// bits 8-19, the rest of the minor from bit 20.
fn terminal_device(tty_nr: i64) -> Option<Dev> {
    let tty_nr = u64::try_from(tty_nr).ok().filter(|tty| *tty != 0)?;
    let major = ((tty_nr >> 8) & 0xfff) as u32;
    let minor = ((tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00)) as u32;
    Some(rustix::fs::makedev(major, minor))
}

/// `/proc/<pid>/cmdline`, split at its NULs.
pub fn command_line(pid: u32) -> Option<Vec<OsString>> {
    read_capped(&format!("/proc/{pid}/cmdline"), READ_CAP).map(|bytes| split_at_nul(&bytes))
}

/// `/proc/<pid>/environ`, split at its NULs.
pub fn environment(pid: u32) -> Option<Vec<OsString>> {
    read_capped(&format!("/proc/{pid}/environ"), READ_CAP).map(|bytes| split_at_nul(&bytes))
}

/// NUL-separated words; the NULs at the end (one after the last word, or a title a program
/// set padded with them) end the list rather than add empty words.
fn split_at_nul(bytes: &[u8]) -> Vec<OsString> {
    let end = bytes
        .iter()
        .rposition(|byte| *byte != 0)
        .map_or(0, |last| last + 1);
    match end {
        0 => Vec::new(),
        end => bytes[..end]
            .split(|byte| *byte == 0)
            .map(|word| OsString::from_vec(word.to_vec()))
            .collect(),
    }
}

/// Where `/proc/<pid>/fd/0` points.
pub fn standard_input(pid: u32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/fd/0")).ok()
}

/// The granted locks on a file in `/proc/locks`: `1: FLOCK  ADVISORY  WRITE 123 08:01:4567 0
/// EOF` (`POSIX` for a record lock); a waiter's line has `->` before the kind, and an open file
/// description lock (`OFDLCK`) has no pid.
pub fn lock_holders(device: u64, inode: u64) -> Vec<LockHolder> {
    let Some(locks) = read_capped("/proc/locks", READ_CAP) else {
        return Vec::new();
    };
    // Linux's encoding of a device number (glibc's `gnu_dev_major` and `gnu_dev_minor`).
    let major = ((device & 0x0000_0000_000f_ff00) >> 8) | ((device & 0xffff_f000_0000_0000) >> 32);
    let minor = (device & 0xff) | ((device & 0x0000_0fff_fff0_0000) >> 12);
    let wanted = (major, minor, inode);
    String::from_utf8_lossy(&locks)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [_, kind, _, _, pid, place, ..] = fields.as_slice() else {
                return None;
            };
            let kind = match *kind {
                "FLOCK" => LockKind::Flock,
                "POSIX" => LockKind::Posix,
                _ => return None,
            };
            (parse_place(place)? == wanted).then_some(LockHolder {
                pid: pid.parse().ok()?,
                kind,
            })
        })
        .collect()
}

/// `maj:min:inode`, the device numbers in hex.
fn parse_place(place: &str) -> Option<(u64, u64, u64)> {
    let mut parts = place.split(':');
    let major = u64::from_str_radix(parts.next()?, 16).ok()?;
    let minor = u64::from_str_radix(parts.next()?, 16).ok()?;
    let inode = parts.next()?.parse().ok()?;
    Some((major, minor, inode))
}

/// At most `cap` bytes of a `/proc` file (opened directly: it is no regular file of anyone's).
fn read_capped(path: &str, cap: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    File::open(path)
        .ok()?
        .take(cap)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_parentheses_and_spaces_in_the_name() {
        let process = parse_stat(42, b"42 (a (b) c) S 7 42 42 34816 42 4194304").unwrap();
        assert_eq!(process.name, "a (b) c");
        assert_eq!(process.parent, 7);
        assert_eq!(process.state, 'S');
        assert_eq!(process.terminal, Some(rustix::fs::makedev(136, 0)));
        assert_eq!(parse_stat(1, b"1 (x) S 0 1 1 0").unwrap().terminal, None);
        assert_eq!(parse_stat(1, b"1 (x"), None);
    }

    #[test]
    fn words_at_nuls_without_the_trailing_ones() {
        assert_eq!(split_at_nul(b"bash\0-l\0"), ["bash", "-l"]);
        assert_eq!(split_at_nul(b"a\0\0b\0"), ["a", "", "b"]);
        assert_eq!(split_at_nul(b"tmux: server\0\0\0\0"), ["tmux: server"]);
        assert!(split_at_nul(b"").is_empty());
        assert!(split_at_nul(b"\0\0").is_empty());
    }

    #[test]
    fn a_start_time_from_ticks_and_uptime() {
        let hertz = rustix::param::clock_ticks_per_second();
        let stat = format!(
            "9 (x) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {} 0",
            50 * hertz
        );
        assert_eq!(start_ticks(stat.as_bytes()), Some(50 * hertz));
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        assert_eq!(
            start_time(50 * hertz, b"60.00 10.00\n", now),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(990))
        );
        assert_eq!(start_time(1, b"x", now), None);
    }

    #[test]
    fn a_lock_place() {
        assert_eq!(parse_place("08:01:4567"), Some((8, 1, 4567)));
        assert_eq!(parse_place("00:1f:12"), Some((0, 31, 12)));
        assert_eq!(parse_place("x"), None);
    }
}
