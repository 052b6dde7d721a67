//! The boot a restore runs in, and what it tells: the boot id ([`current_boot_id`]), the ledger
//! of restores run per boot and per multiplexer instance ([`Ledger`], `<index>.boots.json`,
//! written under the restore lock), and why each recorded pane died ([`Died`]).
//!
//! The ledger holds the last [`MAX_RUNS`] runs: a restore run with `--once-per-boot` looks for a
//! run of its boot into the same instance first, and restores nothing when there is one.

use std::fmt;

use index_core::{Entry, Millis};
use index_store::{Store, StoreError};
use mux::{Created, InstanceRun};
use serde::{Deserialize, Serialize};

use crate::PlanItem;
use crate::outcome::Applied;

/// The variable that replaces the boot id: for tests only (a test cannot reboot the machine).
pub const BOOT_ID_VARIABLE: &str = "CRASH_RESUME_BOOT_ID";

/// The ledger's sidecar name: `<index>.boots.json`.
pub const LEDGER_NAME: &str = "boots.json";

/// How many runs the ledger keeps (the newest).
pub const MAX_RUNS: usize = 64;

/// The largest ledger read.
const MAX_LEDGER_BYTES: u64 = 1 << 20;

/// Where Linux says the boot id.
#[cfg(target_os = "linux")]
const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// The boot this process runs in: `replacement` when given and not blank (the value of
/// [`BOOT_ID_VARIABLE`], for tests), else `/proc/sys/kernel/random/boot_id` on Linux and
/// `kern.boottime` on macOS; `None` when it cannot be read. One small read: cheap enough for
/// every record.
pub fn current_boot_id(replacement: Option<&str>) -> Option<String> {
    if let Some(replacement) = replacement.map(str::trim).filter(|text| !text.is_empty()) {
        return Some(bounded(replacement));
    }
    system_boot_id()
}

#[cfg(target_os = "linux")]
fn system_boot_id() -> Option<String> {
    let bytes = std::fs::read(BOOT_ID_PATH).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| bounded(text))
}

#[cfg(target_os = "macos")]
fn system_boot_id() -> Option<String> {
    // `kern.boottime` is `{ sec = 1700000000, usec = 123456 } Thu Nov 14 ...`: the seconds and
    // microseconds name the boot.
    let output = bounded_run::output(
        std::process::Command::new("/usr/sbin/sysctl").args(["-n", "kern.boottime"]),
        std::time::Duration::from_secs(2),
    )
    .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let numbers: Vec<&str> = text
        .split(|character: char| !character.is_ascii_digit())
        .filter(|word| !word.is_empty())
        .take(2)
        .collect();
    (numbers.len() == 2).then(|| format!("boottime-{}.{}", numbers[0], numbers[1]))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn system_boot_id() -> Option<String> {
    None
}

/// At most 128 characters of `text`, control characters taken out: a boot id is compared and
/// printed, never run.
fn bounded(text: &str) -> String {
    text.chars()
        .filter(|character| !character.is_control())
        .take(128)
        .collect()
}

/// Why a recorded pane died, from evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Died {
    /// The machine rebooted: the boot id changed since the agent last recorded itself.
    Reboot,
    /// In this boot, the multiplexer instance (or the session the pane was in) died: the
    /// restore had to create it again.
    InstanceDied,
    /// In this boot, the pane alone was closed while its instance lived: the restore found the
    /// session and re-made only the pane (or re-used its idle shell).
    PaneClosed,
    /// Nothing tells: no boot id was recorded, or it is this boot's and no restore into the
    /// multiplexer looked.
    Unknown,
}

impl Died {
    /// Every kind, in the order counts are said.
    pub const ALL: [Died; 4] = [
        Died::Reboot,
        Died::InstanceDied,
        Died::PaneClosed,
        Died::Unknown,
    ];

    /// Its `--json` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Died::Reboot => "reboot",
            Died::InstanceDied => "instance_died",
            Died::PaneClosed => "pane_closed",
            Died::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Died {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Died::Reboot => "reboot",
            Died::InstanceDied => "mux died",
            Died::PaneClosed => "pane closed",
            Died::Unknown => "unknown",
        })
    }
}

/// Why `entry`'s pane died, as far as the boot ids tell (`boot`: this boot's id), and, in this
/// boot, what applying did to it (`outcome`): creating the session (or cmux workspace) means the instance (or its session) had died; re-using or re-making only the pane means the
/// pane alone was closed (or its window, while the instance lived).
pub fn why_died(entry: &Entry, boot: Option<&str>, outcome: Option<&Applied>) -> Died {
    match (entry.boot_id.as_deref(), boot) {
        (Some(recorded), Some(boot)) if recorded != boot => Died::Reboot,
        (Some(_), Some(_)) => match outcome {
            Some(Applied::Started { created, .. } | Applied::Shell { created }) => {
                let whole = created.iter().any(|created| {
                    matches!(
                        created,
                        Created::Session | Created::Resurrected | Created::Workspace
                    )
                });
                match whole {
                    true => Died::InstanceDied,
                    false => Died::PaneClosed,
                }
            }
            _ => Died::Unknown,
        },
        _ => Died::Unknown,
    }
}

/// Fills in [`PlanItem::died`] of every item whose session did not end cleanly, from the index
/// it was planned from and this boot's id.
pub fn say_why_died(plan: &mut [PlanItem], index: &index_core::Index, boot: Option<&str>) {
    for item in plan.iter_mut().filter(|item| !item.ended_cleanly) {
        item.died = index
            .lookup(&item.surface)
            .map(|entry| why_died(entry, boot, item.outcome.as_ref()));
    }
}

/// One restore recorded in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// The boot it ran in.
    pub boot_id: String,
    /// The multiplexer it restored into (`tmux`, `zellij`, `kitty`).
    pub multiplexer: String,
    /// That multiplexer's instance (`mux::Backend::location`).
    pub instance: String,
    /// Which run of the instance it restored into, once it had (`mux::Backend::instance_run`:
    /// the tmux server's pid and start time); absent where the backend does not tell runs
    /// apart, or nothing ran there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_run: Option<String>,
    /// When it ran, in epoch milliseconds.
    pub at: Millis,
    /// What it did, counted.
    pub counts: Counts,
}

/// What one restore did, counted; and why the panes it looked at had died.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Started, and their agent bound itself again in time.
    pub verified: usize,
    /// Started, not bound within the start timeout.
    pub not_verified: usize,
    /// Started, not checked (a restore not staggered).
    pub started: usize,
    /// Left alone.
    pub skipped: usize,
    /// Failed.
    pub failed: usize,
    /// Left planned once too many failed in a row (or not tried: the multiplexer stopped
    /// answering).
    pub left: usize,
    /// Panes by why they died.
    #[serde(default)]
    pub died: std::collections::BTreeMap<Died, usize>,
}

impl Counts {
    /// The counts of an applied plan.
    pub fn of(plan: &[PlanItem]) -> Counts {
        let mut counts = Counts::default();
        for item in plan {
            if let Some(died) = item.died {
                *counts.died.entry(died).or_default() += 1;
            }
            match &item.outcome {
                Some(Applied::Started { verified, .. }) => match verified {
                    Some(crate::outcome::Verified::Bound { .. }) => counts.verified += 1,
                    Some(crate::outcome::Verified::NotInTime { .. }) => counts.not_verified += 1,
                    None => counts.started += 1,
                },
                Some(Applied::Skipped { .. }) => counts.skipped += 1,
                Some(Applied::Failed { .. }) => counts.failed += 1,
                Some(Applied::Stopped { .. } | Applied::NotTried { .. }) => counts.left += 1,
                Some(Applied::Shell { .. } | Applied::StartsHere { .. }) | None => {}
            }
        }
        counts
    }
}

/// The ledger of restores, newest last (`<index>.boots.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// The format's version (1).
    pub version: u32,
    /// The runs, oldest first.
    pub runs: Vec<Run>,
}

/// Why the ledger could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The file could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The file is not a ledger.
    #[error("{path} is not a ledger of restores ({reason}); remove it to start a new one")]
    NotALedger {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl Ledger {
    /// The ledger beside `store`'s index; empty when there is none. Never writes.
    pub fn read(store: &Store) -> Result<Ledger, LedgerError> {
        let Some(bytes) = store.read_sidecar(LEDGER_NAME, MAX_LEDGER_BYTES)? else {
            return Ok(Ledger {
                version: 1,
                runs: Vec::new(),
            });
        };
        serde_json::from_slice(&bytes).map_err(|error| LedgerError::NotALedger {
            path: store.sidecar_path(LEDGER_NAME).into_string(),
            reason: error.to_string(),
        })
    }

    /// The first run of `boot` into `instance` as it runs now (`now`), if any: for a backend
    /// that tells runs apart, only a run into the same run of the instance counts (a tmux
    /// server started again after a crash is restored again; nothing running there, no run
    /// counts).
    pub fn run_in(&self, boot: &str, instance: &str, now: &InstanceRun) -> Option<&Run> {
        self.runs.iter().find(|run| {
            run.boot_id == boot
                && run.instance == instance
                && match now {
                    InstanceRun::Untold => true,
                    InstanceRun::NotRunning => false,
                    InstanceRun::Running(now) => run.instance_run.as_deref() == Some(now),
                }
        })
    }

    /// The runs of the boot of the newest run.
    pub fn last_boot(&self) -> Vec<&Run> {
        let Some(last) = self.runs.last() else {
            return Vec::new();
        };
        self.runs
            .iter()
            .filter(|run| run.boot_id == last.boot_id)
            .collect()
    }

    /// Adds `run` and writes the ledger (the newest [`MAX_RUNS`] runs), durably. The caller
    /// holds the restore lock.
    pub fn append(store: &Store, run: Run) -> Result<(), LedgerError> {
        let mut ledger = Ledger::read(store)?;
        ledger.version = 1;
        ledger.runs.push(run);
        let excess = ledger.runs.len().saturating_sub(MAX_RUNS);
        ledger.runs.drain(..excess);
        let mut bytes = serde_json::to_vec_pretty(&ledger).expect("a ledger serialises");
        bytes.push(b'\n');
        store.write_sidecar(LEDGER_NAME, &bytes)?;
        Ok(())
    }
}

/// What [`apply_once_per_boot`] did.
#[derive(Debug)]
pub enum Once {
    /// A restore of this boot into this instance ran before: nothing was done.
    AlreadyRan(Run),
    /// The plan was applied and the run added to the ledger.
    Applied {
        /// What applying did, in sum.
        summary: Box<crate::apply::Summary>,
        /// The run as the ledger holds it.
        run: Run,
        /// The run is not in the ledger, so the next run of this boot restores again: why.
        not_recorded: Option<NotRecorded>,
    },
}

/// Why an applied run was not added to the ledger.
#[derive(Debug, thiserror::Error)]
pub enum NotRecorded {
    /// It started no agent and some surface failed or was not tried (the multiplexer not
    /// running yet, not answering): it restored nothing that a second run could start twice.
    #[error("it started nothing and {failed} surface(s) failed or were not tried")]
    RestoredNothing {
        /// The surfaces that failed or were not tried.
        failed: usize,
    },
    /// The ledger could not be written.
    #[error("the ledger could not be written: {0}")]
    Ledger(#[from] LedgerError),
}

/// Applies `plan` (made from `index`) through `backend` once per boot: under the restore lock,
/// the ledger is read first, and a run of `boot` into the backend's instance means nothing is
/// done; otherwise the plan is applied ([`crate::apply::apply_with`]), each item says why its
/// pane died ([`say_why_died`]), and the run is added to the ledger, unless it started no agent
/// while some surface failed or was not tried ([`NotRecorded::RestoredNothing`]: kitty not
/// started yet at login, a multiplexer that did not answer), so that a later run of the boot
/// restores then. Fails only when the
/// restore lock cannot be had, or the ledger cannot be read.
pub fn apply_once_per_boot(
    store: &Store,
    backend: &dyn mux::Backend,
    plan: &mut [PlanItem],
    index: &index_core::Index,
    boot: &str,
    now: &dyn Fn() -> Millis,
    options: crate::apply::ApplyOptions,
) -> Result<Once, LedgerError> {
    let instance = backend.location();
    store.exclusive(
        crate::apply::RESTORE_LOCK,
        crate::apply::RESTORE_LOCK_TIMEOUT,
        || {
            let ledger = Ledger::read(store)?;
            if let Some(run) = ledger.run_in(boot, &instance, &backend.instance_run()) {
                return Ok(Once::AlreadyRan(run.clone()));
            }
            let summary = crate::apply::apply_locked(store, backend, plan, now, options);
            say_why_died(plan, index, Some(boot));
            let run = Run {
                boot_id: boot.to_string(),
                multiplexer: backend.multiplexer().to_string(),
                instance: instance.clone(),
                instance_run: match backend.instance_run() {
                    InstanceRun::Running(run) => Some(run),
                    InstanceRun::NotRunning | InstanceRun::Untold => None,
                },
                at: now(),
                counts: Counts::of(plan),
            };
            let counts = &run.counts;
            let started = counts.verified + counts.not_verified + counts.started;
            let not_recorded = match (started, counts.failed + counts.left) {
                (0, failed) if failed > 0 => Some(NotRecorded::RestoredNothing { failed }),
                _ => Ledger::append(store, run.clone())
                    .err()
                    .map(NotRecorded::Ledger),
            };
            Ok(Once::Applied {
                summary: Box::new(summary),
                run,
                not_recorded,
            })
        },
    )?
}

#[cfg(test)]
mod tests {
    use super::*;
    use index_core::{Record, Repo, SessionId, SurfaceId};

    fn entry(boot: Option<&str>) -> Entry {
        let mut index = index_core::Index::default();
        let mut record = Record::new(
            SurfaceId::new("tmux:main:0.0").unwrap(),
            SessionId::new("s1").unwrap(),
            Repo::new("r").unwrap(),
        );
        record.boot_id = boot.map(str::to_string);
        index.record(record, 1);
        index.lookup("tmux:main:0.0").unwrap().clone()
    }

    fn started(created: Vec<Created>) -> Applied {
        Applied::Started {
            created,
            claim_not_durable: None,
            verified: None,
        }
    }

    #[test]
    fn why_a_pane_died_is_said_from_the_boot_ids_and_what_the_restore_had_to_create() {
        let check = |recorded: Option<&str>, boot: Option<&str>, outcome: Option<Applied>, died| {
            assert_eq!(why_died(&entry(recorded), boot, outcome.as_ref()), died);
        };
        check(Some("a"), Some("b"), None, Died::Reboot);
        check(Some("a"), Some("b"), Some(started(vec![])), Died::Reboot);
        check(Some("a"), Some("a"), None, Died::Unknown);
        check(
            Some("a"),
            Some("a"),
            Some(started(vec![Created::Session])),
            Died::InstanceDied,
        );
        check(
            Some("a"),
            Some("a"),
            Some(started(vec![Created::Resurrected])),
            Died::InstanceDied,
        );
        check(
            Some("a"),
            Some("a"),
            Some(started(vec![])),
            Died::PaneClosed,
        );
        check(
            Some("a"),
            Some("a"),
            Some(started(vec![Created::Window])),
            Died::PaneClosed,
        );
        check(
            None,
            Some("a"),
            Some(started(vec![Created::Session])),
            Died::Unknown,
        );
        check(Some("a"), None, None, Died::Unknown);
    }

    #[test]
    fn the_boot_id_is_the_replacement_when_given_else_the_system_s() {
        assert_eq!(
            current_boot_id(Some(" test-boot \n")).as_deref(),
            Some("test-boot")
        );
        let system = current_boot_id(None);
        assert_eq!(current_boot_id(Some("  ")), system);
        #[cfg(target_os = "linux")]
        assert_eq!(
            system.as_deref(),
            Some(std::fs::read_to_string(BOOT_ID_PATH).unwrap().trim())
        );
    }

    #[test]
    fn the_ledger_finds_a_run_of_the_boot_and_instance_and_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let path = camino::Utf8PathBuf::from_path_buf(dir.path().join("index.json")).unwrap();
        let store = Store::open(
            &path,
            index_store::StoreOptions {
                allow_volatile: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(Ledger::read(&store).unwrap().runs, Vec::new());
        for n in 0..(MAX_RUNS + 2) {
            let run = Run {
                boot_id: format!("boot-{}", n % 3),
                multiplexer: "tmux".into(),
                instance: format!("/tmp/tmux-{}", n % 2),
                instance_run: Some(format!("run-{}", n % 2)),
                at: n as u64,
                counts: Counts::default(),
            };
            Ledger::append(&store, run).unwrap();
        }
        let ledger = Ledger::read(&store).unwrap();
        assert_eq!(ledger.runs.len(), MAX_RUNS);
        assert_eq!(ledger.runs.last().unwrap().at, (MAX_RUNS + 1) as u64);
        let untold = InstanceRun::Untold;
        assert!(ledger.run_in("boot-1", "/tmp/tmux-1", &untold).is_some());
        assert!(ledger.run_in("boot-9", "/tmp/tmux-1", &untold).is_none());
        let same = InstanceRun::Running("run-1".into());
        let again = InstanceRun::Running("run-started-again".into());
        assert!(ledger.run_in("boot-1", "/tmp/tmux-1", &same).is_some());
        assert!(ledger.run_in("boot-1", "/tmp/tmux-1", &again).is_none());
        assert!(
            ledger
                .run_in("boot-1", "/tmp/tmux-1", &InstanceRun::NotRunning)
                .is_none()
        );
        let last = ledger.last_boot();
        assert!(
            last.iter()
                .all(|run| run.boot_id == ledger.runs.last().unwrap().boot_id)
        );
        std::fs::write(store.sidecar_path(LEDGER_NAME), "not json").unwrap();
        assert!(matches!(
            Ledger::read(&store),
            Err(LedgerError::NotALedger { .. })
        ));
    }
}
