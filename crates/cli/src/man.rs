//! `crash-resume man`: the manual page (roff), generated from the clap definition so it cannot
//! drift from `--help`. Besides the top level (synopsis, global options), it has a COMMANDS
//! section with every subcommand: its usage, what it does, each argument and option (with its
//! environment variable, default and possible values) and its examples, then the exit status,
//! the environment and the files.

use std::io::Write;

use clap::{Arg, Command};
use roff::{Roff, bold, italic, roman};

/// Renders the whole page for `command` (the built-in clap command of the binary).
pub fn render(command: Command, out: &mut dyn Write) -> std::io::Result<()> {
    let mut command = command;
    command.build();
    let man = clap_mangen::Man::new(command.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;

    let mut page = Roff::new();
    page.control("SH", ["COMMANDS"]);
    for sub in visible_subcommands(&command) {
        if sub.has_subcommands() {
            for inner in visible_subcommands(sub) {
                subcommand(&mut page, inner);
            }
        } else {
            subcommand(&mut page, sub);
        }
    }
    closing_sections(&mut page);
    page.to_writer(out)?;
    man.render_version_section(out)
}

fn visible_subcommands(command: &Command) -> impl Iterator<Item = &Command> {
    command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
}

/// One subcommand: `.SS` with its full name, its usage, its description, its arguments and
/// options, and its examples.
fn subcommand(page: &mut Roff, command: &Command) {
    let name = command.get_bin_name().unwrap_or(command.get_name());
    page.control("SS", [name]);
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    page.control("PP", []);
    page.text([bold(usage)]);
    let about = command
        .get_long_about()
        .or_else(|| command.get_about())
        .map(ToString::to_string)
        .unwrap_or_default();
    for paragraph in about.split("\n\n") {
        page.control("PP", []);
        page.text([roman(paragraph.replace('\n', " "))]);
    }
    for arg in command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set() && !arg.is_global_set())
        .filter(|arg| !matches!(arg.get_id().as_str(), "help" | "version"))
    {
        argument(page, arg);
    }
    if let Some(after) = command.get_after_help() {
        page.control("PP", []);
        page.control("nf", []);
        for line in after.to_string().lines() {
            page.text([roman(line)]);
        }
        page.control("fi", []);
    }
}

/// One argument or option as a tagged paragraph: its name and value, then its help, its
/// variable, its default and its possible values.
fn argument(page: &mut Roff, arg: &Arg) {
    let value_names: Vec<String> = arg
        .get_value_names()
        .map(|names| names.iter().map(ToString::to_string).collect())
        .unwrap_or_else(|| vec![arg.get_id().as_str().to_uppercase()]);
    let takes_value = arg.get_num_args().is_some_and(|range| range.takes_values());
    let mut head = Vec::new();
    match arg.get_long() {
        Some(long) => {
            head.push(bold(format!("--{long}")));
            for alias in arg.get_visible_aliases().unwrap_or_default() {
                head.push(roman(", "));
                head.push(bold(format!("--{alias}")));
            }
            if takes_value {
                head.push(roman(" "));
                head.push(italic(value_names.join(" ")));
            }
        }
        None => head.push(italic(format!("<{}>", value_names.join(" ")))),
    }
    page.control("TP", []);
    page.text(head);
    let mut help = arg
        .get_long_help()
        .or_else(|| arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default();
    if let Some(variable) = arg.get_env() {
        help.push_str(&format!(" [env: {}]", variable.to_string_lossy()));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|value| value.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && takes_value {
        help.push_str(&format!(" [default: {}]", defaults.join(", ")));
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|value| !value.is_hide_set())
        .map(|value| value.get_name().to_string())
        .collect();
    if !possible.is_empty() {
        help.push_str(&format!(" [possible values: {}]", possible.join(", ")));
    }
    page.text([roman(help.trim())]);
}

/// Tagged paragraphs: each name in bold, its meaning below.
fn tagged(page: &mut Roff, items: &[(&str, &str)]) {
    for (name, meaning) in items {
        page.control("TP", []);
        page.text([bold(*name)]);
        page.text([roman(*meaning)]);
    }
}

/// `a, b and c`.
fn in_words(words: Vec<&str>) -> String {
    joined(words, "and")
}

/// `a, b or c`.
fn in_words_or(words: &[String]) -> String {
    joined(words.iter().map(String::as_str).collect(), "or")
}

fn joined(mut words: Vec<&str>, last: &str) -> String {
    match words.pop() {
        Some(end) if !words.is_empty() => format!("{} {last} {end}", words.join(", ")),
        Some(end) => end.to_string(),
        None => String::new(),
    }
}

/// ENVIRONMENT: every variable crash-resume reads (`resume_plan::variables`), those with the
/// same meaning in one paragraph.
fn environment(page: &mut Roff) {
    let mut rows: Vec<(Vec<&str>, String)> = Vec::new();
    for variable in resume_plan::variables::all() {
        match rows
            .iter_mut()
            .find(|(_, meaning)| *meaning == variable.meaning)
        {
            Some((names, _)) => names.push(variable.name),
            None => rows.push((vec![variable.name], variable.meaning)),
        }
    }
    let rows: Vec<(String, String)> = rows
        .into_iter()
        .map(|(names, meaning)| (names.join(", "), meaning))
        .collect();
    let items: Vec<(&str, &str)> = rows
        .iter()
        .map(|(names, meaning)| (names.as_str(), meaning.as_str()))
        .collect();
    tagged(page, &items);
}

/// EXIT STATUS, ENVIRONMENT, FILES and the JSON note: what every command shares.
fn closing_sections(page: &mut Roff) {
    page.control("SH", ["EXIT STATUS"]);
    tagged(
        page,
        &[
            ("0", "done"),
            (
                "1",
                "failed: an I/O error, the lock not obtained in time, the index refused; stderr says why and what to do",
            ),
            ("2", "usage error or invalid input; nothing was written"),
            (
                "4",
                "nothing found: no such surface, or no resumable session (preflight: the verdict is fresh; resume-cmd: fresh, or the session is held by a running agent or another surface)",
            ),
        ],
    );
    page.control("PP", []);
    page.text([roman(format!(
        "hook {} always exit 0, whatever happens; they write problems to hook.log beside the index.",
        in_words(agent_paths::Agent::ALL.map(agent_paths::Agent::name).to_vec())
    ))]);

    page.control("SH", ["ENVIRONMENT"]);
    environment(page);

    page.control("SH", ["FILES"]);
    tagged(
        page,
        &[
            (
                "$XDG_STATE_HOME/crash-resume/index.json",
                "the index (else ~/.local/state/crash-resume/index.json). Beside it: index.json.bak (a copy of a recent generation) and index.json.bak.journal (the records since it: with it, the latest generation), index.json.flock (the write lock), index.json.restore.lock (held while restore --apply runs), index.json.boots.json (the ledger of restores per boot that restore --once-per-boot keeps, and service status reads), index.json.lock (the JavaScript crash-resume-index's lock dir, there only during a write), and index.json.corrupt-<time> (a damaged index kept aside by a repair)",
            ),
            (
                "$XDG_STATE_HOME/crash-resume/hook.log",
                "what the hooks did that needs telling, with its level (info, warning, error); rotated to hook.log.1 past 256 KiB",
            ),
            (
                "$XDG_STATE_HOME/crash-resume/service.log, tmux-start.log",
                "what the login service's restore (service install) and the restore at a tmux server's start (hook install tmux) printed, appended",
            ),
            (
                "$XDG_CONFIG_HOME/systemd/user/crash-resume-restore.service",
                "the systemd user unit service install writes (on macOS ~/Library/LaunchAgents/dev.crash-resume.restore.plist); service uninstall removes it, and neither touches a file there that is not ours",
            ),
            (
                "$XDG_CONFIG_HOME/crash-resume/launchers.toml",
                "launchers of your own: per agent, per repo, profiles",
            ),
        ],
    );
    let hook_files = agent_paths::AGENTS
        .iter()
        .map(|facts| {
            let dir = facts.default_config_dir.trim_end_matches('/');
            format!("{dir}/{}", facts.hook_file)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let variables: Vec<String> = agent_paths::AGENTS
        .iter()
        .map(|facts| format!("${}", facts.config_env))
        .collect();
    tagged(
        page,
        &[(
            hook_files.as_str(),
            format!(
                "where hook install adds the hooks and hook uninstall removes them (under {} when set), each change backed up beside it as <file>.crash-resume-<UTC time>.bak",
                in_words_or(&variables)
            )
            .as_str(),
        )],
    );

    page.control("SH", ["EXAMPLES"]);
    page.control("nf", []);
    for line in [
        "crash-resume hook install claude        # every Claude Code session records itself",
        "crash-resume list                       # what is recorded",
        "crash-resume preflight tmux:main:0.1    # would it resume, and why",
        "crash-resume restore                    # after a crash: the plan",
        "crash-resume restore --apply tmux       # carry it out in tmux",
        "crash-resume service install --mux tmux # restore once per boot at login, staggered and verified",
        "crash-resume service status             # installed? what the last restore did, why the panes died",
        "cmd=$(crash-resume resume-cmd cmux-pane-42 2h) && eval \"$cmd\"",
    ] {
        page.text([roman(line)]);
    }
    page.control("fi", []);

    page.control("SH", ["OUTPUT"]);
    page.text([roman(
        "list and restore print an aligned table with a header row on a terminal, and tab-separated values with no header when piped. --json makes every command print one JSON document with a \"version\" field; durations are milliseconds rounded to whole microseconds. The shapes are documented in docs/json.md of the source.",
    )]);
}
