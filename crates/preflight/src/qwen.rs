//! Qwen Code's layout, as 0.24 reads it when asked to `--resume <id>`.
//!
//! The config dir crash-resume records for Qwen Code is its `.qwen` dir itself: `$QWEN_HOME`
//! (`~` expanded, a relative value resolved against the working dir), else `~/.qwen`; when
//! `QWEN_HOME` is not in the environment, a `QWEN_HOME=` line of `~/.qwen/.env`, then of
//! `~/.env`, counts ([`config_dir`]). Its sessions live under the runtime dir
//! ([`runtime_dir`]): `QWEN_RUNTIME_DIR` (from the environment or those `.env` files), else the
//! setting `advanced.runtimeOutputDir` (resolved against the working dir), else the config dir.
//!
//! A session is `<runtime>/projects/<slug>/chats/<id>.jsonl`, one record per line; the slug is
//! the physical working dir (symlinks resolved) with every UTF-16 code unit outside
//! `[A-Za-z0-9]` replaced by `-` ([`slug`]). `--resume <id>` reads only that file (never the
//! `archive/` beside it), skips blank lines and lines it cannot parse (a line of several
//! objects glued together gives each), and loads the session only when the first object read
//! names the working dir as its `cwd` (so a slug shared by two dirs is told apart), the records
//! name one session, and one record of the conversation is there ([`reachability`]).
//! `chats/<id>.runtime.json` names the pid of the Qwen Code that runs the session
//! ([`live_holders`]); it is left behind by a quit and by a kill, so it counts only while its
//! pid is still that Qwen Code.

use std::fs;
use std::io::{BufRead, BufReader, Read};

use camino::{Utf8Path, Utf8PathBuf};
use safe_open::Symlinks;
use serde_json::{Map, Value};

/// Qwen Code's dir in the home dir when `QWEN_HOME` is unset.
pub const QWEN_DIR: &str = ".qwen";
/// The variable that names the config dir.
pub const HOME_VAR: &str = "QWEN_HOME";
/// The variable that names the runtime dir.
pub const RUNTIME_VAR: &str = "QWEN_RUNTIME_DIR";
/// A session file larger than this is read only this far: its first record and a
/// conversation record come long before.
pub const SESSION_BYTES: u64 = 64 << 20;
/// A settings, `.env` or `runtime.json` file larger than this is not read.
const SMALL_FILE_BYTES: u64 = 1 << 20;

/// Resolves a directory value as Qwen Code does (`Storage.resolvePath`): a leading `~` or `~/`
/// is the home dir, and a relative value is resolved against `cwd`.
pub fn resolve(value: &str, cwd: Option<&Utf8Path>, home: Option<&Utf8Path>) -> Utf8PathBuf {
    let expanded = match (value, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (value, Some(home)) if value.starts_with("~/") => {
            let rest = value[2..].split('/').filter(|part| !part.is_empty());
            rest.fold(home.to_path_buf(), |dir, part| dir.join(part))
        }
        (value, _) => Utf8PathBuf::from(value),
    };
    if expanded.is_absolute() {
        return normalize(&expanded);
    }
    match cwd {
        Some(cwd) => normalize(&cwd.join(expanded)),
        None => expanded,
    }
}

/// `.` and `..` components taken out, as Node's `path.resolve` does (without the disk).
fn normalize(path: &Utf8Path) -> Utf8PathBuf {
    let mut out = Utf8PathBuf::from("/");
    for part in path.components() {
        match part {
            camino::Utf8Component::ParentDir => {
                out.pop();
            }
            camino::Utf8Component::Normal(part) => out.push(part),
            _ => {}
        }
    }
    out
}

/// The variables Qwen Code takes from its home `.env` files when the environment lacks them:
/// `QWEN_HOME` and `QWEN_RUNTIME_DIR`, read from `<config dir>/.env`, then (only when
/// `QWEN_HOME` was not in the environment) from the `.env` in the config dir's parent; a
/// `QWEN_HOME` found there moves the config dir, whose `.env` is read last.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HomeEnv {
    /// `QWEN_HOME` as Qwen Code ends up with it, if set.
    pub qwen_home: Option<String>,
    /// `QWEN_RUNTIME_DIR` as Qwen Code ends up with it, if set.
    pub runtime_dir: Option<String>,
}

impl HomeEnv {
    /// What Qwen Code started with `qwen_home` and `runtime_dir` (the environment's values,
    /// `None` when unset or empty) sees after reading its `.env` files.
    pub fn read(
        qwen_home: Option<&str>,
        runtime_dir: Option<&str>,
        cwd: Option<&Utf8Path>,
        home: Option<&Utf8Path>,
    ) -> HomeEnv {
        let mut found = HomeEnv {
            qwen_home: qwen_home
                .filter(|value| !value.is_empty())
                .map(str::to_owned),
            runtime_dir: runtime_dir
                .filter(|value| !value.is_empty())
                .map(str::to_owned),
        };
        if found.qwen_home.is_some() && found.runtime_dir.is_some() {
            return found;
        }
        let initial = found.qwen_home.clone();
        let Some(initial_dir) = config_dir_of(initial.as_deref(), cwd, home) else {
            return found;
        };
        let mut files = vec![initial_dir.join(".env")];
        if initial.is_none()
            && let Some(parent) = initial_dir.parent()
        {
            files.push(parent.join(".env"));
        }
        for file in &files {
            found.take_from(file);
        }
        if found.qwen_home.is_some() && found.qwen_home != initial {
            let moved = config_dir_of(found.qwen_home.as_deref(), cwd, home);
            if let Some(moved) = moved.filter(|moved| *moved != initial_dir) {
                found.take_from(&moved.join(".env"));
            }
        }
        found
    }

    fn take_from(&mut self, file: &Utf8Path) {
        let Some(bytes) = read_small(file) else {
            return;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (key, value) in dotenv(&text) {
            let slot = match key.as_str() {
                HOME_VAR => &mut self.qwen_home,
                RUNTIME_VAR => &mut self.runtime_dir,
                _ => continue,
            };
            if slot.is_none() && !value.is_empty() {
                *slot = Some(value);
            }
        }
    }
}

/// The config dir for a `QWEN_HOME` value (`None`: unset): the value resolved, else `~/.qwen`.
fn config_dir_of(
    qwen_home: Option<&str>,
    cwd: Option<&Utf8Path>,
    home: Option<&Utf8Path>,
) -> Option<Utf8PathBuf> {
    match qwen_home {
        Some(value) => Some(resolve(value, cwd, home)),
        None => home.map(|home| home.join(QWEN_DIR)),
    }
}

/// The config dir Qwen Code runs with, given the environment's `QWEN_HOME` (`None` when unset)
/// and its `.env` files; `None` when it depends on a home dir that is not known.
pub fn config_dir(
    qwen_home: Option<&str>,
    cwd: Option<&Utf8Path>,
    home: Option<&Utf8Path>,
) -> Option<Utf8PathBuf> {
    let found = HomeEnv::read(qwen_home, None, cwd, home);
    config_dir_of(found.qwen_home.as_deref(), cwd, home)
}

/// The `KEY=value` pairs of a `.env` file as the dotenv package parses them: `export ` before a
/// key allowed, a value in single, double or back quotes taken as is (`\n` in double quotes is
/// a newline), an unquoted value ends at a `#` and is trimmed; other lines are skipped.
pub fn dotenv(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((key, value)) = line.split_once('=').or_else(|| line.split_once(':')) else {
            continue;
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        {
            continue;
        }
        let value = value.trim();
        let quoted = ['"', '\'', '`'].into_iter().find_map(|quote| {
            let rest = value.strip_prefix(quote)?;
            let end = rest.find(quote)?;
            let inner = &rest[..end];
            Some(match quote {
                '"' => inner.replace("\\n", "\n").replace("\\r", "\r"),
                _ => inner.to_string(),
            })
        });
        let value = quoted.unwrap_or_else(|| match value.find('#') {
            Some(end) => value[..end].trim().to_string(),
            None => value.to_string(),
        });
        pairs.push((key.to_string(), value));
    }
    pairs
}

/// The runtime dir that holds the sessions of `config_dir` for a Qwen Code started in `cwd`:
/// `runtime_var` (`QWEN_RUNTIME_DIR`, from the environment or the `.env` files), else the user
/// setting `advanced.runtimeOutputDir` in `<config dir>/settings.json`, else the config dir.
pub fn runtime_dir(
    config_dir: &Utf8Path,
    runtime_var: Option<&str>,
    cwd: Option<&Utf8Path>,
    home: Option<&Utf8Path>,
) -> Utf8PathBuf {
    // The default config dir's parent `.env` is read too, as when `QWEN_HOME` is unset.
    let is_default = home.is_some_and(|home| config_dir == home.join(QWEN_DIR));
    let qwen_home = (!is_default).then_some(config_dir.as_str());
    let home_env = HomeEnv::read(qwen_home, runtime_var, cwd, home);
    if let Some(dir) = home_env.runtime_dir {
        return resolve(&dir, cwd, home);
    }
    let setting = read_settings(&config_dir.join("settings.json")).and_then(|settings| {
        Some(
            settings
                .get("advanced")?
                .get("runtimeOutputDir")?
                .as_str()?
                .to_owned(),
        )
    });
    match setting.filter(|dir| !dir.is_empty()) {
        Some(dir) => resolve(&dir, cwd, home),
        None => config_dir.to_path_buf(),
    }
}

/// A `settings.json`, read with its `//` and `/* */` comments stripped.
fn read_settings(path: &Utf8Path) -> Option<Value> {
    let bytes = read_small(path)?;
    serde_json::from_reader(json_comments::CommentSettings::c_style().strip_comments(&bytes[..]))
        .ok()
}

fn read_small(path: &Utf8Path) -> Option<Vec<u8>> {
    let part = safe_open::read_head(path.as_std_path(), Symlinks::Follow, SMALL_FILE_BYTES).ok()?;
    part.is_whole().then_some(part.bytes)
}

/// The working dir as Qwen Code sees it started there: `~` expanded, symlinks resolved (its
/// `process.cwd()` is the physical dir); as given when it cannot be resolved.
pub fn physical_dir(cwd: &str, home: Option<&Utf8Path>) -> Utf8PathBuf {
    let expanded = agent_paths::expand_home(cwd, home);
    fs::canonicalize(&expanded)
        .ok()
        .and_then(|path| Utf8PathBuf::from_path_buf(path).ok())
        .unwrap_or(expanded)
}

/// The project's folder name: every UTF-16 code unit of `cwd` outside `[A-Za-z0-9]` replaced by
/// `-` (a character outside the Basic Multilingual Plane, such as an emoji, gives two).
pub fn slug(cwd: &str) -> String {
    cwd.chars()
        .flat_map(|c| {
            let dashes = if c.is_ascii_alphanumeric() {
                0
            } else {
                c.len_utf16()
            };
            let keep = (dashes == 0).then_some(c);
            keep.into_iter().chain(std::iter::repeat_n('-', dashes))
        })
        .collect()
}

/// `<runtime>/projects/<slug of cwd>/chats`.
pub fn chats_dir(runtime: &Utf8Path, cwd: &Utf8Path) -> Utf8PathBuf {
    runtime
        .join("projects")
        .join(slug(cwd.as_str()))
        .join("chats")
}

/// Whether `session` can name a file in the chats dir (Qwen Code's `SESSION_FILE_PATTERN` is
/// stricter still; an id with a separator or a `..` never names a file there).
pub fn is_file_name_safe(session: &str) -> bool {
    !session.is_empty() && session != "." && session != ".." && !session.contains(['/', '\\', '\0'])
}

/// What a session file holds, as `--resume` judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reachability {
    /// It loads.
    Reachable,
    /// No file there (an archived session's included: only the active file is read).
    Missing,
    /// Not a regular file, or not readable.
    Unreadable,
    /// No object could be read from it.
    Empty,
    /// Its first record names another working dir (a slug collision, or another project's).
    OtherDir,
    /// Its records name more than one session.
    MixedSessions,
    /// No record of a conversation.
    NoConversation,
}

impl Reachability {
    /// Whether `--resume` loads it.
    pub fn is_reachable(self) -> bool {
        self == Reachability::Reachable
    }

    /// Words for a step's detail.
    pub fn describe(self) -> &'static str {
        match self {
            Reachability::Reachable => "holds a conversation",
            Reachability::Missing => "no session file there",
            Reachability::Unreadable => "not a regular file you can read",
            Reachability::Empty => "no record can be read from it",
            Reachability::OtherDir => "its first record names another working dir",
            Reachability::MixedSessions => "its records name more than one session",
            Reachability::NoConversation => "no message of a conversation in it",
        }
    }
}

/// Where one session was looked for and what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// `<chats>/<id>.jsonl`.
    pub path: Utf8PathBuf,
    /// What `--resume` makes of it.
    pub reachability: Reachability,
}

/// `session` in `chats`, for a Qwen Code started in `cwd` (physical).
pub fn locate(chats: &Utf8Path, cwd: &Utf8Path, session: &str) -> Located {
    let path = chats.join(format!("{session}.jsonl"));
    if !is_file_name_safe(session) {
        return Located {
            path,
            reachability: Reachability::Missing,
        };
    }
    let reachability = reachability(&path, cwd, &|| runtime_status_dir(chats, session));
    Located { path, reachability }
}

/// The `work_dir` of `<chats>/<session>.runtime.json` when it names `session`.
fn runtime_status_dir(chats: &Utf8Path, session: &str) -> Option<String> {
    let status = read_runtime_status(&chats.join(format!("{session}.runtime.json")))?;
    (status.session_id == session).then_some(status.work_dir)
}

/// Judges the session file at `path` as `--resume` from `cwd` does; `status_dir` gives the
/// `work_dir` of the session's `runtime.json`, which vouches for a first record that names
/// another dir.
pub fn reachability(
    path: &Utf8Path,
    cwd: &Utf8Path,
    status_dir: &dyn Fn() -> Option<String>,
) -> Reachability {
    let file = match safe_open::open_read(path.as_std_path(), Symlinks::Follow) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return match fs::symlink_metadata(path) {
                Ok(_) => Reachability::Unreadable,
                Err(_) => Reachability::Missing,
            };
        }
        Err(_) => return Reachability::Unreadable,
    };
    let mut reader = BufReader::new(file.take(SESSION_BYTES));
    let mut first: Option<Map<String, Value>> = None;
    let mut session: Option<String> = None;
    let mut conversation = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => return Reachability::Unreadable,
        }
        let text = String::from_utf8_lossy(&line);
        for object in parse_line(text.trim()) {
            let Value::Object(record) = object else {
                continue;
            };
            if let Some(id) = valid_record_session(&record) {
                match &session {
                    Some(seen) if *seen != id => return Reachability::MixedSessions,
                    Some(_) => {}
                    None => session = Some(id.to_owned()),
                }
                conversation |= is_conversation_record(&record);
            }
            if first.is_none() {
                first = Some(record);
            }
        }
    }
    let Some(first) = first else {
        return Reachability::Empty;
    };
    if !belongs_to(&first, cwd, status_dir) {
        return Reachability::OtherDir;
    }
    match conversation {
        true => Reachability::Reachable,
        false => Reachability::NoConversation,
    }
}

/// Whether the first record's session belongs to `cwd` (`sessionBelongsToCurrentProject`): its
/// `cwd` is the dir, or a worktree of it (`<dir>/.qwen/worktrees/...`), or the session's
/// `runtime.json` names the dir.
fn belongs_to(
    first: &Map<String, Value>,
    cwd: &Utf8Path,
    status_dir: &dyn Fn() -> Option<String>,
) -> bool {
    let Some(recorded) = first.get("cwd").and_then(Value::as_str) else {
        return false;
    };
    if recorded == cwd.as_str() {
        return true;
    }
    if let Some(at) = recorded.rfind("/.qwen/worktrees/")
        && at > 0
        && recorded[..at] == *cwd.as_str()
    {
        return true;
    }
    status_dir().is_some_and(|dir| dir == cwd.as_str())
}

/// The objects of one line, as `parseLineTolerant` reads them: the line's JSON value, else each
/// `{...}` at the top level of a line that does not parse whole.
fn parse_line(line: &str) -> Vec<Value> {
    if line.is_empty() {
        return Vec::new();
    }
    if let Ok(value) = serde_json::from_str::<Value>(line) {
        return match value {
            Value::Object(_) => vec![value],
            _ => Vec::new(),
        };
    }
    let mut found = Vec::new();
    let (mut depth, mut in_string, mut escape, mut start) = (0usize, false, false, None);
    for (at, c) in line.char_indices() {
        if escape {
            escape = false;
            continue;
        }
        if in_string {
            match c {
                '\\' => escape = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => {
                if depth == 0 {
                    start = Some(at);
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0
                    && let Some(from) = start.take()
                    && let Ok(value) = serde_json::from_str::<Value>(&line[from..=at])
                {
                    found.push(value);
                }
            }
            '}' => start = None,
            _ => {}
        }
    }
    found
}

/// The session of a record Qwen Code keeps (`validateTranscriptRecord`): a non-empty `uuid`,
/// a `parentUuid` that is a string or null, a non-empty `sessionId`, and a known `type`.
fn valid_record_session(record: &Map<String, Value>) -> Option<&str> {
    let uuid = record.get("uuid")?.as_str()?;
    let parent_ok = matches!(
        record.get("parentUuid"),
        Some(Value::String(_) | Value::Null)
    );
    let session = record.get("sessionId")?.as_str()?;
    let kind = record.get("type")?.as_str()?;
    let known = matches!(kind, "user" | "assistant" | "tool_result" | "system");
    (!uuid.is_empty() && parent_ok && !session.is_empty() && known).then_some(session)
}

/// Whether a kept record is one of the conversation (the chain a resume walks starts at the
/// last such): not an artifact or bookkeeping `system` record.
fn is_conversation_record(record: &Map<String, Value>) -> bool {
    let subtype = record.get("subtype").and_then(Value::as_str);
    let bookkeeping = matches!(
        subtype,
        Some(
            "session_artifact_event"
                | "session_artifact_snapshot"
                | "session_sources_snapshot"
                | "managed_session_header_v1"
                | "managed_session_event_v1"
                | "managed_session_commit_v1"
        )
    );
    !(record.get("type").and_then(Value::as_str) == Some("system") && bookkeeping)
}

/// `chats/<id>.runtime.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeStatus {
    /// The pid of the Qwen Code that wrote it.
    pub pid: u32,
    /// Its session.
    pub session_id: String,
    /// Its working dir.
    pub work_dir: String,
}

fn read_runtime_status(path: &Utf8Path) -> Option<RuntimeStatus> {
    let value: Value = serde_json::from_slice(&read_small(path)?).ok()?;
    Some(RuntimeStatus {
        pid: u32::try_from(value.get("pid")?.as_u64()?).ok()?,
        session_id: value.get("session_id")?.as_str()?.to_owned(),
        work_dir: value.get("work_dir")?.as_str()?.to_owned(),
    })
}

/// The sessions of `chats` held by running Qwen Code processes, as `(session, pid)`: a
/// `<id>.runtime.json` counts only while its pid runs Qwen Code and started before the file
/// was written ([`proc_table::Snapshot::holds_since`]): a quit or a kill leaves it behind.
pub fn live_holders(chats: &Utf8Path, processes: &proc_table::Snapshot) -> Vec<(String, u32)> {
    let Ok(listing) = fs::read_dir(chats) else {
        return Vec::new();
    };
    listing
        .flatten()
        .filter_map(|item| {
            let name = item.file_name().into_string().ok()?;
            let session = name.strip_suffix(".runtime.json")?;
            let path = Utf8PathBuf::from_path_buf(item.path()).ok()?;
            let status = read_runtime_status(&path)?;
            let written = fs::symlink_metadata(&path).ok()?.modified().ok()?;
            (status.session_id == session && holds_since(processes, status.pid, written))
                .then_some((status.session_id, status.pid))
        })
        .collect()
}

/// Whether `pid` is a Qwen Code process that started before `written` (within
/// [`proc_table::START_SLACK`]). The pid a `runtime.json` names is not the `qwen` launcher's but
/// that of the Node process it starts, `node --expose-gc <package>/cli.js`: either counts.
fn holds_since(processes: &proc_table::Snapshot, pid: u32, written: std::time::SystemTime) -> bool {
    processes.holds_since(pid, "qwen", written)
        || processes.process(pid).is_some_and(|process| {
            is_qwen_worker(&process.command_line)
                && process
                    .started
                    .is_some_and(|started| started <= written + proc_table::START_SLACK)
        })
}

/// Whether a command line is Node running Qwen Code's `cli.js` (its first word after the
/// options of `node`).
fn is_qwen_worker(words: &[std::ffi::OsString]) -> bool {
    let Some((program, rest)) = words.split_first() else {
        return false;
    };
    let program = program.to_string_lossy();
    let base = program.rsplit('/').next().unwrap_or(&program);
    if !matches!(base, "node" | "nodejs") {
        return false;
    }
    rest.iter()
        .map(|word| word.to_string_lossy())
        .find(|word| !word.starts_with('-'))
        .is_some_and(|script| script.ends_with("/qwen-code/cli.js"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_replace_each_utf16_unit() {
        let check = |cwd: &str, expected: &str| assert_eq!(slug(cwd), expected, "{cwd}");
        check("/tmp/qwen-cli/m1/work", "-tmp-qwen-cli-m1-work");
        check("/w/x-y", "-w-x-y");
        check("/w/x/y", "-w-x-y");
        check("/w/café", "-w-caf-");
        check("/w/🦀", "-w---");
        check("/w/A_9", "-w-A-9");
    }

    #[test]
    fn values_resolve_as_storage_resolve_path() {
        let home = Some(Utf8Path::new("/home/u"));
        let cwd = Some(Utf8Path::new("/w/p"));
        let check = |value: &str, expected: &str| {
            assert_eq!(resolve(value, cwd, home), expected, "{value}");
        };
        check("~", "/home/u");
        check("~/q", "/home/u/q");
        check("~//q/", "/home/u/q");
        check("q", "/w/p/q");
        check("../q", "/w/q");
        check("/abs/./q/", "/abs/q");
        check("~bob", "/w/p/~bob");
    }

    #[test]
    fn dotenv_lines_parse_as_the_dotenv_package_does() {
        let pairs = dotenv(
            "# comment\nQWEN_HOME=/a\nexport QWEN_RUNTIME_DIR = \"/b c\" \nX='y' # z\nY=v#c\n\
             bad line\nZ=\n",
        );
        assert_eq!(
            pairs,
            [
                ("QWEN_HOME", "/a"),
                ("QWEN_RUNTIME_DIR", "/b c"),
                ("X", "y"),
                ("Y", "v"),
                ("Z", ""),
            ]
            .map(|(key, value)| (key.to_string(), value.to_string()))
        );
    }

    #[test]
    fn the_node_process_of_qwen_code_is_qwen_code() {
        let words = |line: &str| -> Vec<std::ffi::OsString> {
            line.split(' ').map(std::ffi::OsString::from).collect()
        };
        let cli = "/p/node_modules/@qwen-code/qwen-code/cli.js";
        assert!(is_qwen_worker(&words(&format!(
            "/usr/bin/node --expose-gc {cli}"
        ))));
        assert!(is_qwen_worker(&words(&format!("node {cli} --resume x"))));
        assert!(!is_qwen_worker(&words(&format!("sh {cli}"))));
        assert!(!is_qwen_worker(&words(&format!("node other.js {cli}"))));
        assert!(!is_qwen_worker(&words("node /p/gemini-cli/cli.js")));
    }

    #[test]
    fn glued_and_torn_lines_give_their_whole_objects() {
        assert_eq!(parse_line(r#"{"a":1}{"b":"}{"}"#).len(), 2);
        assert_eq!(parse_line(r#"{"a":1"#).len(), 0);
        assert_eq!(parse_line(r#"[1]"#).len(), 0);
        assert_eq!(parse_line(r#"xx{"a":{"b":2}} tail"#).len(), 1);
    }
}
