//! One interface over the agents' on-disk layouts: what the preflight and the restore plan ask
//! of an agent's files for one working dir (locate a session, follow its continuation, scan for
//! a recovery, the last change, the live holders, the agent's own deletion of old
//! conversations), and [`open`], the one place that picks the layout for an agent.

use std::time::SystemTime;

use agent_paths::Agent;
use camino::{Utf8Path, Utf8PathBuf};

use crate::claude::{self, Candidate, RetentionRisk};
use crate::{Cache, codex, copilot, gemini, qwen};

/// What is on disk for one session id, where the agent's CLI looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// Whether the CLI would load it.
    pub reachable: bool,
    /// Where it looked or found it, for people.
    pub place: String,
    /// What was found there, in words.
    pub state: String,
    /// The file the CLI would load (or, where the CLI derives one, the path it derives).
    pub file: Option<Utf8PathBuf>,
}

impl Transcript {
    /// What was found at `path`: its file only when the CLI would load it.
    fn found(path: Utf8PathBuf, reachable: bool, state: &str) -> Transcript {
        Transcript {
            reachable,
            place: path.to_string(),
            state: state.to_string(),
            file: reachable.then_some(path),
        }
    }

    /// When [`Self::file`] last changed: the CLI's measure of activity.
    pub fn modified(&self) -> Option<SystemTime> {
        std::fs::metadata(self.file.as_ref()?).ok()?.modified().ok()
    }
}

/// An agent's files for one working dir.
pub trait Layout {
    /// Where the transcripts are, for people.
    fn describe(&self) -> String;

    /// What is on disk for `session`, where the CLI looks.
    fn locate(&self, session: &str) -> Transcript;

    /// The `continued-in` link at the end of the transcript the CLI would load: the gate reads
    /// it whether or not that file holds a conversation. Only Claude Code writes one.
    fn continued_in(&self, _session: &str) -> Option<String> {
        None
    }

    /// The recovery scan: the conversation of this working dir the spawn's retry would resume,
    /// other than the ids `skip` names; `Err` says why the agent has none.
    fn scan(&self, skip: &dyn Fn(&str) -> bool) -> Result<Option<Candidate>, NoRecovery>;

    /// When the transcript `session` would be resumed from last changed.
    fn last_change(&self, session: &str) -> Option<SystemTime> {
        self.locate(session).modified()
    }

    /// What resuming `session` puts at risk, said before it happens (Gemini's start-up
    /// cleanup); `None` when nothing does.
    fn hazard(&self, _session: &str) -> Option<String> {
        None
    }

    /// Sessions held by running agent processes of this config dir, as `(session, pid)`: the
    /// agent's own evidence (a file naming a pid) counts only while that pid runs the agent
    /// and started before the file was written ([`proc_table::Snapshot::holds_since`]).
    fn live_holders(&self) -> Vec<(String, u32)> {
        Vec::new()
    }

    /// How close `transcript` is to the agent's own deletion of old conversations.
    fn retention(&self, _transcript: &Transcript, _now: SystemTime) -> Option<RetentionRisk> {
        None
    }
}

/// Why no layout can be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoLayout {
    /// The agent's files depend on the working dir, which is not known.
    NoWorkingDir,
}

/// Why an agent has no recovery scan ([`Layout::scan`]): it resumes only the id it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoRecovery {
    /// Codex finds a rollout by its id alone.
    #[error("Codex keeps no recoverable sessions per working dir")]
    Codex,
    /// Gemini resumes the session it is given, or none.
    #[error("Gemini resumes only the id it is given: no recovery of another conversation")]
    Gemini,
    /// Copilot resumes the session it is given, or none.
    #[error("Copilot resumes only the id it is given: no recovery of another conversation")]
    Copilot,
    /// Qwen Code resumes the session it is given, or none.
    #[error("Qwen Code resumes only the id it is given: no recovery of another conversation")]
    Qwen,
}

/// The layout of `agent`'s files in `config_dir` (`~` already expanded) for the working dir
/// `cwd` (as recorded), for an agent started with the variables `env` (as recorded), reading
/// through `cache`.
pub fn open<'a>(
    agent: Agent,
    config_dir: Utf8PathBuf,
    cwd: Option<&str>,
    home: Option<&Utf8Path>,
    env: &std::collections::BTreeMap<String, String>,
    cache: &'a Cache,
) -> Result<Box<dyn Layout + 'a>, NoLayout> {
    Ok(match agent {
        Agent::Claude => {
            let cwd = cwd.ok_or(NoLayout::NoWorkingDir)?;
            let cwd = cache.claude.resolve_working_dir(cwd, home);
            Box::new(ClaudeLayout {
                project_dir: claude::project_dir(&config_dir, &cwd),
                config_dir,
                cache,
            })
        }
        Agent::Codex => Box::new(CodexLayout {
            home: config_dir,
            cache: &cache.codex,
        }),
        Agent::Gemini => {
            let cwd = cwd.ok_or(NoLayout::NoWorkingDir)?;
            let root = gemini::root(&config_dir);
            let project = gemini::project_root(cwd, home);
            let slug = cache.gemini.project(&root, &project);
            Box::new(GeminiLayout {
                chats: gemini::chats_dir(&root, &slug.slug),
                slug,
                root,
                project,
                cache: &cache.gemini,
            })
        }
        Agent::Copilot => Box::new(CopilotLayout {
            home: config_dir,
            cache,
        }),
        Agent::Qwen => {
            let cwd = qwen::physical_dir(cwd.ok_or(NoLayout::NoWorkingDir)?, home);
            let runtime_var = env.get(qwen::RUNTIME_VAR).map(String::as_str);
            let runtime = qwen::runtime_dir(&config_dir, runtime_var, Some(&cwd), home);
            Box::new(QwenLayout {
                chats: qwen::chats_dir(&runtime, &cwd),
                cwd,
                cache,
            })
        }
    })
}

/// Claude Code: `<config dir>/projects/<folder of the working dir>/<id>.jsonl`.
struct ClaudeLayout<'a> {
    config_dir: Utf8PathBuf,
    project_dir: Utf8PathBuf,
    cache: &'a Cache,
}

impl Layout for ClaudeLayout<'_> {
    fn describe(&self) -> String {
        self.project_dir.to_string()
    }

    fn locate(&self, session: &str) -> Transcript {
        let found = self
            .cache
            .claude
            .locate(&self.config_dir, &self.project_dir, session);
        Transcript {
            reachable: found.reachability.is_reachable(),
            place: found.path.to_string(),
            state: found.reachability.describe().to_string(),
            file: Some(found.path),
        }
    }

    fn continued_in(&self, session: &str) -> Option<String> {
        claude::continued_in(self.locate(session).file.as_deref()?)
    }

    fn scan(&self, skip: &dyn Fn(&str) -> bool) -> Result<Option<Candidate>, NoRecovery> {
        Ok(self.cache.claude.largest_reachable(&self.project_dir, skip))
    }

    fn last_change(&self, session: &str) -> Option<SystemTime> {
        // One `stat` where the CLI looks first; the wider look-up only when it is not there.
        // A file missing there is looked for no further unless another folder may hold it.
        let derived = claude::transcript_path(&self.project_dir, session)?;
        match std::fs::metadata(&derived).and_then(|meta| meta.modified()) {
            Ok(modified) => return Some(modified),
            Err(error)
                if error.kind() == std::io::ErrorKind::NotFound
                    && !self
                        .cache
                        .claude
                        .may_be_elsewhere(&self.config_dir, &derived, session) =>
            {
                return None;
            }
            Err(_) => {}
        }
        self.locate(session).modified()
    }

    fn live_holders(&self) -> Vec<(String, u32)> {
        self.cache
            .claude
            .live_holders(&self.config_dir, self.cache.processes())
    }

    fn retention(&self, transcript: &Transcript, now: SystemTime) -> Option<RetentionRisk> {
        let days = self.cache.claude.cleanup_period_days(&self.config_dir);
        claude::retention_risk(transcript.file.as_deref()?, days, now)
    }
}

/// Codex: the state database's row, else `rollout-*-<id>.jsonl` under `sessions/`.
struct CodexLayout<'a> {
    home: Utf8PathBuf,
    cache: &'a codex::Cache,
}

impl Layout for CodexLayout<'_> {
    fn describe(&self) -> String {
        format!("{}/sessions", self.home)
    }

    fn locate(&self, session: &str) -> Transcript {
        let found = self.cache.locate(&self.home, session);
        Transcript {
            reachable: found.reachability.is_reachable(),
            state: found.describe(),
            place: found.path.to_string(),
            file: Some(found.path),
        }
    }

    fn scan(&self, _skip: &dyn Fn(&str) -> bool) -> Result<Option<Candidate>, NoRecovery> {
        Err(NoRecovery::Codex)
    }

    fn last_change(&self, session: &str) -> Option<SystemTime> {
        let rollout = codex::find_rollout(&self.home, session)?;
        std::fs::metadata(rollout).ok()?.modified().ok()
    }
}

/// Gemini CLI: `<home>/.gemini/tmp/<project slug>/chats/session-*.jsonl`, matched by content.
struct GeminiLayout<'a> {
    root: Utf8PathBuf,
    project: Utf8PathBuf,
    slug: gemini::Project,
    chats: Utf8PathBuf,
    cache: &'a gemini::Cache,
}

impl Layout for GeminiLayout<'_> {
    fn describe(&self) -> String {
        let how = match self.slug.source {
            gemini::SlugSource::Registry => "project of projects.json",
            gemini::SlugSource::Marker => "project found by its .project_root marker",
            gemini::SlugSource::New => "no project known for this dir yet",
            gemini::SlugSource::Unclaimable => {
                return format!(
                    "{} (no project known for this dir, and Gemini can claim none: each of the \
                     {} names it tries is taken or cannot be read under {}/tmp and {}/history; \
                     is one of them not a dir you can read?)",
                    self.chats,
                    gemini::MAX_SLUG_ATTEMPTS,
                    self.root,
                    self.root
                );
            }
        };
        format!("{} ({how})", self.chats)
    }

    fn locate(&self, session: &str) -> Transcript {
        let files = self.cache.files(&self.chats);
        let found = gemini::locate_in(&self.chats, &files, session);
        let reachable = found.reachability.is_reachable();
        Transcript::found(found.path, reachable, found.reachability.describe())
    }

    fn scan(&self, _skip: &dyn Fn(&str) -> bool) -> Result<Option<Candidate>, NoRecovery> {
        Err(NoRecovery::Gemini)
    }

    fn hazard(&self, session: &str) -> Option<String> {
        let retention = gemini::retention(&self.root, &self.project);
        if !retention.enabled {
            return None;
        }
        let files = self.cache.files(&self.chats);
        let stubs = gemini::cleanup_hazard(&files, session);
        let short = session.get(..8).unwrap_or(session);
        let mut detail = format!(
            "Gemini's start-up cleanup (general.sessionRetention) is on: resuming in a later \
             minute than the session's file was named for leaves a stub \
             session-<now>-{short}.jsonl that holds no conversation (the conversation goes on in \
             the old file), and the next Gemini start in {} deletes the stub and every file \
             ending -{short}, this conversation included",
            self.project
        );
        if !stubs.is_empty() {
            detail.push_str(&format!(
                "; already at risk now: {} hold no conversation and will take it with them",
                stubs.join(", ")
            ));
        }
        detail.push_str(
            "; to keep it, set \"general\": {\"sessionRetention\": {\"enabled\": false}} in \
             Gemini's settings.json",
        );
        Some(detail)
    }

    fn retention(&self, transcript: &Transcript, now: SystemTime) -> Option<RetentionRisk> {
        let retention = gemini::retention(&self.root, &self.project);
        if !retention.enabled || retention.max_age_days == 0 {
            return None;
        }
        claude::retention_risk(transcript.file.as_deref()?, retention.max_age_days, now)
    }
}

/// Copilot CLI: `<COPILOT_HOME>/session-state/<id>/events.jsonl`, whatever the working dir.
struct CopilotLayout<'a> {
    home: Utf8PathBuf,
    cache: &'a Cache,
}

impl Layout for CopilotLayout<'_> {
    fn describe(&self) -> String {
        copilot::sessions_dir(&self.home).to_string()
    }

    fn locate(&self, session: &str) -> Transcript {
        let found = copilot::locate(&self.home, session);
        let reachable = found.reachability.is_reachable();
        Transcript::found(found.path, reachable, found.reachability.describe())
    }

    fn scan(&self, _skip: &dyn Fn(&str) -> bool) -> Result<Option<Candidate>, NoRecovery> {
        Err(NoRecovery::Copilot)
    }

    fn live_holders(&self) -> Vec<(String, u32)> {
        copilot::live_holders(&self.home, self.cache.processes())
    }
}

/// Qwen Code: `<runtime dir>/projects/<UTF-16 slug of the physical cwd>/chats/<id>.jsonl`.
struct QwenLayout<'a> {
    cwd: Utf8PathBuf,
    chats: Utf8PathBuf,
    cache: &'a Cache,
}

impl Layout for QwenLayout<'_> {
    fn describe(&self) -> String {
        self.chats.to_string()
    }

    fn locate(&self, session: &str) -> Transcript {
        let found = qwen::locate(&self.chats, &self.cwd, session);
        let reachable = found.reachability.is_reachable();
        Transcript::found(found.path, reachable, found.reachability.describe())
    }

    fn scan(&self, _skip: &dyn Fn(&str) -> bool) -> Result<Option<Candidate>, NoRecovery> {
        Err(NoRecovery::Qwen)
    }

    fn live_holders(&self) -> Vec<(String, u32)> {
        qwen::live_holders(&self.chats, self.cache.processes())
    }
}
