//! Every output says the next step on a terminal, and only there: an empty `list` says why it
//! may be empty (no hook installed, or which are, and the hook log's last error) and points at
//! `doctor`; a `restore` plan says how to apply it; a `restore
//! --apply tmux` that created a session says how to attach to it. The tables fit the
//! terminal's width (a short id, the command clipped; whole when piped and in `--json`), and are
//! coloured where the terminal has colour and `NO_COLOR` is not set. Piped, nothing changes.
//!
//! The terminal is a real pseudo-terminal as the binary's stdout (its size set as a terminal
//! emulator sets it), its stderr piped.

use std::fs::{self, File};
use std::io::Read;
use std::process::{Command, Stdio};

use unicode_width::UnicodeWidthStr;

use crate::Sandbox;
use crate::harness::{
    PanePlace, TmuxServer, crash_resume_agent, git_work_dir, install_claude_stand_in, server_name,
    server_surface, uuid,
};
use crate::restore::tmux::record_session;
use crate::snapshot::assert_cli_snapshot;

/// What a command printed with a terminal of `columns` columns (unknown size: `None`) as its
/// stdout: stdout as the terminal shows it (`\r\n` turned back into `\n`), stderr, the exit
/// code.
pub struct OnTerminal {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

pub fn on_terminal_sized(mut command: Command, columns: Option<u16>) -> OnTerminal {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("open a pty");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    if let Some(columns) = columns {
        let size = rustix::termios::Winsize {
            ws_row: 50,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&master, size).expect("set the terminal's size");
    }
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = File::options()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .expect("open the pty's terminal side");
    let output = command
        .stdin(Stdio::null())
        .stdout(terminal)
        .stderr(Stdio::piped())
        .output()
        .expect("run the binary");
    drop(command);
    let mut master = File::from(master);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(read) = master.read(&mut chunk) {
        if read == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
    OnTerminal {
        stdout: String::from_utf8(bytes).unwrap().replace("\r\n", "\n"),
        stderr: String::from_utf8(output.stderr).unwrap(),
        code: output.status.code(),
    }
}

fn piped(mut command: Command) -> std::process::Output {
    command.stdin(Stdio::null()).output().unwrap()
}

fn command(env: &Sandbox, args: &[&str]) -> Command {
    let mut command = crash_resume_agent(env);
    command.args(args);
    command
}

#[test]
fn an_empty_list_on_a_terminal_says_why_and_points_at_doctor_and_piped_says_nothing() {
    let env = Sandbox::default();
    let shown = on_terminal_sized(command(&env, &["list"]), None);
    assert_eq!((shown.code, shown.stdout.as_str()), (Some(0), ""));
    assert_cli_snapshot!(&env, "empty_list_on_a_terminal", &shown.stderr);

    let output = piped(command(&env, &["list"]));
    assert!(output.status.success());
    assert_eq!((output.stdout.len(), output.stderr.len()), (0, 0));

    // A hook installed: the list says so, and that a session is recorded when its agent starts.
    let output = piped(command(&env, &["hook", "install", "claude"]));
    assert!(output.status.success(), "{output:?}");
    let shown = on_terminal_sized(command(&env, &["list"]), None);
    assert!(
        shown
            .stderr
            .contains("the hooks of claude are installed; a session is recorded when its agent"),
        "{}",
        shown.stderr
    );

    // Every hook failed: the log's last error is said too.
    let log = env.index_path().parent().unwrap().join("hook.log");
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    fs::write(
        &log,
        "2026-12-02T21:00:00.000Z pid 7 hook claude (3ms): error: index path /tmp/x/index.json is on tmpfs\n",
    )
    .unwrap();
    let shown = on_terminal_sized(command(&env, &["list"]), None);
    assert!(
        shown.stderr.contains("holds hook errors")
            && shown.stderr.contains("is on tmpfs")
            && shown.stderr.contains("`crash-resume doctor`"),
        "{}",
        shown.stderr
    );
}

/// A sandbox with two resumable Claude Code surfaces: one in the sandbox's default tmux server,
/// one in another server (`/x/other`).
fn two_servers() -> Sandbox {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "proj", "");
    let here = server_surface(&env, &server_name("next"), &PanePlace::new("work", 0, 0));
    record_session(&env, &here, &uuid(1), "proj", &cwd);
    record_session(&env, "tmux:/x/other:w:0.0", &uuid(2), "proj", &cwd);
    env
}

#[test]
fn a_plan_on_a_terminal_says_how_to_apply_it_and_piped_says_nothing_more() {
    let env = two_servers();
    let shown = on_terminal_sized(command(&env, &["restore"]), None);
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    assert_cli_snapshot!(&env, "plan_says_how_to_apply", &shown.stderr);

    let output = piped(command(&env, &["restore"]));
    assert!(output.status.success());
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("next:"),
        "{output:?}"
    );
    let output = piped(command(&env, &["--json", "restore"]));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("next:"));
}

#[test]
fn a_restore_that_created_a_session_says_how_to_attach_to_it() {
    let env = Sandbox::default();
    install_claude_stand_in(&env);
    let cwd = git_work_dir(&env, "proj", "");
    let name = server_name("attach");
    let server = TmuxServer::named(&env, &name);
    let surface = server.surface(&PanePlace::new("work", 0, 0));
    record_session(&env, &surface, &uuid(1), "proj", &cwd);

    let shown = on_terminal_sized(
        command(
            &env,
            &["restore", "--apply", "tmux", "--tmux-socket", &name],
        ),
        None,
    );
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    let attach = format!("tmux -L {name} attach -t work");
    assert!(
        shown
            .stderr
            .lines()
            .last()
            .is_some_and(|line| line
                == format!("next: the restore created a session; attach with `{attach}`")),
        "{}",
        shown.stderr
    );
    // The command it names reaches the session it created.
    let sessions = server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(sessions.trim(), "work");
    server.kill_and_wait();

    // Piped (as the restore a tmux server's config starts), it is not said.
    record_session(&env, &surface, &uuid(2), "proj", &cwd);
    let server = TmuxServer::named(&env, &name);
    let output = piped(command(
        &env,
        &["restore", "--apply", "tmux", "--tmux-socket", &name],
    ));
    assert!(output.status.success(), "{output:?}");
    assert!(!String::from_utf8_lossy(&output.stderr).contains("attach"));
    server.kill_and_wait();
}

/// Surfaces whose ids, commands and notes make a plan far wider than 80 columns.
fn wide_plan() -> (Sandbox, Vec<String>) {
    let env = Sandbox::default();
    let cwd = git_work_dir(&env, "a-project-with-a-rather-long-name", "");
    let sessions: Vec<String> = (1..=3).map(uuid).collect();
    for (n, session) in sessions.iter().enumerate() {
        let surface = server_surface(&env, "default", &PanePlace::new("work", 0, n as u32));
        record_session(&env, &surface, session, "proj", &cwd);
    }
    (env, sessions)
}

#[test]
fn the_plan_fits_an_80_column_terminal_and_is_whole_when_piped_and_in_json() {
    let (env, sessions) = wide_plan();
    let shown = on_terminal_sized(command(&env, &["restore"]), Some(80));
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    let lines: Vec<&str> = shown.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", shown.stdout);
    for line in &lines {
        assert!(line.width() <= 80, "{} columns: {line}", line.width());
    }
    for session in &sessions {
        assert!(!shown.stdout.contains(session.as_str()), "{}", shown.stdout);
        assert!(shown.stdout.contains(&format!("{}…", &session[..7])));
    }

    // Wider than the table: nothing is clipped.
    let shown = on_terminal_sized(command(&env, &["restore"]), Some(1000));
    for session in &sessions {
        assert!(shown.stdout.contains(session.as_str()), "{}", shown.stdout);
    }
    assert!(!shown.stdout.contains('…'));

    let output = piped(command(&env, &["restore"]));
    let text = String::from_utf8(output.stdout).unwrap();
    for session in &sessions {
        assert!(
            text.contains(&format!("claude --resume {session}")),
            "{text}"
        );
    }
    let output = piped(command(&env, &["--json", "restore"]));
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let held: Vec<&str> = plan["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(held, sessions);
}

#[test]
fn the_list_fits_the_terminal_too() {
    let (env, sessions) = wide_plan();
    let shown = on_terminal_sized(command(&env, &["list"]), Some(60));
    for line in shown.stdout.lines() {
        assert!(line.width() <= 60, "{} columns: {line}", line.width());
    }
    assert!(
        !shown.stdout.contains(sessions[0].as_str()),
        "{}",
        shown.stdout
    );
}

#[test]
fn colour_only_on_a_terminal_that_has_it_and_never_with_no_color() {
    let (env, _) = wide_plan();
    let coloured = |setup: &dyn Fn(&mut Command)| {
        let mut restore = command(&env, &["restore"]);
        restore.env_remove("NO_COLOR").env("TERM", "xterm-256color");
        setup(&mut restore);
        on_terminal_sized(restore, None).stdout.contains('\u{1b}')
    };
    assert!(coloured(&|_| {}));
    let shown = {
        let mut restore = command(&env, &["restore"]);
        restore.env_remove("NO_COLOR").env("TERM", "xterm-256color");
        on_terminal_sized(restore, None).stdout
    };
    assert!(
        shown.starts_with("\u{1b}[1mSURFACE\u{1b}[0m")
            && shown.contains("\u{1b}[32mresume\u{1b}[0m"),
        "{shown:?}"
    );
    assert!(!coloured(&|restore| {
        restore.env("NO_COLOR", "1");
    }));
    assert!(!coloured(&|restore| {
        restore.env("TERM", "dumb");
    }));
    // Piped, never.
    let mut restore = command(&env, &["restore"]);
    restore.env_remove("NO_COLOR").env("TERM", "xterm-256color");
    assert!(!piped(restore).stdout.contains(&0x1b));
}
