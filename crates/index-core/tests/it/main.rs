//! Integration tests of index-core's public API: the JavaScript tool's scenarios, the chain and
//! one-surface-per-session rules, a property test against a plain model, and bounded fuzzing of
//! the hook-payload reader.

mod fuzz;
mod inert;
mod model;
mod scenarios;
