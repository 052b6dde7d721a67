//! The command-line definition (clap derive): every command, flag and environment variable of
//! the Commands section of docs/commands.md, and the help text people read (with examples).

use clap::{Args, Parser, Subcommand};
use clap_complete::Shell;

/// Remember which AI coding-agent session runs in which terminal pane, and resume it after a
/// crash.
#[derive(Debug, Parser)]
#[command(name = "crash-resume", version, about, long_about = None)]
#[command(after_help = "Examples:
  crash-resume hook install claude          record every Claude Code session from now on
  crash-resume list                         every surface and its session
  crash-resume restore --apply tmux         after a crash: resume every pane that was lost

Exit codes: 0 done, 1 failed, 2 usage error or invalid input, 4 nothing found.
`crash-resume man` prints the manual: every command, its options and examples.")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// The index file [default: $XDG_STATE_HOME/crash-resume/index.json]
    #[arg(
        long,
        global = true,
        env = "CRASH_RESUME_INDEX_PATH",
        value_name = "FILE"
    )]
    pub path: Option<String>,

    /// Print one JSON document on stdout, with a "version" field
    #[arg(long, global = true)]
    pub json: bool,

    /// Accept an index on a volatile filesystem (/tmp, /dev/shm, /run, tmpfs), which a reboot wipes
    #[arg(long, global = true, env = "CRASH_RESUME_ALLOW_VOLATILE", value_parser = clap::builder::FalseyValueParser::new())]
    pub allow_volatile: bool,

    /// The launcher profile to render resume commands with (for example `golems`)
    #[arg(long, global = true, env = "CRASH_RESUME_PROFILE", value_name = "NAME")]
    pub profile: Option<String>,

    /// How long a write waits for the index lock (milliseconds, or a duration like 2s) [default:
    /// 5s; a hook waits at most 2s and hands what remains to a background retry]
    #[arg(
        long,
        global = true,
        env = "CRASH_RESUME_LOCK_TIMEOUT",
        value_name = "DURATION"
    )]
    pub lock_timeout: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Capture: bind a surface to a session (a locked, durable write)
    #[command(after_help = "Examples:
  crash-resume record cmux-pane-42 01J-orc-lead-xyz orchestrator lead --cwd ~/code/orchestrator
  crash-resume record tmux:main:0.1 3f2c9a0e-... api --agent codex --config-dir ~/.codex-work")]
    Record(RecordArgs),
    /// Print a surface's entry as JSON (`null` and exit 4 when there is none)
    #[command(after_help = "Examples:
  crash-resume lookup cmux-pane-42
  crash-resume --json lookup tmux:main:0.1      {\"version\": 1, \"surface\": ..., \"entry\": ...}")]
    Lookup {
        /// The surface: a pane's id, such as tmux:main:0.1 or cmux-pane-42
        surface: String,
    },
    /// Print the one shell line that resumes a surface's session
    ///
    /// It prints what `restore` would run for the surface: for a recorded transcript that is
    /// gone, the other conversation of its dir that would be resumed (with a note on stderr);
    /// nothing, with exit 4, when nothing can be resumed (the preflight says fresh) or a
    /// running agent or another surface holds the session already.
    ///
    /// With MAX_AGE, a session is offered only when it was active within it: the later of its
    /// last hook (last_active) and the last change of its transcript counts.
    #[command(
        name = "resume-cmd",
        after_help = "Examples:
  crash-resume resume-cmd cmux-pane-42
  cmd=$(crash-resume resume-cmd cmux-pane-42 2h) && eval \"$cmd\"
  crash-resume --profile golems resume-cmd tmux:main:0.1"
    )]
    ResumeCmd {
        /// The surface: a pane's id, such as tmux:main:0.1 or cmux-pane-42
        surface: String,
        /// Only offer a session active within this age: milliseconds, or 90s, 30m, 2h, 7d
        max_age: Option<String>,
    },
    /// Liveness: bump a surface's last_active
    Touch {
        /// The surface: a pane's id, such as tmux:main:0.1 or cmux-pane-42
        surface: String,
    },
    /// Drop one surface's entry
    Forget {
        /// The surface: a pane's id, such as tmux:main:0.1 or cmux-pane-42
        surface: String,
    },
    /// Drop every entry not active within MAX_AGE (milliseconds, or 90s, 30m, 2h, 7d)
    ///
    /// Activity is the later of the entry's last hook (last_active) and the last change of its
    /// transcript. An entry whose session a running agent holds is kept, and named on stderr.
    #[command(after_help = "Examples:
  crash-resume prune 7d
  crash-resume --json prune 30d | jq '.pruned[].surfaceId'")]
    Prune {
        /// Milliseconds, or a duration such as 90s, 30m, 2h, 7d
        max_age: String,
    },
    /// Every entry, one line each: a table on a terminal, tab-separated values when piped
    #[command(after_help = "Examples:
  crash-resume list
  crash-resume list | cut -f1,2          surface and session of every entry
  crash-resume --json list")]
    List,
    /// Before spawning: will the surface resume its conversation, recover another, or start fresh?
    #[command(after_help = "Examples:
  crash-resume preflight tmux:main:0.1
  crash-resume preflight --session 3f2c9a0e-... --cwd ~/code/api --config-dir ~/.claude

Exit codes: 0 resume, recover or unknown (nothing to check against); 4 fresh or no such surface.")]
    Preflight(PreflightArgs),
    /// The index path in use, and whether it survives a reboot
    Path,
    /// Check the setup: hooks, the index's place, the agents and multiplexers, the hook's errors
    ///
    /// Says which hooks are installed for which agents (and tmux's restore at server start)
    /// and whether each runs this binary, whether the index survives a reboot and its dir can
    /// be written, which agents and multiplexers are on PATH and their versions against the
    /// ones crash-resume is tested with, and the last errors of hook.log; for each problem, the
    /// command that fixes it. Reads only: nothing is written.
    #[command(after_help = "Examples:
  crash-resume doctor
  crash-resume --json doctor | jq '.problems[].fix'

Exit codes: 0 all is well; 1 something needs doing (each problem is listed with its fix).")]
    Doctor,
    /// After a reboot: every surface whose session did not end cleanly, its verdict and resume command
    ///
    /// A table on a terminal, tab-separated values when piped (surface, verdict, session,
    /// command or what happens, then each note).
    #[command(after_help = "Examples:
  crash-resume restore                                   what would be resumed, and how
  crash-resume restore --max-age 1d                      only surfaces active in the last day
  crash-resume restore --apply tmux --tmux-socket work   re-open each pane of `tmux -L work`")]
    Restore(RestoreArgs),
    /// An agent's hook (reads its JSON on stdin; always exits 0), or install the hook
    #[command(subcommand)]
    Hook(HookCommand),
    /// Restore on its own at login, once per boot: a systemd user unit (a launchd agent on macOS)
    #[command(subcommand)]
    Service(ServiceCommand),
    /// Print shell completions
    Completions {
        /// The shell to complete for
        shell: Shell,
    },
    /// Print the man page (roff)
    Man,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The surface: a pane's id, such as tmux:main:0.1 or cmux-pane-42
    pub surface: String,
    /// The agent's session id (what `--resume` takes)
    pub session: String,
    /// The repo the session works in (launchers may depend on it)
    pub repo: String,
    /// The session's role, such as lead or reviewer (empty: none)
    pub role: Option<String>,
    /// The agent: claude, codex, gemini, copilot, ... (`--provider` is its older name)
    #[arg(long, value_name = "NAME", visible_alias = "provider")]
    pub agent: Option<String>,
    /// The working dir the session runs in
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    #[arg(long, value_name = "DIR", help = config_dir_help())]
    pub config_dir: Option<String>,
}

/// `--config-dir`'s help: each agent's config-dir variable, from the agent registry.
fn config_dir_help() -> String {
    let variables: Vec<String> = agent_paths::AGENTS
        .iter()
        .map(|facts| match facts.default_config_dir {
            // Gemini CLI's variable names a home dir, which holds its config dir.
            "~" => {
                let dir = facts.hook_file.split('/').next().unwrap_or_default();
                format!(
                    "{} (for {} the home dir that holds {dir})",
                    facts.config_env, facts.name
                )
            }
            _ => facts.config_env.to_string(),
        })
        .collect();
    format!("The agent's config dir ({})", variables.join(", "))
}

/// `hook install` and `hook uninstall`'s `--settings` help: each agent's hook file, from the
/// agent registry, and tmux's.
fn settings_help() -> String {
    let agents: Vec<String> = agent_paths::AGENTS
        .iter()
        .map(|facts| {
            let default = facts.default_config_dir.trim_end_matches('/');
            format!(
                "{}: ${}/{file}, else {default}/{file}",
                facts.name,
                facts.config_env,
                file = facts.hook_file
            )
        })
        .collect();
    format!(
        "The hook file [default: {}; tmux: ~/.tmux.conf, else an existing $XDG_CONFIG_HOME/tmux/tmux.conf]",
        agents.join("; ")
    )
}

/// `preflight <SURFACE>` fills the input from the index; `preflight --cwd ...` takes it from flags.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("from").required(true).args(["surface", "cwd"])))]
pub struct PreflightArgs {
    /// The surface whose index entry to check
    #[arg(conflicts_with_all = ["session", "cwd", "config_dir", "agent", "history_session"])]
    pub surface: Option<String>,
    /// The session id the spawn would resume
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// The session's working dir
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// The agent's config dir [default: $CLAUDE_CONFIG_DIR, else ~/.claude; $CODEX_HOME, else ~/.codex; gemini: $GEMINI_CLI_HOME, else ~, the home dir that holds .gemini; copilot: $COPILOT_HOME, else ~/.copilot]
    #[arg(long, value_name = "DIR")]
    pub config_dir: Option<String>,
    /// The agent: claude, codex, gemini, copilot, ... (`--provider` is its older name)
    #[arg(long, value_name = "NAME", visible_alias = "provider", default_value = agent_paths::DEFAULT_AGENT)]
    pub agent: String,
    /// The session the pane shows, when no id is held
    #[arg(long, value_name = "ID")]
    pub history_session: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's hook: SessionStart records, SessionEnd marks a clean exit, others touch
    Claude {
        /// The payload, when the agent passes it as an argument instead of on stdin
        #[arg(hide = true)]
        payload: Option<String>,
    },
    /// Codex CLI's hook (the same events; the payload may also come as an argument, as Codex's `notify` passes it)
    Codex {
        #[arg(hide = true)]
        payload: Option<String>,
    },
    /// Gemini CLI's hook (the same events; a SessionEnd counts as the end only when its pane still exists)
    Gemini {
        #[arg(hide = true)]
        payload: Option<String>,
    },
    /// GitHub Copilot CLI's hook: its payload names no event, so the command line does
    /// (sessionStart records, sessionEnd marks the end only when its pane still exists)
    Copilot {
        /// The event the hook is installed for: sessionStart, sessionEnd, ...
        #[arg(value_name = "EVENT")]
        event: Option<String>,
    },
    /// Qwen Code's hook (the same events; a SessionEnd counts as the end only when its pane still exists)
    Qwen {
        #[arg(hide = true)]
        payload: Option<String>,
    },
    /// Add crash-resume's SessionStart and SessionEnd hooks to the agent's settings; for tmux,
    /// a restore when a tmux server starts (once per server, in the background)
    #[command(after_help = "Examples:
  crash-resume hook install claude
  crash-resume hook install claude --settings ~/.claude-work/settings.json --dry-run
  crash-resume hook install gemini --retention off
  crash-resume hook install tmux")]
    Install {
        #[arg(value_enum, value_name = "AGENT")]
        target: HookTarget,
        #[arg(long, value_name = "FILE", help = settings_help())]
        settings: Option<String>,
        /// gemini only: `off` also sets general.sessionRetention.enabled to false, so that
        /// Gemini's start-up cleanup cannot delete a resumed conversation (it also stops
        /// deleting sessions older than 30 days)
        #[arg(long, value_enum, value_name = "off")]
        retention: Option<RetentionSetting>,
        /// codex only: also add "thread-id" to `terminal_title` under `[tui]` in
        /// $CODEX_HOME/config.toml, keeping the items there (Codex's defaults when none are set),
        /// so that a hook Codex runs in its shared daemon finds the session's pane by its title
        #[arg(long)]
        codex_title: bool,
        /// Print the merged settings instead of writing them
        #[arg(long)]
        dry_run: bool,
    },
    /// Remove every crash-resume hook from the agent's settings, whichever binary path installed it; for tmux, the restore at server start
    #[command(after_help = "Examples:
  crash-resume hook uninstall claude
  crash-resume hook uninstall codex --dry-run
  crash-resume hook uninstall tmux

Everything else in the file is kept as written; the previous version is kept beside it as
<file>.crash-resume-<UTC time>.bak. Running it again changes nothing.")]
    Uninstall {
        #[arg(value_enum, value_name = "AGENT")]
        target: HookTarget,
        #[arg(long, value_name = "FILE", help = settings_help())]
        settings: Option<String>,
        /// Print the settings without our hooks instead of writing them
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Every surface, also those whose session ended cleanly
    #[arg(long)]
    pub all: bool,
    /// Re-open each resumable surface of this multiplexer: tmux starts the command as its
    /// pane's process (an idle shell) or creates its session, window or pane, and skips busy
    /// panes; zellij resurrects or creates the session and starts it as its named pane's
    /// process (or in a new pane of that name); wezterm starts it in a new tab beside the pane
    /// (or a new window); cmux in a new workspace; kitty replaces an idle shell's window, skips
    /// a busy one, opens a new window for one that is gone. Nothing is typed into a pane
    #[arg(long, value_name = "MULTIPLEXER", value_parser = applicable())]
    pub apply: Option<mux::Multiplexer>,
    /// Only surfaces active within this age (milliseconds, or 90s, 30m, 2h, 7d), measured from
    /// the later of last_active and the transcript's last change
    #[arg(long, value_name = "MAX_AGE")]
    pub max_age: Option<String>,
    /// The tmux server to restore into: a socket name (`tmux -L NAME`) or, holding a `/`, a
    /// socket path (`tmux -S PATH`); only its own surfaces are opened [default: $TMUX's
    /// server, else the default one]
    #[arg(long, value_name = "NAME|PATH", env = "CRASH_RESUME_TMUX_SOCKET")]
    pub tmux_socket: Option<String>,
    /// cmux's socket [default: /tmp/cmux.sock]
    #[arg(long, value_name = "PATH", env = "CMUX_SOCKET_PATH")]
    pub cmux_socket: Option<std::path::PathBuf>,
    /// The address kitty listens on for remote control, such as unix:/tmp/kitty
    #[arg(long, value_name = "ADDR", env = "KITTY_LISTEN_ON")]
    pub kitty_socket: Option<String>,
    /// With --apply: restore once per boot into this instance; a second run in the same boot
    /// restores nothing and says when the first ran (a ledger beside the index). Staggered
    /// and verified
    #[arg(long, requires = "apply")]
    pub once_per_boot: bool,
    /// With --apply: at most N agents starting at once; each counts as started once its own
    /// hook bound it to its surface again (staggered and verified; the default with
    /// --once-per-boot) [default: 3]
    #[arg(long, value_name = "N", requires = "apply", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_starting: Option<u32>,
    /// With --apply: how long each agent has to bind itself (milliseconds, or 90s, 2m)
    /// [default: 30s]
    #[arg(long, value_name = "DURATION", requires = "apply")]
    pub start_timeout: Option<String>,
    /// With --apply: stop after K failed starts in a row, leaving the rest planned [default: 3]
    #[arg(long, value_name = "K", requires = "apply", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_failures: Option<u32>,
    /// Without --apply: when a surface could be resumed, say so with the command that
    /// restores it into MULTIPLEXER (`restore --apply MULTIPLEXER --once-per-boot`), on
    /// stderr and as a desktop notification where notify-send exists (what the login service
    /// of policy ask runs)
    #[arg(long, value_name = "MULTIPLEXER", value_parser = applicable(), conflicts_with = "apply")]
    pub notify: Option<mux::Multiplexer>,
}

/// The multiplexers `restore --apply` takes: those with a backend (`mux::APPLICABLE`).
fn applicable() -> impl clap::builder::TypedValueParser<Value = mux::Multiplexer> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(mux::APPLICABLE.map(mux::Multiplexer::name)).map(
        |name| {
            mux::APPLICABLE
                .into_iter()
                .find(|multiplexer| multiplexer.name() == name)
                .unwrap_or(mux::Multiplexer::Tmux)
        },
    )
}

/// What `hook install gemini --retention` sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RetentionSetting {
    /// `general.sessionRetention.enabled = false`
    Off,
}

/// What `hook install` and `hook uninstall` take: an agent, or tmux (a restore at its server's
/// start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookTarget {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Qwen,
    Tmux,
}

impl HookTarget {
    /// The agent, when it is one.
    pub fn agent(self) -> Option<Agent> {
        match self {
            HookTarget::Claude => Some(Agent::Claude),
            HookTarget::Codex => Some(Agent::Codex),
            HookTarget::Gemini => Some(Agent::Gemini),
            HookTarget::Copilot => Some(Agent::Copilot),
            HookTarget::Qwen => Some(Agent::Qwen),
            HookTarget::Tmux => None,
        }
    }
}

/// The agents whose hooks this binary understands: the agent registry's, as a command-line
/// value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Qwen,
}

impl Agent {
    /// The agent in the registry.
    pub fn agent(self) -> agent_paths::Agent {
        match self {
            Agent::Claude => agent_paths::Agent::Claude,
            Agent::Codex => agent_paths::Agent::Codex,
            Agent::Gemini => agent_paths::Agent::Gemini,
            Agent::Copilot => agent_paths::Agent::Copilot,
            Agent::Qwen => agent_paths::Agent::Qwen,
        }
    }

    /// The registry's facts of this agent.
    pub fn facts(self) -> &'static agent_paths::AgentFacts {
        self.agent().facts()
    }

    /// The name the index records for this agent.
    pub fn name(self) -> &'static str {
        self.agent().name()
    }
}

#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write and enable the login service that runs `restore --apply MUX --once-per-boot`
    Install {
        /// auto restores once per boot; ask restores nothing, notifies and names the command
        #[arg(long, value_enum, default_value = "auto")]
        policy: ServicePolicy,
        /// The multiplexer to restore into (tmux and zellij sessions are created by the
        /// restore; kitty must be running, listening on --kitty-socket)
        #[arg(long = "mux", value_enum, default_value = "tmux")]
        multiplexer: ServiceMux,
        /// kitty's remote-control address (unix:PATH), for --mux kitty
        #[arg(long, value_name = "ADDR")]
        kitty_socket: Option<String>,
        /// The service manager [default: launchd on macOS, else systemd]
        #[arg(long, value_enum)]
        manager: Option<ServiceManager>,
    },
    /// Disable and remove the login service (only a file of ours)
    Uninstall {
        /// The service manager [default: launchd on macOS, else systemd]
        #[arg(long, value_enum)]
        manager: Option<ServiceManager>,
    },
    /// Whether the service is installed, what the last restore did and when, and why the panes
    /// of the last boot died
    Status {
        /// The service manager [default: launchd on macOS, else systemd]
        #[arg(long, value_enum)]
        manager: Option<ServiceManager>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServicePolicy {
    Auto,
    Ask,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServiceMux {
    Tmux,
    Zellij,
    Kitty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServiceManager {
    Systemd,
    Launchd,
}
