//! Loading launchers.toml from disk, in a throwaway dir.

use camino::Utf8PathBuf;
use launcher_map::{ConfigError, Registry, Target};

use crate::{S, check_in};

fn temp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = Utf8PathBuf::try_from(dir.path().to_path_buf()).unwrap();
    (dir, path)
}

#[test]
fn a_missing_file_is_the_builtin_registry() {
    let (_dir, path) = temp_dir();
    let registry = Registry::load(&path.join("launchers.toml")).unwrap();
    check_in(
        &registry,
        Target {
            cwd: Some("/w"),
            ..S
        },
        "cd /w && claude --resume s1",
    );
    assert_eq!(registry.profile(), None);
}

#[test]
fn a_file_is_read_and_applied() {
    let (_dir, path) = temp_dir();
    let file = path.join("launchers.toml");
    std::fs::write(
        &file,
        "profile = \"golems\"\n[repos.api]\ncommand = \"apiClaude --resume {session}\"\n",
    )
    .unwrap();
    let registry = Registry::load(&file).unwrap();
    assert_eq!(registry.profile(), Some("golems"));
    check_in(
        &registry,
        Target {
            repo: Some("api"),
            ..S
        },
        "apiClaude --resume s1",
    );
    check_in(
        &registry,
        Target {
            repo: Some("golems"),
            ..S
        },
        "golemsClaude --resume s1",
    );
}

#[test]
fn an_invalid_file_is_an_error_naming_it() {
    let (_dir, path) = temp_dir();
    let file = path.join("launchers.toml");
    std::fs::write(&file, "[repos.api]\ncommand = \"x {sesion}\"\n").unwrap();
    let error = Registry::load(&file).unwrap_err();
    assert!(
        matches!(&error, ConfigError::Template { path, .. } if *path == file),
        "{error:?}"
    );
    assert!(error.to_string().contains(file.as_str()), "{error}");
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let (_dir, path) = temp_dir();
    // A directory where the file should be cannot be read, even by root.
    let file = path.join("launchers.toml");
    std::fs::create_dir(&file).unwrap();
    let error = Registry::load(&file).unwrap_err();
    assert!(
        matches!(&error, ConfigError::Read { path, .. } if *path == file),
        "{error:?}"
    );
    assert!(error.to_string().contains(file.as_str()), "{error}");

    std::fs::write(path.join("not-utf8.toml"), b"profile = \"\xff\"").unwrap();
    let error = Registry::load(&path.join("not-utf8.toml")).unwrap_err();
    assert!(matches!(&error, ConfigError::Read { .. }), "{error:?}");
    assert!(error.to_string().contains("not-utf8.toml"), "{error}");
}
