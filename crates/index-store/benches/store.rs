//! The store at scale: parsing an index file, and the locked update (lock, parse, apply,
//! serialize, durable write with fsyncs) at 1k, 10k and 100k entries. Throughput is in bytes of
//! index file, so the parse rate is visible.

use std::hint::black_box;

use camino::Utf8PathBuf;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions, format};

fn sizes() -> Vec<usize> {
    if std::env::args().any(|arg| arg == "--bench") {
        vec![1_000, 10_000, 100_000]
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
    record.config_dir = Some("/home/u/.claude".to_string());
    record
}

fn bench(c: &mut Criterion) {
    // The store refuses volatile paths: fall back to /var/tmp when the build dir is one.
    let preferred = Utf8PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let base = match index_store::durability(&preferred) {
        index_store::Durability::Durable => preferred,
        index_store::Durability::Volatile(_) => Utf8PathBuf::from("/var/tmp"),
    };
    let dir = tempfile::Builder::new()
        .prefix("store-bench-")
        .tempdir_in(base)
        .unwrap();
    for size in sizes() {
        let path =
            Utf8PathBuf::from_path_buf(dir.path().join(format!("index-{size}.json"))).unwrap();
        let store = Store::open(&path, StoreOptions::default()).unwrap();
        store
            .update(|index| {
                for n in 0..size {
                    index.record(record_for(n), 1_700_000_000_000 + n as u64);
                }
            })
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();

        let mut group = c.benchmark_group("index-store");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("parse", size), &bytes, |b, bytes| {
            b.iter(|| black_box(format::parse(black_box(bytes)).unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("load", size), &store, |b, store| {
            b.iter(|| black_box(store.load().unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("serialize", size), &bytes, |b, bytes| {
            let document = format::parse(bytes).unwrap();
            b.iter(|| black_box(format::serialize(black_box(&document))))
        });
        group.sample_size(20);
        group.bench_with_input(
            BenchmarkId::new("locked-update", size),
            &store,
            |b, store| {
                let mut now = 1_800_000_000_000u64;
                b.iter(|| {
                    now += 1;
                    store
                        .update(|index| index.record(record_for(size + 1), now))
                        .unwrap()
                })
            },
        );
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
