//! The write lock, in two parts, both held for every write:
//!
//! - our own: an exclusive `fd-lock` on `<index>.flock`, waited for up to a deadline. The
//!   kernel drops it when its holder dies, so it never goes stale. A waiter that gives up names
//!   the process holding it from `/proc/locks`, or says it cannot tell;
//! - the JavaScript crash-resume-index's: that tool locks by `mkdir <index>.lock`, waits up to
//!   4 s for it, and takes a lock dir older than 15 s (by its mtime) as stale and removes it.
//!   Holding our own lock, a writer makes that dir too (waiting for a live one up to the same
//!   deadline, taking a stale one over), writes, and removes it. A stale dir that cannot be
//!   removed (not empty: the JavaScript tool cannot take it either) is waited out like a live
//!   one; one whose mtime is in the future is never stale. The lock file records the dirs
//!   writers of ours made (device, inode, mtime) until one is removed, so a writer killed while
//!   holding one leaves a dir the next one of ours recognises and removes at once instead of
//!   waiting 15 s.
//!
//! Earlier versions kept a plain lock file at `<index>.lock`, which the JavaScript tool cannot
//! get past; a file there that looks like one (a pid, owned by this user) is removed.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};
use fd_lock::RwLock;
use safe_open::Symlinks;

use crate::StoreError;

/// A JavaScript tool's lock dir older than this is stale, as that tool takes it.
pub const JS_LOCK_STALE: Duration = Duration::from_secs(15);

#[derive(Debug)]
pub(crate) struct Lock {
    file: RwLock<File>,
    /// The lock file's device and inode, to find its holder by.
    place: Option<(u64, u64)>,
}

/// The two lock paths of one index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paths<'a> {
    pub(crate) own: &'a Utf8Path,
    /// The JavaScript tool's lock dir, for a write of the index; none for a lock of ours alone.
    pub(crate) shared_dir: Option<&'a Utf8Path>,
    pub(crate) index: &'a Utf8Path,
}

impl Lock {
    pub(crate) fn open(lock_path: &Utf8Path) -> Result<Lock, StoreError> {
        let file = safe_open::open(
            lock_path.as_std_path(),
            OpenOptions::new().read(true).write(true).create(true),
            Symlinks::Refuse,
        )
        .map_err(|source| StoreError::Lock {
            path: lock_path.to_owned(),
            cause: source,
        })?;
        let place = place_of(&file);
        #[allow(clippy::disallowed_methods)] // this is the one place that locks the index
        Ok(Lock {
            file: RwLock::new(file),
            place,
        })
    }

    /// A lock on a directory itself (opened read-only, created by no one): for a file that
    /// crash-resume edits but does not own, which must not gain a lock file beside it. The lock
    /// stays valid across renames in the dir, unlike one on the file.
    pub(crate) fn open_dir(dir: &Utf8Path) -> Result<Lock, StoreError> {
        let file = File::open(dir).map_err(|source| StoreError::Lock {
            path: dir.to_owned(),
            cause: source,
        })?;
        let place = place_of(&file);
        #[allow(clippy::disallowed_methods)] // the lock module locks the dir too
        Ok(Lock {
            file: RwLock::new(file),
            place,
        })
    }

    /// Runs `critical` holding both locks, each waited for until `timeout` has passed since the
    /// call.
    pub(crate) fn hold<T>(
        &mut self,
        paths: Paths<'_>,
        timeout: Duration,
        critical: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let started = Instant::now();
        let mut pause = Duration::from_micros(500);
        loop {
            match self.file.try_write() {
                Ok(mut guard) => {
                    let Some(shared_dir) = paths.shared_dir else {
                        return critical();
                    };
                    let shared = SharedDir::take(&mut guard, shared_dir, paths, started, timeout)?;
                    let result = critical();
                    shared.release(&mut guard);
                    return result;
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    if started.elapsed() >= timeout {
                        return Err(StoreError::LockTimeout {
                            path: paths.index.to_owned(),
                            holder: describe_holder(self.place, paths.own),
                            waited: started.elapsed(),
                        });
                    }
                    thread::sleep(pause.min(timeout.saturating_sub(started.elapsed())));
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(source) => {
                    return Err(StoreError::Lock {
                        path: paths.own.to_owned(),
                        cause: source,
                    });
                }
            }
        }
    }
}

/// The JavaScript tool's lock dir, made by us.
struct SharedDir<'a> {
    path: &'a Utf8Path,
}

/// What identifies a lock dir we made: device, inode and mtime.
fn identity(metadata: &fs::Metadata) -> String {
    #[cfg(unix)]
    {
        format!(
            "{}:{}:{}.{}",
            metadata.dev(),
            metadata.ino(),
            metadata.mtime(),
            metadata.mtime_nsec()
        )
    }
    #[cfg(not(unix))]
    {
        format!("{:?}", metadata.modified().ok())
    }
}

impl<'a> SharedDir<'a> {
    /// Takes the lock dir. On Linux the dir is made under a private name first, its identity
    /// recorded in our lock file, and only then renamed into place (`RENAME_NOREPLACE`, which
    /// never replaces a dir that is there): a writer killed at any moment leaves either that
    /// private dir (removed by the next writer) or a lock dir the next writer knows as ours.
    fn take(
        own: &mut File,
        path: &'a Utf8Path,
        paths: Paths<'a>,
        started: Instant,
        timeout: Duration,
    ) -> Result<SharedDir<'a>, StoreError> {
        let lock_error = |cause| StoreError::Lock {
            path: path.to_owned(),
            cause,
        };
        let ours_left = recorded_dirs(own);
        let pending = pending_dir_path(path);
        // A private dir a killed writer left: we hold our lock, so no writer of ours uses it.
        let _ = fs::remove_dir(&pending);
        let mut made_pending = false;
        let mut pause = Duration::from_micros(500);
        loop {
            if !made_pending {
                // Making a dir beside the index is the first write: a dir that cannot be
                // written to fails here, and is reported as such.
                fs::create_dir(&pending).map_err(|cause| StoreError::Write {
                    path: pending.parent().unwrap_or(path).to_owned(),
                    cause,
                })?;
                let made = fs::symlink_metadata(&pending).map_err(lock_error)?;
                // The record is only a hint for the next writer: a failure to write it costs
                // that writer a wait, nothing else.
                let mut ours = ours_left.clone();
                ours.push(identity(&made));
                let _ = record(own, &ours);
                made_pending = true;
            }
            match move_into_place(&pending, path) {
                Ok(()) => return Ok(SharedDir { path }),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => {
                    let _ = fs::remove_dir(&pending);
                    return Err(lock_error(error));
                }
            }
            let found = match fs::symlink_metadata(path) {
                Ok(found) => found,
                // Released between our attempt and our look: try again.
                Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
                Err(error) => {
                    let _ = fs::remove_dir(&pending);
                    return Err(lock_error(error));
                }
            };
            let age = found
                .modified()
                .ok()
                .map(|made| SystemTime::now().duration_since(made).ok());
            let removed = if found.is_dir() {
                let ours = ours_left.contains(&identity(&found));
                // Ours, left by a writer killed while holding it; or stale, as the JavaScript
                // tool takes it (never one made in the future: that tool would not either).
                let stale = matches!(age, Some(Some(age)) if age > JS_LOCK_STALE);
                (ours || stale).then(|| fs::remove_dir(path))
            } else if is_old_lock_file(path, &found) {
                Some(fs::remove_file(path))
            } else {
                let _ = fs::remove_dir(&pending);
                return Err(lock_error(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "it is {}, not the JavaScript crash-resume-index's lock dir; \
                         remove it, then write again",
                        safe_open::describe(&found.file_type())
                    ),
                )));
            };
            // Removed, by us or by another first: try again at once. One that cannot be
            // removed (a lock dir that is not empty, which the JavaScript tool cannot remove
            // either) is waited out like a live one, in case someone removes it meanwhile.
            let in_the_way = match removed {
                Some(Ok(())) => continue,
                Some(Err(error)) if error.kind() == io::ErrorKind::NotFound => continue,
                Some(Err(error)) => Some(error),
                None => None,
            };
            if started.elapsed() >= timeout {
                let _ = fs::remove_dir(&pending);
                let made = describe_age(age);
                return Err(match in_the_way {
                    Some(cause) => StoreError::LockDirInTheWay {
                        path: paths.index.to_owned(),
                        lock_dir: path.to_owned(),
                        made,
                        cause,
                        waited: started.elapsed(),
                    },
                    None => StoreError::LockTimeout {
                        path: paths.index.to_owned(),
                        holder: format!(
                            "the JavaScript crash-resume-index holds {path}, a lock dir {made}; \
                             it is taken as stale {} s after it was made{}",
                            JS_LOCK_STALE.as_secs(),
                            match age {
                                // The clock has to pass its time first: waiting may not end.
                                Some(None) =>
                                    ", not before: remove it if no \
                                               crash-resume-index process runs",
                                _ => "",
                            }
                        ),
                        waited: started.elapsed(),
                    },
                });
            }
            thread::sleep(pause.min(timeout.saturating_sub(started.elapsed())));
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Removes the lock dir; a failure leaves it for the next writer of ours to recognise, or
    /// for the JavaScript tool to take as stale.
    fn release(self, own: &mut File) {
        if fs::remove_dir(self.path).is_ok() {
            let _ = record(own, &[]);
        }
    }
}

/// "made 3.2s ago", from a lock dir's age (`None` inside when its mtime is in the future,
/// `None` outside when it has none).
fn describe_age(age: Option<Option<Duration>>) -> String {
    match age {
        Some(Some(age)) => format!("made {age:.1?} ago"),
        Some(None) => "made in the future (clock skew?)".to_string(),
        None => "made at a time the system cannot tell".to_string(),
    }
}

/// How many lock dirs of ours the lock file remembers at most.
const REMEMBERED_DIRS: usize = 8;

/// Writes our pid, and the identities of the JavaScript lock dirs writers of ours made and may
/// not have removed (killed before they could), into our lock file: one per line, newest
/// last. A writer killed after recording its dir but before removing an older one leaves both
/// on the list, so neither is ever taken for the JavaScript tool's.
fn record(own: &mut File, dirs: &[String]) -> io::Result<()> {
    let kept = &dirs[dirs.len().saturating_sub(REMEMBERED_DIRS)..];
    let mut text = format!("{}\n", std::process::id());
    for dir in kept {
        text.push_str(dir);
        text.push('\n');
    }
    // One write over the old content, then the length: a writer killed in between leaves the
    // new list with the old one's tail after it (lines naming no dir of now), never an empty
    // file that would forget a dir left in place.
    own.seek(SeekFrom::Start(0))?;
    own.write_all(text.as_bytes())?;
    own.set_len(text.len() as u64)
}

/// The identities of lock dirs writers of ours made and may not have removed.
fn recorded_dirs(own: &mut File) -> Vec<String> {
    let mut text = String::new();
    let read = own
        .seek(SeekFrom::Start(0))
        .and_then(|_| own.take(4096).read_to_string(&mut text));
    match read {
        Ok(_) => text.lines().skip(1).map(str::to_string).collect(),
        Err(_) => Vec::new(),
    }
}

/// A plain lock file of an earlier version of this tool: a regular file of ours holding a pid.
fn is_old_lock_file(path: &Utf8Path, found: &fs::Metadata) -> bool {
    #[cfg(unix)]
    let ours = found.uid() == rustix::process::geteuid().as_raw();
    #[cfg(not(unix))]
    let ours = true;
    if !found.is_file() || !ours || found.len() > 32 {
        return false;
    }
    safe_open::read(path.as_std_path(), Symlinks::Refuse).is_ok_and(|bytes| {
        bytes
            .iter()
            .all(|byte| byte.is_ascii_digit() || byte.is_ascii_whitespace())
    })
}

/// "pid 123, stopped (resume it with `kill -CONT 123`)", or that the holder cannot be told.
fn describe_holder(place: Option<(u64, u64)>, lock_path: &Utf8Path) -> String {
    if let Some(pid) = place.and_then(holder_pid) {
        return describe_pid(pid);
    }
    // Without a table of locks (macOS), the pid the last holder recorded is a hint, said as one.
    let recorded = safe_open::read_head(lock_path.as_std_path(), Symlinks::Refuse, 256)
        .ok()
        .and_then(|part| {
            let text = String::from_utf8_lossy(&part.bytes).into_owned();
            text.lines().next()?.trim().parse::<u32>().ok()
        });
    match (cfg!(target_os = "linux"), recorded) {
        (false, Some(pid)) => format!(
            "cannot tell which process holds {lock_path}; the last to record itself there was \
             {}",
            describe_pid(pid)
        ),
        _ => format!("cannot tell which process holds {lock_path}"),
    }
}

/// What state the holder `pid` is in, and what to do about a stopped one.
fn describe_pid(pid: u32) -> String {
    match process_state(pid) {
        Some('T') | Some('t') => {
            format!("pid {pid}, stopped by a signal: resume it with `kill -CONT {pid}` or end it")
        }
        Some('Z') => format!("pid {pid}, a zombie that has not been reaped"),
        Some('D') => format!("pid {pid}, waiting on the disk"),
        Some(_) => format!("pid {pid}, running"),
        None => format!("pid {pid}; its state is unknown"),
    }
}

/// The process holding the `flock` on the lock file (its device and inode), from the process
/// table's locks (`/proc/locks`, Linux only); elsewhere there is no such table, and the holder
/// cannot be told.
fn holder_pid((device, inode): (u64, u64)) -> Option<u32> {
    proc_table::table()
        .lock_holders(device, inode)
        .into_iter()
        .find(|holder| holder.kind == proc_table::LockKind::Flock)
        .map(|holder| holder.pid)
}

/// How long a `ps` call may take: it only adds the holder's state to a message.
const PS_DEADLINE: Duration = Duration::from_secs(2);

/// The one-letter state of a process, as Linux names it (`T` stopped, `Z` zombie, `D` waiting
/// on the disk), from the process table (`/proc`, else `ps` within [`PS_DEADLINE`]).
fn process_state(pid: u32) -> Option<char> {
    process_state_in(proc_table::table(), pid)
}

fn process_state_in(table: proc_table::Table, pid: u32) -> Option<char> {
    table
        .process(pid, Instant::now() + PS_DEADLINE)
        .map(|process| process.state)
}

/// Renames the private dir `from` to `to` unless something is at `to` (`AlreadyExists` then).
#[cfg(target_os = "linux")]
fn move_into_place(from: &Utf8Path, to: &Utf8Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    #[allow(clippy::disallowed_methods)] // the lock dir, not the index
    match renameat_with(
        CWD,
        from.as_std_path(),
        CWD,
        to.as_std_path(),
        RenameFlags::NOREPLACE,
    ) {
        Ok(()) => Ok(()),
        // A filesystem without RENAME_NOREPLACE: make the lock dir directly.
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
            fs::create_dir(to)?;
            let _ = fs::remove_dir(from);
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn move_into_place(from: &Utf8Path, to: &Utf8Path) -> io::Result<()> {
    fs::create_dir(to)?;
    let _ = fs::remove_dir(from);
    Ok(())
}

/// The private name a writer makes its lock dir under before moving it into place.
fn pending_dir_path(shared_dir: &Utf8Path) -> Utf8PathBuf {
    let name = shared_dir.file_name().unwrap_or("index.json.lock");
    match shared_dir.parent() {
        Some(dir) => dir.join(format!(".{name}.pending")),
        None => Utf8PathBuf::from(format!(".{name}.pending")),
    }
}

/// The path of the JavaScript tool's lock dir for an index.
pub(crate) fn shared_dir_path(index: &Utf8Path) -> Utf8PathBuf {
    Utf8PathBuf::from(format!("{index}.lock"))
}

/// The device and inode of an open file, where the platform has them: what tells a lock file
/// replaced under its name from the one locked.
fn place_of(file: &File) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        file.metadata()
            .ok()
            .map(|metadata| (metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        None
    }
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
        describe_pid(pid)
    }

    fn ps_state(pid: u32) -> Option<char> {
        process_state_in(proc_table::Table::Ps, pid)
    }

    fn proc_state(pid: u32) -> Option<char> {
        process_state_in(proc_table::Table::Proc, pid)
    }
}
