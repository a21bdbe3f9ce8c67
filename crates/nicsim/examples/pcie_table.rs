//! Prints DMA read and write bandwidth against transfer size from the PCIe TLP
//! accounting, as a Markdown table:
//!
//!     cargo run --example pcie_table -- [GEN] [LANES] [MPS] [MRRS]

use nicsim::bus::pcie::{bandwidth, dma_read, dma_write, CompletionSplit, PcieConfig};

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("numbers: GEN LANES MPS MRRS")).collect();
    let get = |i: usize, d: u64| args.get(i).copied().unwrap_or(d);
    let cfg = PcieConfig {
        generation: get(0, 3) as u8,
        lanes: get(1, 8) as u8,
        mps: get(2, 256),
        mrrs: get(3, 512),
        rcb: 64,
        completion_split: CompletionSplit::Mps,
        tlps_per_ack: 4,
        tlps_per_fc_update: 4,
    };
    if let Err(e) = cfg.check() {
        eprintln!("pcie_table: {e}");
        std::process::exit(2);
    }
    let link = cfg.bytes_per_second() * 8e-9;
    println!("Gen{} x{}, MPS {}, MRRS {}: {link:.2} Gb/s per direction after encoding\n", cfg.generation, cfg.lanes, cfg.mps, cfg.mrrs);
    println!("| transfer (B) | DMA write (Gb/s) | DMA read (Gb/s) |");
    println!("|---|---|---|");
    for size in [64u64, 128, 256, 512, 1024, 1518, 2048, 4096] {
        let w = bandwidth(&cfg, dma_write(&cfg, 0, size), size) * 1e-9;
        let r = bandwidth(&cfg, dma_read(&cfg, 0, size), size) * 1e-9;
        println!("| {size} | {w:.2} | {r:.2} |");
    }
}
