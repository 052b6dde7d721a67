//! The login service that restores once per boot: the text of its systemd user unit (Linux) and
//! launchd agent (macOS), and how a file is told to be ours ([`MARKER`]: its first line).
//!
//! The unit runs `crash-resume restore --apply MUX --once-per-boot` at login (policy `auto`):
//! the tmux and zellij backends create (or resurrect) the sessions they restore into, so a
//! server that is not running yet is started by the restore itself; kitty must be running
//! already (the user starts it, listening on the address given). Policy `ask` restores nothing:
//! it runs `restore --notify MUX`, which prints the plan to the log and, when a surface could
//! be resumed, says so with the command to run ([`ask_message`]), also as a desktop
//! notification where `notify-send` exists.

use serde::{Deserialize, Serialize};

/// The first line of every file this module writes: a file without it is not ours, and is
/// never replaced or removed.
pub const MARKER: &str = "crash-resume: restore after a reboot or a login";

/// The systemd user unit's file name (in `$XDG_CONFIG_HOME/systemd/user/`).
pub const SYSTEMD_UNIT: &str = "crash-resume-restore.service";

/// The launchd agent's label, and its file name with `.plist` (in `~/Library/LaunchAgents/`).
pub const LAUNCHD_LABEL: &str = "dev.crash-resume.restore";

/// What the service does at login.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Restore once per boot.
    Auto,
    /// Restore nothing: say what would be restored, and the command that does it.
    Ask,
}

/// What the unit runs: the program and the words before `restore` (the global options), the
/// multiplexer, its extra restore words (kitty's `--kitty-socket ADDR`), the policy and the log.
/// Every word must be plain ([`is_plain`]): the caller refuses others.
#[derive(Debug, Clone)]
pub struct Service<'a> {
    /// The program and its global options, each a plain word.
    pub program: &'a [String],
    /// `tmux`, `zellij` or `kitty`.
    pub multiplexer: &'a str,
    /// Words added to the restore (each plain).
    pub restore_words: &'a [String],
    /// What it does at login.
    pub policy: Policy,
    /// The log the restore's output is appended to.
    pub log: &'a str,
    /// The `PATH` the restore and the agents it starts get (the installer's, its plain
    /// entries): a service manager starts units with a short `PATH` of its own, on which an
    /// agent installed under the home dir is not found.
    pub path: Option<&'a str>,
}

/// Whether `word` holds only characters that neither systemd (which expands `%` and `$`),
/// launchd's XML nor a shell interprets.
pub fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "/._+-@=,:".contains(character))
}

impl Service<'_> {
    /// The restore command's words: `--apply MUX --once-per-boot` with policy `auto`, the
    /// plan and `--notify MUX` with `ask`.
    fn restore(&self) -> Vec<String> {
        let mut words: Vec<String> = self.program.to_vec();
        words.push("restore".to_string());
        match self.policy {
            Policy::Auto => {
                words.extend(["--apply", self.multiplexer, "--once-per-boot"].map(str::to_string))
            }
            Policy::Ask => words.extend(["--notify", self.multiplexer].map(str::to_string)),
        }
        words.extend(self.restore_words.iter().cloned());
        words
    }

    /// The systemd user unit's text. `KillMode=process`: the tmux server or zellij session
    /// the restore starts, and the agents in it, outlive the unit (by default systemd ends
    /// every process of a oneshot unit once it has run).
    pub fn systemd_unit(&self) -> String {
        let mut text = format!(
            "# {MARKER} (`crash-resume service uninstall` removes it)\n\
             [Unit]\n\
             Description=crash-resume: restore agent sessions once per boot ({multiplexer})\n\
             After=default.target\n\
             \n\
             [Service]\n\
             Type=oneshot\n\
             ExecStart={restore}\n\
             KillMode=process\n",
            multiplexer = self.multiplexer,
            restore = self.restore().join(" "),
        );
        if let Some(path) = self.path {
            text.push_str(&format!("Environment=PATH={path}\n"));
        }
        text.push_str(&format!(
            "StandardOutput=append:{log}\n\
             StandardError=append:{log}\n\
             TimeoutStartSec=15min\n\
             \n\
             [Install]\n\
             WantedBy=default.target\n",
            log = self.log
        ));
        text
    }

    /// The launchd agent's text (a property list run at load, that is at login);
    /// `AbandonProcessGroup` keeps what the restore started once it has run.
    pub fn launchd_plist(&self) -> String {
        let arguments = self.restore();
        let arguments: String = arguments
            .iter()
            .map(|word| format!("    <string>{}</string>\n", xml_text(word)))
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <!-- {MARKER} (`crash-resume service uninstall` removes it) -->\n\
             <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
             <plist version=\"1.0\">\n\
             <dict>\n  \
             <key>Label</key>\n  <string>{LAUNCHD_LABEL}</string>\n  \
             <key>ProgramArguments</key>\n  <array>\n{arguments}  </array>\n  \
             <key>RunAtLoad</key>\n  <true/>\n  \
             <key>AbandonProcessGroup</key>\n  <true/>\n{environment}  \
             <key>StandardOutPath</key>\n  <string>{log}</string>\n  \
             <key>StandardErrorPath</key>\n  <string>{log}</string>\n\
             </dict>\n\
             </plist>\n",
            log = xml_text(self.log),
            environment = match self.path {
                Some(path) => format!(
                    "  <key>EnvironmentVariables</key>\n  <dict>\n    <key>PATH</key>\n    <string>{}</string>\n  </dict>\n",
                    xml_text(path)
                ),
                None => String::new(),
            },
        )
    }
}

/// Whether a file's text is ours: its first lines carry [`MARKER`].
pub fn is_ours(text: &str) -> bool {
    text.lines().take(2).any(|line| line.contains(MARKER))
}

/// `text` with XML's special characters escaped.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The `PATH` a service is given from the installer's `path`: its absolute entries that are
/// plain ([`is_plain`]), in order, each once; and the entries left out (relative, or holding a
/// character the unit cannot carry plainly). `None` when no entry is left.
pub fn service_path(path: &str) -> (Option<String>, Vec<String>) {
    let mut kept: Vec<&str> = Vec::new();
    let mut left_out = Vec::new();
    for entry in path.split(':').filter(|entry| !entry.is_empty()) {
        if entry.starts_with('/') && is_plain(entry) {
            if !kept.contains(&entry) {
                kept.push(entry);
            }
        } else {
            left_out.push(entry.to_string());
        }
    }
    ((!kept.is_empty()).then(|| kept.join(":")), left_out)
}

/// The command that restores into `multiplexer` once per boot: `program` (with its global
/// options), `restore --apply MUX --once-per-boot`, then `restore_words` (kitty's address).
pub fn restore_command(program: &[String], multiplexer: &str, restore_words: &[String]) -> String {
    let mut words: Vec<String> = program.to_vec();
    words.extend(["restore", "--apply", multiplexer, "--once-per-boot"].map(str::to_string));
    words.extend(restore_words.iter().cloned());
    words.join(" ")
}

/// What `restore --notify` says when `resumable` surfaces could be resumed: one line, naming
/// `command` (the restore into the multiplexer); `None` when there is nothing to resume.
pub fn ask_message(resumable: usize, command: &str) -> Option<String> {
    (resumable > 0).then(|| {
        format!(
            "crash-resume: {resumable} session{} may need restoring; run {command}",
            if resumable == 1 { "" } else { "s" }
        )
    })
}

/// `line` as a desktop notification's body, inert: the notification servers that take markup
/// in a body read `&`, `<` and `>` as markup, so they are given as entities, and a control
/// character (a recorded value's escape sequence) as `?`. The caller passes it after `--`, so
/// that a body starting with `-` is not read as an option.
pub fn notification_body(line: &str) -> String {
    let mut body = String::with_capacity(line.len());
    for character in line.chars() {
        match character {
            '&' => body.push_str("&amp;"),
            '<' => body.push_str("&lt;"),
            '>' => body.push_str("&gt;"),
            character if character.is_control() => body.push('?'),
            character => body.push(character),
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_body_holds_no_markup_and_no_control_character() {
        assert_eq!(
            notification_body("run '/opt/a&b <i>x</i>/crash-resume' restore\u{1b}]0;t\u{7}"),
            "run '/opt/a&amp;b &lt;i&gt;x&lt;/i&gt;/crash-resume' restore?]0;t?"
        );
    }

    #[test]
    fn the_service_path_keeps_the_plain_absolute_entries_once() {
        assert_eq!(
            service_path("/home/me/.local/bin:/usr/bin::bin:/opt/my tools:/usr/bin:/a%b"),
            (
                Some("/home/me/.local/bin:/usr/bin".to_string()),
                vec![
                    "bin".to_string(),
                    "/opt/my tools".to_string(),
                    "/a%b".to_string()
                ]
            )
        );
        assert_eq!(service_path(""), (None, Vec::new()));
    }

    #[test]
    fn the_ask_message_names_the_command_and_is_none_with_nothing_to_resume() {
        let command = "crash-resume restore --apply tmux --once-per-boot";
        assert_eq!(ask_message(0, command), None);
        assert_eq!(
            ask_message(1, command).unwrap(),
            format!("crash-resume: 1 session may need restoring; run {command}")
        );
        assert!(ask_message(3, command).unwrap().contains("3 sessions"));
    }

    #[test]
    fn a_percent_sign_is_not_plain_for_systemd_expands_it() {
        assert!(!is_plain("/home/me/100%"));
        assert!(is_plain("/home/me/.cargo/bin/crash-resume"));
    }
}
