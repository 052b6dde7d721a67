//! The offline setup for the real Claude Code CLI, shared by the preflight's conformance test
//! and `cargo xtask reboot-sim --real-claude`: its API address is a loopback port nothing
//! listens on, so it answers a resume (loads the transcript, or says "No conversation found")
//! and then fails fast on the request, without ever reaching the network.

use std::net::TcpListener;

/// A loopback port nothing listens on: bound, then released.
pub fn closed_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The environment that keeps the CLI offline (its API on 127.0.0.1:`port`, no other
/// traffic) and quick to give up on the API (no retries).
pub fn offline_env(port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}")),
        ("ANTHROPIC_API_KEY", "dummy".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_closed_and_the_env_points_at_it() {
        let port = closed_port().unwrap();
        // Released: it can be bound again. (Connecting to it is no test: a connect to a free
        // port in the ephemeral range can pick that same port as its source and connect to
        // itself.)
        assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
        let env = offline_env(port);
        assert_eq!(env[0].1, format!("http://127.0.0.1:{port}"));
    }
}
