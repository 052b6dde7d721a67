//! The kitty backend against a fake kitty socket that records each command
//! (`\eP@kitty-cmd{json}\e\\`) and answers as kitty does: what reaches kitty, with no kitty
//! running. (The live tests against kitty itself are the binary's, `restore::kitty`.)

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::Duration;

use mux::kitty::Kitty;
use mux::{Backend, Created, MuxError, Opened, Start, Surface};
use serde_json::{Value, json};

/// A fake kitty that answers its `n`th command with `answers[n]` (`None`: reads it and never
/// answers), and hands the commands it read back when joined.
fn serve(
    answers: Vec<Option<Value>>,
) -> (
    tempfile::TempDir,
    PathBuf,
    std::thread::JoinHandle<Vec<Value>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("kitty.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let server = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for answer in answers {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\x1b\\") {
                stream.read_exact(&mut byte).unwrap();
                request.push(byte[0]);
            }
            let body = request
                .strip_prefix(b"\x1bP@kitty-cmd")
                .and_then(|rest| rest.strip_suffix(b"\x1b\\"))
                .expect("kitty's framing");
            seen.push(serde_json::from_slice(body).unwrap());
            match answer {
                Some(answer) => {
                    let framed = format!("\x1bP@kitty-cmd{answer}\x1b\\");
                    stream.write_all(framed.as_bytes()).unwrap();
                }
                // Hold the connection open until the client gives up.
                None => {
                    let _ = stream.read(&mut [0u8; 1]);
                }
            }
        }
        seen
    });
    (dir, socket, server)
}

/// `ls`'s answer: one tab holding these windows (`data` is a JSON document in a string).
fn listing(windows: &Value) -> Value {
    let os_windows = json!([{"id": 1, "tabs": [{"id": 1, "windows": windows}]}]);
    json!({"ok": true, "data": os_windows.to_string()})
}

fn backend(socket: &std::path::Path) -> Kitty {
    Kitty::new(
        Some(format!("unix:{}", socket.display())),
        Duration::from_secs(2),
        Some("/bin/zsh".into()),
    )
}

fn open(backend: &Kitty, surface: &str, dir: Option<&str>) -> Result<Opened, MuxError> {
    let surface = Surface::parse(surface).unwrap();
    let shown = surface.to_string();
    backend.open(&Start {
        surface: &surface,
        dir,
        command: "claude --resume s-1",
        env: &[("CRASH_RESUME_SURFACE", &shown)],
    })
}

#[test]
fn a_gone_window_opens_anew_with_every_value_an_inert_json_string() {
    // Window 3 exists, but in another kitty (this fake's peer is the test's own process, not
    // pid 41): it is not the recorded window, so a new one is opened.
    let surface = "kitty:41:3";
    let (_dir, socket, server) = serve(vec![
        Some(listing(
            &json!([{"id": 3, "pid": 1, "cmdline": ["bash"], "env": {}}]),
        )),
        Some(json!({"ok": true, "data": "7"})),
    ]);
    let dir = "/w/it's $(touch x)\u{1b}";
    let opened = open(&backend(&socket), surface, Some(dir)).unwrap();
    assert_eq!(
        opened,
        Opened::Started {
            created: vec![Created::Window]
        }
    );
    let seen = server.join().unwrap();
    assert_eq!(seen[0]["cmd"], "ls");
    let script = mux::script::start_script(
        &[("CRASH_RESUME_SURFACE", surface)],
        Some(dir),
        "claude --resume s-1",
        "/bin/zsh",
    );
    assert_eq!(seen[1]["cmd"], "launch");
    assert_eq!(
        seen[1]["payload"],
        json!({
            "args": ["/bin/sh", "-c", script],
            "type": "window",
            "keep_focus": true,
            "env": [format!("CRASH_RESUME_KITTY_WINDOW={surface}")],
            "cwd": dir,
        })
    );
}

#[test]
fn the_window_a_restore_tagged_is_found_whatever_its_id_and_left_alone_when_busy() {
    let surface = "kitty:41:3";
    let (_dir, socket, server) = serve(vec![Some(listing(&json!([
        {"id": 3, "pid": 1, "cmdline": ["bash"], "env": {}},
        {"id": 9, "pid": 1, "cmdline": ["/bin/sh", "-c", "x"],
         "foreground_processes": [{"pid": 2, "cmdline": ["/usr/bin/vim", "notes"]}],
         "env": {"CRASH_RESUME_KITTY_WINDOW": surface, "SECRET_TOKEN": "hunter2"}},
    ])))]);
    let opened = open(&backend(&socket), surface, None).unwrap();
    assert_eq!(
        opened,
        Opened::Skipped(mux::pane::Busy::Program("vim".into()))
    );
    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 1, "nothing but `ls` was sent: {seen:?}");
}

#[test]
fn a_kitty_that_does_not_answer_is_not_asked_again() {
    let (_dir, socket, server) = serve(vec![None]);
    let backend = backend(&socket);
    let first = open(&backend, "kitty:3", None).unwrap_err();
    assert!(
        matches!(first, MuxError::Unanswered { again: false, .. }),
        "{first:?}"
    );
    let second = open(&backend, "kitty:3", None).unwrap_err();
    assert!(
        matches!(second, MuxError::Unanswered { again: true, .. }),
        "{second:?}"
    );
    assert!(
        backend
            .unanswered()
            .unwrap()
            .contains("kitty did not answer")
    );
    server.join().unwrap();
}

#[test]
fn kitty_refusing_a_command_is_a_failure_that_never_quotes_its_traceback() {
    let (_dir, socket, server) = serve(vec![
        Some(listing(&json!([]))),
        Some(json!({"ok": false, "error": "no such tab", "tb": "Traceback: SECRET"})),
    ]);
    let failed = open(&backend(&socket), "kitty:3", Some("/w")).unwrap_err();
    let said = failed.to_string();
    assert!(
        said.contains("no such tab") && !said.contains("SECRET"),
        "{said}"
    );
    server.join().unwrap();
}

#[test]
fn no_address_fails_saying_it_has_none() {
    let backend = Kitty::new(None, Duration::from_secs(1), None);
    let failed = open(&backend, "kitty:3", None).unwrap_err();
    assert!(
        failed
            .to_string()
            .contains("no address of its remote control socket"),
        "{failed}"
    );
    assert!(backend.location().contains("no kitty socket"));
}

/// A surface that kitty would rewrite in the window's environment (it expands `$NAME` and
/// strips whitespace there, the tag by which the next restore finds the window) fails before
/// kitty is asked anything.
#[test]
fn a_surface_kitty_would_rewrite_in_the_tag_fails_before_kitty_is_asked() {
    let (_dir, socket, server) = serve(vec![]);
    let error = open(&backend(&socket), "kitty:$HOME:3", None).unwrap_err();
    assert!(error.to_string().contains("kitty would rewrite"), "{error}");
    assert_eq!(server.join().unwrap(), Vec::<Value>::new());
}
