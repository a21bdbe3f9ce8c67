//! Modelled hosts in whole scenarios: what the driver policies do on the bus.

use std::path::Path;

use nicsim::{run, RunOptions, RunResult};

fn run_with(name: &str, sets: &[&str]) -> RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name);
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let plan = nicsim::scenario::load_with(&path, &sets).unwrap_or_else(|e| panic!("{name}: {e}"));
    run(&plan, &RunOptions::default()).unwrap()
}

fn metric(r: &RunResult, component: &str, key: &str) -> f64 {
    r.component(component).unwrap_or_else(|| panic!("no {component}")).metrics.get(key).unwrap_or_else(|| panic!("no {key}"))
}

#[test]
fn dpdk_style_polling_takes_no_interrupts_and_rings_the_doorbell_once_per_32() {
    let r = run_with("modern/40g-dpdk.toml", &["source[0].frame_size=512", "host[0].blast.frame_size=512", "duration=500us"]);
    assert_eq!(metric(&r, "server", "interrupts"), 0.0);
    let rx = metric(&r, "server", "rx_frames");
    let tx = metric(&r, "server", "tx_frames");
    let doorbells = metric(&r, "server", "bus_register_transactions");
    // One transmit tail write per 32 frames and one receive refill per 32 buffers.
    let expected = (tx / 32.0).ceil() + (rx / 32.0).floor();
    assert!((doorbells - expected).abs() <= 2.0, "{doorbells} register writes for {rx} rx and {tx} tx frames");
}

#[test]
fn a_kernel_driver_that_cannot_keep_up_drops_at_the_fifo_and_counts_every_frame() {
    let r = run_with("modern/40g-kernel.toml", &["host[0].blast.count=0", "duration=500us"]);
    let offered = metric(&r, "tester-tx", "sent");
    let taken = metric(&r, "server", "rx_frames");
    let dropped = metric(&r, "server", "rx_fifo_overruns") + metric(&r, "switch", "drops");
    assert!(dropped > taken, "64-byte frames at 40 Gb/s far exceed what 1,000 cycles a frame can take");
    // Every frame offered was taken, dropped and counted, still in the FIFO, or on its way.
    let unaccounted = offered - taken - dropped - metric(&r, "server", "rx_in_fifo_at_end");
    assert!((0.0..=16.0).contains(&unaccounted), "{unaccounted} frames unaccounted for");
    // NAPI under overload keeps polling: after the first interrupt, few or none.
    assert!(metric(&r, "server", "interrupts") <= 3.0);
}

#[test]
fn interrupt_moderation_bounds_the_interrupt_rate() {
    // 1 Gb/s of full frames is 81,274 frames/s; a 100 us minimum interval allows 10,000/s.
    let r = run_with(
        "papers/ibm2001/server.toml",
        &[
            "duration=200ms",
            "host[0].adapter[0].interrupt=min-interval",
            "host[0].adapter[0].interrupt_interval=100us",
            "host[0].driver.mode=napi",
        ],
    );
    let interrupts = metric(&r, "server", "interrupts");
    assert!(interrupts > 0.0 && interrupts <= 2_001.0, "{interrupts} interrupts in 200 ms");
    assert!(metric(&r, "server", "answers_read") > 0.0);
}
