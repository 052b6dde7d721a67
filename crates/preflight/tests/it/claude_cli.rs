//! Conformance of the preflight with the real Claude Code CLI (docs/preflight.md, "How agreement
//! is checked", point 2).
//!
//! Each case is a config dir, a working dir, a session id and a transcript state, in a dir of
//! its own under the test's temp dir. The preflight is asked first: the reachability of the
//! transcript path it derives from the working dir, and the full verdict for the held id. Then
//! the real CLI, installed by `cargo xtask claude-cli install`, is run on the case, offline:
//!
//! ```text
//! cd <working dir> && env -i PATH=$PATH HOME=<case>/home TMPDIR=<case>/tmp \
//!     CLAUDE_CONFIG_DIR=<case>/config ANTHROPIC_BASE_URL=http://127.0.0.1:<closed port> \
//!     ANTHROPIC_API_KEY=dummy CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
//!     CLAUDE_CODE_MAX_RETRIES=0 GIT_CEILING_DIRECTORIES=<case> \
//!     claude -p --resume <sid> "<probe>" </dev/null
//! ```
//!
//! What the CLI did is read from what it leaves behind, not from timing:
//! - resumed: it appends the probe prompt, as a `user` line of session `<sid>`, to the
//!   transcript it loaded; then it fails to reach the API (`API Error: Connection refused` on
//!   stdout) and, allowed no retries, exits 1 within a second or two (it is killed after a
//!   deadline, which only bounds a CLI that hangs);
//! - not found: `No conversation found with session ID: <sid>` on stderr, exit 1;
//! - failed: `Failed to resume session: ...` on stderr (for a directory: EISDIR), exit 1.
//!
//! When the transcript is not at the path derived from its working dir, the CLI does not stop
//! there: it looks for `<sid>.jsonl` in the project folders of the repository's other git
//! worktrees, then in every project folder, and resumes the one it finds if exactly one holds a
//! conversation. So that a wrong folder name cannot pass as right through that fallback, the
//! cases that check folder names put two decoy copies of the transcript in unrelated project
//! folders: the fallback then finds several and gives up, and only the CLI's own look-up by
//! folder name can resume.
//!
//! `-p` skips onboarding and trust prompts; nothing is pre-seeded in the config dir, and the
//! CLI writes nothing into `HOME`. A transcript line is a message for the CLI only with a
//! `message` object and a valid `timestamp` (measured: without either, or with
//! `isSidechain: true`, the line is not a conversation); the lines written here are shaped like
//! the CLI's own.

#![cfg(unix)]

use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use preflight::claude::{self, Reachability};
use preflight::{Input, Verdict};
use serde_json::{Value, json};
use test_support::claude_offline::{closed_port, offline_env};
use test_support::process::clean_command;
use test_support::transcript::{ClaudeLine, jsonl};

/// The prompt sent on resume: the line the CLI appends is found by it.
const PROBE: &str = "crash-resume conformance probe: reply with one word";

/// The CLI is killed after this long. Allowed no API retries, it exits on its own within a
/// second or two (up to fifteen on a heavily loaded machine); the deadline only bounds a CLI
/// that hangs.
const DEADLINE: Duration = Duration::from_secs(20);

/// The working dir of a case, relative to the case's dir, and where the CLI runs.
#[derive(Debug, Clone, Copy)]
enum Dir {
    /// A plain dir (it may be nested); the CLI runs in it.
    Plain(&'static str),
    /// The CLI runs in `work/sub`, a child of `work`.
    ChildOfWork,
    /// `link` is a symlink to `real`; the CLI runs in `link`.
    Symlink,
    /// `work`, deleted once its transcripts are written; the CLI runs in the home dir, where a
    /// restore starts it (`preflight::paths::start_dir`).
    Gone,
}

/// Where a transcript file is put.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// At the path the preflight derives from the working dir: `C/projects/<name(W')>/S.jsonl`.
    Derived,
    /// In the project folder named after `<case dir>/<this>`, taken as written (not resolved).
    FolderOf(&'static str),
}

/// What the transcript file holds.
#[derive(Debug, Clone, Copy)]
enum Transcript {
    /// One user line.
    UserLine,
    /// A user line, a file-history snapshot and the assistant's reply.
    Conversation,
    /// Nothing.
    Empty,
    /// Only a `file-history-snapshot` line.
    Bookkeeping,
    /// Only a `summary` line.
    Summary,
    /// Only the first half of a user line, as a crash mid-write leaves it.
    Torn,
    /// A conversation, then a torn line.
    ConversationThenTorn,
    /// Only an assistant line.
    AssistantOnly,
    /// A conversation whose lines name another session in `sessionId`.
    ForeignSessionId,
    /// A directory named `<sid>.jsonl`.
    Directory,
}

#[derive(Debug)]
struct Case {
    name: &'static str,
    dir: Dir,
    transcripts: &'static [(Place, Transcript)],
    /// Two decoy copies of the conversation in unrelated project folders (see the module doc).
    decoys: bool,
}

const fn case(name: &'static str, dir: Dir, transcripts: &'static [(Place, Transcript)]) -> Case {
    Case {
        name,
        dir,
        transcripts,
        decoys: false,
    }
}

/// A case that checks the folder name of `dir`: a conversation at the derived path, and decoys.
const fn named(name: &'static str, dir: Dir) -> Case {
    Case {
        name,
        dir,
        transcripts: &[(Place::Derived, Transcript::Conversation)],
        decoys: true,
    }
}

/// The dirs, in the case's dir, whose project folders hold the decoys.
const DECOY_DIRS: [&str; 2] = ["decoy-1", "decoy-2"];

/// `deeply_nested/` 20 times, then `repo`: a working dir whose folder name is past 200
/// characters, so it is cut and given a hash suffix.
const LONG: &str = "deeply_nested/deeply_nested/deeply_nested/deeply_nested/deeply_nested/\
deeply_nested/deeply_nested/deeply_nested/deeply_nested/deeply_nested/deeply_nested/\
deeply_nested/deeply_nested/deeply_nested/deeply_nested/deeply_nested/deeply_nested/\
deeply_nested/deeply_nested/deeply_nested/repo";

/// One case per row of the reachability tables of docs/preflight.md; then odd working dirs; then
/// what the CLI does when the transcript is not where the working dir says.
#[rustfmt::skip]
const CASES: &[Case] = {
    use Dir::{ChildOfWork, Plain, Symlink};
    use Place::{Derived, FolderOf};
    use Transcript::{
        AssistantOnly, Bookkeeping, Conversation, ConversationThenTorn, Directory, Empty,
        ForeignSessionId, Summary, Torn, UserLine,
    };
    &[
        case("user-line", Plain("work"), &[(Derived, UserLine)]),
        case("conversation", Plain("work"), &[(Derived, Conversation)]),
        case("no-file", Plain("work"), &[]),
        case("empty-file", Plain("work"), &[(Derived, Empty)]),
        case("bookkeeping-only", Plain("work"), &[(Derived, Bookkeeping)]),
        case("summary-only", Plain("work"), &[(Derived, Summary)]),
        case("torn-only", Plain("work"), &[(Derived, Torn)]),
        case("torn-last-line", Plain("work"), &[(Derived, ConversationThenTorn)]),
        case("assistant-only", Plain("work"), &[(Derived, AssistantOnly)]),
        case("foreign-session-id", Plain("work"), &[(Derived, ForeignSessionId)]),
        case("directory", Plain("work"), &[(Derived, Directory)]),
        case("other-project", Plain("work"), &[(FolderOf("elsewhere"), Conversation)]),
        case("child-dir", ChildOfWork, &[(FolderOf("work"), Conversation)]),
        named("symlink-resolved-name", Symlink),
        case("symlink-link-name", Symlink, &[(FolderOf("link"), Conversation)]),
        named("spaces", Plain("my project dir/with  two spaces")),
        named("dots", Plain(".hidden/app.v2.config/..x")),
        named("underscores", Plain("my_project/__init__")),
        named("non-ascii", Plain("café (old)@2~x")),
        named("emoji", Plain("😀/x😀y")),
        named("long-folder-name", Plain(LONG)),
        case("long-folder-name-directory", Plain(LONG), &[(Derived, Directory)]),
        case("other-project-twice", Plain("work"), &[(FolderOf("elsewhere"), Conversation), (FolderOf("elsewhere-too"), Conversation)]),
        case("bookkeeping-here-conversation-elsewhere", Plain("work"), &[(Derived, Bookkeeping), (FolderOf("elsewhere"), Conversation)]),
        case("directory-here-conversation-elsewhere", Plain("work"), &[(Derived, Directory), (FolderOf("elsewhere"), Conversation)]),
        case("working-dir-gone", Dir::Gone, &[(Derived, Conversation)]),
    ]
};

/// A case laid out on disk, with the preflight's answers taken before the CLI ran.
#[derive(Debug)]
struct Prepared {
    case: &'static Case,
    root: Utf8PathBuf,
    config: Utf8PathBuf,
    home: Utf8PathBuf,
    /// The working dir the preflight is asked about; the CLI runs in it unless it is gone.
    cwd: Utf8PathBuf,
    /// Where the CLI runs: `cwd`, or the home dir when `cwd` is gone.
    run_in: Utf8PathBuf,
    session: String,
    /// The transcript path the preflight derives from `cwd`.
    derived: Utf8PathBuf,
    /// The transcript the preflight says the CLI loads (`claude::locate`).
    located: Utf8PathBuf,
    reachability: Reachability,
    verdict: Verdict,
    verdict_session: Option<String>,
}

/// What the CLI did.
#[derive(Debug)]
enum Answer {
    /// It loaded this transcript and appended the probe to it.
    Resumed(Utf8PathBuf),
    NotFound,
    /// `Failed to resume session: ...`, the line it printed.
    Failed(String),
    /// None of the above: the CLI did something this test does not know.
    Unexplained,
}

#[derive(Debug)]
struct Run {
    answer: Answer,
    status: ExitStatus,
    /// Killed at the deadline.
    killed: bool,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

#[test]
fn preflight_agrees_with_the_real_cli() {
    let cli = installed_cli();
    let version = cli_version(&cli);
    let temp = tempfile::Builder::new()
        .prefix("claude-cli-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("create the test's temp dir");
    let base =
        Utf8PathBuf::from_path_buf(temp.path().canonicalize().expect("resolve the temp dir"))
            .expect("the temp dir is UTF-8");
    let prepared: Vec<Prepared> = CASES
        .iter()
        .enumerate()
        .map(|(index, case)| prepare(&base, index, case))
        .collect();
    let port = closed_port().expect("bind a loopback port");

    let started = Instant::now();
    let runs = run_all(&cli, &prepared, port);
    let wall = started.elapsed();

    let mut table = format!(
        "CLI {version}, {} cases in {:.1}s\n",
        prepared.len(),
        wall.as_secs_f64()
    );
    let header = [
        "case",
        "reachability",
        "preflight verdict",
        "CLI",
        "time",
        "agreement",
    ];
    row(&mut table, header.map(String::from));
    let mut failures = Vec::new();
    for (prepared, run) in prepared.iter().zip(&runs) {
        let problems = disagreements(prepared, run);
        let verdict = format!(
            "{:?} {}",
            prepared.verdict,
            prepared.verdict_session.as_deref().unwrap_or("-")
        );
        let agreement = if problems.is_empty() {
            "agree".to_string()
        } else {
            problems.join("; ")
        };
        row(
            &mut table,
            [
                prepared.case.name.to_string(),
                format!("{:?}", prepared.reachability),
                verdict,
                describe(prepared, &run.answer),
                format!("{:.1}s", run.elapsed.as_secs_f64()),
                agreement,
            ],
        );
        if !problems.is_empty() {
            failures.push(format!(
                "{}: {}\n  cwd: {}\n  derived transcript: {}\n  exit: {} after {:.1}s{}\n  stdout: {}\n  stderr: {}",
                prepared.case.name,
                problems.join("; "),
                prepared.cwd,
                prepared.derived,
                run.status,
                run.elapsed.as_secs_f64(),
                if run.killed { ", killed at the deadline" } else { "" },
                run.stdout.trim(),
                run.stderr.trim(),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "the preflight and the real CLI disagree on {} of {} cases\n\n{table}\n{}",
        failures.len(),
        prepared.len(),
        failures.join("\n\n")
    );
}

fn row(table: &mut String, cells: [String; 6]) {
    let [case, reachability, verdict, cli, time, agreement] = cells;
    // Writing to a String cannot fail.
    let _ = writeln!(
        table,
        "{case:<40} {reachability:<15} {verdict:<50} {cli:<32} {time:>5}  {agreement}"
    );
}

/// The executable `cargo xtask claude-cli install` links into the build dir.
fn installed_cli() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target dir");
    let cli = target
        .join("claude-code")
        .join(format!("claude{}", std::env::consts::EXE_SUFFIX));
    assert!(
        cli.is_file(),
        "the Claude Code CLI is not installed at {}: run `cargo xtask claude-cli install` \
         (`cargo xtask test` runs it first)",
        cli.display()
    );
    cli
}

fn cli_version(cli: &Path) -> String {
    let output = Command::new(cli)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", cli.display()));
    assert!(
        output.status.success(),
        "{} --version failed: {}; reinstall with `cargo xtask claude-cli install`",
        cli.display(),
        output.status
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn prepare(base: &Utf8Path, index: usize, case: &'static Case) -> Prepared {
    let root = base.join(case.name);
    let config = root.join("config");
    let home = root.join("home");
    for dir in [&config, &home, &root.join("tmp")] {
        create_dir(dir);
    }
    let cwd = match case.dir {
        Dir::Plain(relative) => {
            let cwd = root.join(relative);
            create_dir(&cwd);
            cwd
        }
        Dir::Gone => {
            let cwd = root.join("work");
            create_dir(&cwd);
            cwd
        }
        Dir::ChildOfWork => {
            let cwd = root.join("work").join("sub");
            create_dir(&cwd);
            cwd
        }
        Dir::Symlink => {
            create_dir(&root.join("real"));
            let link = root.join("link");
            std::os::unix::fs::symlink("real", &link).expect("create the symlink");
            link
        }
    };
    let session = format!("5e551010-0000-4000-8000-{index:012x}");
    let derived =
        preflight::claude_transcript_path(config.as_str(), cwd.as_str(), &session, Some(&home))
            .expect("a UUID is a file name");
    let resolved_cwd = claude::resolve_working_dir(cwd.as_str(), Some(&home));
    for (place, transcript) in case.transcripts {
        let path = match place {
            Place::Derived => derived.clone(),
            Place::FolderOf(relative) => {
                claude::project_dir(&config, &root.join(relative)).join(format!("{session}.jsonl"))
            }
        };
        write_transcript(&path, *transcript, &session, &resolved_cwd);
    }
    if case.decoys {
        for decoy in DECOY_DIRS {
            let path =
                claude::project_dir(&config, &root.join(decoy)).join(format!("{session}.jsonl"));
            write_transcript(&path, Transcript::Conversation, &session, &resolved_cwd);
        }
    }

    let run_in = match case.dir {
        Dir::Gone => {
            fs::remove_dir_all(&cwd).expect("delete the working dir");
            home.clone()
        }
        _ => cwd.clone(),
    };
    // Where the CLI looks first: the folder of the dir it runs in.
    let located = claude::locate(
        &config,
        &claude::project_dir(
            &config,
            &claude::resolve_working_dir(run_in.as_str(), Some(&home)),
        ),
        &session,
    );
    let reachability = located.reachability;
    let outcome = preflight::preflight(&Input {
        provider: Some("claude".into()),
        session: Some(session.clone()),
        cwd: Some(cwd.to_string()),
        config_dir: Some(config.to_string()),
        home: Some(home.clone()),
        ..Input::default()
    });
    Prepared {
        case,
        root,
        config,
        home,
        cwd,
        run_in,
        session,
        derived,
        located: located.path,
        reachability,
        verdict: outcome.verdict,
        verdict_session: outcome.session_id,
    }
}

fn create_dir(dir: &Utf8Path) {
    fs::create_dir_all(dir).unwrap_or_else(|error| panic!("cannot create {dir}: {error}"));
}

fn write_transcript(path: &Utf8Path, transcript: Transcript, session: &str, cwd: &Utf8Path) {
    create_dir(path.parent().expect("a transcript is in a project folder"));
    if let Transcript::Directory = transcript {
        create_dir(path);
        return;
    }
    let user_uuid = "0b7d2b0e-6a3c-4c55-9a51-3f0c1e7d9a01";
    let assistant_uuid = "0b7d2b0e-6a3c-4c55-9a51-3f0c1e7d9a02";
    let user = user_line(session, cwd, user_uuid);
    let snapshot = json!({
        "type": "file-history-snapshot",
        "messageId": user_uuid,
        "snapshot": {"messageId": user_uuid, "trackedFileBackups": {}, "timestamp": "2026-01-05T09:30:00.000Z"},
        "isSnapshotUpdate": false,
    });
    let assistant = assistant_line(session, cwd, assistant_uuid, Some(user_uuid));
    let conversation = [user.clone(), snapshot.clone(), assistant];
    let torn = {
        let whole = user.to_string();
        whole.as_bytes()[..whole.len() / 2].to_vec()
    };
    let bytes = match transcript {
        Transcript::UserLine => jsonl(&[user]),
        Transcript::Conversation => jsonl(&conversation),
        Transcript::Empty => Vec::new(),
        Transcript::Bookkeeping => jsonl(&[snapshot]),
        Transcript::Summary => jsonl(&[json!({
            "type": "summary",
            "summary": "Summarising the README",
            "leafUuid": assistant_uuid,
        })]),
        Transcript::Torn => torn,
        Transcript::ConversationThenTorn => [jsonl(&conversation), torn].concat(),
        Transcript::AssistantOnly => jsonl(&[assistant_line(session, cwd, assistant_uuid, None)]),
        Transcript::ForeignSessionId => {
            let other = "0ddba11e-0000-4000-8000-000000000000";
            jsonl(&[
                user_line(other, cwd, user_uuid),
                assistant_line(other, cwd, assistant_uuid, Some(user_uuid)),
            ])
        }
        Transcript::Directory => unreachable!("handled above"),
    };
    fs::write(path, bytes).unwrap_or_else(|error| panic!("cannot write {path}: {error}"));
}

/// A user line as the CLI writes it.
fn user_line(session: &str, cwd: &Utf8Path, uuid: &str) -> Value {
    ClaudeLine {
        session,
        cwd: cwd.as_std_path(),
        uuid,
        parent: None,
        timestamp: "2026-01-05T09:30:00.000Z",
    }
    .user("Summarise the README in one sentence.")
}

/// An assistant line as the CLI writes it.
fn assistant_line(session: &str, cwd: &Utf8Path, uuid: &str, parent: Option<&str>) -> Value {
    let mut line = ClaudeLine {
        session,
        cwd: cwd.as_std_path(),
        uuid,
        parent,
        timestamp: "2026-01-05T09:30:02.000Z",
    }
    .assistant(
        "msg_01XFDUDYJgAACzvnptvVoYEL",
        "The README explains how to resume a crashed pane.",
    );
    line["requestId"] = json!("req_011CUzN8ZqyJ3Xqg2oEwXr5T");
    line
}

/// Runs the CLI on every case, a few at a time.
fn run_all(cli: &Path, prepared: &[Prepared], port: u16) -> Vec<Run> {
    let workers = std::thread::available_parallelism().map_or(2, |count| count.get().clamp(2, 4));
    let next = AtomicUsize::new(0);
    let runs: Mutex<Vec<Option<Run>>> = Mutex::new(prepared.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = prepared.get(index) else {
                        break;
                    };
                    let run = run_cli(cli, case, port);
                    runs.lock().expect("no worker panicked")[index] = Some(run);
                }
            });
        }
    });
    runs.into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|run| run.expect("every case ran"))
        .collect()
}

fn run_cli(cli: &Path, case: &Prepared, port: u16) -> Run {
    let stdout_path = case.root.join("cli.stdout");
    let stdout_file = fs::File::create(&stdout_path)
        .unwrap_or_else(|error| panic!("cannot create {stdout_path}: {error}"));
    let started = Instant::now();
    let mut child = clean_command(cli)
        .args(["-p", "--resume", &case.session, PROBE])
        .current_dir(&case.run_in)
        .env("PWD", &case.run_in)
        .env("HOME", &case.home)
        .env("TMPDIR", case.root.join("tmp"))
        .env("CLAUDE_CONFIG_DIR", &case.config)
        .envs(offline_env(port))
        // Git, when the CLI runs it, does not look past the case's dir into this checkout.
        .env("GIT_CEILING_DIRECTORIES", &case.root)
        .stdin(Stdio::null())
        .stdout(stdout_file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", cli.display()));
    // The end of stderr is the CLI's exit: the event the deadline bounds.
    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr_pipe.read_to_end(&mut bytes);
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    let (stderr, killed) = match receiver.recv_timeout(DEADLINE) {
        Ok(stderr) => (stderr, false),
        Err(_) => {
            let _ = child.kill();
            (
                receiver
                    .recv_timeout(Duration::from_secs(1))
                    .unwrap_or_default(),
                true,
            )
        }
    };
    let status = child
        .wait()
        .unwrap_or_else(|error| panic!("cannot wait for {}: {error}", cli.display()));
    let elapsed = started.elapsed();
    let stdout = fs::read_to_string(&stdout_path).unwrap_or_default();
    let answer = read_answer(case, &stderr);
    Run {
        answer,
        status,
        killed,
        stdout,
        stderr,
        elapsed,
    }
}

/// Reads what the CLI did from what it left in the config dir and printed.
fn read_answer(case: &Prepared, stderr: &str) -> Answer {
    let projects = case.config.join("projects");
    let folders: Vec<Utf8PathBuf> = match projects.read_dir_utf8() {
        Ok(listing) => listing
            .flatten()
            .map(|entry| entry.into_path())
            .filter(|path| path.is_dir())
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut probed: Vec<Utf8PathBuf> = folders
        .iter()
        .flat_map(|folder| folder.read_dir_utf8().into_iter().flatten().flatten())
        .map(|entry| entry.into_path())
        .filter(|path| path.extension() == Some("jsonl") && holds_probe(path, &case.session))
        .collect();
    if let Some(transcript) = probed.pop() {
        assert!(
            probed.is_empty(),
            "{}: the CLI appended the probe to more than one transcript",
            case.case.name
        );
        return Answer::Resumed(transcript);
    }
    if stderr.contains(&format!(
        "No conversation found with session ID: {}",
        case.session
    )) {
        return Answer::NotFound;
    }
    match stderr
        .lines()
        .find(|line| line.starts_with("Failed to resume session"))
    {
        Some(line) => Answer::Failed(line.to_string()),
        None => Answer::Unexplained,
    }
}

/// Whether the transcript holds the probe as a user line of `session`.
fn holds_probe(path: &Utf8Path, session: &str) -> bool {
    let Ok(text) = fs::read_to_string(path) else {
        return false;
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .any(|line| {
            line["type"] == "user"
                && line["sessionId"] == session
                && line["message"]["content"] == PROBE
        })
}

/// Where the preflight and the CLI part ways on one case; empty when they agree.
fn disagreements(prepared: &Prepared, run: &Run) -> Vec<String> {
    let reachable = prepared.reachability.is_reachable();
    let resumed = match &run.answer {
        Answer::Resumed(_) => true,
        Answer::NotFound | Answer::Failed(_) => false,
        Answer::Unexplained => return vec!["the CLI's answer is none this test knows".into()],
    };
    let mut problems = Vec::new();
    if matches!(prepared.case.dir, Dir::Gone) && !resumed {
        // Measured with 2.1.328: started in the home dir, the CLI finds a UUID's transcript in
        // the folder of the dir that is gone.
        problems.push("the CLI did not resume a UUID whose working dir is gone".into());
    }
    if resumed != reachable {
        problems.push(format!(
            "reachability says {}, the CLI {}",
            if reachable {
                "reachable"
            } else {
                "unreachable"
            },
            if resumed { "resumed" } else { "did not resume" }
        ));
    }
    if let Answer::Resumed(transcript) = &run.answer
        && reachable
        && *transcript != prepared.located
    {
        problems.push(format!(
            "the CLI resumed {transcript}, not {} as the preflight says",
            prepared.located
        ));
    }
    let directory = prepared.reachability == Reachability::Directory;
    if directory != matches!(run.answer, Answer::Failed(_)) {
        problems.push("a directory at the derived path is what makes the CLI fail".into());
    }
    let expected = if resumed {
        (Verdict::Resume, Some(prepared.session.as_str()))
    } else {
        (Verdict::Fresh, None)
    };
    if (prepared.verdict, prepared.verdict_session.as_deref()) != expected {
        problems.push(format!(
            "the verdict is {:?}, but the spawn would {}",
            prepared.verdict,
            if resumed { "resume it" } else { "start fresh" }
        ));
    }
    problems
}

fn describe(prepared: &Prepared, answer: &Answer) -> String {
    match answer {
        Answer::Resumed(transcript) if *transcript == prepared.derived => "resumed".into(),
        Answer::Resumed(transcript) => {
            // Project folders of the case's dirs all start with the case dir's folder name.
            let folder = transcript
                .parent()
                .and_then(Utf8Path::file_name)
                .unwrap_or("?");
            let case_folder = claude::project_folder_name(prepared.root.as_str());
            let tail = folder.strip_prefix(&case_folder).unwrap_or(folder);
            format!("resumed from folder …{tail}")
        }
        Answer::NotFound => "not found".into(),
        Answer::Failed(line) if line.contains("EISDIR") => "failed: EISDIR".into(),
        Answer::Failed(_) => "failed to resume".into(),
        Answer::Unexplained => "unexplained".into(),
    }
}
