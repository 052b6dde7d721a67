//! Integration tests of the launcher registry, through its public API only.

mod config;
mod golems;
mod load;
mod providers;
mod quoting;
mod start;

use camino::{Utf8Path, Utf8PathBuf};
use launcher_map::{Registry, RenderContext, RenderError, Target};

/// The home dir every test renders with; never the real one.
const HOME: &str = "/home/u";

/// A Claude session with nothing else known; tests fill in the rest with `..S`.
const S: Target<'static> = Target {
    agent: None,
    session: "s1",
    repo: None,
    cwd: None,
    config_dir: None,
    start: launcher_map::Start {
        args: &[],
        env: None,
        program: None,
    },
};

/// The path config errors name in these tests.
const ORIGIN: &str = "/cfg/crash-resume/launchers.toml";

fn cx() -> RenderContext {
    RenderContext {
        home: Some(Utf8PathBuf::from(HOME)),
    }
}

fn render_in(registry: &Registry, target: Target<'_>) -> Result<String, RenderError> {
    registry.render(&target, &cx())
}

/// Renders `target` with the built-in launchers.
fn check(target: Target<'_>, expected: &str) {
    check_in(&Registry::builtin(), target, expected);
}

fn check_in(registry: &Registry, target: Target<'_>, expected: &str) {
    let actual = render_in(registry, target).unwrap_or_else(|error| panic!("{target:?}: {error}"));
    assert_eq!(actual, expected, "{target:?}");
}

/// The built-in launchers with `text` applied as launchers.toml.
fn registry(text: &str) -> Registry {
    Registry::from_toml(text, Utf8Path::new(ORIGIN)).unwrap_or_else(|error| panic!("{error}"))
}
