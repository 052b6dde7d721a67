//! Integration tests of index-core's public API: the JavaScript tool's scenarios, the chain and
//! one-surface-per-session rules, and a property test against a plain model.

mod model;
mod scenarios;
