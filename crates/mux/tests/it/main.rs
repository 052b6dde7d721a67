//! mux's integration tests: one test binary, a module per backend that runs without its
//! multiplexer (a fake `wezterm` program, a fake cmux socket), recording exactly what would be
//! sent.

mod cmux;
mod wezterm;
