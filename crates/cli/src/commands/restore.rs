//! `crash-resume restore [--all] [--apply MULTIPLEXER]`: after a reboot, every surface whose
//! session did not end cleanly, with its preflight verdict, the session that would load and the
//! command that resumes it; with `--apply`, re-open each resumable surface of that multiplexer
//! through its backend (`mux::backend`).
//!
//! One conversation is never resumed twice: a session bound to another surface or held by a
//! live agent process is reported as held elsewhere and not resumed, and applying follows
//! `resume_plan::apply` (the restore lock, a claim in the index before anything is started,
//! busy places skipped, the claim taken back when nothing was started).
//!
//! An entry whose working dir or config dir holds a control character (an index another tool
//! wrote) is refused: it gets no command, and its values are never typed or printed raw.
//!
//! Each multiplexer call has a deadline (`mux::tmux::CALL_DEADLINE`): once the multiplexer has
//! not answered one (stopped or hung), no further surface is tried on it, the surface being
//! opened gets its claim back, and the restore says which one did not answer and exits 1.
//!
//! The plan is made by `resume_plan::plan::build_plan` (linear in the number of entries); this
//! module prints it and has it applied.

use std::io::IsTerminal;

use anyhow::anyhow;
use index_core::Index;
use index_core::text::escape;
use resume_plan::plan::{PlanError, PlanOptions};
use resume_plan::{Plan, PlanItem};

use crate::args::RestoreArgs;
use crate::context::{self, Context};
use crate::error::Failure;
use crate::output::{self, OUTPUT_VERSION};

pub fn run(cx: &Context, args: &RestoreArgs) -> Result<(), Failure> {
    let max_age = args
        .max_age
        .as_deref()
        .map(|text| context::parse_max_age(text, "max age").map(context::millis))
        .transpose()?;
    let index = context::load(cx)?;
    let now = context::now();
    let mut plan = build_plan(cx, &index, args.all, max_age, now)?;
    if args.apply.is_none() {
        resume_plan::boot::say_why_died(&mut plan, &index, context::boot_id().as_deref());
    }
    if let Some(multiplexer) = args.notify {
        notify(cx, args, multiplexer, &plan)?;
    }
    for (cwd, surfaces) in resume_plan::plan::shared_cleanup_dirs(&plan) {
        output::print_message(&format!(
            "warning: {} resumes {} Gemini sessions in {} ({}) while Gemini's start-up cleanup \
             (general.sessionRetention) is on: each start deletes, in its dir, the session files \
             that hold no prompt yet, so one pane's start can delete another's resumed \
             conversation; turn the cleanup off first with `crash-resume hook install gemini \
             --retention off`",
            if args.apply.is_some() {
                "restore"
            } else {
                "applying this plan"
            },
            surfaces.len(),
            escape(&cwd),
            surfaces
                .iter()
                .map(|surface| escape(surface))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for item in plan.iter().filter(|item| item.resumable()) {
        for note in item
            .launch
            .iter()
            .flat_map(|launch| launch.notes(&item.surface, &item.agent))
        {
            output::print_message(&note);
        }
    }
    let mut summary = resume_plan::apply::Summary::default();
    let mut check_command = String::new();
    let mut restored_into = None;
    let mut attach = Vec::new();
    let mut store = None;
    if let Some(multiplexer) = args.apply {
        if multiplexer == mux::Multiplexer::Kitty
            && args
                .kitty_socket
                .as_deref()
                .is_none_or(|address| address.trim().is_empty())
        {
            return Err(Failure::Usage(anyhow!(
                "no kitty to restore into: give --kitty-socket unix:PATH (the address kitty's --listen-on names), or run it from a kitty window with remote control on (KITTY_LISTEN_ON)"
            )));
        }
        let options = mux::Options {
            tmux_socket: args.tmux_socket.clone(),
            cmux_socket: args.cmux_socket.clone(),
            kitty_socket: args.kitty_socket.clone(),
            shell: std::env::var("SHELL").ok(),
        };
        let backend = mux::backend(multiplexer, &options).ok_or_else(|| {
            Failure::Usage(anyhow!(
                "{multiplexer} has no restore backend; its surfaces are captured only"
            ))
        })?;
        let location = backend.location();
        output::print_message(&format!(
            "restoring into {multiplexer} at {location} (check it with `{}`)",
            backend.check_command()
        ));
        restored_into = Some(location);
        store = Some(context::open_store(cx)?);
        let store = store.as_ref().expect("just opened");
        // The pane this restore runs in is restored by this process becoming its agent: only
        // on a terminal, where a person runs it, and never under `--json`.
        let start_here =
            !cx.json && crate::table::stdout_is_terminal() && std::io::stdin().is_terminal();
        let stagger = stagger(args)?;
        let options = resume_plan::apply::ApplyOptions {
            start_here: start_here && stagger.is_none(),
            stagger,
        };
        let lock_error = |error| match error {
            index_store::StoreError::LockTimeout {
                path,
                holder,
                waited,
            } => Failure::Failed(anyhow!(
                "another restore is applying ({holder}, lock {path}); gave up after {waited:.1?}. Nothing was opened; try again once it finishes"
            )),
            other => other.into(),
        };
        let boot = context::boot_id();
        if args.once_per_boot {
            let boot = boot.ok_or_else(|| {
                Failure::Failed(anyhow!(
                    "cannot read this boot's id (/proc/sys/kernel/random/boot_id, or kern.boottime on macOS), so cannot restore once per boot; run restore --apply without --once-per-boot"
                ))
            })?;
            let once = resume_plan::boot::apply_once_per_boot(
                store,
                backend.as_ref(),
                &mut plan,
                &index,
                &boot,
                &context::now,
                options,
            )
            .map_err(|error| match error {
                resume_plan::boot::LedgerError::Store(error) => lock_error(error),
                other => Failure::Failed(other.into()),
            })?;
            match once {
                resume_plan::boot::Once::AlreadyRan(run) => {
                    let ago = output::format_age(context::now().saturating_sub(run.at));
                    output::print_message(&format!(
                        "already restored into {} in this boot, {ago} ago: nothing to do (the ledger is {})",
                        escape(&run.instance),
                        escape(store.sidecar_path(resume_plan::boot::LEDGER_NAME).as_str())
                    ));
                    if cx.json {
                        output::print_json(&Plan {
                            version: OUTPUT_VERSION,
                            surfaces: Vec::new(),
                            restored_into: None,
                            already_ran: Some(run),
                            stopped: None,
                        })?;
                    }
                    return Ok(());
                }
                resume_plan::boot::Once::Applied {
                    summary: applied,
                    not_recorded,
                    ..
                } => {
                    match not_recorded {
                        Some(why @ resume_plan::boot::NotRecorded::RestoredNothing { .. }) => {
                            output::print_message(&format!(
                                "this restore is not counted as the boot's: {why}; the next --once-per-boot run of this boot tries again"
                            ));
                        }
                        Some(why) => output::print_message(&format!(
                            "warning: this restore is not in the ledger, so the next --once-per-boot run of this boot restores again: {why}"
                        )),
                        None => {}
                    }
                    summary = *applied;
                }
            }
        } else {
            summary = resume_plan::apply::apply_with(
                store,
                backend.as_ref(),
                &mut plan,
                &context::now,
                options,
            )
            .map_err(lock_error)?;
            resume_plan::boot::say_why_died(&mut plan, &index, boot.as_deref());
        }
        check_command = backend.check_command();
        attach = super::hints::attach_commands(backend.as_ref(), &plan);
    }
    for (surface, why) in &summary.not_laid_out {
        output::print_message(&format!(
            "warning: the window of {} is not laid out as recorded: {why}",
            escape(surface)
        ));
    }
    let resume_plan::apply::Summary {
        failed,
        not_tried,
        unanswered,
        starts_here,
        here_surface,
        stopped,
        ..
    } = summary;
    if let Some(failures) = stopped {
        output::print_message(&format!(
            "warning: {failures} starts failed in a row, so the restore stopped; the surfaces marked `not tried` are left planned: run restore again once the cause is fixed"
        ));
    }
    let outcome = match (failed, &unanswered) {
        (_, Some(unanswered)) => Err(Failure::Failed(anyhow!(
            "{unanswered}: the server may be stopped or hung; {failed} surface(s) failed and {not_tried} \
             were not tried, and none of them is claimed. Check the server (`{check_command}`; a \
             stopped one resumes with `kill -CONT` on its pid, a hung one must be killed), then \
             run restore again"
        ))),
        (0, None) => Ok(()),
        (failed, None) => Err(Failure::Failed(anyhow!(
            "{failed} of the surfaces tried could not be opened (marked `failed` above)"
        ))),
    };
    if cx.json {
        output::print_json(&Plan {
            version: OUTPUT_VERSION,
            surfaces: plan,
            restored_into,
            already_ran: None,
            stopped,
        })?;
        return outcome;
    }
    if plan.is_empty() {
        output::print_message(&format!(
            "nothing to restore: no surface in the index{}{}",
            if args.all {
                ""
            } else {
                " whose session did not end cleanly"
            },
            match &args.max_age {
                Some(max_age) => format!(" and was active within {}", with_unit(max_age)),
                None => String::new(),
            }
        ));
        return Ok(());
    }
    output::print_line(&plan_text(&plan, now))?;
    match (starts_here, &store) {
        (Some(position), Some(store)) => {
            // The surface is claimed for this process: it is started whatever else failed
            // (said first), and the agent's exit is the restore's.
            if let Err(Failure::Failed(error)) = &outcome {
                output::print_message(&format!("error: {}", crate::error::error_text(error)));
            }
            let item = &plan[position];
            start_here(
                store,
                item,
                here_surface.as_deref().unwrap_or(&item.surface),
            )
        }
        _ => {
            if args.apply.is_none() {
                say_if_here(&plan);
                super::hints::how_to_apply(cx, &plan);
            }
            super::hints::attach(cx, &attach);
            outcome
        }
    }
}

/// Becomes the resume command of the surface this restore runs in (claimed for it by the
/// apply): runs its script in place of this process, so that once the agent exits the user is
/// back at the shell they ran the restore from. Returns only when it could not be started, with
/// the claim taken back.
fn start_here(store: &index_store::Store, item: &PlanItem, surface: &str) -> Result<(), Failure> {
    use std::os::unix::process::CommandExt;
    let script = resume_plan::apply::here_script(item, surface)
        .ok_or_else(|| Failure::Failed(anyhow!("{} has no command to start", item.surface)))?;
    output::print_message(&format!(
        "this restore runs in {}: its agent starts here now",
        escape(&item.surface)
    ));
    let error = std::process::Command::new("/bin/sh")
        .args(["-c", &script])
        .exec();
    resume_plan::apply::release(store, item, context::now());
    Err(Failure::Failed(anyhow!(
        "cannot start the agent of {} in this pane: /bin/sh: {error}; run restore again",
        escape(&item.surface)
    )))
}

/// Says so when this process runs in a surface the plan resumes: a restore applied from here
/// starts that surface's agent in this pane, after the others.
fn say_if_here(plan: &[PlanItem]) {
    let deadline = std::time::Instant::now() + mux::tmux::CALL_DEADLINE;
    let Ok(here) = crate::surface::name_read_only("restore", deadline) else {
        return;
    };
    // An entry recorded before surfaces named their server names the default server's pane
    // without it.
    let legacy = crate::surface::legacy_alias(&here.surface);
    let Some(item) = plan.iter().find(|item| {
        (item.surface == here.surface || Some(&item.surface) == legacy.as_ref()) && item.resumable()
    }) else {
        return;
    };
    let multiplexer = mux::Surface::parse(&item.surface)
        .ok()
        .and_then(|surface| surface.multiplexer());
    let apply =
        multiplexer.map_or_else(String::new, |multiplexer| format!(" --apply {multiplexer}"));
    output::print_message(&format!(
        "note: this restore runs in {}, which the plan resumes; `crash-resume restore{apply}` run \
         here opens the others, then starts its agent in this pane",
        escape(&item.surface)
    ));
}

/// The plan for every surface (or only those that did not end cleanly), sorted by surface;
/// with `max_age`, only surfaces active within it (by [`index_core::Entry::last_activity`]).
fn build_plan(
    cx: &Context,
    index: &Index,
    all: bool,
    max_age: Option<u64>,
    now: u64,
) -> Result<Vec<PlanItem>, Failure> {
    let registry = context::registry(cx)?;
    let options = PlanOptions { all, max_age, now };
    resume_plan::plan::build_plan(index, &registry, cx.env(), options).map_err(
        |error| match error {
            PlanError::InvalidId(error) => error.into(),
            PlanError::Render(error) => Failure::Failed(error.into()),
        },
    )
}

/// `restore --notify MUX`: when a surface of the plan could be resumed, the line that says so
/// with the command restoring into MUX, on stderr and through `notify-send` where it exists
/// (5 s at most; one that fails or is missing changes nothing).
fn notify(
    cx: &Context,
    args: &RestoreArgs,
    multiplexer: mux::Multiplexer,
    plan: &[PlanItem],
) -> Result<(), Failure> {
    let mut program = vec![super::ours::program()?];
    program.extend(super::ours::global_words(cx)?);
    let mut restore_words = Vec::new();
    if let (mux::Multiplexer::Kitty, Some(address)) = (multiplexer, &args.kitty_socket) {
        restore_words.extend(["--kitty-socket".to_string(), address.clone()]);
    }
    let command =
        resume_plan::service::restore_command(&program, multiplexer.name(), &restore_words);
    let resumable = plan.iter().filter(|item| item.resumable()).count();
    if let Some(line) = resume_plan::service::ask_message(resumable, &command) {
        output::print_message(&escape(&line));
        let _ = bounded_run::output(
            std::process::Command::new("notify-send").args([
                "--",
                "crash-resume",
                &resume_plan::service::notification_body(&line),
            ]),
            std::time::Duration::from_secs(5),
        );
    }
    Ok(())
}

/// How the restore starts agents: staggered and verified with `--once-per-boot` or any of
/// `--max-starting`, `--start-timeout`, `--max-failures` (each defaulting to
/// [`resume_plan::apply::Stagger::default`]); all at once, unchecked, otherwise.
fn stagger(args: &RestoreArgs) -> Result<Option<resume_plan::apply::Stagger>, Failure> {
    if !args.once_per_boot
        && args.max_starting.is_none()
        && args.start_timeout.is_none()
        && args.max_failures.is_none()
    {
        return Ok(None);
    }
    let mut stagger = resume_plan::apply::Stagger::default();
    if let Some(max_starting) = args.max_starting {
        stagger.max_starting = max_starting as usize;
    }
    if let Some(max_failures) = args.max_failures {
        stagger.max_failures = max_failures as usize;
    }
    if let Some(timeout) = args.start_timeout.as_deref() {
        let millis = context::parse_max_age(timeout, "start timeout").map(context::millis)?;
        stagger.start_timeout = std::time::Duration::from_millis(millis);
    }
    Ok(Some(stagger))
}

/// A max age as typed, a plain number with its unit (`90` is `90ms`).
fn with_unit(max_age: &str) -> String {
    let max_age = max_age.trim();
    if max_age.bytes().all(|byte| byte.is_ascii_digit()) {
        format!("{max_age}ms")
    } else {
        max_age.to_string()
    }
}

/// The plan for people: on a terminal a table whose last column gathers the notes; piped, one
/// tab-separated line per surface (surface, verdict, session, how long ago it was last active,
/// command or what happens, then each note as a field of its own).
fn plan_text(plan: &[PlanItem], now: u64) -> String {
    let cells: Vec<(Vec<String>, Vec<String>, String)> = plan
        .iter()
        .map(|item| {
            let session = escape(item.session_id.as_deref().unwrap_or("-")).into_owned();
            let verdict = item.verdict.as_str().to_string();
            let what = match (&item.refused, &item.held_elsewhere, &item.command) {
                (Some(refused), _, _) => format!("not resumed: {refused}"),
                (None, Some(holder), _) => {
                    format!("not resumed: held by {}", escape(&holder.to_string()))
                }
                (None, None, Some(command)) => escape(command).into_owned(),
                (None, None, None) => match &item.recoverable_session_id {
                    Some(evidence) => {
                        format!("nothing to resume ({} is on disk)", escape(evidence))
                    }
                    None => "nothing to resume".to_string(),
                },
            };
            let mut notes = Vec::new();
            if let (Some(cwd), Some(starts_in)) = (&item.cwd, &item.starts_in) {
                notes.push(format!(
                    "(working dir {} is gone: starts in {})",
                    escape(cwd),
                    escape(starts_in)
                ));
            }
            if let Some(risk) = &item.retention {
                // The agent's own words for itself and its files, from the registry.
                let words = agent_paths::Agent::from_name(&item.agent)
                    .unwrap_or(agent_paths::Agent::Claude)
                    .facts()
                    .end_words;
                let deleter = format!("{} deletes {}s", words.display, words.file);
                notes.push(format!(
                    "(transcript {} days old; {deleter} after {} days)",
                    risk.age_days, risk.cleanup_period_days
                ));
            }
            if item.cleanup.is_some() {
                notes.push(
                    "(Gemini's start-up cleanup is on: the next Gemini start in this dir may \
                     delete the resumed conversation; see `crash-resume preflight`)"
                        .to_string(),
                );
            }
            if let Some(why) = &item.why {
                notes.push(format!("({why})"));
            } else if item.ended_cleanly {
                notes.push("(ended cleanly)".to_string());
            }
            if let Some(applied) = &item.applied {
                notes.push(format!("[{}]", escape(applied)));
            }
            let active = format!(
                "{} ago",
                output::format_age(now.saturating_sub(item.last_activity))
            );
            let fields = vec![
                escape(&item.surface).into_owned(),
                verdict,
                session,
                active,
                what,
            ];
            let died = item
                .died
                .map_or_else(|| "-".to_string(), |died| died.to_string());
            (fields, notes, died)
        })
        .collect();
    if crate::table::stdout_is_terminal() {
        let joined: Vec<String> = cells.iter().map(|(_, notes, _)| notes.join(" ")).collect();
        let rows: Vec<Vec<&str>> = cells
            .iter()
            .zip(&joined)
            .map(|((fields, _, died), notes)| {
                let mut row: Vec<&str> = fields.iter().map(String::as_str).collect();
                row.push(died);
                row.push(notes);
                row
            })
            .collect();
        crate::table::aligned_with(
            &[
                "SURFACE", "VERDICT", "SESSION", "ACTIVE", "COMMAND", "DIED", "NOTES",
            ],
            &rows,
            &crate::table::for_terminal(PLAN_SHRINK, Some(paint_plan)),
        )
    } else {
        // Piped, the command stays the 4th field, as it was before the age came: scripts cut
        // by position.
        let rows: Vec<Vec<&str>> = cells
            .iter()
            .map(|(fields, notes, _)| {
                let [surface, verdict, session, active, what] = &fields[..] else {
                    unreachable!("a plan row has five fields");
                };
                [surface, verdict, session, what, active]
                    .into_iter()
                    .chain(notes)
                    .map(String::as_str)
                    .collect()
            })
            .collect();
        crate::table::tsv(&rows)
    }
}

/// What gives way, in this order, when the plan's table is wider than the terminal: the session
/// id (to a short id), the command, the notes, the surface (its start), then why it died.
/// `--json` and the piped form keep every value whole.
const PLAN_SHRINK: &[(&str, usize, crate::table::Clip)] = &[
    ("SESSION", 8, crate::table::Clip::End),
    ("COMMAND", 18, crate::table::Clip::End),
    ("NOTES", 16, crate::table::Clip::End),
    ("SURFACE", 16, crate::table::Clip::Start),
    ("DIED", 7, crate::table::Clip::End),
];

/// The colour of a plan cell on a terminal: the verdict by what it means.
fn paint_plan(column: &str, cell: &str) -> Option<anstyle::Style> {
    use anstyle::AnsiColor;
    let colour = match (column, cell) {
        ("VERDICT", "resume") => AnsiColor::Green,
        ("VERDICT", "recover") => AnsiColor::Yellow,
        ("VERDICT", "fresh" | "unknown") => AnsiColor::BrightBlack,
        _ => return None,
    };
    Some(anstyle::Style::new().fg_color(Some(colour.into())))
}
