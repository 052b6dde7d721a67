//! What `hook install` writes into a file that is not ours, and how a command of ours is known
//! again there: the one place that decides it, for every agent's hooks file (Copilot's
//! included). The tmux block is found by its marker lines instead (`tmux_start`).
//!
//! A hook command of ours has the shape `hook install` writes, `<program> [--path FILE]
//! [--allow-volatile] hook <agent> [EVENT]`, and is recognised by that shape alone, whatever
//! the program is called and wherever it lives, so that uninstall finds every one of ours and
//! an install from another path replaces one instead of adding a second; the rule is written
//! once, in `setup_check::ours`, which `doctor` reads the hooks with too.

use anyhow::anyhow;

use crate::args::Agent;
use crate::context::Context;
use crate::error::Failure;

/// This program's path, absolute, as the hooks name it.
pub fn program() -> Result<String, Failure> {
    let exe = std::env::current_exe()
        .map_err(|error| Failure::Failed(anyhow!("cannot find this program's path: {error}")))?;
    exe.into_os_string()
        .into_string()
        .map_err(|_| Failure::Failed(anyhow!("this program's path is not valid UTF-8")))
}

/// The global options a hook carries, so that it runs as this command did: `--path` with the
/// index path made absolute, when one was chosen, and `--allow-volatile`, when given.
pub fn global_words(cx: &Context) -> Result<Vec<String>, Failure> {
    let mut words = Vec::new();
    if let Some(path) = &cx.path {
        let absolute = std::path::absolute(path)
            .map_err(|error| Failure::Failed(error.into()))?
            .into_os_string()
            .into_string()
            .map_err(|_| Failure::Usage(anyhow!("the index path is not valid UTF-8")))?;
        words.extend(["--path".to_string(), absolute]);
    }
    if cx.allow_volatile {
        words.push("--allow-volatile".to_string());
    }
    Ok(words)
}

/// Refuses to install a hook that could record nothing that survives a reboot: an index on a
/// volatile filesystem, unless `--allow-volatile` (which [`global_words`] then writes into the
/// hook, so the hook accepts it too). Nothing is read or written.
pub fn refuse_volatile_index(cx: &Context) -> Result<(), Failure> {
    let path = crate::context::index_path(cx)?;
    match (index_store::durability(&path), cx.allow_volatile) {
        (index_store::Durability::Volatile(reason), false) => Err(Failure::Failed(anyhow!(
            "index path {} is {reason}, which a reboot wipes: every hook would fail to record \
             there, and nothing it recorded would be left after a reboot; nothing was \
             installed. Choose a durable path with --path or CRASH_RESUME_INDEX_PATH, or pass \
             --allow-volatile to accept that (the hook then carries it)",
            index_core::text::escape(path.as_str())
        ))),
        _ => Ok(()),
    }
}

/// The command the agent runs: this binary, by absolute path, with its global options, then
/// `hook <agent>`, every word shell-quoted.
pub fn hook_command(cx: &Context, agent: Agent) -> Result<String, Failure> {
    let mut words = vec![program()?];
    words.extend(global_words(cx)?);
    words.extend(["hook".to_string(), agent.name().to_string()]);
    shlex::try_join(words.iter().map(String::as_str))
        .map_err(|error| Failure::Usage(anyhow!("cannot quote the hook command: {error}")))
}

/// Whether a hook command is one `hook install` writes (of any version, from any binary path
/// or name): the shape `setup_check::ours` recognises.
pub fn is_ours(command: &str) -> bool {
    setup_check::ours::parse(command).is_some()
}

#[cfg(test)]
mod tests {
    use super::is_ours;

    fn check(command: &str, ours: bool) {
        assert_eq!(is_ours(command), ours, "{command}");
    }

    #[test]
    fn ours_is_the_shape_install_writes_whatever_the_program_is_called() {
        check("/usr/bin/crash-resume hook claude", true);
        check(
            "/nix/store/x-crash-resume/bin/.crash-resume-wrapped hook codex",
            true,
        );
        check("/opt/bin/cr --path /var/x/index.json hook gemini", true);
        check(
            "'/opt/my tools/cr' --path /i.json --allow-volatile hook claude",
            true,
        );
        check("/bin/cr --allow-volatile hook copilot sessionStart", true);
        check("crash-resume hook claude", true);
        // Another tool's command with the same words.
        check("other-tool hook claude", false);
        check("/usr/bin/other-tool --verbose hook claude", false);
        check("/usr/bin/notify hook claude done", false);
        check("/x/crash-resume hook claude && rm -rf ~", false);
        check("/x/crash-resume hook nobody", false);
        check("/x/crash-resume hook claude SessionStart", false);
        check("/x/crash-resume hook copilot", false);
        check("/x/crash-resume hook copilot session-start; x", false);
        check("/x/crash-resume --path hook claude", false);
        check("FOO=1 /x/crash-resume hook claude", false);
        check("/x/crash-resume restore --apply tmux", false);
        check("", false);
        check("'unclosed", false);
    }
}
