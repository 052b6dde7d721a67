//! Zellij: its surface grammar (`zellij:<session>:<pane>`, [`ZellijPane`]), the name the hook
//! gives a pane so that its surface survives zellij's restart ([`name_pane`]), and its backend
//! ([`Zellij`]): use the recorded session when it runs, resurrect it when zellij lists it as
//! exited, create it when it is gone; then start the resume command as the process of the pane
//! that bears the recorded name (`new-pane --in-place --close-replaced-pane`), or in a new pane
//! of that name, skipping a busy pane.
//!
//! What zellij does that this is built around (zellij 0.45.1, measured):
//!
//! - Pane ids are renumbered in layout order when a session is resurrected, so a bare id names
//!   another pane afterwards; pane names, tab names and the session name survive. An entry
//!   recorded under a bare id is used by that id only in a session that has run since (this
//!   restore neither resurrected nor created it); otherwise it gets a new pane.
//! - A resurrected session lays its panes out in stages: the pane list is read until it stops
//!   changing before anything is looked up or created, or panes would be duplicated.
//! - A small share of `action` and `list-sessions` calls answer "Session not found" or nothing
//!   for a running session: reads are retried; a pane is created again only when a listing
//!   shows it is not there.
//! - A resurrected command pane waits for Enter; it is held, not busy, and is replaced in place.
//! - `--cwd` with a dir that does not exist falls back silently: the caller passes only a dir
//!   that exists, and the start script changes into it again.
//!
//! Zellij shows the CLI neither a pane's terminal mode nor its cursor line, so a shell pane is
//! judged by its foreground command alone: a bare interactive shell is idle (half-typed text at
//! its prompt is not seen, and is dropped unrun when the pane is replaced), anything else is
//! busy. Nothing is ever typed into a pane, and no recorded name beginning with `-` (which
//! zellij's argv parser would take for an option) is passed. Every call runs `zellij` with a deadline, without the
//! `ZELLIJ*` variables of a zellij the caller may run in (so `ZELLIJ_CONFIG_DIR`,
//! `ZELLIJ_SOCKET_DIR` and `XDG_CACHE_HOME` choose the instance); once one has not answered, no
//! further call is made.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::{Duration, Instant};

use crate::backend::{Backend, Created, MuxError, Opened, Start};
use crate::multiplexer::Multiplexer;
use crate::pane::Busy;
use crate::surface::Surface;

pub(crate) mod address;
pub(crate) mod entry;
mod layout;

pub use address::{PaneHandle, ZellijPane};
use layout::{Bearer, OwnName};

/// How often a read that zellij answered with nothing or "Session not found" is asked in all.
const READ_ATTEMPTS: usize = 3;

/// How often the pane list must read the same, in a row, before a resurrected or created
/// session counts as laid out.
const STABLE_READS: usize = 3;

/// The pause between two reads of a session that is still being laid out.
const SETTLE_PAUSE: Duration = Duration::from_millis(100);

/// The prefix of the pane names the hook gives.
pub const NAME_PREFIX: &str = "cr-";

/// The variables of a zellij the caller runs in, which would make `zellij` act on that session
/// (or refuse to attach from inside it): every call runs without them.
const INSIDE_VARIABLES: [&str; 3] = ["ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"];

/// The `zellij` to run: the first on `PATH`, else Homebrew's, else plain `zellij`.
pub fn program() -> PathBuf {
    crate::program::find_program(
        "zellij",
        std::env::var_os("PATH"),
        &crate::program::HOMEBREW_DIRS,
    )
    .unwrap_or_else(|| PathBuf::from("zellij"))
}

/// One pane of `zellij action list-panes --all --json` (the fields used).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ListedPane {
    /// The id among panes of its kind (`terminal_<id>`).
    pub id: u32,
    /// Whether it is a plugin pane (the tab bar, the status bar).
    pub is_plugin: bool,
    /// Its name when it has one, else its terminal's title (which its program sets: never
    /// taken for a name alone, see the `layout` module).
    pub title: String,
    /// Whether its command exited.
    #[serde(default)]
    pub exited: bool,
    /// Whether it is a command pane waiting for Enter (a resurrected one, or one that exited).
    #[serde(default)]
    pub is_held: bool,
    /// The tab it is in.
    pub tab_id: usize,
    /// The command line of its foreground process, when zellij could read it.
    #[serde(default)]
    pub pane_command: Option<String>,
    /// A command pane's command line, which zellij names the pane after unless given a name.
    #[serde(default)]
    pub terminal_command: Option<String>,
}

impl ListedPane {
    /// `terminal_<id>`, as `--pane-id` takes it.
    fn target(&self) -> String {
        format!("terminal_{}", self.id)
    }

    /// Whether the pane may be taken over: a held or exited command pane, or a bare interactive
    /// shell in front; else why not.
    pub fn judge(&self) -> Result<(), Busy> {
        if self.exited || self.is_held {
            return Ok(());
        }
        let Some(command) = self.pane_command.as_deref() else {
            return Err(Busy::UnknownMode);
        };
        let mut words = command.split_whitespace();
        let program = words.next().unwrap_or_default();
        let program = program.rsplit('/').next().unwrap_or(program);
        let program = program.trim_start_matches('-');
        if !crate::pane::SHELLS.contains(&program) {
            return Err(Busy::Program(program.to_string()));
        }
        if words.any(|word| !word.starts_with('-') || word == "-c") {
            return Err(Busy::Script);
        }
        Ok(())
    }
}

/// Whether a session is running, listed as exited, or not there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SessionState {
    Running,
    Exited,
    Gone,
}

/// The sessions of `zellij list-sessions --no-formatting`: `NAME [Created 5s ago] (SUFFIX)`,
/// the suffix saying `EXITED` for one zellij can resurrect.
fn parse_sessions(listing: &str) -> Vec<(String, SessionState)> {
    listing
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.rsplit_once(" [Created ")?;
            let state = if rest.contains("(EXITED") {
                SessionState::Exited
            } else {
                SessionState::Running
            };
            Some((name.to_string(), state))
        })
        .collect()
}

/// A name for a pane the hook runs in: `cr-<pane id>-<ms since the epoch, base 36>`, unique in
/// its session and free of `:`.
pub fn new_pane_name(pane_id: u32, now_ms: u64) -> String {
    let mut digits = Vec::new();
    let mut rest = now_ms;
    loop {
        let digit = u8::try_from(rest % 36).unwrap_or(0);
        digits.push(char::from_digit(u32::from(digit), 36).unwrap_or('0'));
        rest /= 36;
        if rest == 0 {
            break;
        }
    }
    let time: String = digits.into_iter().rev().collect();
    format!("{NAME_PREFIX}{pane_id}-{time}")
}

/// Whether a pane title is a name [`new_pane_name`] made.
pub fn is_pane_name(title: &str) -> bool {
    title.strip_prefix(NAME_PREFIX).is_some_and(|rest| {
        rest.split_once('-').is_some_and(|(id, time)| {
            !id.is_empty()
                && id.bytes().all(|byte| byte.is_ascii_digit())
                && !time.is_empty()
                && time
                    .bytes()
                    .all(|byte| byte.is_ascii_digit() || byte.is_ascii_lowercase())
        })
    })
}

/// The name the pane `pane_id` of `session` bears, if it bears one that can stand for it in a
/// surface (one of ours, or one the user gave it), changing nothing (a listing and the layout,
/// ended by `deadline`): what a command that only reads calls the pane.
pub fn pane_name(
    program: &Path,
    session: &str,
    pane_id: u32,
    deadline: Instant,
) -> Result<Option<String>, MuxError> {
    let zellij = Zellij::new(Some(program.to_path_buf()), Duration::ZERO, None);
    let remaining = || deadline.saturating_duration_since(Instant::now());
    let panes = zellij.panes_within(session, remaining())?;
    let Some(pane) = panes
        .iter()
        .find(|pane| !pane.is_plugin && pane.id == pane_id)
    else {
        return Ok(None);
    };
    let names = zellij.layout_names_within(session, remaining())?;
    Ok(match layout::own_name(pane, &panes, &names) {
        OwnName::Ours(name) => Some(name),
        OwnName::Users(name) if layout::is_handle(&name) => Some(name),
        OwnName::Users(_) | OwnName::None | OwnName::Unsure(_) => None,
    })
}

/// How long the hook waits before it lists a session's panes again when its own is not shown.
const LIST_AGAIN_AFTER: Duration = Duration::from_millis(50);

/// The stable surface of the pane `pane_id` of `session`, for the hook: the pane's name when
/// it bears one of ours, or one the user gave it (kept: the pane is never renamed then), else
/// a new name given to it (`rename-pane`). A pane bears a name only as the layout says
/// (the `layout` module): a title a program set is no name. Every call ends by `deadline`. A pane the
/// list does not show yet is asked for again until then, and a refused rename is tried again:
/// a hook that runs first thing in a new pane can ask before zellij lists the pane, and zellij
/// now and then answers a running session with nothing or refuses it. Fails, renaming nothing,
/// when the pane's own name cannot stand for it in a surface, or when its title shows a name
/// another pane may bear (the caller records the bare id).
pub fn name_pane(
    program: &Path,
    session: &str,
    pane_id: u32,
    now_ms: u64,
    deadline: Instant,
) -> Result<ZellijPane, MuxError> {
    let zellij = Zellij::new(Some(program.to_path_buf()), Duration::ZERO, None);
    let remaining = || deadline.saturating_duration_since(Instant::now());
    let listed = |panes: &[ListedPane]| {
        panes
            .iter()
            .find(|pane| !pane.is_plugin && pane.id == pane_id)
            .cloned()
    };
    let mut panes = zellij.panes_within(session, remaining())?;
    while listed(&panes).is_none() && remaining() > LIST_AGAIN_AFTER * 2 {
        std::thread::sleep(LIST_AGAIN_AFTER);
        panes = zellij.panes_within(session, remaining())?;
    }
    let Some(pane) = listed(&panes) else {
        return Err(MuxError::Answer(format!(
            "zellij session {session:?} has no terminal pane {pane_id}"
        )));
    };
    let names = zellij.layout_names_within(session, remaining())?;
    let name = match layout::own_name(&pane, &panes, &names) {
        OwnName::Ours(name) => name,
        OwnName::Users(name) if layout::is_handle(&name) => name,
        OwnName::Users(name) => {
            return Err(MuxError::Answer(format!(
                "the pane bears the name {name:?} of the user's, which is kept, and which a \
                 surface cannot carry (empty, all digits, with a ':' or a control character, or \
                 beginning with '-')"
            )));
        }
        OwnName::Unsure(title) => {
            return Err(MuxError::Answer(format!(
                "the pane's title shows {title:?}, which more than one pane shows (a program \
                 set a pane's title to it): whether it is this pane's name cannot be told, so \
                 the pane was not renamed"
            )));
        }
        OwnName::None => {
            let name = new_pane_name(pane_id, now_ms);
            let target = pane.target();
            let rename = [
                "--session",
                session,
                "action",
                "rename-pane",
                "--pane-id",
                &target,
                &name,
            ];
            // zellij now and then refuses an action on a running session ("There is no active
            // session!"): a refusal is tried again while time is left, a timeout is not.
            let mut renamed = zellij.call_within(&rename, remaining());
            while matches!(renamed, Err(MuxError::Failed { .. }))
                && remaining() > LIST_AGAIN_AFTER * 2
            {
                std::thread::sleep(LIST_AGAIN_AFTER);
                renamed = zellij.call_within(&rename, remaining());
            }
            renamed?;
            name
        }
    };
    Ok(ZellijPane {
        session: session.to_string(),
        pane: name,
    })
}

/// The zellij sessions of one instance (the one `ZELLIJ_SOCKET_DIR` and the user's dirs name),
/// reached through the `zellij` program.
#[derive(Debug)]
pub struct Zellij {
    program: PathBuf,
    deadline: Duration,
    /// The shell a pane falls back to once the agent exits.
    shell: String,
    /// Set when a call did not answer within the deadline: what it said.
    unanswered: OnceCell<String>,
    /// The sessions this restore made ready (running and laid out).
    ready: RefCell<BTreeSet<String>>,
    /// The sessions this restore resurrected or created: their pane ids are not the recorded
    /// ones.
    restarted: RefCell<BTreeSet<String>>,
    /// The shell panes of sessions this restore created, which a surface takes over without
    /// judging them: `(session, pane id)`.
    fillers: RefCell<Vec<(String, u32)>>,
}

impl Zellij {
    /// `program` (else the `zellij` on `PATH`, else Homebrew's), each call given `deadline`; a
    /// pane falls back to `shell` (the user's `$SHELL`) after the agent.
    pub fn new(program: Option<PathBuf>, deadline: Duration, shell: Option<String>) -> Zellij {
        Zellij {
            program: program.unwrap_or_else(self::program),
            deadline,
            shell: crate::script::login_shell(shell),
            unanswered: OnceCell::new(),
            ready: RefCell::default(),
            restarted: RefCell::default(),
            fillers: RefCell::default(),
        }
    }

    /// The program this backend runs.
    pub fn program(&self) -> &Path {
        &self.program
    }

    fn call(&self, args: &[&str]) -> Result<String, MuxError> {
        self.call_within(args, self.deadline)
    }

    fn call_within(&self, args: &[&str], deadline: Duration) -> Result<String, MuxError> {
        let mut command = Process::new(&self.program);
        command.args(args);
        for variable in INSIDE_VARIABLES {
            command.env_remove(variable);
        }
        crate::client::run(
            &mut command,
            deadline,
            &self.unanswered,
            "zellij",
            args,
            || format!("zellij {}", asked(args)),
        )
    }

    /// A read, asked again when zellij answers it with nothing or a failure (it does so now and
    /// then for a running session); the last failure when every attempt failed.
    fn read(&self, args: &[&str], deadline: Duration) -> Result<String, MuxError> {
        let mut last = None;
        for _ in 0..READ_ATTEMPTS {
            match self.call_within(args, deadline) {
                Ok(answer) if !answer.is_empty() => return Ok(answer),
                Ok(answer) => last = Some(Ok(answer)),
                Err(error @ MuxError::Unanswered { .. }) => return Err(error),
                Err(error) => last = Some(Err(error)),
            }
        }
        last.unwrap_or_else(|| Ok(String::new()))
    }

    /// Every session zellij lists; none when it has none (it says so and fails).
    fn sessions(&self) -> Result<Vec<(String, SessionState)>, MuxError> {
        match self.read(&["list-sessions", "--no-formatting"], self.deadline) {
            Ok(listing) => Ok(parse_sessions(&listing)),
            Err(MuxError::Failed { stderr, .. })
                if stderr.contains("No active zellij sessions") =>
            {
                Ok(Vec::new())
            }
            Err(error) => Err(error),
        }
    }

    /// The state of one session; a session missing from the listing is looked for again
    /// before it counts as gone.
    fn session_state(&self, session: &str) -> Result<SessionState, MuxError> {
        for _ in 0..READ_ATTEMPTS {
            if let Some((_, state)) = self
                .sessions()?
                .into_iter()
                .find(|(name, _)| name == session)
            {
                return Ok(state);
            }
        }
        Ok(SessionState::Gone)
    }

    /// The panes of a running session, read within `deadline` a call.
    fn panes_within(&self, session: &str, deadline: Duration) -> Result<Vec<ListedPane>, MuxError> {
        let listing = self.read(
            &[
                "--session",
                session,
                "action",
                "list-panes",
                "--all",
                "--json",
            ],
            deadline,
        )?;
        serde_json::from_str(&listing).map_err(|error| {
            MuxError::Answer(format!(
                "zellij action list-panes answered what is not its JSON: {error}"
            ))
        })
    }

    fn panes(&self, session: &str) -> Result<Vec<ListedPane>, MuxError> {
        self.panes_within(session, self.deadline)
    }

    /// The names the session's layout gives its panes (`dump-layout`, [`layout`]), read within
    /// `deadline` a call.
    fn layout_names_within(
        &self,
        session: &str,
        deadline: Duration,
    ) -> Result<Vec<String>, MuxError> {
        let layout = self.read(&["--session", session, "action", "dump-layout"], deadline)?;
        Ok(layout::layout_pane_names(&layout))
    }

    fn layout_names(&self, session: &str) -> Result<Vec<String>, MuxError> {
        self.layout_names_within(session, self.deadline)
    }

    /// The pane list once it reads the same [`STABLE_READS`] times in a row (a resurrected
    /// session adds its tabs in stages), within the deadline.
    fn settled_panes(&self, session: &str) -> Result<Vec<ListedPane>, MuxError> {
        let until = Instant::now() + self.deadline;
        let mut last: Option<Vec<ListedPane>> = None;
        let mut same = 0;
        loop {
            // A session still starting may answer "Session not found": not yet.
            let panes = match self.panes(session) {
                Ok(panes) => panes,
                Err(error @ MuxError::Unanswered { .. }) => return Err(error),
                Err(_) => Vec::new(),
            };
            // A shell's foreground command is known a moment after its pane is.
            let key = |panes: &[ListedPane]| -> Vec<(u32, bool, usize, String, bool)> {
                panes
                    .iter()
                    .map(|pane| {
                        let known = pane.pane_command.is_some() || pane.is_held || pane.exited;
                        (
                            pane.id,
                            pane.is_plugin,
                            pane.tab_id,
                            pane.title.clone(),
                            known,
                        )
                    })
                    .collect()
            };
            let terminals = panes.iter().any(|pane| !pane.is_plugin);
            if terminals && last.as_deref().map(key) == Some(key(&panes)) {
                same += 1;
            } else {
                same = 1;
            }
            if same >= STABLE_READS {
                return Ok(panes);
            }
            if Instant::now() >= until {
                return Err(MuxError::NotMade(format!(
                    "zellij session {session:?} was still laying out its panes after {:?}; nothing was started there",
                    self.deadline
                )));
            }
            last = Some(panes);
            std::thread::sleep(SETTLE_PAUSE);
        }
    }

    /// Makes the session run and settle: used when running, resurrected when exited, created
    /// when gone (`attach --create-background` does both). What it created, if anything.
    fn ready_session(&self, session: &str) -> Result<Option<Created>, MuxError> {
        if self.ready.borrow().contains(session) {
            return Ok(None);
        }
        let state = self.session_state(session)?;
        let created = match state {
            SessionState::Running => None,
            SessionState::Exited => Some(Created::Resurrected),
            SessionState::Gone => Some(Created::Session),
        };
        if state != SessionState::Running {
            self.call(&["attach", "--create-background", session])?;
            let panes = self.settled_panes(session)?;
            self.restarted.borrow_mut().insert(session.to_string());
            if state == SessionState::Gone {
                self.fillers.borrow_mut().extend(
                    panes
                        .iter()
                        .filter(|pane| !pane.is_plugin)
                        .map(|pane| (session.to_string(), pane.id)),
                );
            }
        }
        self.ready.borrow_mut().insert(session.to_string());
        Ok(created)
    }

    /// The pane the surface names among `panes`: by the name it bears (the layout's `names`
    /// say which, [`layout::bearer`]), or by a bare id in a session that has not restarted in
    /// this restore. A name more panes show than bear it names none that can be told: an
    /// error, so that nothing is started for it.
    fn find<'a>(
        &self,
        target: &ZellijPane,
        panes: &'a [ListedPane],
        names: &[String],
    ) -> Result<Option<&'a ListedPane>, MuxError> {
        let mut terminals = panes.iter().filter(|pane| !pane.is_plugin);
        match target.handle() {
            PaneHandle::Name(name) => match layout::bearer(panes, names, name) {
                Bearer::One(pane) => Ok(Some(pane)),
                Bearer::None => Ok(None),
                Bearer::Unsure => Err(MuxError::NotMade(format!(
                    "more panes of zellij session {:?} show the name {name:?} than bear it (a \
                     program set a pane's title to it), so which pane is {target}'s cannot be \
                     told; nothing was started",
                    target.session
                ))),
            },
            PaneHandle::Id(id) if !self.restarted.borrow().contains(&target.session) => {
                Ok(terminals.find(|pane| pane.id == id))
            }
            PaneHandle::Id(_) => Ok(None),
        }
    }

    fn is_filler(&self, session: &str, pane: u32) -> bool {
        self.fillers
            .borrow()
            .iter()
            .any(|(filler_session, id)| filler_session == session && *id == pane)
    }

    fn take_filler(&self, session: &str, panes: &[ListedPane]) -> Option<u32> {
        let mut fillers = self.fillers.borrow_mut();
        let position = fillers.iter().position(|(filler_session, id)| {
            filler_session == session && panes.iter().any(|pane| pane.id == *id)
        })?;
        Some(fillers.remove(position).1)
    }

    fn open_pane(&self, target: &ZellijPane, start: &Start<'_>) -> Result<Opened, MuxError> {
        if target.session.is_empty() {
            return Err(MuxError::NotMade(format!(
                "{target} names no session (the hook saw no ZELLIJ_SESSION_NAME); nothing was created"
            )));
        }
        // zellij parses its argv with clap, which takes a value beginning with `-` for an
        // option (`attach --create-background --force-run-commands` would attach to no session
        // at all): such a name cannot be passed as a value, so nothing is made for it.
        let option_like = [
            Some(target.session.as_str()),
            match target.handle() {
                PaneHandle::Name(name) => Some(name),
                PaneHandle::Id(_) => None,
            },
        ]
        .into_iter()
        .flatten()
        .find(|name| name.starts_with('-'));
        if let Some(name) = option_like {
            return Err(MuxError::NotMade(format!(
                "{target}: zellij would read {name:?} as an option (it begins with '-'), so it \
                 cannot be given to zellij; nothing was created"
            )));
        }
        let mut created: Vec<Created> = self.ready_session(&target.session)?.into_iter().collect();
        let panes = self.panes(&target.session)?;
        let names = match target.handle() {
            PaneHandle::Name(_) => self.layout_names(&target.session)?,
            PaneHandle::Id(_) => Vec::new(),
        };
        let replaced = match self.find(target, &panes, &names)? {
            Some(pane) if self.is_filler(&target.session, pane.id) => Some(pane.id),
            Some(pane) => match pane.judge() {
                Ok(()) => Some(pane.id),
                Err(busy) => return Ok(Opened::Skipped(busy)),
            },
            None => self.take_filler(&target.session, &panes),
        };
        let name = match target.handle() {
            PaneHandle::Name(name) => Some(name),
            PaneHandle::Id(_) => None,
        };
        let script = crate::script::start_script(start.env, start.dir, start.command, &self.shell);
        let replaced_target = replaced.map(|id| format!("terminal_{id}"));
        let mut args = vec!["--session", target.session.as_str(), "action", "new-pane"];
        if let Some(pane) = &replaced_target {
            args.extend(["--in-place", "--close-replaced-pane", "--pane-id", pane]);
        }
        if let Some(name) = name {
            args.extend(["--name", name]);
        }
        if let Some(dir) = start.dir {
            args.extend(["--cwd", dir]);
        }
        args.extend(["--", "/bin/sh", "-c", &script]);
        // zellij now and then answers a call with a failure or with nothing, having made the
        // pane or not. A named pane is looked for: made when a pane of the name is there that
        // is not the one replaced; asked for once more only when it is not.
        let made = || {
            name.is_some_and(|name| {
                self.panes(&target.session).is_ok_and(|panes| {
                    panes.iter().any(|pane| {
                        !pane.is_plugin && pane.title == name && Some(pane.id) != replaced
                    })
                })
            })
        };
        let mut answer = self.call(&args);
        let said_made = |answer: &Result<String, MuxError>| {
            answer
                .as_ref()
                .is_ok_and(|text| text.starts_with("terminal_"))
        };
        if !said_made(&answer) && name.is_some() && !made() {
            if let Err(error @ MuxError::Unanswered { .. }) = answer {
                return Err(error);
            }
            answer = self.call(&args);
        }
        if !said_made(&answer) && !made() {
            answer?;
            if name.is_some() {
                return Err(MuxError::NotMade(format!(
                    "zellij answered `new-pane` for {target} with nothing, twice, and made no pane"
                )));
            }
        }
        if replaced.is_none() {
            created.push(Created::Pane);
        }
        Ok(Opened::Started { created })
    }
}

/// The subcommand a call asked, for a message: `action list-panes`, `list-sessions`.
fn asked(args: &[&str]) -> String {
    let rest = match args {
        ["--session", _, rest @ ..] => rest,
        rest => rest,
    };
    let words: Vec<&str> = match rest {
        ["action", what, ..] => vec!["action", what],
        [what, ..] => vec![what],
        [] => Vec::new(),
    };
    words.join(" ")
}

impl Backend for Zellij {
    fn multiplexer(&self) -> Multiplexer {
        Multiplexer::Zellij
    }

    /// The recorded pane, when its session runs and it is there, judged by [`ListedPane::judge`];
    /// a session that is not running has nothing busy (its panes come back held).
    fn busy(&self, surface: &Surface) -> Option<Busy> {
        let Surface::Zellij(target) = surface else {
            return None;
        };
        if !self.ready.borrow().contains(&target.session)
            && self.session_state(&target.session).ok()? != SessionState::Running
        {
            return None;
        }
        let panes = self.panes(&target.session).ok()?;
        let names = match target.handle() {
            PaneHandle::Name(_) => self.layout_names(&target.session).ok()?,
            PaneHandle::Id(_) => Vec::new(),
        };
        let pane = self.find(target, &panes, &names).ok()??;
        if self.is_filler(&target.session, pane.id) {
            return None;
        }
        pane.judge().err()
    }

    /// `zellij --session S action new-pane [--in-place --close-replaced-pane --pane-id
    /// terminal_N] [--name NAME] [--cwd DIR] -- /bin/sh -c SCRIPT`: every recorded value an
    /// argv element or one quoted word of the script ([`crate::script::start_script`]).
    fn open(&self, start: &Start<'_>) -> Result<Opened, MuxError> {
        let Surface::Zellij(target) = start.surface else {
            return Err(MuxError::OtherMultiplexer {
                surface: start.surface.to_string(),
                multiplexer: Multiplexer::Zellij,
            });
        };
        self.open_pane(target, start)
    }

    fn unanswered(&self) -> Option<&str> {
        self.unanswered.get().map(String::as_str)
    }

    fn check_command(&self) -> String {
        "zellij list-sessions".to_string()
    }

    fn location(&self) -> String {
        let sockets = std::env::var("ZELLIJ_SOCKET_DIR")
            .ok()
            .filter(|dir| !dir.is_empty());
        match sockets {
            Some(dir) => format!("the sessions of {} in {dir}", self.program.display()),
            None => format!("the sessions {} reaches", self.program.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_read_with_their_state() {
        let listing = "work [Created 3s ago] \nold one [Created 1h 2m ago] (EXITED - attach to resurrect)\nnoise";
        assert_eq!(
            parse_sessions(listing),
            vec![
                ("work".to_string(), SessionState::Running),
                ("old one".to_string(), SessionState::Exited),
            ]
        );
    }

    #[test]
    fn pane_names_are_ours_only_in_their_form() {
        let name = new_pane_name(3, 1_700_000_000_000);
        assert_eq!(name, "cr-3-loyw3v28");
        assert!(is_pane_name(&name));
        for other in [
            "cr-3-", "cr--abc", "cr-x-abc", "bash", "cr-3-ABC", "cr-3-a:b",
        ] {
            assert!(!is_pane_name(other), "{other}");
        }
    }

    #[test]
    fn a_pane_is_judged_by_its_foreground_command() {
        let pane = |command: Option<&str>, is_held: bool| ListedPane {
            id: 1,
            is_plugin: false,
            title: String::new(),
            exited: false,
            is_held,
            tab_id: 0,
            pane_command: command.map(str::to_string),
            terminal_command: None,
        };
        assert_eq!(pane(Some("/bin/bash"), false).judge(), Ok(()));
        assert_eq!(pane(Some("-zsh -l"), false).judge(), Ok(()));
        assert_eq!(pane(Some("claude --resume x"), true).judge(), Ok(()));
        assert_eq!(
            pane(Some("claude --resume x"), false).judge(),
            Err(Busy::Program("claude".into()))
        );
        assert_eq!(pane(Some("bash run.sh"), false).judge(), Err(Busy::Script));
        assert_eq!(pane(None, false).judge(), Err(Busy::UnknownMode));
    }

    #[test]
    fn a_call_is_named_by_its_subcommand() {
        assert_eq!(
            asked(&["--session", "s", "action", "list-panes", "-a"]),
            "action list-panes"
        );
        assert_eq!(asked(&["list-sessions", "-n"]), "list-sessions");
    }
}
