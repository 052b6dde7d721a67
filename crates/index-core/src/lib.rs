//! The crash-resume index as pure data: which agent session runs on which surface.
//!
//! No IO, no clock, no paths: every operation takes the time as a parameter and works on an
//! [`Index`] value the caller owns. `index-store` loads and saves it; `preflight` and
//! `launcher-map` read it.
//!
//! The semantics are those of the JavaScript crash-resume-index, plus two rules of our own:
//! a surface keeps the ids it held before (its session chain, newest last, bounded), and one
//! session is bound to at most one surface.

#![deny(missing_docs)]

pub mod capture;
mod ids;
pub mod text;
pub mod title;

use std::collections::{HashMap, HashSet};

pub use ids::{
    AgentName, IdKind, InvalidId, MAX_ID_BYTES, Repo, Role, SessionId, SurfaceId, validate,
    validate_dir,
};
pub use serde_json::{Map, Value};

/// Milliseconds since the Unix epoch, as the index file stores them.
pub type Millis = u64;

/// How many earlier session ids a surface remembers.
pub const MAX_PREVIOUS_SESSIONS: usize = 16;

/// One surface's record.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The surface the session runs in.
    pub surface: SurfaceId,
    /// The session the surface holds now: the head of its chain.
    pub session: SessionId,
    /// The repo the session works in.
    pub repo: Repo,
    /// The session's role, such as `lead`, if one was given.
    pub role: Option<Role>,
    /// First sight of the surface.
    pub captured_at: Millis,
    /// Bumped by every record and touch; absent in some older files.
    pub last_active: Option<Millis>,
    /// The agent CLI, such as `claude` or `codex`, if recorded (`provider` in the index file).
    pub agent: Option<AgentName>,
    /// The working dir the session was launched in, as recorded (unexpanded).
    pub cwd: Option<String>,
    /// The agent's config dir (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`) when it was recorded.
    pub config_dir: Option<String>,
    /// Ids this surface held before the current one, oldest first, newest last.
    pub previous_sessions: Vec<SessionId>,
    /// When the session ended cleanly (the user exited); `None` while running or after a crash.
    pub ended_at: Option<Millis>,
    /// When a restore last claimed this surface to re-open it. A record does not clear it (the
    /// resumed agent's own record comes while the claim must still hold): whether it still
    /// holds is the restore's to judge ([`Index::claim_restore_by`]), from
    /// [`Entry::restore_claimed_by`].
    pub restore_claimed_at: Option<Millis>,
    /// Which restore made that claim, and whether it started the agent; absent in a claim an
    /// earlier version made.
    pub restore_claimed_by: Option<Claimant>,
    /// The layout of the multiplexer window the surface is a pane of, as the multiplexer
    /// writes it (tmux's `#{window_layout}`: the window's size, then how its panes split it),
    /// when recorded; a restore lays out a window it re-creates with it.
    pub window_layout: Option<String>,
    /// The boot the surface's agent last recorded itself in (`/proc/sys/kernel/random/boot_id`
    /// on Linux), when known: tells a reboot from a crash in this boot.
    pub boot_id: Option<String>,
    /// How the agent was started ([`Launch`]), when its hook read it.
    pub launch: Option<Launch>,
    /// Fields of the stored entry this version does not know, kept for the next write.
    pub unknown_fields: Map<String, Value>,
}

/// How an agent was started, as far as a restore starts it again: the session-shaping flags
/// its hook kept from its command line (the agent's allow-list, `agent_paths::LaunchFacts`),
/// the variables that chose its model and provider, and the user's wrapper it was started
/// through. Values are as given: whatever reaches a shell is quoted there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// The kept flags' words, as given (`--model`, `opus`).
    pub args: Vec<String>,
    /// The model and provider variables it ran with, by name.
    pub env: std::collections::BTreeMap<String, String>,
    /// The user's program it was started through, when there was one.
    pub wrapper: Option<Wrapper>,
}

/// A user's program (a script on `PATH`) that started the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapper {
    /// Its absolute path.
    pub path: String,
    /// Whether it passes its arguments on to the agent (its text holds `"$@"`): only then is
    /// it run with the resume arguments.
    pub passes_args: bool,
}

impl Launch {
    /// Whether it says nothing: no flag, no variable, no wrapper.
    pub fn is_empty(&self) -> bool {
        self.args.is_empty() && self.env.is_empty() && self.wrapper.is_none()
    }

    /// The first word or value that holds a control character, which would reach a shell or a
    /// terminal as something other than text; `None` when every one is inert text.
    pub fn control_character(&self) -> Option<&str> {
        let words = self.args.iter().map(String::as_str);
        let env = self
            .env
            .iter()
            .flat_map(|(name, value)| [name.as_str(), value.as_str()]);
        let wrapper = self.wrapper.iter().map(|wrapper| wrapper.path.as_str());
        words
            .chain(env)
            .chain(wrapper)
            .find(|word| word.chars().any(char::is_control))
    }
}

impl Entry {
    /// The time staleness is measured from: `last_active`, else `captured_at`.
    pub fn last_seen(&self) -> Millis {
        self.last_active.unwrap_or(self.captured_at)
    }

    /// How long ago the entry was last seen; zero if `now` is earlier.
    pub fn age(&self, now: Millis) -> Millis {
        now.saturating_sub(self.last_seen())
    }

    /// Older than `max_age` (strictly) is stale; exactly `max_age` is not.
    pub fn is_stale(&self, max_age: Millis, now: Millis) -> bool {
        self.age(now) > max_age
    }

    /// The latest sign of activity: [`Entry::last_seen`], or `conversation_active`, the time the
    /// conversation itself last changed (its transcript's modification time), when that is
    /// later. Typing prompts runs no hook that records, so only the transcript knows about it.
    pub fn last_activity(&self, conversation_active: Option<Millis>) -> Millis {
        self.last_seen().max(conversation_active.unwrap_or(0))
    }

    /// How long ago [`Entry::last_activity`] was; zero if `now` is earlier.
    pub fn activity_age(&self, conversation_active: Option<Millis>, now: Millis) -> Millis {
        now.saturating_sub(self.last_activity(conversation_active))
    }

    /// [`Entry::is_stale`], measured from [`Entry::last_activity`].
    pub fn is_inactive(
        &self,
        max_age: Millis,
        conversation_active: Option<Millis>,
        now: Millis,
    ) -> bool {
        self.activity_age(conversation_active, now) > max_age
    }

    /// Checks the values the id types do not hold: the working dir and the config dir may not
    /// carry a control character. An index another tool wrote may hold one; such an entry is
    /// not resumed, since its values would reach a shell or a terminal.
    pub fn check_dirs(&self) -> Result<(), InvalidId> {
        check_dirs(self.cwd.as_deref(), self.config_dir.as_deref())
    }

    /// The surface's session chain, oldest first; the last id is the head (the current session).
    pub fn chain(&self) -> impl Iterator<Item = &SessionId> {
        self.previous_sessions
            .iter()
            .chain(std::iter::once(&self.session))
    }
}

/// The restore process that claimed a surface ([`Entry::restore_claimed_by`]): its pid and
/// start time name it (a pid alone may be given to another process once it is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claimant {
    /// The restore's pid.
    pub pid: u32,
    /// When that process started, in epoch milliseconds.
    pub started: Millis,
    /// Whether it started the surface's agent ([`Index::mark_restore_opened`]).
    pub opened: bool,
}

/// The input of [`Index::record`]. Optional fields that are `None` keep the entry's prior value.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The surface the session runs in.
    pub surface: SurfaceId,
    /// The session id.
    pub session: SessionId,
    /// The repo the session works in.
    pub repo: Repo,
    /// The session's role, such as `lead`, if one was given.
    pub role: Option<Role>,
    /// The agent CLI, such as `claude` or `codex`, if recorded (`provider` in the index file).
    pub agent: Option<AgentName>,
    /// The working dir, if recorded.
    pub cwd: Option<String>,
    /// The agent's config dir, if recorded.
    pub config_dir: Option<String>,
    /// The layout of the surface's window, if recorded ([`Entry::window_layout`]).
    pub window_layout: Option<String>,
    /// The boot the record is made in, if known ([`Entry::boot_id`]).
    pub boot_id: Option<String>,
    /// How the agent was started, if read ([`Entry::launch`]): an empty one (the agent was
    /// found, started with nothing to keep) clears the entry's; `None` keeps it.
    pub launch: Option<Launch>,
}

impl Record {
    /// A record with only the three required fields; set the others on the value.
    pub fn new(surface: SurfaceId, session: SessionId, repo: Repo) -> Self {
        Record {
            surface,
            session,
            repo,
            role: None,
            agent: None,
            cwd: None,
            config_dir: None,
            window_layout: None,
            boot_id: None,
            launch: None,
        }
    }
}

/// Checks a working dir and a config dir with [`validate_dir`], for capture (before a
/// [`Record`] is made) and for use (an [`Entry`] read from a file).
pub fn check_dirs(cwd: Option<&str>, config_dir: Option<&str>) -> Result<(), InvalidId> {
    if let Some(cwd) = cwd {
        validate_dir(IdKind::WorkingDir, cwd)?;
    }
    if let Some(config_dir) = config_dir {
        validate_dir(IdKind::ConfigDir, config_dir)?;
    }
    Ok(())
}

/// What [`Index::record`] did besides storing the entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Recorded {
    /// The surface was not in the index before.
    pub first_sight: bool,
    /// The surface held another session, now moved into its chain.
    pub superseded: Option<SessionId>,
    /// Another surface held this session; its entry was dropped.
    pub displaced: Option<SurfaceId>,
}

/// An entry dropped while building an index from stored entries, because a later entry holds
/// the same session.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The entry that was dropped.
    pub dropped: Entry,
    /// The surface that now holds the session.
    pub kept: SurfaceId,
}

/// The maps' hasher: foldhash, several times faster than the default SipHash on short keys,
/// and seeded per process.
type Hasher = foldhash::fast::RandomState;

/// The whole index: surfaces to entries, with each session bound to at most one surface.
#[derive(Debug, Clone, Default)]
pub struct Index {
    entries: HashMap<SurfaceId, Entry, Hasher>,
    owner_of: HashMap<SessionId, SurfaceId, Hasher>,
}

impl PartialEq for Index {
    fn eq(&self, other: &Index) -> bool {
        self.entries == other.entries
    }
}

impl Index {
    /// Builds an index from stored entries, enforcing one surface per session: where two
    /// entries hold the same session, the one seen last (by `last_seen`, then surface id) keeps
    /// it and the other is dropped and reported.
    pub fn from_entries(entries: impl IntoIterator<Item = Entry>) -> (Index, Vec<Conflict>) {
        let mut entries: Vec<Entry> = entries.into_iter().collect();
        // Order only matters where a session is held twice; sorting moves whole entries, so
        // it is done only then.
        let mut sessions = HashSet::with_capacity_and_hasher(entries.len(), Hasher::default());
        if !entries
            .iter()
            .all(|entry| sessions.insert(entry.session.as_str()))
        {
            entries.sort_by(|a, b| (a.last_seen(), &a.surface).cmp(&(b.last_seen(), &b.surface)));
        }
        let mut index = Index {
            entries: HashMap::with_capacity_and_hasher(entries.len(), Hasher::default()),
            owner_of: HashMap::with_capacity_and_hasher(entries.len(), Hasher::default()),
        };
        let mut conflicts = Vec::new();
        for entry in entries {
            if let Some(dropped) = index.insert(entry) {
                conflicts.push(dropped);
            }
        }
        (index, conflicts)
    }

    /// Inserts an entry as is, replacing the surface's entry and dropping any other surface
    /// that held the same session.
    fn insert(&mut self, entry: Entry) -> Option<Conflict> {
        let conflict = match self.owner_of.get(&entry.session) {
            Some(owner) if *owner != entry.surface => {
                let owner = owner.clone();
                self.remove(owner.as_str()).map(|dropped| Conflict {
                    dropped,
                    kept: entry.surface.clone(),
                })
            }
            _ => None,
        };
        if let Some(old) = self.entries.get(&entry.surface)
            && old.session != entry.session
        {
            self.owner_of.remove(&old.session);
        }
        self.owner_of
            .insert(entry.session.clone(), entry.surface.clone());
        self.entries.insert(entry.surface.clone(), entry);
        conflict
    }

    fn remove(&mut self, surface: &str) -> Option<Entry> {
        let entry = self.entries.remove(surface)?;
        self.owner_of.remove(&entry.session);
        Some(entry)
    }

    /// Binds `record.surface` to `record.session` at `now`.
    ///
    /// First sight of a surface stamps `captured_at`; every record sets `last_active = now`
    /// and clears a clean-exit mark. A new session on a known surface moves the old one into
    /// the surface's chain. Another surface holding this session loses its entry.
    pub fn record(&mut self, record: Record, now: Millis) -> Recorded {
        let mut outcome = Recorded::default();
        let entry = match self.entries.get(&record.surface) {
            Some(prior) => {
                let mut entry = prior.clone();
                if entry.session != record.session {
                    let old = std::mem::replace(&mut entry.session, record.session);
                    entry
                        .previous_sessions
                        .retain(|id| *id != entry.session && *id != old);
                    entry.previous_sessions.push(old.clone());
                    let excess = entry
                        .previous_sessions
                        .len()
                        .saturating_sub(MAX_PREVIOUS_SESSIONS);
                    entry.previous_sessions.drain(..excess);
                    outcome.superseded = Some(old);
                }
                entry.repo = record.repo;
                entry.role = record.role.or(entry.role);
                entry.agent = record.agent.or(entry.agent);
                entry.cwd = record.cwd.or(entry.cwd);
                entry.config_dir = record.config_dir.or(entry.config_dir);
                entry.window_layout = record.window_layout.or(entry.window_layout);
                entry.boot_id = record.boot_id.or(entry.boot_id);
                // A launch read says how this start was made, nothing kept included; none read
                // (a hook that did not find its agent) keeps the one before.
                entry.launch = match record.launch {
                    Some(launch) => Some(launch).filter(|launch| !launch.is_empty()),
                    None => entry.launch,
                };
                entry.last_active = Some(now);
                entry.ended_at = None;
                entry
            }
            None => {
                outcome.first_sight = true;
                Entry {
                    surface: record.surface,
                    session: record.session,
                    repo: record.repo,
                    role: record.role,
                    captured_at: now,
                    last_active: Some(now),
                    agent: record.agent,
                    cwd: record.cwd,
                    config_dir: record.config_dir,
                    previous_sessions: Vec::new(),
                    ended_at: None,
                    restore_claimed_at: None,
                    restore_claimed_by: None,
                    window_layout: record.window_layout,
                    boot_id: record.boot_id,
                    launch: record.launch.filter(|launch| !launch.is_empty()),
                    unknown_fields: Map::new(),
                }
            }
        };
        outcome.displaced = self.insert(entry).map(|conflict| conflict.dropped.surface);
        outcome
    }

    /// Bumps `last_active` of a known surface. Returns `false`, changing nothing, for an
    /// unknown one.
    pub fn touch(&mut self, surface: &str, now: Millis) -> bool {
        match self.entries.get_mut(surface) {
            Some(entry) => {
                entry.last_active = Some(now);
                true
            }
            None => false,
        }
    }

    /// Marks a known surface's session as ended cleanly at `now` (the user exited). Returns
    /// `false` for an unknown surface, or when the surface holds another session by now.
    pub fn end(&mut self, surface: &str, session: &str, now: Millis) -> bool {
        match self.entries.get_mut(surface) {
            Some(entry) if entry.session.as_str() == session => {
                entry.ended_at = Some(now);
                entry.last_active = Some(now);
                true
            }
            _ => false,
        }
    }

    /// Claims a surface for a restore that is about to re-open it, so that a second restore
    /// running at the same time leaves it alone. Fails (returns `false`) when the surface is
    /// unknown, holds another session by now, or was claimed less than `ttl` ago. A claim made
    /// this way names no restorer ([`Index::claim_restore_by`] does).
    pub fn claim_restore(
        &mut self,
        surface: &str,
        session: &str,
        ttl: Millis,
        now: Millis,
    ) -> bool {
        self.claim_restore_by(surface, session, None, now, |entry| {
            entry
                .restore_claimed_at
                .is_some_and(|claimed_at| now.saturating_sub(claimed_at) < ttl)
        })
    }

    /// Claims a surface for the restore `claimant` at `now`, unless the surface is unknown,
    /// holds another session by now, or holds a claim that `in_force` (given the entry, which
    /// says when the claim was made, by whom, and when the surface last recorded) says still
    /// holds.
    pub fn claim_restore_by(
        &mut self,
        surface: &str,
        session: &str,
        claimant: Option<Claimant>,
        now: Millis,
        in_force: impl FnOnce(&Entry) -> bool,
    ) -> bool {
        match self.entries.get_mut(surface) {
            Some(entry)
                if entry.session.as_str() == session
                    && (entry.restore_claimed_at.is_none() || !in_force(entry)) =>
            {
                entry.restore_claimed_at = Some(now);
                entry.restore_claimed_by = claimant;
                true
            }
            _ => false,
        }
    }

    /// Notes in the claim made at `claimed_at` that its restore started the surface's agent.
    /// `false`, changing nothing, when the surface holds another claim by now.
    pub fn mark_restore_opened(&mut self, surface: &str, claimed_at: Millis) -> bool {
        match self.entries.get_mut(surface) {
            Some(entry) if entry.restore_claimed_at == Some(claimed_at) => {
                if let Some(claimant) = &mut entry.restore_claimed_by {
                    claimant.opened = true;
                }
                true
            }
            _ => false,
        }
    }

    /// Takes back the claim [`Index::claim_restore`] made at `claimed_at`, when the restore
    /// could not open the surface after all: the next restore may try it at once. A claim made
    /// since (another time), or a session recorded since, is left alone.
    pub fn release_restore(&mut self, surface: &str, session: &str, claimed_at: Millis) -> bool {
        match self.entries.get_mut(surface) {
            Some(entry)
                if entry.session.as_str() == session
                    && entry.restore_claimed_at == Some(claimed_at) =>
            {
                entry.restore_claimed_at = None;
                entry.restore_claimed_by = None;
                true
            }
            _ => false,
        }
    }

    /// The entry of `surface`, if any.
    pub fn lookup(&self, surface: &str) -> Option<&Entry> {
        self.entries.get(surface)
    }

    /// The surface's entry if it may be resumed: always with no `max_age` (staleness is
    /// opt-in), else only when it is not older than `max_age`.
    pub fn resumable_for(
        &self,
        surface: &str,
        max_age: Option<Millis>,
        now: Millis,
    ) -> Option<&Entry> {
        let entry = self.lookup(surface)?;
        match max_age {
            Some(max_age) if entry.is_stale(max_age, now) => None,
            _ => Some(entry),
        }
    }

    /// Drops every entry older than `max_age`; returns them sorted by surface.
    pub fn prune_stale(&mut self, max_age: Millis, now: Millis) -> Vec<Entry> {
        self.prune_inactive(max_age, now, |_| None)
    }

    /// Drops every entry not active within `max_age`, its activity measured by
    /// [`Entry::last_activity`] with `conversation_active(entry)`; returns them sorted by surface.
    pub fn prune_inactive(
        &mut self,
        max_age: Millis,
        now: Millis,
        conversation_active: impl Fn(&Entry) -> Option<Millis>,
    ) -> Vec<Entry> {
        let mut stale: Vec<SurfaceId> = self
            .entries
            .values()
            .filter(|entry| entry.is_inactive(max_age, conversation_active(entry), now))
            .map(|entry| entry.surface.clone())
            .collect();
        stale.sort();
        stale
            .iter()
            .filter_map(|surface| self.remove(surface.as_str()))
            .collect()
    }

    /// Moves the entry of `from` to the surface `to`, which has none, keeping all it holds (its
    /// session, chain, claim): one place named in a new form. Returns `false`, changing
    /// nothing, when `from` has no entry or `to` has one.
    pub fn rename(&mut self, from: &str, to: SurfaceId) -> bool {
        if self.entries.contains_key(to.as_str()) {
            return false;
        }
        let Some(mut entry) = self.remove(from) else {
            return false;
        };
        entry.surface = to;
        self.insert(entry);
        true
    }

    /// Drops one entry; returns it, or `None` if the surface was unknown.
    pub fn forget(&mut self, surface: &str) -> Option<Entry> {
        self.remove(surface)
    }

    /// The surface that holds `session` now, if any.
    pub fn owner_of(&self, session: &str) -> Option<&SurfaceId> {
        self.owner_of.get(session)
    }

    /// Every entry, sorted by surface id.
    pub fn entries(&self) -> Vec<&Entry> {
        let mut entries: Vec<&Entry> = self.entries.values().collect();
        entries.sort_by(|a, b| a.surface.cmp(&b.surface));
        entries
    }

    /// How many entries the index holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the index holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
