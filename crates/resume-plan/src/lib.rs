//! The rules of crash-resume that a program orchestrating agent sessions needs, as a library:
//! the `crash-resume` binary only parses its arguments, calls these and prints.
//!
//! - [`Environment`]: where the files live (the index, `launchers.toml`, `hook.log`) and each
//!   agent's config dir, from values the caller read from its environment.
//! - [`input`]: an index entry to a [`preflight::Input`].
//! - [`resume`]: a verdict to the session it resumes and the command that resumes it.
//! - [`live`]: which sessions running agents hold.
//! - [`plan`]: the restore plan ([`PlanItem`], serialisable both ways); [`reasons`]: what an
//!   item says besides its verdict (held elsewhere, refused, why offered), typed.
//! - [`hook`]: an agent's hook event to an operation on the index.
//! - [`apply`]: applying the plan through a multiplexer's backend (`mux::Backend`): claims,
//!   the busy check, the restore lock, releasing what was not started; [`outcome`]: what it
//!   did to each surface, typed; with a [`apply::Stagger`], a few agents start at a time and
//!   each is verified (its own hook bound it to its surface again).
//! - [`service`]: the text of the login service (a systemd user unit, a launchd agent).
//! - [`boot`]: the boot id, the ledger of restores per boot (`--once-per-boot`), and why each
//!   pane died.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use resume_plan::{Environment, plan::Planner};
//!
//! let env = Environment::from_lookup(std::env::home_dir(), |name| std::env::var_os(name));
//! let index = index_store::Store::open(&env.index_path(None)?, Default::default())?.load()?.index;
//! let registry = env.registry(None)?;
//! let mut planner = Planner::new(&index, &registry, &env);
//! for entry in index.entries() {
//!     let item = planner.item(entry)?;
//!     println!("{} {} {:?}", item.surface, item.verdict.as_str(), item.command);
//! }
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod apply;
pub mod boot;
mod environment;
pub mod hook;
pub mod input;
pub mod live;
pub mod outcome;
pub mod plan;
pub mod reasons;
pub mod resume;
pub mod service;
pub mod variables;
mod wire;

pub use environment::{Environment, LocationError, Placed, hook_log_path};
pub use plan::{Plan, PlanItem};

/// The examples of the crate's README.md, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
