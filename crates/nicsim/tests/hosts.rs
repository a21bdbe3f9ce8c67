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
    let r = run_with(
        "modern/40g-dpdk.toml",
        &["source[0].frame_size=512", "host[0].blast.frame_size=512", "duration=500us", "host[0].warmup=0us"],
    );
    assert_eq!(metric(&r, "server", "interrupts"), 0.0);
    let rx = metric(&r, "server", "rx_frames");
    let (queued, sent) = (metric(&r, "server", "blast_frames"), metric(&r, "server", "tx_frames"));
    let doorbells = metric(&r, "server", "bus_register_transactions");
    // One transmit tail write per 32 frames queued (all of those sent, at least)
    // and one receive refill per 32 buffers the driver took back: all those
    // received but the ring's 512 at most.
    let most = (queued / 32.0).ceil() + (rx / 32.0).floor();
    let least = (sent / 32.0).ceil() + ((rx - 512.0) / 32.0).floor();
    assert!((least..=most).contains(&doorbells), "{doorbells} register writes for {rx} rx and {queued} queued, {sent} sent tx frames");
}

#[test]
fn a_kernel_driver_that_cannot_keep_up_drops_at_the_fifo_and_counts_every_frame() {
    let r = run_with("modern/40g-kernel.toml", &["host[0].blast.count=0", "duration=500us", "host[0].warmup=0us"]);
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
            "host[0].warmup=0ms",
            "host[0].adapter[0].interrupt=min-interval",
            "host[0].adapter[0].interrupt_interval=100us",
            "host[0].driver.mode=napi",
        ],
    );
    let interrupts = metric(&r, "server", "interrupts");
    assert!(interrupts > 0.0 && interrupts <= 2_001.0, "{interrupts} interrupts in 200 ms");
    assert!(metric(&r, "server", "answers_read") > 0.0);
}

#[test]
fn a_pci_bus_never_carries_more_than_it_can_when_an_adapter_books_its_sends_ahead() {
    // The NetWare server's adapters book each block's transmit DMA ahead of the
    // present; a receive asked for meanwhile must still wait for the bus.
    let r = run_with("papers/novell1995/server.toml", &["duration=200ms", "host[0].warmup=0ms"]);
    let peak = metric(&r, "server", "bus0_bus_peak_mbytes_per_s");
    // 32 bits at 33 MHz: 4 bytes a clock, 133 MB/s.
    assert!(peak > 100.0 && peak <= 4.0 * 33.34, "busiest microsecond {peak} MB/s");
}

#[test]
fn an_adapter_booking_its_memory_ahead_keeps_what_a_later_frame_must_wait_for() {
    // Malta's receiver coalescing 42 frames a buffer books its memory port
    // milliseconds ahead; every request must stay within the reach-back of the
    // present (a debug assertion in the calendar), and the receiver still
    // takes the sender's frames.
    let sets = [
        "host[0].send.per_chunk=42",
        "host[1].adapter[0].programmable.receive.coalesce_frames=42",
        "host[0].send.frame_size=1518",
        "host[0].send.count=20000",
    ];
    let r = run_with("papers/malta2001/host-to-host.toml", &sets);
    let mbps = metric(&r, "receiver", "rx_goodput_mbps");
    assert!(mbps > 500.0 && mbps < 1000.0, "{mbps} Mb/s");
}
