//! The sidecar lock: an exclusive `fd-lock` on `<index>.lock`, waited for up to a deadline.
//!
//! The holder writes its pid into the file, so a waiter that gives up can say who holds the lock
//! and in what state (running, or stopped by a signal).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::thread;
use std::time::{Duration, Instant};

use camino::Utf8Path;
use fd_lock::RwLock;

use crate::StoreError;

#[derive(Debug)]
pub(crate) struct Lock(RwLock<File>);

impl Lock {
    pub(crate) fn open(lock_path: &Utf8Path) -> Result<Lock, StoreError> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(lock_path).map_err(|source| StoreError::Lock {
            path: lock_path.to_owned(),
            cause: source,
        })?;
        #[allow(clippy::disallowed_methods)] // this is the one place that locks the index
        Ok(Lock(RwLock::new(file)))
    }

    /// Runs `critical` holding the lock, taken by polling until `timeout` has passed.
    pub(crate) fn hold<T>(
        &mut self,
        lock_path: &Utf8Path,
        index_path: &Utf8Path,
        timeout: Duration,
        critical: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let started = Instant::now();
        let mut pause = Duration::from_micros(500);
        loop {
            match self.0.try_write() {
                Ok(mut guard) => {
                    // Best effort: the pid only serves the message of a waiter that gives up.
                    let _ = write_pid(&mut guard);
                    return critical();
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    if started.elapsed() >= timeout {
                        return Err(StoreError::LockTimeout {
                            path: index_path.to_owned(),
                            holder: describe_holder(lock_path),
                            waited: started.elapsed(),
                        });
                    }
                    thread::sleep(pause.min(timeout.saturating_sub(started.elapsed())));
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(source) => {
                    return Err(StoreError::Lock {
                        path: lock_path.to_owned(),
                        cause: source,
                    });
                }
            }
        }
    }
}

fn write_pid(file: &mut File) -> io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    write!(file, "{}", std::process::id())
}

/// "pid 123, stopped (resume it with `kill -CONT 123`)", or what can be said without a pid.
fn describe_holder(lock_path: &Utf8Path) -> String {
    let mut text = String::new();
    let pid = File::open(lock_path)
        .and_then(|mut file| file.read_to_string(&mut text))
        .ok()
        .and_then(|_| text.trim().parse::<u32>().ok());
    let Some(pid) = pid else {
        return "holder unknown".to_string();
    };
    match process_state(pid) {
        Some('T') | Some('t') => {
            format!("pid {pid}, stopped by a signal: resume it with `kill -CONT {pid}` or end it")
        }
        Some('Z') => format!("pid {pid}, a zombie that has not been reaped"),
        Some('D') => format!("pid {pid}, waiting on the disk"),
        Some(_) => format!("pid {pid}, running"),
        None => format!("pid {pid} by its own account; its state is unknown"),
    }
}

/// The one-letter state of a process, as Linux names it (`T` stopped, `Z` zombie, `D` waiting
/// on the disk): from `/proc` on Linux, from `ps` elsewhere.
fn process_state(pid: u32) -> Option<char> {
    #[cfg(target_os = "linux")]
    return proc_state(pid);
    #[cfg(not(target_os = "linux"))]
    ps_state(pid)
}

/// The state from `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces; the state follows the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The state from `ps -o stat= -p <pid>` (its errors silenced): the first letter, where macOS's
/// `U` (uninterruptible wait) is Linux's `D`.
#[cfg(any(test, not(target_os = "linux")))]
fn ps_state(pid: u32) -> Option<char> {
    let output = std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let state = String::from_utf8_lossy(&output.stdout)
        .trim()
        .chars()
        .next()?;
    Some(if state == 'U' { 'D' } else { state })
}

#[cfg(test)]
mod tests {
    use rustix::process::{Pid, Signal, WaitOptions};

    use super::*;

    /// `ps`, which macOS uses, and `/proc` agree on a running and a stopped process, and on one
    /// that is gone.
    #[cfg(target_os = "linux")]
    #[test]
    fn ps_and_proc_agree_on_a_process_state() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        let raw = Pid::from_raw(pid as i32).unwrap();
        // Running or asleep, by the time each looks.
        assert!(matches!(ps_state(pid), Some('R' | 'S')));
        assert!(matches!(proc_state(pid), Some('R' | 'S')));
        rustix::process::kill_process(raw, Signal::STOP).unwrap();
        // Returns once the child has stopped.
        rustix::process::waitpid(Some(raw), WaitOptions::UNTRACED).unwrap();
        assert_eq!(ps_state(pid), Some('T'));
        assert_eq!(proc_state(pid), Some('T'));
        assert!(describe_holder_of(pid).contains("stopped by a signal"));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(ps_state(pid), None);
        assert_eq!(proc_state(pid), None);
    }

    fn describe_holder_of(pid: u32) -> String {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("index.json.lock");
        std::fs::write(&lock, pid.to_string()).unwrap();
        describe_holder(Utf8Path::from_path(&lock).unwrap())
    }
}
