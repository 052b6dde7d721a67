//! Finding a multiplexer's program: on `PATH`, else where Homebrew puts it.

use std::ffi::OsString;

/// Where Homebrew puts programs (Apple silicon, Intel): a process the macOS GUI started, such as
/// an agent's hook in a terminal app, may have neither on its `PATH`.
pub(crate) const HOMEBREW_DIRS: [&str; 2] = ["/opt/homebrew/bin", "/usr/local/bin"];

/// The first executable file `name` in the dirs of `path`, then in `fallback_dirs`.
pub(crate) fn find_program(
    name: &str,
    path: Option<OsString>,
    fallback_dirs: &[&str],
) -> Option<std::path::PathBuf> {
    let path_dirs = path
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    path_dirs
        .into_iter()
        .chain(fallback_dirs.iter().map(std::path::PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_is_found_on_the_path_then_in_the_fallback_dirs() {
        let root = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        };
        let install = |dir: &std::path::Path, mode: u32| {
            use std::os::unix::fs::PermissionsExt as _;
            let program = dir.join("tmux");
            std::fs::write(&program, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(mode)).unwrap();
            program
        };
        let (empty, not_executable, on_path, brew) =
            (dir("empty"), dir("plain"), dir("bin"), dir("brew"));
        install(&not_executable, 0o644);
        let on_path_tmux = install(&on_path, 0o755);
        let brew_tmux = install(&brew, 0o755);
        let brew_dirs = [brew.to_str().unwrap()];
        let path = |dirs: &[&std::path::Path]| Some(std::env::join_paths(dirs).unwrap());
        assert_eq!(
            find_program("tmux", path(&[&empty, &on_path]), &brew_dirs),
            Some(on_path_tmux)
        );
        assert_eq!(
            find_program("tmux", path(&[&empty, &not_executable]), &brew_dirs),
            Some(brew_tmux.clone())
        );
        assert_eq!(find_program("tmux", None, &brew_dirs), Some(brew_tmux));
        assert_eq!(find_program("tmux", path(&[&empty]), &[]), None);
    }
}
