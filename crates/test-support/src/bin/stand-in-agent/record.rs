//! The `record` mode of the stand-in agent: appends one line saying how it was started (the
//! pane it runs in, its working dir and the one the shell was in before, its config dir, the
//! surface its environment names, its arguments) to the file `--runs` names, and exits; with
//! `--stay-with <crash-resume>` it then, for `--resume <sid>`, fires the real SessionStart hook
//! through `<crash-resume> hook claude` as Claude Code does, and stays as `sleep`, so that the
//! pane's process shows that it runs.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::json;

/// `stand-in-agent record --runs FILE --pwd DIR --oldpwd DIR [--stay-with BIN [--stay-as
/// NAME]] -- ARGS`.
pub fn main(args: &[String]) -> Result<()> {
    let (mut runs, mut pwd, mut oldpwd, mut stay_with) = (None, None, None, None);
    let mut stay_as = None;
    let mut words = args.iter();
    let agent_args: Vec<String> = loop {
        let Some(word) = words.next() else {
            bail!("record: `--` and the agent's arguments are missing");
        };
        let slot = match word.as_str() {
            "--" => break words.cloned().collect(),
            "--runs" => &mut runs,
            "--pwd" => &mut pwd,
            "--oldpwd" => &mut oldpwd,
            "--stay-with" => &mut stay_with,
            "--stay-as" => &mut stay_as,
            other => bail!("record: unknown option {other:?}"),
        };
        *slot = words.next().cloned();
    };
    let (Some(runs), Some(pwd)) = (runs, pwd) else {
        bail!("record: --runs and --pwd are required");
    };
    let variable = |name: &str| std::env::var(name).unwrap_or_default();
    let line = format!(
        "pane={} pwd={pwd} oldpwd={} config={} surface={} args={}\n",
        variable("TMUX_PANE"),
        oldpwd.unwrap_or_default(),
        variable("CLAUDE_CONFIG_DIR"),
        variable("CRASH_RESUME_SURFACE"),
        agent_args.join(" ")
    );
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&runs)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .with_context(|| format!("cannot append to {runs}"))?;
    let Some(crash_resume) = stay_with else {
        return Ok(());
    };
    if let [flag, session, ..] = agent_args.as_slice()
        && flag == "--resume"
    {
        let payload = json!({
            "session_id": session,
            "cwd": pwd,
            "hook_event_name": "SessionStart",
            "source": "resume",
        });
        let mut hook = Command::new(&crash_resume)
            .args(["hook", "claude"])
            .stdin(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {crash_resume} hook claude"))?;
        if let Some(mut stdin) = hook.stdin.take() {
            let _ = stdin.write_all(payload.to_string().as_bytes());
        }
        hook.wait().context("wait for the hook")?;
    }
    // With `--stay-as claude`, its command line names it as Claude Code's does, so the liveness
    // rule sees the agent run.
    Err(Command::new("sleep")
        .arg0(stay_as.as_deref().unwrap_or("sleep"))
        .arg("600")
        .exec())
    .context("cannot exec sleep")
}
