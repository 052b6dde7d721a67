//! The `sh -c` script a restored place runs, shared by every backend: into the working dir, the
//! resume command with the surface named in its environment, then the user's shell (or only the
//! shell, for a place with nothing to resume). Every value
//! is shell-quoted: a recorded dir or surface reaches the shell as one inert word.

/// The script: into `dir` (when given), the `env` variables exported, `command`, the variables
/// unset again, then `exec shell`, left in the dir the command moved to. Job control (`set -m`)
/// puts the agent in its own process group in the terminal's foreground, so the multiplexer
/// shows the agent as the place's command and a Ctrl-C reaches the agent, not this script.
pub fn start_script(env: &[(&str, &str)], dir: Option<&str>, command: &str, shell: &str) -> String {
    let unset: String = env
        .iter()
        .map(|(name, _)| format!("unset {name}; "))
        .collect();
    format!("{}; {unset}exec {shell}", here_script(env, dir, command))
}

/// The script for a place whose shell is already there, below the process that runs it (a
/// restore run from the pane it restores): [`start_script`] without the shell after the
/// command, so that once the agent exits the user is back at the shell they ran it from.
pub fn here_script(env: &[(&str, &str)], dir: Option<&str>, command: &str) -> String {
    let set: String = env
        .iter()
        .map(|(name, value)| format!("{name}={}; export {name}; ", quote(value)))
        .collect();
    format!("set -m; {}{set}{command}", cd(dir))
}

/// The script for a place with nothing to resume: `shell` (quoted by the caller) in `dir`.
pub fn shell_script(dir: Option<&str>, shell: &str) -> String {
    format!("{}exec {shell}", cd(dir))
}

/// `cd -- DIR; `, or nothing without a dir.
fn cd(dir: Option<&str>) -> String {
    dir.map_or_else(String::new, |dir| format!("cd -- {}; ", quote(dir)))
}

/// `word` as one shell word (`''` for one that cannot be quoted: a NUL byte).
pub fn quote(word: &str) -> String {
    shlex::try_quote(word).map_or_else(|_| "''".to_string(), |quoted| quoted.into_owned())
}

/// The user's shell for a place without another (`$SHELL`, else `/bin/sh`), quoted.
pub(crate) fn login_shell(shell: Option<String>) -> String {
    quote(&shell.unwrap_or_else(|| "/bin/sh".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_one_word_each() {
        assert_eq!(
            start_script(
                &[("CRASH_RESUME_SURFACE", "tmux:$(x):0.0")],
                Some("/w/it's"),
                "claude --resume s",
                "/bin/bash"
            ),
            "set -m; cd -- \"/w/it's\"; CRASH_RESUME_SURFACE='tmux:$(x):0.0'; export CRASH_RESUME_SURFACE; \
             claude --resume s; unset CRASH_RESUME_SURFACE; exec /bin/bash"
        );
    }
}
