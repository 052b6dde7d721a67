//! `crash-resume record`: binds a surface to a session (a locked, durable write).

use index_core::text::escape;
use index_core::{AgentName, Record, Repo, Role, SessionId, SurfaceId};

use crate::args::RecordArgs;
use crate::context::{self, Context, Outcome};
use crate::error::Failure;
use crate::output;

pub fn run(cx: &Context, args: RecordArgs) -> Outcome {
    // A multiplexer's surface in another spelling (`tmux:w:00.1`, `kitty:`) would name a place
    // that no restore re-opens under that id.
    mux::Surface::parse(&args.surface).map_err(|error| Failure::Usage(error.into()))?;
    let mut record = Record::new(
        SurfaceId::new(args.surface)?,
        SessionId::new(args.session)?,
        Repo::new(args.repo)?,
    );
    record.role = args
        .role
        .filter(|role| !role.is_empty())
        .map(Role::new)
        .transpose()?;
    record.agent = args.agent.map(AgentName::new).transpose()?;
    record.cwd = args
        .cwd
        .as_deref()
        .map(|dir| context::absolute_dir(dir, "--cwd"))
        .transpose()?;
    record.config_dir = args
        .config_dir
        .as_deref()
        .map(|dir| context::absolute_dir(dir, "--config-dir"))
        .transpose()?;
    index_core::check_dirs(record.cwd.as_deref(), record.config_dir.as_deref())?;
    record.boot_id = context::boot_id();
    let store = context::open_store(cx)?;
    let surface = record.surface.clone();
    let session = record.session.clone();
    let scope = index_store::Scope {
        surfaces: &[surface.as_str()],
        sessions: &[session.as_str()],
    };
    let now = context::now();
    let updated = store.update_entries(scope, |index| {
        let recorded = index.record(record.clone(), now);
        (recorded, index.lookup(surface.as_str()).cloned())
    })?;
    context::report(&updated.warnings);
    let (recorded, entry) = updated.value;
    let entry = entry.expect("a recorded surface is in the index");
    if cx.json {
        return output::print_json(&output::Recorded::new(&entry, &recorded));
    }
    output::print_line(&format!(
        "recorded {} → {} ({})",
        escape(entry.surface.as_str()),
        escape(entry.session.as_str()),
        escape(entry.repo.as_str())
    ))
}
