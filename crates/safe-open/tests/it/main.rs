//! safe-open at its boundary: real files, links, FIFOs and sparse files in a temp dir.

use std::fs;
use std::io;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use safe_open::{
    Symlinks, Within, open_private_append, open_read, read, read_head, read_tail, read_whole_within,
};
use test_support::sandbox::mkfifo;

#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    for symlinks in [Symlinks::Refuse, Symlinks::Follow] {
        // No writer ever opens it: a blocking open would hang here.
        let error = open_read(&fifo, symlinks).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(error.to_string(), "it is a FIFO, not a regular file");
    }
    let error = open_private_append(&fifo).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn a_directory_and_a_device_are_not_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let error = read(dir.path(), Symlinks::Refuse).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::IsADirectory);
    let error = read(Path::new("/dev/null"), Symlinks::Follow).unwrap_err();
    assert_eq!(
        error.to_string(),
        "it is a character device, not a regular file"
    );
}

#[test]
fn a_symlink_is_followed_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    fs::write(&target, "content").unwrap();
    let link = dir.path().join("link");
    symlink(&target, &link).unwrap();
    let error = read(&link, Symlinks::Refuse).unwrap_err();
    assert!(error.to_string().contains("symbolic link"), "{error}");
    assert_eq!(read(&link, Symlinks::Follow).unwrap(), b"content");
    // Appending never goes through a link either, and leaves the target alone.
    assert!(open_private_append(&link).is_err());
    assert_eq!(fs::read(&target).unwrap(), b"content");
    // A loop keeps the system's own error.
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    symlink(&b, &a).unwrap();
    symlink(&a, &b).unwrap();
    let error = read(&a, Symlinks::Refuse).unwrap_err();
    assert_eq!(
        error.raw_os_error(),
        Some(rustix::io::Errno::LOOP.raw_os_error())
    );
}

#[test]
fn bounded_reads_stay_bounded_on_a_huge_sparse_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse");
    let file = fs::File::create(&path).unwrap();
    file.set_len(4 << 30).unwrap();
    drop(file);
    let head = read_head(&path, Symlinks::Refuse, 1 << 20).unwrap();
    assert_eq!(head.bytes.len(), 1 << 20);
    assert_eq!(head.file_size, 4 << 30);
    assert!(!head.is_whole());
    let tail = read_tail(&path, Symlinks::Refuse, 64 << 10).unwrap();
    assert_eq!(tail.bytes.len(), 64 << 10);
    let small = dir.path().join("small");
    fs::write(&small, "abc").unwrap();
    let whole = read_tail(&small, Symlinks::Refuse, 64 << 10).unwrap();
    assert_eq!(whole.bytes, b"abc");
    assert!(whole.is_whole());
}

#[test]
fn what_it_creates_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a/b/hook.log");
    open_private_append(&log).unwrap();
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(&dir.path().join("a")), 0o700);
    assert_eq!(mode(&dir.path().join("a/b")), 0o700);
}

#[test]
fn a_file_is_read_whole_only_within_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file");
    fs::write(&path, b"0123456789").unwrap();
    let within = |cap| read_whole_within(open_read(&path, Symlinks::Refuse).unwrap(), cap).unwrap();
    assert_eq!(within(10), Within::Whole(b"0123456789".to_vec()));
    assert_eq!(within(9), Within::TooLarge(10));
    // A sparse file far past the cap is refused by its size, unread.
    let sparse = fs::File::create(&path).unwrap();
    sparse.set_len(1 << 40).unwrap();
    assert_eq!(within(1 << 20), Within::TooLarge(1 << 40));
}
