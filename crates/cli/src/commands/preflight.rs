//! `crash-resume preflight`: what the next spawn would do, before anything is spawned.

use index_core::{SessionId, SurfaceId};

use crate::args::PreflightArgs;
use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;

pub fn run(cx: &Context, args: PreflightArgs) -> Outcome {
    let index = context::load(cx)?;
    let input = match &args.surface {
        Some(surface) => {
            let surface = SurfaceId::new(surface.as_str())?;
            let Some(entry) = index.lookup(surface.as_str()) else {
                return Err(Failure::NotFound(format!(
                    "no entry for surface {surface}{}",
                    context::surface_hint(cx, surface.as_str())
                )));
            };
            resume_plan::input::preflight_input(&index, entry, cx.env())
        }
        None => {
            let session = args.session.map(SessionId::new).transpose()?;
            let history = args.history_session.map(SessionId::new).transpose()?;
            let cwd = args
                .cwd
                .as_deref()
                .map(|dir| context::absolute_dir(dir, "--cwd"))
                .transpose()?;
            preflight::Input {
                config_dir: args
                    .config_dir
                    .or_else(|| cx.env().config_dir(&args.agent).ok().flatten()),
                excluded: resume_plan::input::excluded_ids(
                    &index,
                    session.as_ref().map(SessionId::as_str),
                ),
                session: session.map(SessionId::into_string),
                history_session: history.map(SessionId::into_string),
                cwd,
                agent: Some(args.agent),
                chain: Vec::new(),
                home: cx.home(),
                launch_env: Default::default(),
            }
        }
    };
    let outcome = preflight::preflight(&input);
    if cx.json {
        output::print_json(&output::Preflight::new(args.surface.as_deref(), &outcome))?;
    } else {
        output::print_line(&output::preflight_text(&outcome))?;
    }
    match outcome.verdict {
        preflight::Verdict::Fresh => Err(Failure::NotFound(String::new())),
        _ => Ok(()),
    }
}
