//! The project-folder name vectors of `docs/preflight.md`, one line each.

use preflight::claude::project_folder_name;

fn check(path: &str, expected: &str) {
    assert_eq!(project_folder_name(path), expected, "path {path:?}");
}

#[test]
fn plain_paths() {
    check(
        "/home/u/.agentmux/agents/foo-bar",
        "-home-u--agentmux-agents-foo-bar",
    );
    check("/home/u/my_project dir", "-home-u-my-project-dir");
    check(
        "/Users/me/Library/Application Support/ai.x",
        "-Users-me-Library-Application-Support-ai-x",
    );
}

#[test]
fn windows_paths_and_punctuation() {
    check(r"C:\code\café (old)@2~x", "C--code-caf---old--2-x");
    check(r"\\server\share\repo", "--server-share-repo");
}

#[test]
fn a_character_outside_the_bmp_gives_two_dashes() {
    check("/x/😀y", "-x---y");
}

#[test]
fn two_hundred_characters_stay_whole() {
    let path = "a".repeat(200);
    check(&path, &path);
}

#[test]
fn longer_names_are_cut_and_hashed() {
    check(&"a".repeat(201), &format!("{}-rkvsv5", "a".repeat(200)));

    let nested = format!("/home/u/{}repo", "deeply_nested/".repeat(20));
    let dashed: String = nested
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    check(&nested, &format!("{}-fygn57", &dashed[..200]));

    let windows = format!(r"C:\Users\asafe\{}", "a".repeat(230));
    check(
        &windows,
        &format!("C--Users-asafe-{}-py1bvd", "a".repeat(185)),
    );
}
