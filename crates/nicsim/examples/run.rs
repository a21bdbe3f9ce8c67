//! Run a scenario from Rust, without the Python package: `cargo run --release
//! --example run -- FILE [--trace OUT.json] [--pcap OUT.pcap]`; prints the result as JSON and the
//! wall time on stderr.

use std::path::PathBuf;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: run FILE [--trace OUT.json]");
        std::process::exit(2);
    };
    let trace = args.iter().position(|a| a == "--trace").and_then(|i| args.get(i + 1)).map(PathBuf::from);
    let pcap = args.iter().position(|a| a == "--pcap").and_then(|i| args.get(i + 1)).map(PathBuf::from);
    let plan = match nicsim::scenario::load(std::path::Path::new(path)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let started = std::time::Instant::now();
    let result = nicsim::run(&plan, &nicsim::RunOptions { trace, pcap, ..Default::default() });
    let wall = started.elapsed().as_secs_f64();
    match result {
        Ok(r) => {
            println!("{}", serde_json::to_string_pretty(&r).expect("results serialise"));
            eprintln!("{} events in {wall:.3} s ({:.2} M events/s)", r.events, r.events as f64 / wall / 1e6);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
