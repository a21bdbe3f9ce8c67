//! Criterion benchmark: firmware segmentation with checksums on real bytes, for
//! 64 KB sends at MSS 1460. "frames" builds every whole frame (headers, payload
//! copy, checksums), as the timed model does when the MAC gathers; "headers"
//! forms headers and sums the payload in place, the firmware's part alone.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nicsim::nic::firmware::tso::{plan, segment, Template};
use nicsim::wire::checksum::accumulate;
use nicsim::wire::{build, Headers, TcpFields, L3, L4};

fn template() -> Template {
    let tcp = TcpFields { src_port: 5001, dst_port: 80, seq: 1, ack: Some(1), window: 65535, psh: true, fin: false };
    let h = Headers {
        dst_mac: [2, 0, 0, 0, 0, 2],
        src_mac: [2, 0, 0, 0, 0, 1],
        vlan: None,
        l3: L3::Ipv4 { src: [198, 18, 0, 1], dst: [198, 18, 0, 2], ttl: 64, id: 1, l4: L4::Tcp(tcp) },
    };
    Template::parse(&build(&h, &[]).expect("builds")).expect("parses")
}

fn segmentation(c: &mut Criterion) {
    let t = template();
    let data: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
    let mut g = c.benchmark_group("segmentation_64k_mss1460");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("frames", |b| b.iter(|| segment(&t, std::hint::black_box(&data), 1460)));
    g.bench_function("headers", |b| {
        let mut out = [0u8; 54];
        b.iter(|| {
            for p in plan(data.len(), 1460) {
                let sum = accumulate(0, &data[p.offset..p.offset + p.len]);
                t.write_header(p, sum, &mut out);
            }
            std::hint::black_box(out[50])
        })
    });
    g.finish();
}

criterion_group!(benches, segmentation);
criterion_main!(benches);
