//! How an agent was started, as far as a restore should start it again: which of its
//! command-line flags shape the session (kept) and which do one thing once (dropped), and which
//! environment variables choose its model and provider. One [`LaunchFacts`] per agent, beside
//! the agent's other facts; [`LaunchFacts::keep`] reads a command line with it.
//!
//! Every option the pinned CLI's `--help` lists is in its table, kept or not, with the values
//! it takes, so that a command line is read as the CLI reads it: a value is never taken for a
//! flag, nor a flag for a value. A word that is no option of the table is a prompt, a
//! subcommand or a flag the CLI does not know (each of the five refuses an unknown option and
//! exits non-zero): it is never kept. Nothing else of the command line is kept, since a prompt
//! can hold a secret.

/// What an option takes after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// Nothing: a switch (`--verbose`).
    Nothing,
    /// One value, in the next word or after `=` (`--model opus`, `--model=opus`, `-mopus`).
    One,
    /// A value only when one follows that is not an option (`--resume [id]`), or after `=`.
    Optional,
    /// One value or more: the next word, then every next word up to the next option
    /// (`--add-dir a b`).
    Many,
    /// Values when some follow: every next word up to the next option, none when an option
    /// comes next (commander's `[<tools>...]`).
    AnyNumber,
}

/// One option of an agent's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    /// Its names as typed, each with its dashes: `["-m", "--model"]`.
    pub names: &'static [&'static str],
    /// What it takes.
    pub takes: Takes,
    /// Whether a restore passes it again: it shapes the session (model, permissions, sandbox,
    /// profile, dirs, MCP and settings files, tools). `false` for what does one thing once
    /// (a prompt, print or headless mode, resume or continue, a session id, an output format).
    pub keep: bool,
}

/// How one agent's start is read: its options and the variables that choose its model and
/// provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchFacts {
    /// Every option of the pinned CLI's `--help`, kept or not.
    pub flags: &'static [Flag],
    /// The environment variables, besides the config-dir variable, that choose the model or
    /// the provider, measured in the pinned CLI; no credential (a key or a token) is among
    /// them.
    pub env: &'static [&'static str],
}

/// What [`LaunchFacts::keep`] found in a command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    /// The words of the kept options, as given (`--model`, `opus`, `--add-dir=../x`).
    pub args: Vec<String>,
    /// The options that were left out because the CLI does not know them (an older version's,
    /// or a misspelling), as given, without their values.
    pub unknown: Vec<String>,
}

impl LaunchFacts {
    /// The flag named `name`.
    fn flag(&self, name: &str) -> Option<&'static Flag> {
        self.flags.iter().find(|flag| flag.names.contains(&name))
    }

    /// Reads `args` (a command line without its program) as the CLI does and returns the words
    /// of the options it keeps, as given, and the options it does not know. Positional words
    /// (a prompt, a subcommand, a session id), everything after `--`, and the options that do
    /// one thing once are dropped with their values.
    pub fn keep<S: AsRef<str>>(&self, args: &[S]) -> Kept {
        let mut kept = Kept::default();
        let mut words = args.iter().map(AsRef::as_ref).peekable();
        let is_option = |word: &str| word.len() > 1 && word.starts_with('-');
        while let Some(word) = words.next() {
            if word == "--" {
                break;
            }
            if !is_option(word) {
                continue;
            }
            let (name, attached) = self.split(word);
            let Some(flag) = self.flag(name) else {
                kept.unknown.push(name.to_string());
                continue;
            };
            let mut taken = vec![word];
            match (flag.takes, attached) {
                (Nothing, _) | (One | Optional, true) => {}
                (One, false) => taken.extend(words.next()),
                (Optional, false) => {
                    taken.extend(words.next_if(|next| !is_option(next)));
                }
                (Many | AnyNumber, attached) => {
                    if !attached && flag.takes == Many {
                        taken.extend(words.next());
                    }
                    while let Some(next) = words.next_if(|next| !is_option(next)) {
                        taken.push(next);
                    }
                }
            }
            if flag.keep {
                kept.args.extend(taken.into_iter().map(str::to_string));
            }
        }
        kept
    }

    /// An option's name and whether its value is attached to it: `--model=x` and `-mx` (a short
    /// name that takes a value) carry one; `-m` and `--model` do not.
    fn split<'w>(&self, word: &'w str) -> (&'w str, bool) {
        if word.starts_with("--") {
            return match word.split_once('=') {
                Some((name, _)) => (name, true),
                None => (word, false),
            };
        }
        match word.char_indices().nth(2) {
            Some((at, _)) => {
                let short = &word[..at];
                let takes_value = self.flag(short).is_some_and(|flag| flag.takes != Nothing);
                match takes_value {
                    true => (short, true),
                    false => (word, false),
                }
            }
            None => (word, false),
        }
    }
}

const fn keep(names: &'static [&'static str], takes: Takes) -> Flag {
    Flag {
        names,
        takes,
        keep: true,
    }
}

const fn drop(names: &'static [&'static str], takes: Takes) -> Flag {
    Flag {
        names,
        takes,
        keep: false,
    }
}

use Takes::{AnyNumber, Many, Nothing, One, Optional};

/// Claude Code 2.1.328 (`claude --help`; commander: `<v...>` takes every next word up to an
/// option, `[v]` a value when one follows).
pub const CLAUDE: LaunchFacts = LaunchFacts {
    flags: &[
        keep(&["--add-dir"], Many),
        keep(&["--agent"], One),
        keep(&["--agents"], One),
        keep(&["--allow-dangerously-skip-permissions"], Nothing),
        keep(&["--allowedTools", "--allowed-tools"], Many),
        keep(&["--autocompact"], One),
        keep(&["--ax-screen-reader"], Nothing),
        keep(&["--bare"], Nothing),
        keep(&["--betas"], Many),
        keep(&["--brief"], Nothing),
        keep(&["--chrome"], Nothing),
        keep(&["--dangerously-skip-permissions"], Nothing),
        keep(&["--disable-slash-commands"], Nothing),
        keep(&["--disallowedTools", "--disallowed-tools"], Many),
        keep(&["--effort"], One),
        keep(&["--exclude-dynamic-system-prompt-sections"], Nothing),
        keep(&["--fallback-model"], One),
        keep(&["--ide"], Nothing),
        keep(&["--mcp-config"], Many),
        keep(&["--model"], One),
        keep(&["--no-chrome"], Nothing),
        keep(&["--permission-mode"], One),
        keep(&["--plugin-dir"], One),
        keep(&["--plugin-url"], One),
        keep(&["--restricted"], Nothing),
        keep(&["--safe-mode"], Nothing),
        keep(&["--setting-sources"], One),
        keep(&["--settings"], One),
        keep(&["--strict-mcp-config"], Nothing),
        keep(&["--system-prompt-snapshot"], One),
        keep(&["--tools"], Many),
        keep(&["--verbose"], Nothing),
        // A system prompt is text like a prompt (it may hold anything), and Claude Code sends
        // the one it recorded on every resume whatever a later launch passes.
        drop(&["--append-system-prompt"], One),
        drop(&["--system-prompt"], One),
        drop(&["--bg", "--background"], Nothing),
        drop(&["--cloud"], Optional),
        drop(&["-c", "--continue"], Nothing),
        drop(&["-d", "--debug"], Optional),
        drop(&["--debug-file"], One),
        drop(&["--desktop"], Nothing),
        drop(&["--environment"], One),
        drop(&["--file"], Many),
        drop(&["--fork-session"], Nothing),
        drop(&["--forward-subagent-text"], Nothing),
        drop(&["--from-pr"], Optional),
        drop(&["-h", "--help"], Nothing),
        drop(&["--include-hook-events"], Nothing),
        drop(&["--include-partial-messages"], Nothing),
        drop(&["--input-format"], One),
        drop(&["--json-schema"], One),
        drop(&["--max-budget-usd"], One),
        drop(&["-n", "--name"], One),
        drop(&["--no-session-persistence"], Nothing),
        drop(&["--output-format"], One),
        drop(&["--permission-prompts"], One),
        drop(&["-p", "--print"], Nothing),
        drop(&["--prompt-suggestions"], Optional),
        drop(&["--remote-control"], Optional),
        drop(&["--remote-control-session-name-prefix"], One),
        drop(&["--replay-user-messages"], Nothing),
        drop(&["-r", "--resume"], Optional),
        drop(&["--session-id"], One),
        drop(&["--teleport"], Optional),
        drop(&["--tmux"], Nothing),
        drop(&["-v", "--version"], Nothing),
        drop(&["-w", "--worktree"], Optional),
    ],
    env: &[
        "ANTHROPIC_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "CLAUDE_CODE_SUBAGENT_MODEL",
        "CLAUDE_CODE_EFFORT_LEVEL",
        "MAX_THINKING_TOKENS",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "CLOUD_ML_REGION",
    ],
};

/// Codex CLI 0.171.0 (`codex --help` and `codex resume --help`, which takes the same
/// session-shaping options; clap).
pub const CODEX: LaunchFacts = LaunchFacts {
    flags: &[
        keep(&["-c", "--config"], One),
        keep(&["--enable"], One),
        keep(&["--disable"], One),
        keep(&["--remote"], One),
        keep(&["--remote-auth-token-env"], One),
        keep(&["--strict-config"], Nothing),
        keep(&["-m", "--model"], One),
        keep(&["--oss"], Nothing),
        keep(&["--local-provider"], One),
        keep(&["-p", "--profile"], One),
        keep(&["-s", "--sandbox"], One),
        keep(&["--approve-for-me"], Nothing),
        keep(&["--dangerously-bypass-approvals-and-sandbox"], Nothing),
        keep(&["--dangerously-bypass-hook-trust"], Nothing),
        keep(&["--add-dir"], One),
        keep(&["-a", "--ask-for-approval"], One),
        keep(&["--search"], Nothing),
        keep(&["--no-alt-screen"], Nothing),
        keep(&["--no-daemon"], Nothing),
        // The recorded working dir is the one it chose: a restore starts there.
        drop(&["-C", "--cd"], One),
        drop(&["-i", "--image"], Many),
        drop(&["--worktree"], Nothing),
        drop(&["--last"], Nothing),
        drop(&["--all"], Nothing),
        drop(&["--include-non-interactive"], Nothing),
        drop(&["-h", "--help"], Nothing),
        drop(&["-V", "--version"], Nothing),
    ],
    env: &["OPENAI_BASE_URL", "CODEX_OSS_BASE_URL", "CODEX_OSS_PORT"],
};

/// Gemini CLI 0.61.0 (`gemini --help`; yargs: an `[array]` takes every next word up to an
/// option).
pub const GEMINI: LaunchFacts = LaunchFacts {
    flags: &[
        keep(&["-m", "--model"], One),
        keep(&["--skip-trust"], Nothing),
        keep(&["-s", "--sandbox"], Nothing),
        keep(&["-y", "--yolo"], Nothing),
        keep(&["--approval-mode"], One),
        keep(&["--policy"], Many),
        keep(&["--admin-policy"], Many),
        keep(&["--allowed-mcp-server-names"], Many),
        keep(&["--allowed-tools"], Many),
        keep(&["-e", "--extensions"], Many),
        keep(&["--include-directories"], Many),
        keep(&["--screen-reader"], Nothing),
        keep(&["--raw-output"], Nothing),
        keep(&["--accept-raw-output-risk"], Nothing),
        drop(&["-d", "--debug"], Nothing),
        drop(&["-p", "--prompt"], One),
        drop(&["-i", "--prompt-interactive"], One),
        drop(&["-w", "--worktree"], Optional),
        drop(&["--acp"], Nothing),
        drop(&["--experimental-acp"], Nothing),
        drop(&["-l", "--list-extensions"], Nothing),
        drop(&["-r", "--resume"], Optional),
        drop(&["--session-file"], One),
        drop(&["--session-id"], One),
        drop(&["--list-sessions"], Nothing),
        drop(&["--delete-session"], One),
        drop(&["-o", "--output-format"], One),
        drop(&["-v", "--version"], Nothing),
        drop(&["-h", "--help"], Nothing),
    ],
    env: &[
        "GEMINI_MODEL",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GEMINI_SANDBOX",
    ],
};

/// GitHub Copilot CLI 1.0.102 (`copilot --help` and `copilot help environment`; commander, as
/// Claude Code's, where `[<tools>...]` takes values only when some follow).
pub const COPILOT: LaunchFacts = LaunchFacts {
    flags: &[
        keep(&["--disable-client-telemetry"], Nothing),
        keep(&["--model"], One),
        keep(&["--reasoning-effort"], One),
        keep(&["--context"], One),
        keep(&["--auto-tier"], One),
        keep(&["--agent"], One),
        keep(&["--allow-all-tools"], Nothing),
        keep(&["--allow-all-paths"], Nothing),
        keep(&["--disallow-temp-dir"], Nothing),
        keep(&["--screen-reader"], Nothing),
        keep(&["--plain-diff"], Nothing),
        keep(&["--stream"], One),
        keep(&["--add-dir"], One),
        keep(&["--disable-mcp-server"], One),
        keep(&["--disable-builtin-mcps"], Nothing),
        keep(&["--enable-all-github-mcp-tools"], Nothing),
        keep(&["--add-github-mcp-toolset"], One),
        keep(&["--add-github-mcp-tool"], One),
        keep(&["--plugin-dir"], One),
        keep(&["--additional-mcp-config"], One),
        keep(&["--mcp-github-auth"], One),
        keep(&["--allow-all-mcp-server-instructions"], Nothing),
        keep(&["--allow-tool"], AnyNumber),
        keep(&["--deny-tool"], AnyNumber),
        keep(&["--available-tools"], AnyNumber),
        keep(&["--excluded-tools"], AnyNumber),
        keep(&["--secret-env-vars"], AnyNumber),
        keep(&["--allow-url"], AnyNumber),
        keep(&["--deny-url"], AnyNumber),
        keep(&["--allow-all-urls"], Nothing),
        keep(&["--allow-all"], Nothing),
        keep(&["--yolo"], Nothing),
        keep(&["--max-autopilot-continues"], One),
        keep(&["--mode"], One),
        keep(&["--autopilot"], Nothing),
        keep(&["--plan"], Nothing),
        keep(&["--experimental"], Nothing),
        keep(&["--no-experimental"], Nothing),
        keep(&["--bash-env"], Optional),
        keep(&["--no-bash-env"], Nothing),
        keep(&["--mouse"], Optional),
        keep(&["--no-mouse"], Nothing),
        keep(&["--remote"], Nothing),
        keep(&["--no-remote"], Nothing),
        keep(&["--remote-export"], Nothing),
        keep(&["--no-remote-export"], Nothing),
        keep(&["--enable-mcp-server"], One),
        keep(&["--max-ai-credits"], One),
        keep(&["--assisted-approval"], Nothing),
        keep(&["--no-custom-instructions"], Nothing),
        keep(&["--no-auto-update"], Nothing),
        keep(&["--no-ask-user"], Nothing),
        keep(&["--no-color"], Nothing),
        drop(&["-v", "--version"], Nothing),
        drop(&["-i", "--interactive"], One),
        drop(&["--fleet"], Nothing),
        drop(&["-p", "--prompt"], One),
        drop(&["--trust-folder"], Nothing),
        drop(&["-s", "--silent"], Nothing),
        drop(&["--enable-memory"], Nothing),
        drop(&["-r", "--resume"], Optional),
        drop(&["--continue"], Nothing),
        drop(&["-n", "--name"], One),
        drop(&["--session-id"], One),
        drop(&["--connect"], Optional),
        drop(&["--banner"], Nothing),
        // The recorded working dir is the one it changed to: a restore starts there.
        drop(&["-C"], One),
        drop(&["--log-dir"], One),
        drop(&["--extension-sdk-path"], One),
        drop(&["--log-level"], One),
        drop(&["--output-format"], One),
        drop(&["--share"], Optional),
        drop(&["--share-gist"], Nothing),
        drop(&["--attachment"], One),
        drop(&["--acp"], Nothing),
        drop(&["--environment-host"], One),
        drop(&["--environment-compute-id"], One),
        // It persists the choice: once is enough.
        drop(&["--dynamic-retrieval"], One),
        drop(&["--usage-output-file"], One),
        drop(&["--no-eager-powershell-resolution"], Nothing),
        drop(&["-h", "--help"], Nothing),
    ],
    env: &[
        "COPILOT_MODEL",
        "COPILOT_AUTO_TIER",
        "COPILOT_ALLOW_ALL",
        "COPILOT_OFFLINE",
        "COPILOT_PROVIDER_BASE_URL",
        "COPILOT_PROVIDER_TYPE",
        "COPILOT_PROVIDER_WIRE_API",
        "COPILOT_PROVIDER_TRANSPORT",
        "COPILOT_PROVIDER_AZURE_API_VERSION",
        "COPILOT_PROVIDER_MODEL_ID",
        "COPILOT_PROVIDER_WIRE_MODEL",
        "COPILOT_PROVIDER_MAX_PROMPT_TOKENS",
        "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS",
        "COPILOT_GH_HOST",
        "GH_HOST",
    ],
};

/// Qwen Code 0.24.4 (`qwen --help`; yargs, as Gemini CLI: an `[array]` takes every next word up
/// to an option). `QWEN_RUNTIME_DIR` is among its variables: it says where the sessions are,
/// so a restore sets it again and its preflight looks there.
pub const QWEN: LaunchFacts = LaunchFacts {
    flags: &[
        keep(&["--bare"], Nothing),
        keep(&["--safe-mode"], Nothing),
        keep(&["--insecure"], Nothing),
        keep(&["--chat-recording"], Nothing),
        keep(&["-m", "--model"], One),
        keep(&["--fallback-model"], Many),
        keep(&["--output-style"], One),
        keep(&["-s", "--sandbox"], Nothing),
        keep(&["--sandbox-image"], One),
        keep(&["-y", "--yolo"], Nothing),
        keep(&["--approval-mode"], One),
        keep(&["--experimental-lsp"], Nothing),
        keep(&["--allowed-mcp-server-names"], Many),
        keep(&["--mcp-config"], One),
        keep(&["--allowed-tools"], Many),
        keep(&["-e", "--extensions"], Many),
        keep(&["--include-directories", "--add-dir"], Many),
        keep(&["--openai-base-url"], One),
        keep(&["--screen-reader"], Nothing),
        keep(&["--max-subagent-depth"], One),
        keep(&["--core-tools"], Many),
        keep(&["--exclude-tools"], Many),
        keep(&["--disabled-slash-commands"], Many),
        keep(&["--auth-type"], One),
        drop(&["--telemetry"], Nothing),
        drop(&["--telemetry-target"], One),
        drop(&["--telemetry-otlp-endpoint"], One),
        drop(&["--telemetry-otlp-protocol"], One),
        drop(&["--telemetry-log-prompts"], Nothing),
        drop(&["--telemetry-outfile"], One),
        drop(&["-d", "--debug"], Nothing),
        // A proxy URL may carry a password, and an API key is a credential: never recorded.
        drop(&["--proxy"], One),
        drop(&["--openai-api-key"], One),
        drop(&["-p", "--prompt"], One),
        drop(&["-i", "--prompt-interactive"], One),
        // Text like a prompt, as Claude Code's.
        drop(&["--system-prompt"], One),
        drop(&["--append-system-prompt"], One),
        drop(&["--acp"], Nothing),
        drop(&["--restore-ask-user-question"], Nothing),
        drop(&["--channel"], One),
        drop(&["-l", "--list-extensions"], Nothing),
        drop(&["--openai-logging"], Nothing),
        drop(&["--openai-logging-dir"], One),
        drop(&["--input-format"], One),
        drop(&["-o", "--output-format"], One),
        drop(&["--include-partial-messages"], Nothing),
        drop(&["--json-fd"], One),
        drop(&["--json-file"], One),
        drop(&["--json-schema"], One),
        drop(&["--input-file"], One),
        drop(&["-c", "--continue"], Nothing),
        drop(&["-r", "--resume"], Optional),
        drop(&["--session-id"], One),
        drop(&["--fork-session"], Nothing),
        drop(&["--worktree"], Optional),
        // Budgets of a headless run.
        drop(&["--max-session-turns"], One),
        drop(&["--max-wall-time"], One),
        drop(&["--max-tool-calls"], One),
        drop(&["-v", "--version"], Nothing),
        drop(&["-h", "--help"], Nothing),
    ],
    env: &[
        "OPENAI_MODEL",
        "QWEN_MODEL",
        "OPENAI_BASE_URL",
        "GEMINI_MODEL",
        "GOOGLE_MODEL",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_BASE_URL",
        "QWEN_DEFAULT_AUTH_TYPE",
        "QWEN_RUNTIME_DIR",
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn check(facts: &LaunchFacts, line: &str, expected: &[&str], unknown: &[&str]) {
        let words: Vec<&str> = line.split(' ').filter(|word| !word.is_empty()).collect();
        let kept = facts.keep(&words);
        assert_eq!(kept.args, expected, "kept of {line:?}");
        assert_eq!(kept.unknown, unknown, "unknown of {line:?}");
    }

    #[test]
    fn claude_keeps_what_shapes_the_session() {
        check(
            &CLAUDE,
            "--model opus --permission-mode acceptEdits --add-dir ../common-lib fix-it",
            &[
                "--model",
                "opus",
                "--permission-mode",
                "acceptEdits",
                "--add-dir",
                "../common-lib",
                "fix-it",
            ],
            &[],
        );
        check(
            &CLAUDE,
            "-p secret --model=opus --output-format json -r abc --settings s.json",
            &["--model=opus", "--settings", "s.json"],
            &[],
        );
        check(&CLAUDE, "-r --model x", &["--model", "x"], &[]);
        check(&CLAUDE, "--resume abc prompt", &[], &[]);
        check(
            &CLAUDE,
            "--old-flag --model x -- --model y",
            &["--model", "x"],
            &["--old-flag"],
        );
        check(
            &CLAUDE,
            "--system-prompt secret --verbose",
            &["--verbose"],
            &[],
        );
    }

    #[test]
    fn codex_reads_short_values_as_clap_does() {
        check(
            &CODEX,
            "--profile work -s workspace-write -mo3 hello",
            &["--profile", "work", "-s", "workspace-write", "-mo3"],
            &[],
        );
        check(&CODEX, "resume abc -m o3 --last", &["-m", "o3"], &[]);
        check(&CODEX, "-i a.png b.png -c model=x", &["-c", "model=x"], &[]);
        check(&CODEX, "-C /elsewhere --no-daemon", &["--no-daemon"], &[]);
    }

    #[test]
    fn gemini_and_copilot() {
        check(
            &GEMINI,
            "-m gemini-2.5-pro --approval-mode auto_edit -p secret --include-directories a b -y",
            &[
                "-m",
                "gemini-2.5-pro",
                "--approval-mode",
                "auto_edit",
                "--include-directories",
                "a",
                "b",
                "-y",
            ],
            &[],
        );
        check(
            &COPILOT,
            "--model gpt-5 --allow-tool write shell --resume=abc -i secret --yolo",
            &[
                "--model",
                "gpt-5",
                "--allow-tool",
                "write",
                "shell",
                "--yolo",
            ],
            &[],
        );
        check(&COPILOT, "--resume abc --no-such", &[], &["--no-such"]);
        // An optional list takes no option for a value: the prompt after it stays a prompt.
        check(
            &COPILOT,
            "--allow-tool -p secret --yolo",
            &["--allow-tool", "--yolo"],
            &[],
        );
        check(
            &QWEN,
            "--approval-mode auto-edit --add-dir a b --openai-api-key sk-1 -r abc fix it -mqwen3",
            &[
                "--approval-mode",
                "auto-edit",
                "--add-dir",
                "a",
                "b",
                "-mqwen3",
            ],
            &[],
        );
    }

    #[test]
    fn every_name_is_in_one_flag_only() {
        for facts in [CLAUDE, CODEX, GEMINI, COPILOT, QWEN] {
            let mut names: Vec<&str> = facts
                .flags
                .iter()
                .flat_map(|flag| flag.names)
                .copied()
                .collect();
            let all = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), all, "a name twice in {facts:?}");
        }
    }
}
