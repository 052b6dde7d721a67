//! mux's integration tests: one test binary; the surface grammar, the surface capture, and a module per backend that
//! runs without its multiplexer (a fake `wezterm` program, a fake cmux socket, a fake kitty
//! socket), recording exactly what would be sent.

mod capture;
mod cmux;
mod conformance;
mod kitty;
mod surface;
mod wezterm;
mod zellij;
