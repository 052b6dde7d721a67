//! Index operations at scale: lookup, resumable_for, record and touch at 1k to 1M entries.
//!
//! `cargo bench -p index-core` measures; `cargo test --benches` runs each once (small sizes).

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use index_core::Index;
use test_support::records::{bench_sizes, numbered_record};

/// Full sizes under `cargo bench`; the smallest when run as a test.
fn sizes() -> Vec<usize> {
    bench_sizes(&[1_000, 10_000, 100_000, 1_000_000])
}

fn index_of(size: usize) -> Index {
    let mut index = Index::default();
    for n in 0..size {
        index.record(numbered_record(n), 1_700_000_000_000 + n as u64);
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
                || numbered_record(size + 1),
                |record| black_box(index.record(record, 1_700_000_900_000)),
                BatchSize::SmallInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
