//! Waiting for something another process does: polling with a deadline. A leaf module.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(10);

/// Polls `check` until it finds something, at most `deadline`.
pub fn wait_for<T>(
    deadline: Duration,
    what: &str,
    mut check: impl FnMut() -> Result<Option<T>>,
) -> Result<T> {
    let started = Instant::now();
    loop {
        if let Some(found) = check()? {
            return Ok(found);
        }
        if started.elapsed() > deadline {
            bail!("gave up after {deadline:.1?} waiting for {what}");
        }
        std::thread::sleep(POLL);
    }
}

/// Polls `check` until it holds, at most `deadline`.
pub fn wait_until(
    deadline: Duration,
    what: &str,
    mut check: impl FnMut() -> Result<bool>,
) -> Result<()> {
    wait_for(deadline, what, || Ok(check()?.then_some(())))
}
