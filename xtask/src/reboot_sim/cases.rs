//! The panes and what happens in each before the crash: the cases users hit, the tmux layout
//! they sit in, the driver that plays each case through the stand-in, and the ground truth each
//! one leaves (what a restore must do with the pane).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::sandbox::{Sandbox, create_dir};
use test_support::stand_in::{self, Event, Kind};

/// How long one step of a case may take (an agent starting, a prompt answered).
const STEP_DEADLINE: Duration = Duration::from_secs(15);

/// A working dir with spaces, dots, underscores and a non-ASCII letter.
pub const ODD_DIR: &str = "my proj.v2_ü";
/// A symlink to [`ODD_DIR`].
const LINK_DIR: &str = "odd-link";

/// What a pane went through before the crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// A session with a prompt.
    Plain,
    /// A session, then `/clear` and a prompt: a new id, the old one kept in the chain.
    Clear,
    /// A session ended with `/exit`: not restored by default.
    CleanExit,
    /// A session that never got a prompt: no transcript, nothing else on disk.
    NoPrompt,
    /// A session forked into the background: its transcript ends with `continuedInSessionId`.
    ContinuedIn,
    /// A session in [`ODD_DIR`].
    OddDir,
    /// A session started through a symlink to [`ODD_DIR`]: two panes in one working dir.
    SymlinkTwin,
    /// A session in [`ODD_DIR`] whose transcript was deleted while another session of that dir
    /// (started outside any pane, and smaller than the two other panes' transcripts there)
    /// exists on disk: recovered, and never into the other panes' sessions.
    Recover,
}

/// The cases, in pane order; panes past these are plain.
pub const CASES: [Case; 8] = [
    Case::Plain,
    Case::Clear,
    Case::CleanExit,
    Case::NoPrompt,
    Case::ContinuedIn,
    Case::OddDir,
    Case::SymlinkTwin,
    Case::Recover,
];

/// One thing done in a pane.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Type `claude` at the pane's shell.
    Start,
    Prompt(&'static str),
    Clear,
    ForkBg,
    Exit,
    /// Run a session in the pane's dir outside tmux (its hook finds no surface).
    Elsewhere(&'static str),
    /// Delete the transcript of the pane's session.
    DeleteTranscript,
}

impl Case {
    pub fn name(self) -> &'static str {
        match self {
            Case::Plain => "plain",
            Case::Clear => "after /clear",
            Case::CleanExit => "clean exit",
            Case::NoPrompt => "no prompt",
            Case::ContinuedIn => "continued-in",
            Case::OddDir => "odd dir name",
            Case::SymlinkTwin => "symlink, twin",
            Case::Recover => "deleted, recover",
        }
    }

    /// The dir the pane's shell starts in, under the work dir.
    fn dir(self, index: usize) -> String {
        match self {
            Case::Plain => format!("plain-{index}"),
            Case::Clear => "clear".into(),
            Case::CleanExit => "clean-exit".into(),
            Case::NoPrompt => "no-prompt".into(),
            Case::ContinuedIn => "fork".into(),
            Case::OddDir | Case::Recover => ODD_DIR.into(),
            Case::SymlinkTwin => LINK_DIR.into(),
        }
    }

    fn script(self) -> &'static [Step] {
        match self {
            Case::Plain => &[Step::Start, Step::Prompt("explain the build")],
            Case::Clear => &[
                Step::Start,
                Step::Prompt("first topic"),
                Step::Clear,
                Step::Prompt("second topic"),
            ],
            Case::CleanExit => &[Step::Start, Step::Prompt("a quick question"), Step::Exit],
            Case::NoPrompt => &[Step::Start],
            Case::ContinuedIn => &[Step::Start, Step::Prompt("a long task"), Step::ForkBg],
            Case::OddDir => &[
                Step::Start,
                Step::Prompt("a long first question about the odd directory name"),
                Step::Prompt("and a second one"),
            ],
            Case::SymlinkTwin => &[
                Step::Start,
                Step::Prompt("a long first question asked through the symlink"),
                Step::Prompt("and a second one"),
            ],
            Case::Recover => &[
                Step::Elsewhere("hi"),
                Step::Start,
                Step::Prompt("soon lost"),
                Step::DeleteTranscript,
            ],
        }
    }
}

/// Whether the surface id `recorded` (an index entry's `surfaceId`, a plan item's `surface`)
/// names the pane at `place` ([`Slot::surface`]): the same pane, whatever server it names (the
/// simulation runs one).
pub fn names_place(recorded: &str, place: &str) -> bool {
    match mux::Surface::parse(recorded) {
        Ok(mux::Surface::Tmux(pane)) => pane.without_server().to_string() == place,
        _ => recorded == place,
    }
}

/// [`names_place`] for a JSON value (a string, else nothing).
pub fn value_names_place(recorded: &serde_json::Value, place: &str) -> bool {
    recorded
        .as_str()
        .is_some_and(|recorded| names_place(recorded, place))
}

/// A pane's place in the layout, as tmux-resurrect restores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub session: String,
    pub window: u32,
    pub pane: u32,
    /// Where its shell starts.
    pub dir: PathBuf,
}

impl Slot {
    /// Pane `pane` of window `window` of the tmux session `session`, its shell in `dir`.
    pub fn new(session: &str, window: u32, pane: u32, dir: PathBuf) -> Slot {
        Slot {
            session: session.to_string(),
            window,
            pane,
            dir,
        }
    }

    /// The pane's place in the simulation's one tmux server, `tmux:<session>:<window>.<pane>`:
    /// how the stand-in names where it runs, and the table's short name for the surface the
    /// hook records (`tmux:<socket path>:<session>:<window>.<pane>`, [`names_place`]).
    pub fn surface(&self) -> String {
        format!("tmux:{}:{}.{}", self.session, self.window, self.pane)
    }

    pub fn target(&self) -> String {
        format!("={}:{}.{}", self.session, self.window, self.pane)
    }
}

#[derive(Debug, Clone)]
pub struct Pane {
    pub case: Case,
    pub slot: Slot,
}

/// `count` panes: two per window, windows 0 and 3 (indexes keep their gaps across a restore),
/// two windows per session.
pub fn layout(count: usize, work: &Path) -> Vec<Pane> {
    const NAMES: [&str; 6] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
    (0..count)
        .map(|index| {
            let case = CASES.get(index).copied().unwrap_or(Case::Plain);
            let session = NAMES
                .get(index / 4)
                .map_or_else(|| format!("s{}", index / 4), |name| (*name).to_string());
            let window = if index % 4 < 2 { 0 } else { 3 };
            Pane {
                case,
                slot: Slot {
                    session,
                    window,
                    pane: u32::try_from(index % 2).unwrap_or_default(),
                    dir: work.join(case.dir(index)),
                },
            }
        })
        .collect()
}

/// Creates the panes' working dirs, and the symlink.
pub fn prepare_dirs(work: &Path, panes: &[Pane]) -> Result<()> {
    create_dir(&work.join(ODD_DIR))?;
    let link = work.join(LINK_DIR);
    if !link.exists() {
        std::os::unix::fs::symlink(ODD_DIR, &link)
            .with_context(|| format!("cannot create the symlink {}", link.display()))?;
    }
    for pane in panes {
        create_dir(&pane.slot.dir)?;
    }
    Ok(())
}

/// Starts the private tmux server with panes at exactly these places, each an idle shell in
/// its dir, and waits until every shell runs.
pub fn start_server(sandbox: &Sandbox, slots: &[Slot]) -> Result<()> {
    const SHELL: [&str; 3] = ["bash", "--norc", "--noprofile"];
    let mut panes_per_window: BTreeMap<(String, u32), u32> = BTreeMap::new();
    let mut sessions = HashSet::new();
    for slot in slots {
        let dir = slot.dir.to_str().context("a pane's dir is not UTF-8")?;
        let window = format!("={}:{}", slot.session, slot.window);
        let count = panes_per_window
            .entry((slot.session.clone(), slot.window))
            .or_default();
        let target = format!("{window}.{}", count.saturating_sub(1));
        let mut args: Vec<&str> = Vec::new();
        let new_session = sessions.insert(slot.session.clone());
        if new_session {
            args.extend([
                "new-session",
                "-d",
                "-s",
                &slot.session,
                "-x",
                "220",
                "-y",
                "50",
                "-c",
                dir,
            ]);
        } else if *count == 0 {
            args.extend(["new-window", "-d", "-t", &window, "-c", dir]);
        } else {
            args.extend(["split-window", "-d", "-t", &target, "-c", dir]);
        }
        args.extend(SHELL);
        sandbox.tmux(&args)?;
        if new_session && slot.window != 0 {
            // A new session's window is 0; resurrect keeps the saved index.
            let created = format!("={}:0", slot.session);
            sandbox.tmux(&["move-window", "-s", &created, "-t", &window])?;
        }
        *count += 1;
    }
    let wanted: HashSet<String> = slots.iter().map(Slot::surface).collect();
    let present: HashSet<String> = list_panes(sandbox)?
        .into_iter()
        .map(|pane| pane.slot.surface())
        .collect();
    if wanted != present {
        bail!("tmux made panes {present:?}, not the layout {wanted:?}");
    }
    // A restore re-uses a pane only once its shell shows its prompt (bash's `\s-\v\$ `).
    super::wait_until(STEP_DEADLINE, "every pane's shell at its prompt", || {
        for pane in list_panes(sandbox)? {
            let target = pane.slot.target();
            let row = sandbox.tmux(&["display-message", "-p", "-t", &target, "#{cursor_y}"])?;
            let line =
                sandbox.tmux(&["capture-pane", "-p", "-t", &target, "-S", &row, "-E", &row])?;
            if pane.command != "bash" || !line.trim_end().ends_with(['$', '#']) {
                return Ok(false);
            }
        }
        Ok(true)
    })
}

/// A pane as tmux lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub slot: Slot,
    pub command: String,
    pub pid: u32,
}

/// Every pane of the server, with its current path (the `dir` of its slot), command and pid.
pub fn list_panes(sandbox: &Sandbox) -> Result<Vec<Listed>> {
    let text = sandbox.tmux(&[
        "list-panes",
        "-a",
        "-F",
        "#{session_name}\t#{window_index}\t#{pane_index}\t#{pane_current_command}\t#{pane_pid}\t#{pane_current_path}",
    ])?;
    text.lines()
        .map(|line| {
            // A pane that is still starting has no current path yet; the trailing empty field
            // is then gone from the trimmed output.
            let fields: Vec<&str> = line.splitn(6, '\t').chain([""]).collect();
            let [session, window, pane, command, pid, path, ..] = fields[..] else {
                bail!("tmux listed a pane as {line:?}");
            };
            Ok(Listed {
                slot: Slot {
                    session: session.to_string(),
                    window: window.parse()?,
                    pane: pane.parse()?,
                    dir: PathBuf::from(path),
                },
                command: command.to_string(),
                pid: pid.parse()?,
            })
        })
        .collect()
}

/// What a restore must do with a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// `resume`, loading this session.
    Resume(String),
    /// `recover`, loading this session.
    Recover(String),
    /// `fresh`: nothing typed.
    Fresh,
    /// Not in the plan: the session ended cleanly.
    NotRestored,
}

/// The ground truth one pane left before the crash.
#[derive(Debug, Clone)]
pub struct Truth {
    pub pane: Pane,
    /// The session the index must hold for the surface.
    pub held: String,
    /// Sessions the surface held before (its chain), oldest first.
    pub earlier: Vec<String>,
    pub expect: Expect,
    /// The resolved working dir the agent ran in.
    pub cwd: String,
}

/// Plays the cases in the panes through the stand-in, waiting on its log for each step.
#[derive(Debug)]
pub struct Driver<'a> {
    sandbox: &'a Sandbox,
    started: HashSet<u32>,
}

impl<'a> Driver<'a> {
    pub fn new(sandbox: &'a Sandbox) -> Self {
        Driver {
            sandbox,
            started: HashSet::new(),
        }
    }

    pub fn drive(&mut self, pane: &Pane) -> Result<Truth> {
        let surface = pane.slot.surface();
        let mut agent: Option<Event> = None;
        let mut earlier = Vec::new();
        let mut forked = None;
        let mut elsewhere = None;
        for step in pane.case.script() {
            let pid = agent.as_ref().map(|event| event.pid);
            let session = agent.as_ref().and_then(|event| event.session.clone());
            match *step {
                Step::Start => {
                    type_line(self.sandbox, &pane.slot, "claude")?;
                    let started = &self.started;
                    let event = self.wait(&format!("an agent to start in {surface}"), |event| {
                        event.kind == Kind::Start
                            && event.surface.as_deref() == Some(surface.as_str())
                            && !started.contains(&event.pid)
                    })?;
                    self.started.insert(event.pid);
                    agent = Some(event);
                }
                Step::Prompt(text) => {
                    type_line(self.sandbox, &pane.slot, text)?;
                    self.wait(&format!("the agent in {surface} to answer"), |event| {
                        Some(event.pid) == pid
                            && event.kind == Kind::Prompt
                            && event.text.as_deref() == Some(text)
                    })?;
                }
                Step::Clear => {
                    type_line(self.sandbox, &pane.slot, "/clear")?;
                    let event = self
                        .wait(&format!("the agent in {surface} to clear"), |event| {
                            Some(event.pid) == pid && event.kind == Kind::Clear
                        })?;
                    earlier.extend(session);
                    agent = Some(event);
                }
                Step::ForkBg => {
                    type_line(self.sandbox, &pane.slot, "/fork-bg")?;
                    let event = self.wait(&format!("the agent in {surface} to fork"), |event| {
                        Some(event.pid) == pid && event.kind == Kind::Fork
                    })?;
                    forked = event.text;
                }
                Step::Exit => {
                    type_line(self.sandbox, &pane.slot, "/exit")?;
                    self.wait(&format!("the agent in {surface} to exit"), |event| {
                        Some(event.pid) == pid && event.kind == Kind::Exit
                    })?;
                }
                Step::Elsewhere(prompt) => elsewhere = Some(self.elsewhere(pane, prompt)?),
                Step::DeleteTranscript => {
                    let event = agent.as_ref().context("no agent ran in the pane")?;
                    let session = session.as_deref().context("the agent has no session")?;
                    let transcript = PathBuf::from(&event.config_dir)
                        .join("projects")
                        .join(preflight::claude::project_folder_name(&event.cwd))
                        .join(format!("{session}.jsonl"));
                    fs::remove_file(&transcript)
                        .with_context(|| format!("cannot delete {}", transcript.display()))?;
                }
            }
        }
        let agent = agent.context("no agent ran in the pane")?;
        let held = agent.session.clone().context("the agent has no session")?;
        let expect = match pane.case {
            Case::Plain | Case::Clear | Case::OddDir | Case::SymlinkTwin => {
                Expect::Resume(held.clone())
            }
            Case::ContinuedIn => Expect::Resume(forked.context("the agent did not fork")?),
            Case::CleanExit => Expect::NotRestored,
            Case::NoPrompt => Expect::Fresh,
            Case::Recover => Expect::Recover(elsewhere.context("no session ran elsewhere")?),
        };
        Ok(Truth {
            pane: pane.clone(),
            held,
            earlier,
            expect,
            cwd: agent.cwd,
        })
    }

    /// Runs a session with one prompt in the pane's dir, outside tmux, to its end; returns its
    /// id.
    fn elsewhere(&mut self, pane: &Pane, prompt: &str) -> Result<String> {
        let mut child = self
            .sandbox
            .command(self.sandbox.bin.join("claude"))
            .current_dir(&pane.slot.dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .context("cannot start the stand-in outside tmux")?;
        let pid = child.id();
        {
            let mut stdin = child.stdin.take().context("no stdin pipe")?;
            std::io::Write::write_all(&mut stdin, format!("{prompt}\n").as_bytes())?;
        }
        let status = child.wait()?;
        if !status.success() {
            bail!("the stand-in run outside tmux failed: {status}");
        }
        let event = self.wait("the session outside tmux to answer", |event| {
            event.pid == pid && event.kind == Kind::Prompt
        })?;
        event.session.context("the session outside tmux has no id")
    }

    fn wait(&self, what: &str, wanted: impl Fn(&Event) -> bool) -> Result<Event> {
        let log = self.sandbox.log_path();
        super::wait_for(STEP_DEADLINE, what, || {
            Ok(stand_in::read_events(&log, 0)?
                .into_iter()
                .find(|event| wanted(event)))
        })
    }
}

/// Types `text` and Enter into the pane, as a person would.
pub fn type_line(sandbox: &Sandbox, slot: &Slot, text: &str) -> Result<()> {
    let target = slot.target();
    sandbox.tmux(&["send-keys", "-t", &target, "-l", text])?;
    sandbox.tmux(&["send-keys", "-t", &target, "Enter"])?;
    Ok(())
}
