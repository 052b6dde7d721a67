//! The `claude` mode of the stand-in agent: behaves like Claude Code wherever crash-resume
//! looks.
//!
//! - on start it takes a new session id, or with `--resume <sid>` loads the transcript Claude
//!   Code would load (`test_support::claude_model`: the working dir's project folder, else the
//!   one other folder holding a UUID's transcript) and, when there is none, prints what the CLI
//!   prints (`No conversation found with session ID: <sid>`) and exits 1;
//! - it runs the hooks of `$CLAUDE_CONFIG_DIR/settings.json` (SessionStart with `source`
//!   startup/resume/clear, SessionEnd with `reason`) with the JSON payload on stdin and the
//!   pane's own environment (`TMUX`, `TMUX_PANE`);
//! - it keeps `$CLAUDE_CONFIG_DIR/sessions/<pid>.json` while it runs;
//! - it writes its transcript (a user line, then an assistant line, in the CLI's format) only
//!   once it gets a prompt (a line on stdin); `/clear` starts a new session, `/exit` ends it
//!   cleanly, and `/fork-bg` (the simulation's own) forks the conversation into a background
//!   session and ends the transcript with a `continuedInSessionId` record.
//!
//! Killed, it leaves everything as a crash would: no SessionEnd, the sessions file in place.
//! Every event goes to `$HOME/stand-in.log` (one JSON line each) so that the simulation can
//! wait on events and check which session each pane loaded.
//!
//! With `--real-cli <path>` it drives the real Claude Code CLI instead (see [`run_real`]).

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};
use test_support::claude_model::ClaudeCli;
use test_support::stand_in::{Event, Kind, LOG_FILE, hex, new_session_id, random_bytes};
use test_support::transcript::ClaudeLine;

/// How long a hook may run before the stand-in stops waiting for it.
const HOOK_DEADLINE: Duration = Duration::from_secs(10);

/// How long the real CLI may take to answer a resume.
const REAL_CLI_DEADLINE: Duration = Duration::from_secs(45);

/// `stand-in-agent claude [--real-cli PATH] ARGS`: the agent's main.
pub fn main(args: &[String]) -> Result<()> {
    let mut resume = None;
    let mut real_cli = None;
    let mut argv = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--real-cli" => real_cli = words.next().cloned(),
            "--resume" | "-r" => {
                resume = words.next().cloned();
                argv.push(word.clone());
                argv.extend(resume.clone());
            }
            other => {
                if let Some(session) = other.strip_prefix("--resume=") {
                    resume = Some(session.to_string());
                }
                argv.push(word.clone());
            }
        }
    }
    let agent = Agent::from_env(argv)?;
    match real_cli {
        Some(cli) => run_real(&agent, Path::new(&cli)),
        None => agent.run(resume.as_deref()),
    }
}

#[derive(Debug)]
struct Agent {
    pid: u32,
    cwd: String,
    config_dir: PathBuf,
    /// Claude Code as measured: where transcripts are and which one `--resume` loads.
    model: ClaudeCli,
    surface: Option<String>,
    argv: Vec<String>,
    log: PathBuf,
}

/// The session the agent holds, its transcript, and the uuid of its last transcript line.
#[derive(Debug)]
struct Session {
    id: String,
    transcript: PathBuf,
    last_uuid: Option<String>,
}

impl Agent {
    fn from_env(argv: Vec<String>) -> Result<Agent> {
        let home = PathBuf::from(std::env::var_os("HOME").ok_or_else(|| anyhow!("no HOME"))?);
        let config_dir = match std::env::var_os("CLAUDE_CONFIG_DIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => home.join(".claude"),
        };
        // The CLI names the project folder from its own resolved cwd (getcwd resolves links).
        let cwd = std::env::current_dir()
            .context("no working dir")?
            .into_os_string()
            .into_string()
            .map_err(|_| anyhow!("the working dir is not UTF-8"))?;
        let model = ClaudeCli::new(&config_dir, &cwd);
        Ok(Agent {
            pid: std::process::id(),
            surface: surface(),
            cwd,
            config_dir,
            model,
            argv,
            log: home.join(LOG_FILE),
        })
    }

    fn run(&self, resume: Option<&str>) -> Result<()> {
        let mut session = match resume {
            Some(held) => match self.model.resume(held) {
                Ok(loaded) => Session {
                    id: held.to_string(),
                    last_uuid: last_uuid(&loaded),
                    transcript: loaded,
                },
                Err(refusal) => {
                    eprintln!("{refusal}");
                    self.fire("SessionEnd", held, "reason", "other");
                    self.log(Kind::NotFound, Some(held), None, Some(&refusal))?;
                    std::process::exit(1);
                }
            },
            None => self.new_session()?,
        };
        self.write_sessions_file(&session.id)?;
        let source = if resume.is_some() {
            "resume"
        } else {
            "startup"
        };
        self.fire("SessionStart", &session.id, "source", source);
        self.log(Kind::Start, Some(&session.id), resume, None)?;
        println!(
            "stand-in claude: session {} ({source}) in {}",
            session.id, self.cwd
        );
        let stdin = std::io::stdin();
        let mut line = String::new();
        loop {
            line.clear();
            if stdin.lock().read_line(&mut line)? == 0 {
                // The terminal went away without a SessionEnd: like a crash.
                break;
            }
            match line.trim() {
                "" => {}
                "/exit" => {
                    self.fire("SessionEnd", &session.id, "reason", "prompt_input_exit");
                    self.remove_sessions_file();
                    self.log(Kind::Exit, Some(&session.id), None, None)?;
                    return Ok(());
                }
                "/clear" => {
                    self.fire("SessionEnd", &session.id, "reason", "clear");
                    session = self.new_session()?;
                    self.write_sessions_file(&session.id)?;
                    self.fire("SessionStart", &session.id, "source", "clear");
                    self.log(Kind::Clear, Some(&session.id), None, None)?;
                    println!("stand-in claude: cleared, session {}", session.id);
                }
                "/fork-bg" => {
                    let background = self.fork_into_background(&mut session)?;
                    self.log(Kind::Fork, Some(&session.id), None, Some(&background))?;
                    println!("stand-in claude: continued in {background}");
                }
                prompt => {
                    self.answer(&mut session, prompt)?;
                    self.log(Kind::Prompt, Some(&session.id), None, Some(prompt))?;
                    println!("stand-in claude: noted");
                }
            }
        }
        self.remove_sessions_file();
        Ok(())
    }

    /// A new session, its transcript in the working dir's project folder.
    fn new_session(&self) -> Result<Session> {
        let id = new_session_id()?;
        Ok(Session {
            transcript: self.model.transcript(&id),
            id,
            last_uuid: None,
        })
    }

    /// Appends the prompt and an answer to the transcript, creating it on the first prompt.
    fn answer(&self, session: &mut Session, prompt: &str) -> Result<()> {
        let id = format!("msg_{}", hex(&random_bytes::<12>()?));
        let user = self.line(session, |line| line.user(prompt));
        let answer = format!("(stand-in) noted: {prompt}");
        let assistant = self.line(session, |line| line.assistant(&id, &answer));
        self.append(&session.transcript, &[user, assistant])
    }

    /// A transcript line as the CLI writes it (`build` picks its kind), linked to the previous
    /// one.
    fn line(&self, session: &mut Session, build: impl FnOnce(&ClaudeLine<'_>) -> Value) -> Value {
        let uuid = new_session_id().unwrap_or_default();
        let timestamp = rfc3339_now();
        let line = build(&ClaudeLine {
            session: &session.id,
            cwd: Path::new(&self.cwd),
            uuid: &uuid,
            parent: session.last_uuid.as_deref(),
            timestamp: &timestamp,
        });
        session.last_uuid = Some(uuid);
        line
    }

    fn append(&self, path: &Path, lines: &[Value]) -> Result<()> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .with_context(|| format!("cannot append to {}", path.display()))
    }

    /// Forks the conversation into a background session: the new session gets a transcript of
    /// its own (it ran without a pane, so no hook names a surface for it), and this one ends with
    /// a record saying where the conversation continued. Returns the background session's id.
    fn fork_into_background(&self, session: &mut Session) -> Result<String> {
        let mut background = self.new_session()?;
        self.answer(&mut background, "(forked) carry on in the background")?;
        let record = json!({
            "type": "system",
            "continuedInSessionId": background.id,
            "sessionId": session.id,
            "uuid": new_session_id()?,
            "timestamp": rfc3339_now(),
        });
        self.append(&session.transcript, &[record])?;
        Ok(background.id)
    }

    fn sessions_file(&self) -> PathBuf {
        self.config_dir
            .join("sessions")
            .join(format!("{}.json", self.pid))
    }

    fn write_sessions_file(&self, session: &str) -> Result<()> {
        let path = self.sessions_file();
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let content = json!({"pid": self.pid, "sessionId": session, "cwd": self.cwd});
        fs::write(&path, content.to_string())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    fn remove_sessions_file(&self) {
        let _ = fs::remove_file(self.sessions_file());
    }

    /// Runs the command hooks `settings.json` holds for `event`, as Claude Code does: each
    /// through `sh -c`, the payload on stdin, in the agent's environment and working dir.
    fn fire(&self, event: &str, session: &str, key: &str, value: &str) {
        let mut payload = json!({
            "session_id": session,
            "transcript_path": self.model.transcript(session),
            "cwd": self.cwd,
            "hook_event_name": event,
        });
        payload[key] = json!(value);
        for command in hook_commands(&self.config_dir, event, value) {
            let started = Command::new("sh")
                .args(["-c", &command])
                .current_dir(&self.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let Ok(mut child) = started else { continue };
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(payload.to_string().as_bytes());
            }
            let _ = wait_with_deadline(&mut child, HOOK_DEADLINE);
        }
    }

    fn log(
        &self,
        kind: Kind,
        session: Option<&str>,
        loaded: Option<&str>,
        text: Option<&str>,
    ) -> Result<()> {
        let event = Event {
            pid: self.pid,
            kind,
            surface: self.surface.clone(),
            cwd: self.cwd.clone(),
            argv: self.argv.clone(),
            config_dir: self.config_dir.to_string_lossy().into_owned(),
            session: session.map(str::to_string),
            loaded: loaded.map(str::to_string),
            text: text.map(str::to_string),
        };
        let line = format!("{}\n", serde_json::to_string(&event)?);
        // One write of a short line with O_APPEND: concurrent agents do not interleave.
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .and_then(|mut file| file.write_all(line.as_bytes()))
            .with_context(|| format!("cannot append to {}", self.log.display()))
    }
}

/// The real Claude Code CLI as the resumed process: runs `claude -p ARGS <probe>` offline (the
/// wrapper exported the offline environment), reports which transcript it appended the probe
/// to and what it printed, then waits on the terminal like an interactive agent (so the pane
/// stays busy and nothing is typed into it a second time).
fn run_real(agent: &Agent, cli: &Path) -> Result<()> {
    let held = agent
        .argv
        .windows(2)
        .find(|pair| pair[0] == "--resume")
        .map(|pair| pair[1].clone());
    agent.log(Kind::Start, held.as_deref(), None, Some("real CLI"))?;
    let probe = format!("reboot-sim probe from pid {}", agent.pid);
    let output_dir = agent.config_dir.join("reboot-sim-real");
    fs::create_dir_all(&output_dir)
        .with_context(|| format!("cannot create {}", output_dir.display()))?;
    let stdout_path = output_dir.join(format!("{}.stdout", agent.pid));
    let stderr_path = output_dir.join(format!("{}.stderr", agent.pid));
    let mut child = Command::new(cli)
        .arg("-p")
        .args(&agent.argv)
        .arg(&probe)
        .current_dir(&agent.cwd)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path)?)
        .stderr(File::create(&stderr_path)?)
        .spawn()
        .with_context(|| format!("cannot run {}", cli.display()))?;
    let status = match wait_with_deadline(&mut child, REAL_CLI_DEADLINE)? {
        Some(status) => status.to_string(),
        None => format!("still running after {REAL_CLI_DEADLINE:?}, killed"),
    };
    let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
    let loaded = transcript_holding(&agent.config_dir.join("projects"), &probe);
    let said = stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    agent.log(
        Kind::Real,
        held.as_deref(),
        loaded.as_deref(),
        Some(&format!("{status}; {said}")),
    )?;
    println!("real claude: {status}; {said}");
    let stdin = std::io::stdin();
    let mut line = String::new();
    loop {
        line.clear();
        if stdin.lock().read_line(&mut line)? == 0 {
            return Ok(());
        }
        if !line.trim().is_empty() {
            agent.log(Kind::Prompt, held.as_deref(), None, Some(line.trim()))?;
        }
    }
}

/// The session whose transcript (a direct child of a project folder) holds `probe` as a user
/// message.
fn transcript_holding(projects: &Path, probe: &str) -> Option<String> {
    let folders = fs::read_dir(projects).ok()?;
    folders
        .flatten()
        .flat_map(|folder| fs::read_dir(folder.path()).into_iter().flatten().flatten())
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
        })
        .find(|path| {
            fs::read_to_string(path).is_ok_and(|text| {
                text.lines()
                    .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                    .any(|line| line["type"] == "user" && line["message"]["content"] == probe)
            })
        })
        .and_then(|path| Some(path.file_stem()?.to_string_lossy().into_owned()))
}

/// `tmux:<session>:<window>.<pane>` of `$TMUX_PANE` (`mux::tmux::TmuxPane` without its
/// server: the pane's place in the server it runs in), asking that server.
fn surface() -> Option<String> {
    let pane = std::env::var("TMUX_PANE")
        .ok()
        .filter(|pane| !pane.is_empty())?;
    let output = Command::new("tmux")
        .args([
            "display-message",
            "-p",
            "-t",
            &pane,
            "#{window_index}\t#{pane_index}\t#{session_name}",
        ])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut fields = text.strip_suffix('\n').unwrap_or(&text).splitn(3, '\t');
    let (window, index) = (fields.next()?.parse().ok()?, fields.next()?.parse().ok()?);
    let session = fields.next().filter(|session| !session.is_empty())?;
    output.status.success().then(|| {
        mux::tmux::TmuxPane {
            server: None,
            session: session.to_string(),
            window,
            pane: index,
        }
        .to_string()
    })
}

/// The `uuid` of the transcript's last line that has one.
fn last_uuid(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    text.lines().rev().find_map(|line| {
        serde_json::from_str::<Value>(line)
            .ok()?
            .get("uuid")?
            .as_str()
            .map(str::to_string)
    })
}

/// The commands of the `command` hooks for `event` whose matcher accepts `value` (the source or
/// reason; no matcher, `""` and `"*"` accept all, `a|b` accepts either).
fn hook_commands(config_dir: &Path, event: &str, value: &str) -> Vec<String> {
    let Ok(bytes) = fs::read(config_dir.join("settings.json")) else {
        return Vec::new();
    };
    let Ok(settings) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    let Some(groups) = settings["hooks"][event].as_array() else {
        return Vec::new();
    };
    groups
        .iter()
        .filter(|group| match group["matcher"].as_str() {
            None | Some("" | "*") => true,
            Some(matcher) => matcher.split('|').any(|one| one == value),
        })
        .filter_map(|group| group["hooks"].as_array())
        .flatten()
        .filter(|hook| hook["type"] == "command")
        .filter_map(|hook| hook["command"].as_str().map(str::to_string))
        .collect()
}

/// Waits for `child` up to `deadline`; kills it past that and returns `None`.
fn wait_with_deadline(
    child: &mut std::process::Child,
    deadline: Duration,
) -> Result<Option<std::process::ExitStatus>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Now as `2026-01-05T09:30:00.000Z`.
fn rfc3339_now() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = now.as_secs();
    let (year, month, day) = civil_from_days(i64::try_from(seconds / 86_400).unwrap_or_default());
    let of_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 to a (year, month, day) date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
