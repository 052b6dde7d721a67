//! Rendering a resume command: the built-in agent default and the golems profile.

use std::hint::black_box;

use camino::Utf8PathBuf;
use criterion::{Criterion, criterion_group, criterion_main};
use launcher_map::{Registry, RenderContext, Target};

fn bench(c: &mut Criterion) {
    let cx = RenderContext {
        home: Some(Utf8PathBuf::from("/home/u")),
    };
    let target = Target {
        agent: Some("claude"),
        session: "4f6c2a1e-0000-4d7b-9a55-0b1c2d3e4f50",
        repo: Some("orchestrator"),
        cwd: Some("~/code/my project"),
        config_dir: Some("~/.claude-work"),
        ..Target::default()
    };
    let builtin = Registry::builtin();
    c.bench_function("launcher-map/render default", |b| {
        b.iter(|| black_box(builtin.render(black_box(&target), &cx).unwrap()))
    });
    let mut golems = Registry::builtin();
    golems.select_profile("golems").unwrap();
    c.bench_function("launcher-map/render golems", |b| {
        b.iter(|| black_box(golems.render(black_box(&target), &cx).unwrap()))
    });
    c.bench_function("launcher-map/builtin registry", |b| {
        b.iter(|| black_box(Registry::builtin()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
