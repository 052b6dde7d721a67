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
    assert_eq!(
        seen[0]["payload"],
        json!({"all_env_vars": true}),
        "every variable is asked for: `ls` leaves out the ones every window shares"
    );
    let script = mux::script::start_script(
        &[("CRASH_RESUME_SURFACE", surface)],
        Some(dir),
        "claude --resume s-1",
        "/bin/zsh",
    );
    // The window's first process tags it with its own kitty pid and window id, then runs the
    // script with the tag in its environment.
    let tagging = format!(
        "CRASH_RESUME_KITTY_WINDOW=\"$KITTY_PID:$KITTY_WINDOW_ID:\"{surface}; export \
         CRASH_RESUME_KITTY_WINDOW; exec /bin/sh -c {}",
        mux::script::quote(&script)
    );
    assert_eq!(seen[1]["cmd"], "launch");
    assert_eq!(
        seen[1]["payload"],
        json!({
            "args": ["/bin/sh", "-c", tagging],
            "type": "window",
            "keep_focus": true,
            "cwd": dir,
        })
    );
}

#[test]
fn the_window_a_restore_tagged_is_found_whatever_its_id_and_left_alone_when_busy() {
    let surface = "kitty:41:3";
    // The fake's peer is this process: the kitty whose pid the tag must name.
    let kitty = std::process::id();
    let (_dir, socket, server) = serve(vec![Some(listing(&json!([
        {"id": 3, "pid": 1, "cmdline": ["bash"], "env": {}},
        {"id": 9, "pid": 1, "cmdline": ["/bin/sh", "-c", "x"],
         "foreground_processes": [{"pid": 2, "cmdline": ["/usr/bin/vim", "notes"]}],
         "env": {"CRASH_RESUME_KITTY_WINDOW": format!("{kitty}:9:{surface}"), "SECRET_TOKEN": "hunter2"}},
    ])))]);
    let opened = open(&backend(&socket), surface, None).unwrap();
    assert_eq!(
        opened,
        Opened::Skipped(mux::pane::Busy::Program("vim".into()))
    );
    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 1, "nothing but `ls` was sent: {seen:?}");
}

/// A tag inherited by windows it was not made for (a kitty started from a tagged window passes
/// it to each of its windows; a window that copied another's environment) finds no window: a
/// new one is opened.
#[test]
fn a_tag_made_for_another_window_or_kitty_finds_nothing() {
    let surface = "kitty:41:3";
    let kitty = std::process::id();
    let busy = |id: u32, tag: String| {
        json!({"id": id, "pid": 1, "cmdline": ["/bin/sh"],
               "foreground_processes": [{"pid": 2, "cmdline": ["vim"]}],
               "env": {"CRASH_RESUME_KITTY_WINDOW": tag, "KITTY_PID": kitty.to_string()}})
    };
    let (_dir, socket, server) = serve(vec![
        Some(listing(&json!([
            busy(1, format!("{}:1:{surface}", kitty + 1)),
            busy(2, format!("{kitty}:7:{surface}")),
            busy(4, surface.to_string()),
        ]))),
        Some(json!({"ok": true, "data": "8"})),
    ]);
    let opened = open(&backend(&socket), surface, None).unwrap();
    assert_eq!(
        opened,
        Opened::Started {
            created: vec![Created::Window]
        }
    );
    let seen = server.join().unwrap();
    assert_eq!(seen[1]["cmd"], "launch");
    assert!(seen[1]["payload"].get("match").is_none(), "{seen:?}");
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

/// A socket whose listen backlog is full (a kitty that accepts nothing) makes a connect wait:
/// it gives up at the call's deadline, as an unanswered call.
#[test]
fn a_connect_to_a_full_backlog_gives_up_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kitty.sock");
    let listener = rustix::net::socket(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::STREAM,
        None,
    )
    .unwrap();
    let address = rustix::net::SocketAddrUnix::new(&path).unwrap();
    rustix::net::bind(&listener, &address).unwrap();
    rustix::net::listen(&listener, 0).unwrap();
    // Linux queues one connection more than the backlog: these are held, never accepted.
    let mut held = Vec::new();
    while held.len() < 16 {
        let stream = rustix::net::socket_with(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::STREAM,
            rustix::net::SocketFlags::NONBLOCK,
            None,
        )
        .unwrap();
        if rustix::net::connect(&stream, &address).is_err() {
            break;
        }
        held.push(stream);
    }
    let backend = Kitty::new(
        Some(format!("unix:{}", path.display())),
        Duration::from_millis(300),
        None,
    );
    let error = open(&backend, "kitty:3", None).unwrap_err();
    assert!(
        matches!(error, MuxError::Unanswered { again: false, .. }),
        "{error:?}"
    );
    drop(listener);
}
