//! Opening files without their traps, for every crate of the workspace.
//!
//! Every file crash-resume reads or writes (the index and its sidecars, `hook.log`, an agent's
//! settings, transcripts and session files) is opened through here:
//!
//! - never blocking: the open is non-blocking (`O_NONBLOCK`), so a FIFO with no writer, a
//!   socket or a device answers at once instead of hanging the caller;
//! - regular files only: the opened handle is checked with `fstat`, and anything else is an
//!   error of kind [`io::ErrorKind::IsADirectory`] (a directory) or
//!   [`io::ErrorKind::InvalidInput`] (a FIFO, socket or device), naming what it is;
//! - no symlink followed where none is expected: with [`Symlinks::Refuse`] a symlink at the
//!   last component fails (`O_NOFOLLOW`) with a message saying so;
//! - private: files it creates are mode 0600 and directories 0700.
//!
//! Reads are bounded where the caller asks: [`read_head`] and [`read_tail`] never read more
//! than their cap, whatever the file's size (a sparse file of gigabytes included).

#![deny(missing_docs)]

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Whether a symlink at the last component of a path is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symlinks {
    /// A symlink there is an error: the file is one crash-resume owns, or one no tool links.
    Refuse,
    /// Follow it, as the program that owns the file does (a dotfile manager's settings link, a
    /// transcript the agent itself would read through a link).
    Follow,
}

/// Opens `path` for reading: non-blocking, checked to be a regular file.
pub fn open_read(path: &Path, symlinks: Symlinks) -> io::Result<File> {
    open(path, OpenOptions::new().read(true), symlinks)
}

/// Opens `path` with `options` (read, write, append, create, ...), adding the non-blocking,
/// no-follow (with [`Symlinks::Refuse`]) and close-on-exec flags, and a mode of 0600 for a file
/// it creates; the handle is checked to be a regular file before it is returned. Truncation is
/// refused in `options` (it would happen before the check): call `set_len(0)` on the handle.
pub fn open(path: &Path, options: &mut OpenOptions, symlinks: Symlinks) -> io::Result<File> {
    #[cfg(unix)]
    {
        let mut flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC;
        if symlinks == Symlinks::Refuse {
            flags |= rustix::fs::OFlags::NOFOLLOW;
        }
        options.custom_flags(flags.bits() as i32).mode(0o600);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(error) if symlinks == Symlinks::Refuse && is_symlink_refusal(&error, path) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a symbolic link, which crash-resume does not follow there; \
                 replace it with the file itself",
            ));
        }
        // Opening a FIFO without a reader for writing, non-blocking, fails with ENXIO: say what
        // is there instead.
        Err(error) if error.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
            return match fs::metadata(path) {
                Ok(metadata) if !metadata.is_file() => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "it is {}, not a regular file",
                        describe(&metadata.file_type())
                    ),
                )),
                _ => Err(error),
            };
        }
        Err(error) => return Err(error),
    };
    check_regular(&file)?;
    #[cfg(unix)]
    {
        // Back to blocking reads and writes: the flag only served the open.
        let flags = rustix::fs::fcntl_getfl(&file)?;
        rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)?;
    }
    Ok(file)
}

/// `O_NOFOLLOW` on a symlink fails with `ELOOP`; a loop of links does too, so the path is
/// looked at to tell them apart (a loop keeps the system's own message).
fn is_symlink_refusal(error: &io::Error, path: &Path) -> bool {
    error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
        && fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
        && fs::metadata(path).is_ok()
}

/// An error unless the open handle is a regular file.
pub fn check_regular(file: &File) -> io::Result<()> {
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(());
    }
    if kind.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory, not a regular file",
        ));
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file", describe(&kind)),
    ))
}

/// "a FIFO", "a socket", ... for a file type that is not a regular file.
pub fn describe(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
    }
    match (kind.is_dir(), kind.is_symlink(), kind.is_file()) {
        (true, _, _) => "a directory",
        (_, true, _) => "a symbolic link",
        (_, _, true) => "a regular file",
        _ => "a special file",
    }
}

/// The whole of a regular file.
pub fn read(path: &Path, symlinks: Symlinks) -> io::Result<Vec<u8>> {
    let mut file = open_read(path, symlinks)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What [`read_whole_within`] found: the whole file, or that it is larger than the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Within {
    /// The whole file, at most the cap.
    Whole(Vec<u8>),
    /// The file is larger than the cap: its size, or (should it have grown while it was read)
    /// what was read of it; nothing more than one byte past the cap was read.
    TooLarge(u64),
}

/// The whole of the open `file` when it holds at most `cap` bytes, reading no more than one
/// byte past the cap (a file that grows while it is read is seen too).
pub fn read_whole_within(file: File, cap: u64) -> io::Result<Within> {
    let size = file.metadata()?.len();
    if size > cap {
        return Ok(Within::TooLarge(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(match bytes.len() as u64 {
        read if read > cap => Within::TooLarge(read),
        _ => Within::Whole(bytes),
    })
}

/// What a bounded read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The bytes read, at most the cap.
    pub bytes: Vec<u8>,
    /// The file's size when it was opened.
    pub file_size: u64,
}

impl Part {
    /// Whether the part read is the whole file.
    pub fn is_whole(&self) -> bool {
        self.bytes.len() as u64 >= self.file_size
    }
}

/// At most `cap` bytes from the start of a regular file.
pub fn read_head(path: &Path, symlinks: Symlinks, cap: u64) -> io::Result<Part> {
    let file = open_read(path, symlinks)?;
    let file_size = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(file_size.min(cap) as usize);
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(Part { bytes, file_size })
}

/// At most the last `cap` bytes of a regular file.
pub fn read_tail(path: &Path, symlinks: Symlinks, cap: u64) -> io::Result<Part> {
    let mut file = open_read(path, symlinks)?;
    let file_size = file.metadata()?.len();
    file.seek(SeekFrom::Start(file_size.saturating_sub(cap)))?;
    let mut bytes = Vec::with_capacity(file_size.min(cap) as usize);
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(Part { bytes, file_size })
}

/// Creates `dir` and its missing parents, each mode 0700 (before the umask), and returns the
/// ones it created, outermost first.
pub fn create_private_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|ancestor| !ancestor.as_os_str().is_empty() && !ancestor.exists())
        .map(Path::to_path_buf)
        .collect();
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir)?;
    Ok(missing.into_iter().rev().collect())
}

/// Opens `path` to append, creating it mode 0600 (and its missing directories 0700); a symlink
/// or anything but a regular file there is an error.
pub fn open_private_append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        create_private_dirs(dir)?;
    }
    open(
        path,
        OpenOptions::new().append(true).create(true),
        Symlinks::Refuse,
    )
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
