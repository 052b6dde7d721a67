//! The cmux backend against a fake cmux socket that records each request line and answers as
//! cmux's socket API does (`{"id", "ok", "result" | "error"}`).

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::Duration;

use mux::cmux::Cmux;
use mux::{Backend, Created, MuxError, Opened, Start, Surface};
use serde_json::{Value, json};

/// A fake socket that answers each request with `answer` (`None`: reads it and never answers),
/// and hands the requests it read back when joined.
fn serve(
    answer: Option<&'static str>,
    requests: usize,
) -> (
    tempfile::TempDir,
    PathBuf,
    std::thread::JoinHandle<Vec<Value>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("cmux.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let server = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..requests {
            let (stream, _) = listener.accept().unwrap();
            let mut line = String::new();
            BufReader::new(&stream).read_line(&mut line).unwrap();
            seen.push(serde_json::from_str(&line).unwrap());
            match answer {
                Some(answer) => (&stream).write_all(answer.as_bytes()).unwrap(),
                // Hold the connection open until the client gives up.
                None => {
                    let _ = BufReader::new(&stream).read_line(&mut String::new());
                }
            }
        }
        seen
    });
    (dir, socket, server)
}

fn open(backend: &Cmux, dir: Option<&str>) -> Result<Opened, MuxError> {
    let surface = Surface::parse("cmux:5F0C7A4E-1D2B-4C3A-9E8F-0A1B2C3D4E5F").unwrap();
    let shown = surface.to_string();
    backend.open(&Start {
        surface: &surface,
        dir,
        command: "claude --resume s-1",
        env: &[("CRASH_RESUME_SURFACE", &shown)],
    })
}

#[test]
fn a_surface_opens_as_a_new_workspace_whose_process_is_the_command() {
    let (_dir, socket, server) = serve(
        Some(
            "{\"id\":\"1\",\"ok\":true,\"result\":{\"workspace_id\":\"W\",\"surface_id\":\"S\"}}\n",
        ),
        1,
    );
    let backend = Cmux::new(socket, Duration::from_secs(5), Some("/bin/zsh".into()));
    let opened = open(&backend, Some("/w/it's")).unwrap();
    assert_eq!(
        opened,
        Opened::Started {
            created: vec![Created::Workspace]
        }
    );
    let script = mux::script::start_script(
        &[(
            "CRASH_RESUME_SURFACE",
            "cmux:5F0C7A4E-1D2B-4C3A-9E8F-0A1B2C3D4E5F",
        )],
        Some("/w/it's"),
        "claude --resume s-1",
        "/bin/zsh",
    );
    let requests = server.join().unwrap();
    assert_eq!(
        requests,
        [json!({
            "id": "1",
            "method": "workspace.create",
            "params": {
                "initial_command": format!("/bin/sh -c {}", mux::script::quote(&script)),
                "focus": false,
                "working_directory": "/w/it's",
            }
        })]
    );
    // The command is one shell line that is exactly `/bin/sh -c SCRIPT`.
    let command = requests[0]["params"]["initial_command"].as_str().unwrap();
    assert_eq!(
        shlex::split(command).unwrap(),
        ["/bin/sh".to_string(), "-c".to_string(), script]
    );
}

#[test]
fn an_error_answer_fails_with_what_cmux_said() {
    let (_dir, socket, server) = serve(
        Some(
            "{\"id\":\"1\",\"ok\":false,\"error\":{\"code\":\"denied\",\"message\":\"access denied\"}}\n",
        ),
        1,
    );
    let backend = Cmux::new(socket, Duration::from_secs(5), None);
    let error = open(&backend, None).unwrap_err();
    assert_eq!(error.to_string(), "cmux workspace.create: access denied");
    server.join().unwrap();
}

#[test]
fn a_cmux_that_does_not_answer_is_asked_once() {
    let (_dir, socket, server) = serve(None, 1);
    let backend = Cmux::new(socket, Duration::from_millis(300), None);
    let error = open(&backend, None).unwrap_err();
    assert!(
        matches!(error, MuxError::Unanswered { again: false, .. }),
        "{error}"
    );
    let error = open(&backend, None).unwrap_err();
    assert!(
        matches!(error, MuxError::Unanswered { again: true, .. }),
        "{error}"
    );
    drop(backend);
    assert_eq!(server.join().unwrap().len(), 1, "not asked again");
}

#[test]
fn no_cmux_running_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Cmux::new(dir.path().join("none.sock"), Duration::from_secs(1), None);
    let error = open(&backend, None).unwrap_err();
    assert!(error.to_string().contains("is cmux running"), "{error}");
}
