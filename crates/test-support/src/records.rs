//! Index records for the benchmarks: as many distinct, realistic ones as a size needs.

use index_core::{Record, Repo, SessionId, SurfaceId};

/// The sizes a benchmark measures: all of `full` under `cargo bench`, only the first when the
/// benchmark runs once as a test (`cargo test --benches`).
pub fn bench_sizes(full: &[usize]) -> Vec<usize> {
    if std::env::args().any(|arg| arg == "--bench") {
        full.to_vec()
    } else {
        full.iter().take(1).copied().collect()
    }
}

/// Record number `n`: a tmux pane of its own (8 to a window), a UUID-shaped session, one of 50
/// repos and that repo's working dir.
pub fn numbered_record(n: usize) -> Record {
    let mut record = Record::new(
        SurfaceId::new(work_pane(n)).expect("a valid surface"),
        SessionId::new(format!("4f6c2a1e-{n:012x}-4d7b-9a55-0b1c2d3e4f50"))
            .expect("a valid session"),
        Repo::new(format!("repo-{}", n % 50)).expect("a valid repo"),
    );
    record.cwd = Some(format!("/home/u/code/repo-{}", n % 50));
    record
}

/// `tmux:work:<n / 8>.<n % 8>`: the surface of record number `n`.
pub fn work_pane(n: usize) -> String {
    mux::tmux::TmuxPane {
        server: None,
        session: "work".to_string(),
        window: u32::try_from(n / 8).unwrap_or(u32::MAX),
        pane: u32::try_from(n % 8).unwrap_or(u32::MAX),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_differ_by_number_and_a_test_run_measures_the_smallest_size() {
        assert_ne!(
            numbered_record(1).surface.as_str(),
            numbered_record(2).surface.as_str()
        );
        assert_eq!(bench_sizes(&[10, 100]), [10]);
    }
}
