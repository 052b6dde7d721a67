//! The hostile cases of the reboot simulation, after the main story: values an attacker (or a
//! careless tool) put in the index, panes a restore must not take over, and restores racing on
//! an empty tmux server. Each runs against its own index (`CRASH_RESUME_INDEX_PATH`, which the
//! panes inherit, so the agents' hooks write there too) and its own tmux server, with the
//! stand-in agent.
//!
//! - a crafted working dir (readline's kill-line, a command, a newline): `record` refuses it,
//!   the hook records nothing, and an index written by another tool holding it is refused by
//!   `resume-cmd` and `restore`, which run nothing;
//! - an option-like session id (`--dangerously-skip-permissions`): likewise;
//! - a pane whose shell runs a script waiting on `read`: skipped as busy, and the script gets
//!   no input from the restore;
//! - half-typed text at a prompt: skipped as busy, the text never runs and stays;
//! - a shell in the `read` builtin (`read -p 'really delete? '`): skipped as busy;
//! - a working dir named `#(cd; touch fmt-ran)` (tmux runs `#(...)` in a format), recorded by the
//!   real hook: the idle pane is re-used, the agent starts in that dir, and nothing runs;
//! - a session name tmux would rewrite (`h$x`): that surface fails with the reason and nothing
//!   is created;
//! - 2 and then 3 `restore --apply tmux` at once on an empty server: 8 surfaces over 2 sessions,
//!   each opened once at its recorded place, each agent the child of its pane's process, and
//!   the index holding every session afterwards.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use test_support::process::parent_of;

use super::checks::Row;
use super::sandbox::{Agent, Sandbox};
use super::stand_in::{self, Event, Kind};

/// How long an agent, a script or a restore may take here.
const DEADLINE: Duration = Duration::from_secs(20);

/// One hostile case's own index and tmux server (the stand-in agents' log is shared: events
/// are told apart by the tmux session names, which no other part of the run uses).
struct Hostile<'a> {
    sandbox: &'a Sandbox,
    dir: PathBuf,
    index: PathBuf,
    socket: String,
}

pub fn rows(sandbox: &Sandbox) -> Result<Vec<Row>> {
    sandbox.install_agent(Agent::StandIn)?;
    let mut rows = Vec::new();
    let hostile = Hostile::new(sandbox, "hostile", "h")?;
    let outcome = hostile.values_and_busy_panes(&mut rows);
    hostile.kill_server();
    outcome?;
    for restores in [2, 3] {
        let racing = Hostile::new(
            sandbox,
            &format!("race-{restores}"),
            &format!("r{restores}"),
        )?;
        let outcome = racing.race_on_an_empty_server(restores);
        racing.kill_server();
        rows.push(outcome?);
    }
    Ok(rows)
}

impl<'a> Hostile<'a> {
    fn new(sandbox: &'a Sandbox, name: &str, socket_suffix: &str) -> Result<Hostile<'a>> {
        let dir = sandbox.root.join(name);
        super::sandbox::create_dir(&dir)?;
        Ok(Hostile {
            sandbox,
            index: dir.join("index.json"),
            dir,
            socket: format!("{}{socket_suffix}", sandbox.socket),
        })
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = self.sandbox.command(program);
        command
            .env("CRASH_RESUME_INDEX_PATH", &self.index)
            .current_dir(&self.sandbox.home);
        command
    }

    fn crash_resume(&self, args: &[&str]) -> Result<Output> {
        self.command(self.sandbox.bin.join("crash-resume"))
            .args(args)
            .output()
            .with_context(|| format!("cannot run crash-resume {}", args.join(" ")))
    }

    fn restore_apply(&self) -> Command {
        let mut command = self.command(self.sandbox.bin.join("crash-resume"));
        command
            .args(test_support::restore_apply_args(&self.socket))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn tmux(&self, args: &[&str]) -> Result<String> {
        super::sandbox::run_tmux(self.command("tmux"), &self.socket, args)
    }

    /// The line of `target`'s pane that holds the cursor.
    fn cursor_line(&self, target: &str) -> Result<String> {
        let row = self.tmux(&["display-message", "-p", "-t", target, "#{cursor_y}"])?;
        self.tmux(&["capture-pane", "-p", "-t", target, "-S", &row, "-E", &row])
    }

    fn kill_server(&self) {
        let _ = self.tmux(&["kill-server"]);
    }

    /// `surface → (pane pid, current command)` for every pane of this server.
    fn panes(&self) -> Result<BTreeMap<String, (u32, String)>> {
        test_support::tmux::list_panes(
            |args| self.tmux(args),
            "#{pane_pid}\t#{pane_current_command}",
        )
        .into_iter()
        .map(|(surface, rest)| {
            let Some((pid, command)) = rest.split_once('\t') else {
                bail!("tmux listed pane {surface} as {rest:?}");
            };
            Ok((surface, (pid.parse()?, command.to_string())))
        })
        .collect()
    }

    /// A working dir with a transcript of `session` where Claude Code keeps it.
    fn session_dir(&self, name: &str, session: &str) -> Result<PathBuf> {
        let dir = self.dir.join("work").join(name);
        super::sandbox::create_dir(&dir)?;
        let dir = dir.canonicalize()?;
        let project =
            self.sandbox
                .claude_dir
                .join("projects")
                .join(preflight::claude::project_folder_name(
                    dir.to_str().context("a dir is not UTF-8")?,
                ));
        super::sandbox::create_dir(&project)?;
        let line = json!({
            "type": "user",
            "sessionId": session,
            "uuid": stand_in::new_session_id()?,
            "message": {"role": "user", "content": "before the crash"},
        });
        fs::write(
            project.join(format!("{session}.jsonl")),
            format!("{line}\n"),
        )?;
        Ok(dir)
    }

    /// Writes the index as another tool would: these entries, nothing checked.
    fn write_index(&self, entries: &[(&str, &str, &str)]) -> Result<()> {
        let entries: serde_json::Map<String, Value> = entries
            .iter()
            .map(|(surface, session, cwd)| {
                let entry = json!({
                    "surfaceId": surface,
                    "sessionId": session,
                    "repo": "hostile",
                    "role": null,
                    "captured_at": 1_700_000_000_000u64,
                    "last_active": 1_700_000_000_000u64,
                    "provider": "claude",
                    "cwd": cwd,
                    "config_dir": self.sandbox.claude_dir,
                });
                (surface.to_string(), entry)
            })
            .collect();
        let document = json!({"version": 1, "entries": entries});
        fs::write(&self.index, serde_json::to_vec_pretty(&document)?)
            .with_context(|| format!("cannot write {}", self.index.display()))
    }

    fn entries(&self) -> Result<serde_json::Map<String, Value>> {
        let text = fs::read_to_string(&self.index)?;
        let document: Value = serde_json::from_str(&text)?;
        Ok(document["entries"].as_object().cloned().unwrap_or_default())
    }

    /// The stand-in's starts in panes of this server's tmux sessions.
    fn starts(&self, sessions: &[&str]) -> Result<Vec<Event>> {
        Ok(stand_in::read_events(&self.sandbox.log_path(), 0)?
            .into_iter()
            .filter(|event| event.kind == Kind::Start)
            .filter(|event| {
                event.surface.as_deref().is_some_and(|surface| {
                    sessions
                        .iter()
                        .any(|session| surface.starts_with(&format!("tmux:{session}:")))
                })
            })
            .collect())
    }

    /// The crafted dir, the option-like id, the pane busy on `read`, the half-typed text, the
    /// `read` builtin, the `#(...)` dir and the rewritten session name, against one server
    /// whose layout is back after a reboot.
    fn values_and_busy_panes(&self, rows: &mut Vec<Row>) -> Result<()> {
        let ran = self.dir.join("ran");
        let typed = self.dir.join("typed");
        let answer = self.dir.join("answer");
        let crafted = format!("{}/x\u{15}touch {}\n", self.dir.display(), ran.display());
        let option_like = "--dangerously-skip-permissions";
        let busy_session = stand_in::new_session_id()?;
        let typed_session = stand_in::new_session_id()?;
        let crafted_session = stand_in::new_session_id()?;
        let busy_dir = self.session_dir("busy", &busy_session)?;
        let typed_dir = self.session_dir("typed", &typed_session)?;
        self.session_dir("crafted", &crafted_session)?;
        let read_session = stand_in::new_session_id()?;
        let format_session = stand_in::new_session_id()?;
        let rewrite_session = stand_in::new_session_id()?;
        let read_dir = self.session_dir("read", &read_session)?;
        let format_dir = self.session_dir("#(cd; touch fmt-ran)", &format_session)?;
        let rewrite_dir = self.session_dir("rewrite", &rewrite_session)?;
        let format_ran = self.sandbox.home.join("fmt-ran");

        // Capture refuses both values.
        let record_crafted = self.crash_resume(&[
            "record",
            "tmux:hx:0.0",
            &crafted_session,
            "repo",
            "--cwd",
            &crafted,
        ])?;
        let record_option =
            self.crash_resume(&["record", "--", "tmux:hx:0.1", option_like, "repo"])?;
        let hook_payload = json!({
            "session_id": crafted_session,
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": crafted,
        })
        .to_string();
        let hook = self
            .command(self.sandbox.bin.join("crash-resume"))
            .args(["hook", "claude", &hook_payload])
            .env("CRASH_RESUME_SURFACE", "tmux:hx:0.0")
            .output()?;
        let hook_log = fs::read_to_string(self.dir.join("hook.log")).unwrap_or_default();
        let recorded_anything = self.index.exists() && !self.entries()?.is_empty();

        // Another tool wrote them anyway, next to two good entries.
        let busy = busy_dir.to_string_lossy().into_owned();
        let typed_in = typed_dir.to_string_lossy().into_owned();
        let read_in = read_dir.to_string_lossy().into_owned();
        let rewrite_in = rewrite_dir.to_string_lossy().into_owned();
        self.write_index(&[
            ("tmux:hx:0.0", &crafted_session, &crafted),
            ("tmux:hx:0.1", option_like, &busy),
            ("tmux:hx:1.0", &busy_session, &busy),
            ("tmux:hx:1.1", &typed_session, &typed_in),
            ("tmux:hx:2.0", &read_session, &read_in),
            ("tmux:h$x:0.0", &rewrite_session, &rewrite_in),
        ])?;
        // The real hook records the `#(...)` dir: a legal name.
        let format_payload = json!({
            "session_id": format_session,
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": format_dir,
        })
        .to_string();
        let format_hook = self
            .command(self.sandbox.bin.join("crash-resume"))
            .args(["hook", "claude", &format_payload])
            .env("CRASH_RESUME_SURFACE", "tmux:hx:2.1")
            .output()?;
        let format_recorded = self
            .entries()?
            .get("tmux:hx:2.1")
            .is_some_and(|entry| entry["cwd"] == json!(format_dir));
        let resume_crafted = self.crash_resume(&["resume-cmd", "tmux:hx:0.0"])?;
        let resume_option = self.crash_resume(&["resume-cmd", "tmux:hx:0.1"])?;

        // The layout after the reboot: idle shells; a script waiting on `read` in 1.0, half a
        // command typed at the prompt of 1.1.
        let shell = ["bash", "--norc", "--noprofile"];
        let home = self.sandbox.home.to_string_lossy().into_owned();
        let mut new_session = vec![
            "new-session",
            "-d",
            "-s",
            "hx",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            &home,
        ];
        new_session.extend(shell);
        self.tmux(&new_session)?;
        for args in [
            vec!["split-window", "-d", "-t", "=hx:0.0", "-c", &home],
            vec!["new-window", "-d", "-t", "=hx:1", "-c", &home],
            vec!["split-window", "-d", "-t", "=hx:1.0", "-c", &home],
            vec!["new-window", "-d", "-t", "=hx:2", "-c", &home],
            vec!["split-window", "-d", "-t", "=hx:2.0", "-c", &home],
        ] {
            let mut args = args;
            args.extend(shell);
            self.tmux(&args)?;
        }
        super::wait::wait_until(DEADLINE, "the hostile layout's shells", || {
            let panes = self.panes()?;
            Ok(panes.len() == 6
                && panes.values().all(|(_, command)| command == "bash")
                && self
                    .cursor_line("=hx:2.1")?
                    .trim_end()
                    .ends_with(['$', '#']))
        })?;
        let script = format!("sh -c 'read line; echo \"$line\" > {}'", answer.display());
        self.tmux(&["send-keys", "-t", "=hx:1.0", "-l", &script])?;
        self.tmux(&["send-keys", "-t", "=hx:1.0", "Enter"])?;
        super::wait::wait_until(
            DEADLINE,
            "the script in tmux:hx:1.0 to wait on read",
            || {
                Ok(self
                    .panes()?
                    .get("tmux:hx:1.0")
                    .is_some_and(|(_, command)| command == "sh"))
            },
        )?;
        let half = format!("touch {}", typed.display());
        self.tmux(&["send-keys", "-t", "=hx:1.1", "-l", &half])?;
        super::wait::wait_until(DEADLINE, "the half-typed text in tmux:hx:1.1", || {
            Ok(self
                .tmux(&["capture-pane", "-p", "-t", "=hx:1.1"])?
                .contains(&half))
        })?;
        self.tmux(&[
            "send-keys",
            "-t",
            "=hx:2.0",
            "-l",
            "read -p 'really delete? ' x",
        ])?;
        self.tmux(&["send-keys", "-t", "=hx:2.0", "Enter"])?;
        super::wait::wait_until(DEADLINE, "the read builtin in tmux:hx:2.0", || {
            Ok(self.cursor_line("=hx:2.0")?.starts_with("really delete?"))
        })?;
        let before = self.panes()?;

        let restore = self.restore_apply().output()?;
        let stderr = String::from_utf8_lossy(&restore.stderr).into_owned();
        let plan: Value = serde_json::from_slice(&restore.stdout).unwrap_or(Value::Null);
        let item = |surface: &str| {
            plan["surfaces"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|item| item["surface"] == surface)
                .cloned()
        };
        super::wait::wait_for(DEADLINE, "the agent in tmux:hx:2.1", || {
            Ok(self
                .starts(&["hx"])?
                .into_iter()
                .find(|event| event.surface.as_deref() == Some("tmux:hx:2.1")))
        })
        .ok();
        let starts = self.starts(&["hx"])?;
        let started_in = |surface: &str| {
            starts
                .iter()
                .filter(|event| event.surface.as_deref() == Some(surface))
                .count()
        };
        let after = self.panes()?;
        let untouched = |surface: &str| before.get(surface) == after.get(surface);
        // The script still waits, for a line of ours.
        self.tmux(&["send-keys", "-t", "=hx:1.0", "-l", "mine"])?;
        self.tmux(&["send-keys", "-t", "=hx:1.0", "Enter"])?;
        // The shell creates the file before `echo` writes the line: wait for the whole line.
        let script_got = super::wait::wait_for(DEADLINE, "the script to read our line", || {
            Ok(fs::read_to_string(&answer)
                .ok()
                .filter(|text| text.ends_with('\n')))
        })
        .unwrap_or_else(|error| format!("{error:#}"));
        let restore_code = restore.status.code();

        let mut found = Findings::default();
        found.expect(
            record_crafted.status.code() == Some(2),
            format!(
                "record with the crafted dir exited {:?}",
                record_crafted.status.code()
            ),
        );
        found.expect(
            hook.status.success() && hook_log.contains("working dir contains a control character"),
            format!("the hook did not log the crafted dir: {hook_log:?}"),
        );
        found.expect(
            !recorded_anything,
            "capture recorded a refused value".into(),
        );
        found.expect(
            resume_crafted.status.code() == Some(1) && resume_crafted.stdout.is_empty(),
            format!(
                "resume-cmd of the crafted dir exited {:?}",
                resume_crafted.status.code()
            ),
        );
        let crafted_item = item("tmux:hx:0.0");
        found.expect(
            crafted_item.as_ref().is_some_and(|item| {
                item["refusal"]["kind"] == "control_character"
                    && item["refused"].is_string()
                    && item["command"].is_null()
                    && item["applied"].is_null()
            }),
            format!("restore planned the crafted dir: {crafted_item:?}"),
        );
        found.expect(
            started_in("tmux:hx:0.0") == 0 && untouched("tmux:hx:0.0"),
            "a restore acted on the crafted dir's pane".into(),
        );
        found.expect(!ran.exists(), "the crafted dir's command ran".into());
        rows.push(found.row(
            "tmux:hx:0.0",
            "crafted dir",
            "refused, nothing ran",
            "acted on",
        ));

        let mut found = Findings::default();
        found.expect(
            record_option.status.code() == Some(2),
            format!(
                "record of an option-like id exited {:?}",
                record_option.status.code()
            ),
        );
        found.expect(
            resume_option.status.code() == Some(1)
                && String::from_utf8_lossy(&resume_option.stderr).contains("begins with '-'"),
            format!(
                "resume-cmd of the option-like id exited {:?}: {}",
                resume_option.status.code(),
                String::from_utf8_lossy(&resume_option.stderr).trim()
            ),
        );
        found.expect(
            item("tmux:hx:0.1").is_none() && stderr.contains("entry tmux:hx:0.1 is not usable"),
            format!("restore did not refuse the option-like id: {stderr}"),
        );
        found.expect(
            started_in("tmux:hx:0.1") == 0 && untouched("tmux:hx:0.1"),
            "a restore acted on the option-like id's pane".into(),
        );
        rows.push(found.row(
            "tmux:hx:0.1",
            "option-like id",
            "refused, nothing ran",
            "acted on",
        ));

        let busy_applied =
            item("tmux:hx:1.0").and_then(|item| item["applied"].as_str().map(str::to_string));
        let mut found = Findings::default();
        found.expect(
            busy_applied
                .as_deref()
                .is_some_and(|applied| applied.starts_with("skipped: the pane is busy")),
            format!("the busy pane: {busy_applied:?}"),
        );
        found.expect(
            started_in("tmux:hx:1.0") == 0 && untouched("tmux:hx:1.0"),
            "a restore acted on the busy pane".into(),
        );
        found.expect(
            script_got == "mine\n",
            format!("the waiting script read {script_got:?}, not our line"),
        );
        found.expect(
            restore_code == Some(1)
                && stderr.contains("1 of the surfaces tried could not be opened"),
            format!(
                "restore --apply exited {restore_code:?} (expected 1, for h$x alone): {stderr}"
            ),
        );
        rows.push(found.row(
            "tmux:hx:1.0",
            "busy on read",
            "skipped, input intact",
            "acted on",
        ));

        let applied = |surface: &str| {
            item(surface).and_then(|item| item["applied"].as_str().map(str::to_string))
        };
        let typed_applied = applied("tmux:hx:1.1");
        let mut found = Findings::default();
        found.expect(
            typed_applied.as_deref().is_some_and(|applied| {
                applied.starts_with("skipped: the pane is busy: text is typed")
            }),
            format!("the pane with half-typed text: {typed_applied:?}"),
        );
        found.expect(
            started_in("tmux:hx:1.1") == 0 && untouched("tmux:hx:1.1"),
            "a restore acted on the pane with half-typed text".into(),
        );
        found.expect(!typed.exists(), "the half-typed command ran".into());
        rows.push(found.row(
            "tmux:hx:1.1",
            "half-typed text",
            "skipped, text kept",
            "acted on",
        ));

        let read_applied = applied("tmux:hx:2.0");
        let mut found = Findings::default();
        found.expect(
            read_applied.as_deref().is_some_and(|applied| {
                applied.starts_with("skipped: the pane is busy: its shell reads a line")
            }),
            format!("the pane in the read builtin: {read_applied:?}"),
        );
        found.expect(
            started_in("tmux:hx:2.0") == 0 && untouched("tmux:hx:2.0"),
            "a restore acted on the pane in the read builtin".into(),
        );
        rows.push(found.row("tmux:hx:2.0", "read builtin", "skipped as busy", "acted on"));

        let format_applied = applied("tmux:hx:2.1");
        let format_start = starts
            .iter()
            .find(|event| event.surface.as_deref() == Some("tmux:hx:2.1"));
        let mut found = Findings::default();
        found.expect(
            format_hook.status.success() && format_recorded,
            format!("the hook did not record the #(...) dir: {format_hook:?}"),
        );
        found.expect(
            format_applied.as_deref() == Some("started in the existing pane"),
            format!("the idle pane of the #(...) dir: {format_applied:?}"),
        );
        found.expect(
            started_in("tmux:hx:2.1") == 1
                && format_start.is_some_and(|start| {
                    start.argv == ["--resume", format_session.as_str()]
                        && start.cwd == format_dir.to_string_lossy()
                }),
            format!("agents started in the pane: {format_start:?}"),
        );
        found.expect(
            !format_ran.exists(),
            "tmux ran the #(...) in the dir's name".into(),
        );
        rows.push(found.row(
            "tmux:hx:2.1",
            "#(...) dir",
            "resumed there, nothing ran",
            "ran or missed",
        ));

        let rewrite_applied = applied("tmux:h$x:0.0");
        let sessions = self.tmux(&["list-sessions", "-F", "#{session_name}"])?;
        let mut found = Findings::default();
        found.expect(
            rewrite_applied
                .as_deref()
                .is_some_and(|applied| applied.starts_with("failed: tmux cannot name a session")),
            format!("the session name tmux rewrites: {rewrite_applied:?}"),
        );
        found.expect(
            sessions == "hx" && started_in("h$x") == 0,
            format!("sessions after the restore: {sessions:?}"),
        );
        rows.push(found.row(
            "tmux:h$x:0.0",
            "name tmux rewrites",
            "failed, nothing made",
            "made",
        ));
        Ok(())
    }

    /// `restores` restores at once against a server that does not run: every surface is
    /// opened once, at its recorded place, by one of them.
    fn race_on_an_empty_server(&self, restores: usize) -> Result<Row> {
        let sessions = [format!("a{restores}"), format!("b{restores}")];
        // 8 surfaces: 3 + 2 panes in two windows of one session, 2 + 1 in windows 0 and 2 of
        // the other.
        let places: Vec<String> = [
            (0, 0, 0),
            (0, 0, 1),
            (0, 0, 2),
            (0, 1, 0),
            (0, 1, 1),
            (1, 0, 0),
            (1, 0, 1),
            (1, 2, 0),
        ]
        .iter()
        .map(|(session, window, pane)| format!("tmux:{}:{window}.{pane}", sessions[*session]))
        .collect();
        let mut wanted: BTreeMap<String, (String, String)> = BTreeMap::new();
        for (n, surface) in places.iter().enumerate() {
            let session = stand_in::new_session_id()?;
            let dir = self.session_dir(&format!("pane-{n}"), &session)?;
            wanted.insert(
                surface.clone(),
                (session, dir.to_string_lossy().into_owned()),
            );
        }
        let entries: Vec<(&str, &str, &str)> = wanted
            .iter()
            .map(|(surface, (session, dir))| (surface.as_str(), session.as_str(), dir.as_str()))
            .collect();
        self.write_index(&entries)?;

        let children = (0..restores)
            .map(|_| {
                self.restore_apply()
                    .spawn()
                    .context("cannot start a restore")
            })
            .collect::<Result<Vec<_>>>()?;
        let mut problems = Vec::new();
        let mut opened: BTreeMap<String, usize> = BTreeMap::new();
        for child in children {
            let output = child.wait_with_output()?;
            if !output.status.success() {
                problems.push(format!(
                    "a restore exited {:?}: {}",
                    output.status.code(),
                    String::from_utf8_lossy(&output.stderr).trim()
                ));
            }
            let plan: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
            for item in plan["surfaces"].as_array().into_iter().flatten() {
                let applied = item["applied"].as_str().unwrap_or_default();
                if applied.starts_with("failed") {
                    problems.push(format!("{}: {applied}", item["surface"]));
                }
                if !applied.is_empty() && !applied.starts_with("skipped") {
                    *opened
                        .entry(item["surface"].as_str().unwrap_or_default().to_string())
                        .or_default() += 1;
                }
            }
        }
        let once: BTreeMap<String, usize> =
            places.iter().map(|surface| (surface.clone(), 1)).collect();
        if opened != once {
            problems.push(format!("opened {opened:?}, not each surface once"));
        }
        let names: Vec<&str> = sessions.iter().map(String::as_str).collect();
        let started = super::wait::wait_for(DEADLINE, "an agent in every pane", || {
            let starts = self.starts(&names)?;
            Ok((starts.len() >= places.len()).then_some(starts))
        });
        let starts = match started {
            Ok(starts) => starts,
            Err(error) => {
                problems.push(format!("{error:#}"));
                self.starts(&names)?
            }
        };
        let panes = self.panes()?;
        let present: BTreeSet<&String> = panes.keys().collect();
        let expected: BTreeSet<&String> = places.iter().collect();
        if present != expected {
            problems.push(format!("the server has panes {present:?}"));
        }
        for surface in &places {
            let here: Vec<&Event> = starts
                .iter()
                .filter(|event| event.surface.as_deref() == Some(surface.as_str()))
                .collect();
            let (session, dir) = &wanted[surface];
            match here[..] {
                [start] => {
                    if start.argv != ["--resume", session.as_str()] || start.cwd != *dir {
                        problems.push(format!(
                            "{surface}: the agent runs {:?} in {}",
                            start.argv, start.cwd
                        ));
                    }
                    let pane_pid = panes.get(surface).map(|(pid, _)| *pid);
                    if parent_of(start.pid) != pane_pid {
                        problems.push(format!(
                            "{surface}: the agent (pid {}) is not the child of the pane's process",
                            start.pid
                        ));
                    }
                }
                _ => problems.push(format!("{surface}: {} agents started", here.len())),
            }
        }
        let entries = self.entries()?;
        for (surface, (session, _)) in &wanted {
            if entries
                .get(surface)
                .is_none_or(|entry| entry["sessionId"] != session.as_str())
            {
                problems.push(format!(
                    "{surface}: the index holds {:?}",
                    entries.get(surface)
                ));
            }
        }
        let pids: Vec<u32> = starts.iter().map(|event| event.pid).collect();
        self.kill_server();
        self.sandbox.kill_all(&pids, DEADLINE)?;
        let got = format!(
            "{} opened once, {} agents placed",
            opened.len(),
            starts.len()
        );
        Ok(row(
            "(empty server)",
            &format!("{restores} restores at once"),
            &format!(
                "{} opened once, {} agents placed",
                places.len(),
                places.len()
            ),
            &got,
            problems,
        ))
    }
}

/// What went wrong in one case.
#[derive(Debug, Default)]
struct Findings {
    problems: Vec<String>,
}

impl Findings {
    fn expect(&mut self, ok: bool, problem: String) {
        if !ok {
            self.problems.push(problem);
        }
    }

    /// The case's row: `got` is `expected` when nothing went wrong, else `otherwise`.
    fn row(self, surface: &str, case: &str, expected: &str, otherwise: &str) -> Row {
        let got = if self.problems.is_empty() {
            expected
        } else {
            otherwise
        };
        row(surface, case, expected, got, self.problems)
    }
}

fn row(surface: &str, case: &str, expected: &str, got: &str, problems: Vec<String>) -> Row {
    Row {
        surface: surface.to_string(),
        case: case.to_string(),
        expected: expected.to_string(),
        got: got.to_string(),
        problems,
    }
}
