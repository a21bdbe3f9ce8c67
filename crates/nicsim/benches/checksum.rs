//! Criterion benchmark: Internet checksum throughput over buffers from a minimum
//! frame to a 64 KB segment, against memory bandwidth.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn checksum(c: &mut Criterion) {
    let mut g = c.benchmark_group("internet_checksum");
    for len in [46usize, 1500, 9000, 65536] {
        let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_with_input(BenchmarkId::from_parameter(len), &data, |b, d| {
            b.iter(|| nicsim::wire::checksum::checksum(std::hint::black_box(d)))
        });
    }
    g.finish();
}

criterion_group!(benches, checksum);
criterion_main!(benches);
