//! Home-dir expansion of recorded paths: the one rule that the preflight and the resume command
//! share, so both look in the same place. It lives in `agent-paths`, with the providers'
//! config-dir facts; this module re-exports it for the preflight's users.

pub use agent_paths::expand_home;
