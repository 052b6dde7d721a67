//! `crash-resume service install|uninstall|status`: the login service that restores once per
//! boot (its text is `resume_plan::service`'s). Install writes the unit (or launchd agent)
//! through the locked, backed-up edit of the hook files, refusing a file at that path that is
//! not ours; then asks the service manager to load it (best effort, with a deadline: a machine
//! without a user manager still gets the file). Uninstall removes only a file of ours. Status
//! only reads: the file, and the ledger of restores beside the index.

use std::process::Command;
use std::time::Duration;

use anyhow::anyhow;
use camino::Utf8PathBuf;
use index_core::text::escape;
use resume_plan::boot::{Died, Ledger};
use resume_plan::service::{self, Policy, Service};
use serde::Serialize;

use crate::args::{ServiceCommand, ServiceManager, ServiceMux, ServicePolicy};
use crate::context::{self, Context};
use crate::error::Failure;
use crate::output::{self, OUTPUT_VERSION};

/// How long an install waits for another edit of the same dir, and for the service manager.
const DEADLINE: Duration = Duration::from_secs(5);

/// The log the service's restore appends to, beside the index.
const LOG: &str = "service.log";

pub fn run(cx: &Context, command: ServiceCommand) -> Result<(), Failure> {
    match command {
        ServiceCommand::Install {
            policy,
            multiplexer,
            kitty_socket,
            manager,
        } => install(
            cx,
            policy,
            multiplexer,
            kitty_socket,
            manager_or_default(manager),
        ),
        ServiceCommand::Uninstall { manager } => uninstall(cx, manager_or_default(manager)),
        ServiceCommand::Status { manager } => status(cx, manager_or_default(manager)),
    }
}

fn manager_or_default(manager: Option<ServiceManager>) -> ServiceManager {
    manager.unwrap_or(if cfg!(target_os = "macos") {
        ServiceManager::Launchd
    } else {
        ServiceManager::Systemd
    })
}

/// Where the manager's file of ours is.
fn unit_path(cx: &Context, manager: ServiceManager) -> Result<Utf8PathBuf, Failure> {
    let home = cx.home().ok_or_else(|| {
        Failure::Failed(anyhow!(
            "no home dir (HOME is not set): nowhere to install the service"
        ))
    })?;
    Ok(match manager {
        ServiceManager::Systemd => {
            let config = std::env::var("XDG_CONFIG_HOME")
                .ok()
                .filter(|dir| dir.starts_with('/'))
                .map_or_else(|| home.join(".config"), Utf8PathBuf::from);
            config.join("systemd/user").join(service::SYSTEMD_UNIT)
        }
        ServiceManager::Launchd => home
            .join("Library/LaunchAgents")
            .join(format!("{}.plist", service::LAUNCHD_LABEL)),
    })
}

/// `service install --json`.
#[derive(Serialize)]
struct Installed {
    version: u32,
    manager: &'static str,
    unit: String,
    written: bool,
    enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_enabled: Option<String>,
}

/// `service uninstall --json`.
#[derive(Serialize)]
struct Uninstalled {
    version: u32,
    manager: &'static str,
    unit: String,
    removed: bool,
}

/// `service status --json`.
#[derive(Serialize)]
struct Status {
    version: u32,
    manager: &'static str,
    unit: String,
    installed: bool,
    ledger: String,
    last_run: Option<resume_plan::boot::Run>,
    last_boot: Option<LastBoot>,
}

/// The runs of the last boot the ledger knows, summed.
#[derive(Serialize)]
struct LastBoot {
    boot_id: String,
    runs: usize,
    counts: resume_plan::boot::Counts,
}

fn manager_name(manager: ServiceManager) -> &'static str {
    match manager {
        ServiceManager::Systemd => "systemd",
        ServiceManager::Launchd => "launchd",
    }
}

fn plain(word: &str, what: &str) -> Result<String, Failure> {
    match service::is_plain(word) {
        true => Ok(word.to_string()),
        false => Err(Failure::Usage(anyhow!(
            "{what} {} holds a character the service file cannot carry plainly (a space, quote, `#`, `$`, `~` ...); move it to a plain path",
            escape(word)
        ))),
    }
}

fn install(
    cx: &Context,
    policy: ServicePolicy,
    multiplexer: ServiceMux,
    kitty_socket: Option<String>,
    manager: ServiceManager,
) -> Result<(), Failure> {
    super::ours::refuse_volatile_index(cx)?;
    let multiplexer = match multiplexer {
        ServiceMux::Tmux => "tmux",
        ServiceMux::Zellij => "zellij",
        ServiceMux::Kitty => "kitty",
    };
    let mut restore_words = Vec::new();
    match (multiplexer, kitty_socket) {
        ("kitty", Some(address)) => {
            restore_words.extend([
                "--kitty-socket".to_string(),
                plain(&address, "the kitty address")?,
            ]);
        }
        ("kitty", None) => {
            return Err(Failure::Usage(anyhow!(
                "--mux kitty needs --kitty-socket unix:PATH: the address the kitty you start listens on (its --listen-on)"
            )));
        }
        (_, Some(_)) => {
            return Err(Failure::Usage(anyhow!(
                "--kitty-socket is for --mux kitty only"
            )));
        }
        (_, None) => {}
    }
    let mut program = vec![plain(&super::ours::program()?, "this program's path")?];
    for word in super::ours::global_words(cx)? {
        program.push(plain(&word, "the index path")?);
    }
    let log = super::hook::log_path(cx)
        .and_then(|path| path.parent().map(|dir| dir.join(LOG)))
        .ok_or_else(|| Failure::Failed(anyhow!("cannot tell where the index is")))?;
    let log = plain(log.as_str(), "the log path")?;
    // The unit gets this shell's PATH, so that the agents it starts are found where the user's
    // shell finds them.
    let (path, left_out) = service::service_path(&std::env::var("PATH").unwrap_or_default());
    if !left_out.is_empty() {
        let left_out: Vec<String> = left_out
            .iter()
            .map(|entry| escape(entry).into_owned())
            .collect();
        output::print_message(&format!(
            "warning: the service's PATH leaves out {} (relative, or a character the unit cannot carry plainly); an agent installed only there will not be found",
            left_out.join(", ")
        ));
    }
    let service = Service {
        program: &program,
        multiplexer,
        restore_words: &restore_words,
        policy: match policy {
            ServicePolicy::Auto => Policy::Auto,
            ServicePolicy::Ask => Policy::Ask,
        },
        log: &log,
        path: path.as_deref(),
    };
    let text = match manager {
        ServiceManager::Systemd => service.systemd_unit(),
        ServiceManager::Launchd => service.launchd_plist(),
    };
    let path = unit_path(cx, manager)?;
    if let Some(dir) = path.parent() {
        safe_open::create_private_dirs(dir.as_std_path())
            .map_err(|error| Failure::Failed(anyhow!("cannot create {dir}: {error}")))?;
    }
    if let Some(dir) = camino::Utf8Path::new(&log).parent() {
        safe_open::create_private_dirs(dir.as_std_path())
            .map_err(|error| Failure::Failed(anyhow!("cannot create {dir}: {error}")))?;
    }
    let edited = index_store::edit_file(&path, DEADLINE, |current| match current {
        Some(current) if !service::is_ours(&String::from_utf8_lossy(current)) => {
            Err(Failure::Failed(anyhow!(
                "{} exists and is not crash-resume's; it was left alone. Remove or rename it, then install again",
                escape(path.as_str())
            )))
        }
        Some(current) if current == text.as_bytes() => Ok(None),
        _ => Ok(Some(text.clone().into_bytes())),
    })?;
    let enabled = enable(manager, &path);
    if cx.json {
        return output::print_json(&Installed {
            version: OUTPUT_VERSION,
            manager: manager_name(manager),
            unit: path.to_string(),
            written: edited.written,
            enabled: enabled.is_ok(),
            not_enabled: enabled.err(),
        });
    }
    match edited.written {
        true => output::print_line(&format!(
            "installed the login restore as {}",
            escape(path.as_str())
        ))?,
        false => output::print_line(&format!("already installed as {}", escape(path.as_str())))?,
    }
    if let Err(why) = enabled {
        output::print_message(&format!(
            "warning: the service is written but not enabled: {why}; enable it once a user service manager runs"
        ));
    }
    Ok(())
}

/// Asks the service manager to load the unit at login: `systemctl --user daemon-reload` and
/// `enable`, or `launchctl load -w`. Why not, when it could not.
fn enable(manager: ServiceManager, path: &camino::Utf8Path) -> Result<(), String> {
    let calls: Vec<Vec<&str>> = match manager {
        ServiceManager::Systemd => vec![
            vec!["systemctl", "--user", "daemon-reload"],
            vec!["systemctl", "--user", "enable", service::SYSTEMD_UNIT],
        ],
        ServiceManager::Launchd => vec![vec!["launchctl", "load", "-w", path.as_str()]],
    };
    for call in calls {
        let output = bounded_run::output(Command::new(call[0]).args(&call[1..]), DEADLINE)
            .map_err(|error| format!("`{}`: {error}", call.join(" ")))?;
        if !output.status.success() {
            return Err(format!(
                "`{}` exited {}: {}",
                call.join(" "),
                output.status,
                escape(String::from_utf8_lossy(&output.stderr).trim())
            ));
        }
    }
    Ok(())
}

fn uninstall(cx: &Context, manager: ServiceManager) -> Result<(), Failure> {
    let path = unit_path(cx, manager)?;
    let removed = match std::fs::read(&path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        Err(error) => return Err(Failure::Failed(anyhow!("cannot read {path}: {error}"))),
        Ok(current) if !service::is_ours(&String::from_utf8_lossy(&current)) => {
            return Err(Failure::Failed(anyhow!(
                "{} is not crash-resume's; it was left alone",
                escape(path.as_str())
            )));
        }
        Ok(_) => {
            let _ = match manager {
                ServiceManager::Systemd => bounded_run::output(
                    Command::new("systemctl").args(["--user", "disable", service::SYSTEMD_UNIT]),
                    DEADLINE,
                ),
                ServiceManager::Launchd => bounded_run::output(
                    Command::new("launchctl").args(["unload", "-w", path.as_str()]),
                    DEADLINE,
                ),
            };
            let edited = index_store::edit_file(&path, DEADLINE, |current| match current {
                Some(current) if service::is_ours(&String::from_utf8_lossy(current)) => {
                    Ok::<_, index_store::StoreError>(Some(Vec::new()))
                }
                _ => Ok(None),
            })?;
            edited.removed
        }
    };
    if cx.json {
        return output::print_json(&Uninstalled {
            version: OUTPUT_VERSION,
            manager: manager_name(manager),
            unit: path.to_string(),
            removed,
        });
    }
    match removed {
        true => output::print_line(&format!(
            "removed the login restore {}",
            escape(path.as_str())
        )),
        false => {
            output::print_message(&format!(
                "no login restore of crash-resume to remove at {}",
                escape(path.as_str())
            ));
            Ok(())
        }
    }
}

fn status(cx: &Context, manager: ServiceManager) -> Result<(), Failure> {
    let path = unit_path(cx, manager)?;
    let installed =
        std::fs::read(&path).is_ok_and(|text| service::is_ours(&String::from_utf8_lossy(&text)));
    let store = context::open_store(cx)?;
    let ledger = Ledger::read(&store).map_err(|error| Failure::Failed(error.into()))?;
    let last_boot = ledger.last_boot();
    let summed = last_boot.first().map(|first| {
        let mut counts = resume_plan::boot::Counts::default();
        for run in &last_boot {
            counts.verified += run.counts.verified;
            counts.not_verified += run.counts.not_verified;
            counts.started += run.counts.started;
            counts.skipped += run.counts.skipped;
            counts.failed += run.counts.failed;
            counts.left += run.counts.left;
            for (died, count) in &run.counts.died {
                *counts.died.entry(*died).or_default() += count;
            }
        }
        LastBoot {
            boot_id: first.boot_id.clone(),
            runs: last_boot.len(),
            counts,
        }
    });
    let document = Status {
        version: OUTPUT_VERSION,
        manager: manager_name(manager),
        unit: path.to_string(),
        installed,
        ledger: store
            .sidecar_path(resume_plan::boot::LEDGER_NAME)
            .to_string(),
        last_run: ledger.runs.last().cloned(),
        last_boot: summed,
    };
    if cx.json {
        return output::print_json(&document);
    }
    let mut lines = vec![match installed {
        true => format!("installed: {}", escape(path.as_str())),
        false => format!(
            "not installed ({} has no service of ours)",
            escape(path.as_str())
        ),
    }];
    match (&document.last_run, &document.last_boot) {
        (Some(run), Some(boot)) => {
            let ago = output::format_age(context::now().saturating_sub(run.at));
            lines.push(format!(
                "last restore: into {} {} ({}), {ago} ago",
                run.multiplexer,
                escape(&run.instance),
                escape(&run.boot_id)
            ));
            let counts = &boot.counts;
            lines.push(format!(
                "last boot: {} started and verified, {} started but not verified, {} started unchecked, {} skipped, {} failed, {} left planned",
                counts.verified, counts.not_verified, counts.started, counts.skipped, counts.failed, counts.left
            ));
            let died: Vec<String> = Died::ALL
                .iter()
                .map(|died| format!("{} {died}", counts.died.get(died).copied().unwrap_or(0)))
                .collect();
            lines.push(format!("why the panes died: {}", died.join(", ")));
        }
        _ => lines.push("no restore recorded yet".to_string()),
    }
    output::print_line(&lines.join("\n"))
}
