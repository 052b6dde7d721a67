//! The preflight at scale: a project folder with 10, 1,000 and 10,000 transcripts; the
//! reachability of one session; the recovery scan; following a `continued-in` chain. For Codex:
//! a `$CODEX_HOME` with as many sessions, looked up through the `state_5.sqlite` row (read-only)
//! and, without the database, by the search through the date folders. For Gemini: a project
//! with as many session files (each read and replayed), and one session of as many messages.

use std::hint::black_box;

use camino::{Utf8Path, Utf8PathBuf};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use preflight::{Input, claude, codex, preflight};

const USER: &str = r#"{"parentUuid":null,"type":"user","message":{"role":"user","content":"fix the failing test in the parser"},"uuid":"9b1d","timestamp":"2026-11-30T10:00:00.000Z"}"#;

fn sizes() -> Vec<usize> {
    if std::env::args().any(|arg| arg == "--bench") {
        vec![10, 1_000, 10_000]
    } else {
        vec![10]
    }
}

struct Folder {
    config: Utf8PathBuf,
    cwd: Utf8PathBuf,
    project: Utf8PathBuf,
}

fn folder(root: &Utf8Path, size: usize) -> Folder {
    let config = root.join(format!("config-{size}"));
    let cwd = root.join(format!("work-{size}"));
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd = cwd.canonicalize_utf8().unwrap();
    let project = claude::project_dir(&config, &cwd);
    std::fs::create_dir_all(&project).unwrap();
    for n in 0..size {
        let lines = 1 + n % 7;
        std::fs::write(
            project.join(format!("session-{n:05}.jsonl")),
            format!("{USER}\n").repeat(lines),
        )
        .unwrap();
    }
    // A chain of eight sessions, each continued in the next.
    for n in 0..8 {
        let text = format!(
            "{USER}\n{{\"type\":\"system\",\"continuedInSessionId\":\"chain-{}\"}}\n",
            n + 1
        );
        std::fs::write(project.join(format!("chain-{n}.jsonl")), text).unwrap();
    }
    std::fs::write(project.join("chain-8.jsonl"), format!("{USER}\n")).unwrap();
    Folder {
        config,
        cwd,
        project,
    }
}

fn input(folder: &Folder, held: &str) -> Input {
    Input {
        agent: Some("claude".into()),
        session: Some(held.into()),
        cwd: Some(folder.cwd.to_string()),
        config_dir: Some(folder.config.to_string()),
        ..Input::default()
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::Builder::new()
        .prefix("preflight-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    for size in sizes() {
        let folder = folder(&root, size);
        let mut group = c.benchmark_group("preflight");
        group.bench_with_input(
            BenchmarkId::new("resume (held id reachable)", size),
            &folder,
            |b, folder| {
                let input = input(folder, "session-00003");
                b.iter(|| black_box(preflight(black_box(&input))))
            },
        );
        group.bench_with_input(
            BenchmarkId::new("recover (held id missing, scan)", size),
            &folder,
            |b, folder| {
                let input = input(folder, "gone");
                b.iter(|| black_box(preflight(black_box(&input))))
            },
        );
        group.bench_with_input(
            BenchmarkId::new("reachability of one session", size),
            &folder,
            |b, folder| {
                let path = folder.project.join("session-00003.jsonl");
                b.iter(|| black_box(claude::reachability(black_box(&path))))
            },
        );
        group.bench_with_input(
            BenchmarkId::new("recovery scan", size),
            &folder,
            |b, folder| {
                b.iter(|| {
                    black_box(claude::largest_reachable(&folder.project, |id| {
                        id == "gone"
                    }))
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("continued-in chain of 8", size),
            &folder,
            |b, folder| {
                let input = input(folder, "chain-0");
                b.iter(|| black_box(preflight(black_box(&input))))
            },
        );
        group.finish();
    }
}

const META: &str = r#"{"timestamp":"2026-12-01T07:40:15.000Z","type":"session_meta","payload":{"cwd":"/w","cli_version":"0.171.0"}}"#;

/// A Codex home with `size` sessions over 30 date folders, each with its `threads` row, and a
/// copy of the rollouts without the database.
fn codex_homes(root: &Utf8Path, size: usize) -> (Utf8PathBuf, Utf8PathBuf) {
    let with_db = root.join(format!("codex-{size}"));
    let without_db = root.join(format!("codex-nodb-{size}"));
    std::fs::create_dir_all(&with_db).unwrap();
    let db = rusqlite::Connection::open(with_db.join(codex::STATE_DB).as_std_path()).unwrap();
    db.pragma_update(None, "journal_mode", "wal").unwrap();
    db.execute_batch(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, \
         cwd TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0); BEGIN",
    )
    .unwrap();
    for n in 0..size {
        let session = format!("01a2308c-0000-7000-8000-{n:012}");
        let day = format!("2026/11/{:02}", 1 + n % 30);
        let name = format!("rollout-2026-11-01T00-00-00-{session}.jsonl");
        for home in [&with_db, &without_db] {
            let dir = home.join("sessions").join(&day);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(&name), format!("{META}\n")).unwrap();
        }
        let path = with_db.join("sessions").join(&day).join(&name);
        db.execute(
            "INSERT INTO threads (id, rollout_path, cwd) VALUES (?1, ?2, '/w')",
            [session.as_str(), path.as_str()],
        )
        .unwrap();
    }
    db.execute_batch("COMMIT").unwrap();
    (with_db, without_db)
}

fn bench_codex(c: &mut Criterion) {
    let dir = tempfile::Builder::new()
        .prefix("preflight-bench-codex-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    for size in sizes() {
        let (with_db, without_db) = codex_homes(&root, size);
        // The oldest session: the search, newest folder first, reaches it last.
        let session = "01a2308c-0000-7000-8000-000000000000";
        let mut group = c.benchmark_group("preflight codex");
        group.bench_with_input(
            BenchmarkId::new("locate through the state_5.sqlite row", size),
            &with_db,
            |b, home| b.iter(|| black_box(codex::locate(black_box(home), session))),
        );
        group.bench_with_input(
            BenchmarkId::new("locate by the search (no database)", size),
            &without_db,
            |b, home| b.iter(|| black_box(codex::locate(black_box(home), session))),
        );
        group.finish();
    }
}

/// A Gemini home (the dir holding `.gemini`) for the project `work`: `files` session files of
/// three messages each, the first one with `messages` more; returns the home, the work dir and
/// the first session's id.
fn gemini_home(
    root: &Utf8Path,
    files: usize,
    messages: usize,
) -> (Utf8PathBuf, Utf8PathBuf, String) {
    let home = root.join(format!("gemini-{files}-{messages}"));
    let work = home.join("work");
    let chats = home.join(".gemini/tmp/work/chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize_utf8().unwrap();
    std::fs::write(
        home.join(".gemini/projects.json"),
        serde_json::json!({ "projects": { work.as_str(): "work" } }).to_string(),
    )
    .unwrap();
    std::fs::write(home.join(".gemini/tmp/work/.project_root"), work.as_str()).unwrap();
    let message = |id: String| {
        serde_json::json!({
            "id": id,
            "timestamp": "2026-12-01T10:00:01.000Z",
            "type": "user",
            "content": [{ "text": "fix the failing test in the parser" }],
        })
        .to_string()
    };
    for n in 0..files {
        let session = format!("{n:08x}-0000-4000-8000-000000000000");
        let header = serde_json::json!({
            "sessionId": session,
            "projectHash": "0".repeat(64),
            "startTime": "2026-12-01T10:00:00.000Z",
            "lastUpdated": "2026-12-01T10:00:00.000Z",
            "kind": "main",
        });
        let count = 3 + if n == 0 { messages } else { 0 };
        let mut text = format!("{header}\n");
        for m in 0..count {
            text.push_str(&message(format!("m-{n}-{m}")));
            text.push('\n');
        }
        std::fs::write(
            chats.join(format!("session-2026-12-01T10-00-{}.jsonl", &session[..8])),
            text,
        )
        .unwrap();
    }
    (
        home,
        work,
        "00000000-0000-4000-8000-000000000000".to_string(),
    )
}

fn bench_gemini(c: &mut Criterion) {
    let dir = tempfile::Builder::new()
        .prefix("preflight-bench-gemini-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
    let input = |home: &Utf8Path, work: &Utf8Path, session: &str| Input {
        agent: Some("gemini".into()),
        session: Some(session.into()),
        cwd: Some(work.to_string()),
        config_dir: Some(home.to_string()),
        ..Input::default()
    };
    // What is measured is a resume, not a refusal.
    let resumes = |input: &Input| {
        assert_eq!(
            preflight(input).verdict,
            preflight::Verdict::Resume,
            "{input:?}"
        );
    };
    for size in sizes() {
        let mut group = c.benchmark_group("preflight gemini");
        let (home, work, session) = gemini_home(&root, size, 0);
        resumes(&input(&home, &work, &session));
        group.bench_with_input(
            BenchmarkId::new("resume among session files", size),
            &input(&home, &work, &session),
            |b, input| b.iter(|| black_box(preflight(black_box(input)))),
        );
        let (home, work, session) = gemini_home(&root, 1, size);
        resumes(&input(&home, &work, &session));
        group.bench_with_input(
            BenchmarkId::new("resume, one session of messages", size),
            &input(&home, &work, &session),
            |b, input| b.iter(|| black_box(preflight(black_box(input)))),
        );
        group.finish();
    }
}

criterion_group!(benches, bench, bench_codex, bench_gemini);
criterion_main!(benches);
