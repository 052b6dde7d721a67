//! `crash-resume doctor`: the setup checked (`setup_check`), said for people, or as JSON; exit
//! 1 when something needs doing, each problem with the command that fixes it.

use anyhow::anyhow;
use index_core::text::escape;
use setup_check::{Inputs, Report, Standing};

use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;

pub fn run(cx: &Context) -> Outcome {
    let report = with_inputs(cx, setup_check::check)?;
    if cx.json {
        output::print_json(&output::Doctor::new(&report))?;
    } else {
        output::print_line(&text(&report))?;
    }
    match report.problems.len() {
        0 => Ok(()),
        count => Err(Failure::Failed(anyhow!(
            "{count} {} doing; {}",
            if count == 1 {
                "thing needs"
            } else {
                "things need"
            },
            match cx.json {
                true => "each is in `problems`, with the command that fixes it as its `fix`",
                false => "each is listed above with the command that fixes it",
            }
        ))),
    }
}

/// Runs `check` on what this command sees: the index it uses (made absolute), this binary,
/// `PATH`, and fixes that start with the global options it was given.
pub fn with_inputs<R>(cx: &Context, check: impl FnOnce(&Inputs<'_>) -> R) -> Result<R, Failure> {
    let index_path = context::index_path(cx)?;
    let index_path = std::path::absolute(&index_path)
        .ok()
        .and_then(|path| camino::Utf8PathBuf::from_path_buf(path).ok())
        .unwrap_or(index_path);
    let program = std::env::current_exe()
        .map_err(|error| Failure::Failed(anyhow!("cannot find this program's path: {error}")))?;
    let mut prefix = vec!["crash-resume".to_string()];
    prefix.extend(super::ours::global_words(cx)?);
    let command_prefix = shlex::try_join(prefix.iter().map(String::as_str))
        .map_err(|error| Failure::Usage(anyhow!("cannot quote the index path: {error}")))?;
    let inputs = Inputs {
        env: cx.env(),
        index_path: &index_path,
        allow_volatile: cx.allow_volatile,
        program: &program,
        search_path: std::env::var_os("PATH"),
        xdg_config_home: std::env::var("XDG_CONFIG_HOME").ok(),
        command_prefix: &command_prefix,
        version_deadline: setup_check::VERSION_DEADLINE,
    };
    Ok(check(&inputs))
}

/// The report for people: each check a line, then what to do.
fn text(report: &Report) -> String {
    let mut lines = vec!["hooks".to_string()];
    for hook in &report.hooks {
        let state = match (&hook.error, hook.installed, hook.runs_this_binary) {
            (Some(error), _, _) => format!("cannot be read: {error}"),
            (None, false, _) => format!("not installed ({})", hook.file),
            (None, true, runs) => format!(
                "installed in {}{}, {}",
                hook.file,
                match hook.events.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", hook.events.join(", ")),
                },
                match runs {
                    Some(true) => "runs this binary".to_string(),
                    _ => format!("runs {}", hook.programs.join(", ")),
                }
            ),
        };
        lines.push(format!("  {:<8} {}", hook.target, escape(&state)));
    }
    let index = &report.index;
    lines.push("index".to_string());
    lines.push(format!(
        "  {}: {}",
        escape(&index.path),
        match &index.volatile_reason {
            None => "survives a reboot".to_string(),
            Some(reason) => format!("volatile ({reason}): a reboot wipes it"),
        }
    ));
    lines.push(format!(
        "  state dir {}: {}",
        escape(&index.state_dir),
        match (index.state_dir_exists, index.state_dir_writable) {
            (true, true) => "writable",
            (false, true) => "not there yet (the first record creates it)",
            (true, false) => "not writable",
            (false, false) => "cannot be created",
        }
    ));
    lines.push("programs".to_string());
    for program in &report.programs {
        let pinned = program.pinned.as_deref().unwrap_or_default();
        let found = || {
            format!(
                "{} at {}",
                program.version.as_deref().unwrap_or("?"),
                program.path.as_deref().unwrap_or_default()
            )
        };
        let state = match program.standing {
            Standing::Missing => "not on PATH".to_string(),
            Standing::Pinned => format!("{} (the version tested)", found()),
            Standing::Other => format!("{} (tested with {pinned})", found()),
            Standing::NotPinned => found(),
            Standing::Unknown => format!(
                "at {}, version unknown: {}",
                program.path.as_deref().unwrap_or_default(),
                program.error.as_deref().unwrap_or_default()
            ),
        };
        lines.push(format!("  {:<8} {}", program.name, escape(&state)));
    }
    let log = &report.hook_log;
    lines.push("hook.log".to_string());
    lines.push(format!(
        "  {}: {}",
        escape(&log.path),
        match (log.exists, log.last_errors.len()) {
            (false, _) => "none yet".to_string(),
            (true, 0) => "no errors".to_string(),
            (true, count) => format!("its last {count} error(s):"),
        }
    ));
    for error in &log.last_errors {
        lines.push(format!("    {}", escape(error)));
    }
    for note in &report.notes {
        lines.push(format!("note: {}", escape(note)));
    }
    if report.problems.is_empty() {
        lines.push(
            "all is well: start an agent in a terminal pane, then `crash-resume list` shows it"
                .to_string(),
        );
    } else {
        lines.push(format!("to do ({}):", report.problems.len()));
        for problem in &report.problems {
            lines.push(format!(
                "  {}: {}",
                escape(&problem.subject),
                escape(&problem.what)
            ));
            lines.push(format!("    fix: {}", escape(&problem.fix)));
        }
    }
    lines.join("\n")
}
