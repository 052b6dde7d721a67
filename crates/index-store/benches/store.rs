//! The store at scale: parsing an index file, the locked update (lock, parse, apply,
//! serialize, durable write with fsyncs) and the scoped one of a record (lock, the skipping
//! parse, the one entry parsed, the others copied, the same durable write) at 1k, 10k and 100k
//! entries. Throughput is in bytes of
//! index file, so the parse rate is visible. The `-launched` rows hold a launch in every entry
//! (two kept flags and a model variable, as a hook records them): the scoped write copies them
//! as they are.

use std::hint::black_box;

use camino::Utf8PathBuf;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use index_core::Record;
use index_store::{Scope, Store, StoreOptions, format};
use test_support::records::{bench_sizes, numbered_record};

/// The store refuses volatile paths: `/var/tmp/crash-resume-benches-<checkout>` when the build dir is one.
fn durable_base() -> std::path::PathBuf {
    let base =
        test_support::sandbox::durable_or_var_tmp(env!("CARGO_TARGET_TMPDIR").as_ref(), "benches");
    std::fs::create_dir_all(&base).unwrap();
    base
}

fn sizes() -> Vec<usize> {
    bench_sizes(&[1_000, 10_000, 100_000])
}

fn record_for(n: usize) -> Record {
    let mut record = numbered_record(n);
    record.config_dir = Some("/home/u/.claude".to_string());
    record
}

/// How a size's records are made.
type RecordFor = fn(usize) -> Record;

/// [`record_for`] with a launch, as the hook of a Claude Code started with flags records it.
fn launched_record_for(n: usize) -> Record {
    let mut record = record_for(n);
    record.launch = Some(index_core::Launch {
        args: ["--model", "opus", "--permission-mode", "acceptEdits"]
            .map(String::from)
            .to_vec(),
        env: [("ANTHROPIC_MODEL".to_string(), "claude-opus-4".to_string())].into(),
        wrapper: None,
    });
    record
}

fn bench(c: &mut Criterion) {
    let base = durable_base();
    let dir = tempfile::Builder::new()
        .prefix("store-bench-")
        .tempdir_in(base)
        .unwrap();
    let kinds: [(&str, RecordFor); 2] = [("", record_for), ("-launched", launched_record_for)];
    for (size, (kind, record_for)) in sizes()
        .into_iter()
        .flat_map(|size| kinds.map(|kind| (size, kind)))
    {
        let path = Utf8PathBuf::from_path_buf(dir.path().join(format!("index-{size}{kind}.json")))
            .unwrap();
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
        group.bench_with_input(
            BenchmarkId::new(format!("parse{kind}"), size),
            &bytes,
            |b, bytes| b.iter(|| black_box(format::parse(black_box(bytes)).unwrap())),
        );
        group.bench_with_input(
            BenchmarkId::new(format!("load{kind}"), size),
            &store,
            |b, store| b.iter(|| black_box(store.load().unwrap())),
        );
        group.bench_with_input(
            BenchmarkId::new(format!("serialize{kind}"), size),
            &bytes,
            |b, bytes| {
                let document = format::parse(bytes).unwrap();
                b.iter(|| black_box(format::serialize(black_box(&document))))
            },
        );
        group.sample_size(20);
        group.bench_with_input(
            BenchmarkId::new(format!("locked-update{kind}"), size),
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
        group.bench_with_input(
            BenchmarkId::new(format!("scoped-update{kind}"), size),
            &store,
            |b, store| {
                let mut now = 1_900_000_000_000u64;
                let record = record_for(size + 2);
                let surface = record.surface.as_str().to_string();
                let session = record.session.as_str().to_string();
                let scope = Scope {
                    surfaces: &[surface.as_str()],
                    sessions: &[session.as_str()],
                };
                b.iter(|| {
                    now += 1;
                    store
                        .update_entries(scope, |index| index.record(record.clone(), now))
                        .unwrap()
                })
            },
        );
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
