//! Criterion benchmark: 64-byte frames flooding one 10 Gb/s link into a sink.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const FRAMES: u64 = 1_000_000;

fn flood(c: &mut Criterion) {
    let mut g = c.benchmark_group("link_flood");
    g.sample_size(10);
    g.throughput(Throughput::Elements(FRAMES));
    g.bench_function("64B_10Gbps_1M_frames", |b| b.iter(|| nicsim::bench::flood(FRAMES, 64, "10Gbps").unwrap()));
    g.finish();
}

criterion_group!(benches, flood);
criterion_main!(benches);
