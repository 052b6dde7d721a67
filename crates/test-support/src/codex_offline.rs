//! The offline setup for the real Codex CLI, shared by every place that runs it: the preflight's
//! conformance test, the CLI's capture test and `cargo xtask reboot-sim --real-codex`.
//!
//! Codex runs in a network namespace with loopback alone (`unshare -n`), under
//! `codex_offline.py` (its text is `LAUNCHER`), which brings loopback up, serves a mock of the
//! Responses API on 127.0.0.1:`PORT` and kills by pid every process left in the namespace when
//! its command ends. Codex finds the mock through `config_toml`. The same launcher serves the
//! Gemini and Copilot CLIs' model APIs ([`crate::gemini_offline`], [`crate::copilot_offline`]),
//! and [`run_launched`] is the one bounded run of an agent under it.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

/// The mock's port inside the namespace (each namespace has its own loopback).
pub const PORT: u16 = 18080;

/// The launcher script, written next to whatever runs it.
pub const LAUNCHER: &str = include_str!("codex_offline.py");

/// The launcher's command for a tmux server (named by the first argument) that lives in the
/// namespace until the launcher's stdin closes.
pub const TMUX_SERVER: &str = "tmux -L \"$0\" -f /dev/null start-server \\; \
     set-option -g exit-empty off && exec cat > /dev/null";

/// The executable `cargo xtask codex-cli install` puts in the build dir, given a test's
/// `CARGO_TARGET_TMPDIR` (inside that dir); a test fails here, saying how to install it, when it
/// is missing.
pub fn installed_cli(target_tmpdir: &str) -> PathBuf {
    let target = Path::new(target_tmpdir)
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target dir");
    let cli = target.join("codex-cli/node_modules/.bin/codex");
    assert!(
        cli.is_file(),
        "the Codex CLI is not installed at {}: run `cargo xtask codex-cli install` \
         (`cargo xtask test` runs it first)",
        cli.display()
    );
    cli
}

/// `$CODEX_HOME/config.toml`: the mock as the model provider (its key in `MOCK_API_KEY`), no
/// retries, no approvals, a read-only sandbox, no paste-burst detection (typed text and Enter
/// are not a paste), and each of `trusted` a trusted project.
pub fn config_toml(trusted: &[&Path]) -> String {
    let mut config = format!(
        r#"model_provider = "mock"
model = "gpt-5"
approval_policy = "never"
sandbox_mode = "read-only"
disable_paste_burst = true

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{PORT}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"#
    );
    for dir in trusted {
        config.push_str(&format!(
            "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            dir.display()
        ));
    }
    config
}

/// The run of `cli <args>` in `cwd` in a network namespace of its own (`unshare -n`), under the
/// launcher (written as `agent_offline.py` in `root`, which also holds the request log), with a
/// clean environment plus `environment`; stdin closed, stdout and stderr piped.
pub fn launched_command(
    root: &Path,
    cli: &Path,
    args: &[&str],
    cwd: &Path,
    environment: Vec<(&'static str, String)>,
) -> Command {
    let mut command = crate::process::clean_command("unshare");
    command
        .arg("-n")
        .arg("--")
        .arg("python3")
        .arg(root.join("agent_offline.py"))
        .args(["--port", &PORT.to_string(), "--log"])
        .arg(root.join("requests.log"))
        .arg("--")
        .arg(cli)
        .args(args)
        .current_dir(cwd)
        .envs(environment)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    command
}

/// What one offline run of an agent under the launcher did.
#[derive(Debug)]
pub struct Run {
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

/// Runs `command` (the launcher under `unshare -n`, stdout and stderr piped) to its end, at
/// most `deadline`, then SIGTERMs the launcher, which ends the agent and reaps the namespace;
/// fails the test when the namespace or the launcher could not be set up. `agent` names the
/// agent in those failures.
pub fn run_launched(mut command: Command, deadline: Duration, agent: &str) -> Run {
    let mut child = command.spawn().unwrap_or_else(|error| {
        panic!("cannot run unshare (util-linux), which isolates every {agent} run: {error}")
    });
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let (sender, receiver) = mpsc::channel();
    // The end of its output is the end of the run: the event the deadline bounds.
    std::thread::spawn(move || {
        let (mut out, mut err) = (String::new(), String::new());
        let _ = stdout.read_to_string(&mut out);
        let _ = stderr.read_to_string(&mut err);
        let _ = sender.send((out, err));
    });
    let (stdout, stderr) = match receiver.recv_timeout(deadline) {
        Ok(output) => output,
        Err(_) => {
            // The launcher ends the agent and reaps the namespace on SIGTERM.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            receiver.recv().unwrap_or_default()
        }
    };
    let status = child.wait().expect("wait for the offline run");
    let run = Run {
        code: status.code(),
        stdout,
        stderr,
    };
    assert!(
        !run.stderr.contains("unshare failed") && !run.stderr.contains("unshare: "),
        "cannot create a network namespace for {agent} (run as root, or allow unprivileged \
         user namespaces): {}",
        run.stderr
    );
    assert!(
        !matches!(run.code, Some(97 | 98)),
        "the offline launcher failed: {}",
        run.stderr
    );
    run
}
