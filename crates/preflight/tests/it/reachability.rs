//! The reachability table of `docs/preflight.md`, as the preflight decides it: one case per
//! transcript state.

use camino::Utf8PathBuf;
use preflight::claude::{Reachability, reachability};

use crate::verdicts::Sandbox;

const USER: &str = r#"{"type":"user","sessionId":"S","message":{"role":"user","content":"hi"}}"#;
const ASSISTANT: &str =
    r#"{"type":"assistant","sessionId":"S","message":{"role":"assistant","content":[]}}"#;
const SNAPSHOT: &str = r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#;
const SUMMARY: &str = r#"{"type":"summary","summary":"a chat","leafUuid":"u"}"#;

fn check(write: impl FnOnce(&Utf8PathBuf), expected: Reachability) {
    let sandbox = Sandbox::new();
    let path = sandbox.root.join("S.jsonl");
    write(&path);
    assert_eq!(reachability(&path), expected);
}

fn file(text: String) -> impl FnOnce(&Utf8PathBuf) {
    move |path| std::fs::write(path, text).unwrap()
}

#[test]
fn each_row_of_the_table() {
    check(file(format!("{USER}\n")), Reachability::Reachable);
    check(|_| {}, Reachability::Missing);
    check(file(String::new()), Reachability::NoConversation);
    check(
        file(format!("{SNAPSHOT}\n{SNAPSHOT}\n")),
        Reachability::NoConversation,
    );
    check(file(format!("{SUMMARY}\n")), Reachability::NoConversation);
    check(
        file(r#"{"type":"user","mess"#.to_string()),
        Reachability::NoConversation,
    );
    check(
        file(format!("{SNAPSHOT}\n{USER}\n{{\"type\":\"assis")),
        Reachability::Reachable,
    );
    check(file(format!("{ASSISTANT}\n")), Reachability::Reachable);
    check(
        file(USER.replace("\"S\"", "\"another\"")),
        Reachability::Reachable,
    );
    check(
        |path| std::fs::create_dir(path).unwrap(),
        Reachability::Directory,
    );
}

#[test]
fn a_complete_last_line_without_newline_counts() {
    check(file(USER.to_string()), Reachability::Reachable);
}

#[test]
fn a_line_that_only_mentions_user_does_not_count() {
    check(
        file(r#"{"type":"summary","summary":"\"type\":\"user\""}"#.to_string()),
        Reachability::NoConversation,
    );
    check(
        file("not json at all, type user\n".to_string()),
        Reachability::NoConversation,
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_to_a_transcript_is_followed_and_a_dangling_one_is_not_a_file() {
    let sandbox = Sandbox::new();
    let real = sandbox.root.join("real.jsonl");
    std::fs::write(&real, format!("{USER}\n")).unwrap();
    let link = sandbox.root.join("S.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(reachability(&link), Reachability::Reachable);
    let dangling = sandbox.root.join("D.jsonl");
    std::os::unix::fs::symlink(sandbox.root.join("gone"), &dangling).unwrap();
    assert_eq!(reachability(&dangling), Reachability::NotAFile);
}

#[cfg(unix)]
#[test]
fn a_fifo_is_not_a_file_and_is_never_waited_on() {
    let sandbox = Sandbox::new();
    let path = sandbox.root.join("S.jsonl");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path.as_std_path(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from(0o600),
        0,
    )
    .unwrap();
    // No writer ever opens the FIFO: a blocking open would hang this test.
    assert_eq!(reachability(&path), Reachability::NotAFile);
    assert_eq!(preflight::claude::continued_in(&path), None);
}

#[test]
fn a_first_message_line_cut_by_the_head_cap_is_judged_by_its_type() {
    let long = "x".repeat(preflight::claude::HEAD_BYTES as usize * 2);
    let pasted = format!(
        r#"{{"parentUuid":null,"type":"user","message":{{"role":"user","content":"{long}"}}}}"#
    );
    check(file(format!("{pasted}\n")), Reachability::Reachable);
    // The type comes after the cut: nothing in the head says it is a message.
    let late = format!(r#"{{"padding":"{long}","type":"user"}}"#);
    check(file(format!("{late}\n")), Reachability::NoConversation);
    // A message line past the head is not looked for.
    let filler = format!(r#"{{"type":"summary","summary":"{long}"}}"#);
    check(
        file(format!("{filler}\n{USER}\n")),
        Reachability::NoConversation,
    );
}

#[test]
fn a_huge_sparse_transcript_is_judged_from_its_head_alone() {
    let sandbox = Sandbox::new();
    let path = sandbox.root.join("S.jsonl");
    let file = std::fs::File::create(&path).unwrap();
    // 2 GiB of holes, then a message line: only the first HEAD_BYTES are read.
    file.set_len(2 << 30).unwrap();
    drop(file);
    assert_eq!(reachability(&path), Reachability::NoConversation);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, format!("\n{USER}\n").as_bytes()).unwrap();
    assert_eq!(reachability(&path), Reachability::NoConversation);
    // The tail read for `continued-in` is bounded too.
    std::io::Write::write_all(
        &mut file,
        b"{\"type\":\"system\",\"continuedInSessionId\":\"NEXT\"}\n",
    )
    .unwrap();
    assert_eq!(
        preflight::claude::continued_in(&path).as_deref(),
        Some("NEXT")
    );
}
