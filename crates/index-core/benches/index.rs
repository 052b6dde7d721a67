//! Index operations at scale: lookup, resumable_for, record and touch at 1k to 1M entries.
//!
//! `cargo bench -p index-core` measures; `cargo test --benches` runs each once (small sizes).

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use index_core::{Index, Record, Repo, SessionId, SurfaceId};

/// Full sizes under `cargo bench`; small ones when run as a test.
fn sizes() -> Vec<usize> {
    if std::env::args().any(|arg| arg == "--bench") {
        vec![1_000, 10_000, 100_000, 1_000_000]
    } else {
        vec![1_000]
    }
}

fn record_for(n: usize) -> Record {
    let mut record = Record::new(
        SurfaceId::new(format!("tmux:work:{}.{}", n / 8, n % 8)).unwrap(),
        SessionId::new(format!("4f6c2a1e-{n:012x}-4d7b-9a55-0b1c2d3e4f50")).unwrap(),
        Repo::new(format!("repo-{}", n % 50)).unwrap(),
    );
    record.cwd = Some(format!("/home/u/code/repo-{}", n % 50));
    record
}

fn index_of(size: usize) -> Index {
    let mut index = Index::default();
    for n in 0..size {
        index.record(record_for(n), 1_700_000_000_000 + n as u64);
    }
    index
}

/// Surfaces to look up, spread over the index so lookups are not all one cached key.
fn probes(size: usize) -> Vec<String> {
    (0..1024)
        .map(|i| {
            format!(
                "tmux:work:{}.{}",
                (i * 7919 % size) / 8,
                (i * 7919 % size) % 8
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    for size in sizes() {
        let index = index_of(size);
        let probes = probes(size);
        let mut group = c.benchmark_group("index-core");
        group.bench_with_input(BenchmarkId::new("lookup", size), &size, |b, _| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % probes.len();
                black_box(index.lookup(black_box(&probes[i])))
            })
        });
        group.bench_with_input(BenchmarkId::new("resumable_for", size), &size, |b, _| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % probes.len();
                black_box(index.resumable_for(
                    black_box(&probes[i]),
                    Some(3_600_000),
                    1_700_000_500_000,
                ))
            })
        });
        group.bench_with_input(BenchmarkId::new("touch", size), &size, |b, _| {
            let mut index = index.clone();
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % probes.len();
                black_box(index.touch(black_box(&probes[i]), 1_700_000_900_000))
            })
        });
        group.bench_with_input(BenchmarkId::new("record", size), &size, |b, _| {
            let mut index = index.clone();
            b.iter_batched(
                || record_for(size + 1),
                |record| black_box(index.record(record, 1_700_000_900_000)),
                BatchSize::SmallInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
