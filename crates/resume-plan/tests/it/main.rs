//! resume-plan's integration tests: one test binary, a module per area.

mod apply;
mod plan;
mod variables;
