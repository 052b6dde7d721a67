//! Index operations at scale: lookup, resumable_for, record and touch at 1k to 1M entries; and
//! the hook's payload read, an 8 MiB payload arriving in pipe-sized chunks.
//!
//! `cargo bench -p index-core` measures; `cargo test --benches` runs each once (small sizes).

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use index_core::Index;
use index_core::capture::{parse_hook_payload, read_hook_payload};
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
        .map(|i| test_support::records::work_pane(i * 7919 % size))
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

/// Hands out `bytes` at most a pipe's capacity (64 KiB) per read, as a hook's stdin does.
struct Pipe<'a> {
    bytes: &'a [u8],
}

impl std::io::Read for Pipe<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let len = buffer.len().min(self.bytes.len()).min(64 * 1024);
        buffer[..len].copy_from_slice(&self.bytes[..len]);
        self.bytes = &self.bytes[len..];
        Ok(len)
    }
}

/// A Claude Code `UserPromptSubmit` payload of about `size` bytes, most of it the prompt.
fn payload_of(size: usize) -> Vec<u8> {
    let prompt = "a prompt the user typed, long ".repeat(size / 30 + 1);
    serde_json::json!({
        "session_id": "00000001-7e57-4c1a-9d2b-00c0ffee0001",
        "transcript_path": "/home/u/.claude/projects/-home-u-proj/00000001.jsonl",
        "cwd": "/home/u/proj",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
    .to_string()
    .into_bytes()
}

fn bench_payload(c: &mut Criterion) {
    let mut group = c.benchmark_group("hook-payload");
    group.sample_size(10);
    let size = 8 << 20;
    let payload = payload_of(size);
    group.throughput(Throughput::Bytes(payload.len() as u64));
    group.bench_with_input(BenchmarkId::new("read", size), &payload, |b, payload| {
        b.iter(|| {
            let value = read_hook_payload(&mut Pipe { bytes: payload })
                .expect("valid JSON")
                .expect("a value");
            black_box(parse_hook_payload(&value).expect("a payload"))
        })
    });
    group.finish();
}

criterion_group!(benches, bench, bench_payload);
criterion_main!(benches);
