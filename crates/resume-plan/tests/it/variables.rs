//! The table of variables (`resume_plan::variables`) against the product's sources: every
//! variable a product source reads is listed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use resume_plan::variables;

/// Upper-case string literals in the product that are not environment variables.
const NOT_VARIABLES: [&str; 1] = [
    // `restore --max-age`'s value name.
    "MAX_AGE",
];

/// What a variable is read through, right before its name's literal.
const READS: [&str; 7] = [
    "env::var(\"",
    "env::var_os(\"",
    "env = \"",
    "get(\"",
    "own(\"",
    "var(\"",
    "lookup(\"",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The product's sources: each crate's `src` but the tests' own crate, without their unit
/// tests (`#[cfg(test)]` and what follows).
fn product_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let krate = entry.unwrap().path();
        if krate.file_name().is_some_and(|name| name == "test-support") {
            continue;
        }
        sources(&krate.join("src"), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let product = match text.find("#[cfg(test)]\nmod ") {
                Some(tests) => text[..tests].to_string(),
                None => text,
            };
            (path, product)
        })
        .collect()
}

fn is_name(word: &str, single_word: bool) -> bool {
    let upper = word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    upper && (single_word || (word.contains('_') && !word.ends_with('_')))
}

/// The variable names the product's sources read: every upper-case literal with an underscore
/// (a `NAME_LIKE_THIS`), and every upper-case literal passed to a read.
fn read_names() -> BTreeSet<(String, String)> {
    let mut names = BTreeSet::new();
    for (path, text) in product_sources() {
        let file = path
            .strip_prefix(workspace())
            .unwrap_or(&path)
            .display()
            .to_string();
        for (index, piece) in text.split('"').enumerate() {
            // Odd pieces are inside quotes (good enough for this code: no `"` in a variable).
            if index % 2 == 1 && is_name(piece, false) {
                names.insert((piece.to_string(), file.clone()));
            }
        }
        for read in READS {
            for (start, _) in text.match_indices(read) {
                let rest = &text[start + read.len()..];
                let word = rest.split('"').next().unwrap_or_default();
                if is_name(word, true) {
                    names.insert((word.to_string(), file.clone()));
                }
            }
        }
    }
    names
}

#[test]
fn every_variable_the_product_reads_is_in_the_table() {
    let listed: BTreeSet<&str> = variables::all()
        .iter()
        .map(|variable| variable.name)
        .collect();
    let read = read_names();
    let read_names: BTreeSet<&str> = read.iter().map(|(name, _)| name.as_str()).collect();
    // The scan finds what it must, so that it cannot pass by finding nothing.
    for name in [
        "KITTY_LISTEN_ON",
        "CMUX_SOCKET_PATH",
        "TMUX",
        "GEMINI_CLI_HOME",
        "QWEN_RUNTIME_DIR",
        "CRASH_RESUME_HOOK_RETRY",
        "NO_COLOR",
    ] {
        assert!(read_names.contains(name), "the scan misses {name}");
    }
    let unlisted: Vec<String> = read
        .iter()
        .filter(|(name, _)| {
            !listed.contains(name.as_str()) && !NOT_VARIABLES.contains(&name.as_str())
        })
        .map(|(name, file)| format!("{name} ({file})"))
        .collect();
    assert!(
        unlisted.is_empty(),
        "read but not in resume_plan::variables: {unlisted:?}"
    );
}

/// Whether `doc` names `name` as code (`` `NAME` ``, `` `NAME=...` ``, `` `$NAME...` ``).
fn names(doc: &str, name: &str) -> bool {
    [
        format!("`{name}`"),
        format!("`{name}="),
        format!("`${name}"),
    ]
    .iter()
    .any(|form| doc.contains(form.as_str()))
}

#[test]
fn the_docs_name_every_variable_of_the_table_where_its_owner_is_documented() {
    let doc = |file: &str| std::fs::read_to_string(workspace().join("docs").join(file)).unwrap();
    let (commands, agents, multiplexers) =
        (doc("commands.md"), doc("agents.md"), doc("multiplexers.md"));
    let mut missing = Vec::new();
    for variable in variables::all() {
        let (file, text) = match variable.owner {
            variables::Owner::CrashResume | variables::Owner::System => ("commands.md", &commands),
            variables::Owner::Agents(..) => ("agents.md", &agents),
            variables::Owner::Multiplexer(_) => ("multiplexers.md", &multiplexers),
        };
        if !names(text, variable.name) {
            missing.push(format!("{} (docs/{file})", variable.name));
        }
    }
    assert!(missing.is_empty(), "not named in the docs: {missing:?}");
}
