//! Whole scenarios, run as a user runs them.

use std::path::{Path, PathBuf};

use nicsim::{run, RunOptions, RunResult};

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name)
}

fn run_file(name: &str) -> RunResult {
    let plan = nicsim::scenario::load(&scenario(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    run(&plan, &RunOptions::default()).unwrap()
}

fn metric(r: &RunResult, component: &str, key: &str) -> f64 {
    r.component(component).unwrap_or_else(|| panic!("no {component}")).metrics.get(key).unwrap_or_else(|| panic!("no {key}"))
}

#[test]
fn wire_efficiency_matches_the_theoretical_table() {
    let r = run_file("wire-efficiency.toml");
    // The theoretical maximum table (Wadge, Malta 2001): true frame size -> maximum payload rate at 1 Gb/s.
    for (rx, expected) in [("rx-792", 952.0202), ("rx-1048", 963.7405), ("rx-1536", 975.2604), ("rx-9096", 995.8223)] {
        let got = metric(&r, rx, "goodput_mbps");
        assert!((got - expected).abs() < 0.01, "{rx}: {got} Mb/s, table says {expected}");
        assert_eq!(metric(&r, rx, "lost"), 0.0);
        assert_eq!(metric(&r, rx, "bad_checksums"), 0.0);
    }
    // A bulk transfer between two ideal hosts, read by the receiving application.
    let tcp = metric(&r, "tcp-receiver", "app_goodput_mbps");
    assert!((tcp - 949.28).abs() < 0.05, "TCP ceiling {tcp}");
    assert_eq!(metric(&r, "tcp-sender", "tcp_retransmits"), 0.0);
    let pps = metric(&r, "rx-64", "frame_rate_pps");
    assert!((pps / 1e6 - 14.88).abs() < 0.005, "minimum frames at 10 Gb/s: {pps}");
    assert_eq!(metric(&r, "rx-64", "frames"), 100_000.0);
}

#[test]
fn an_overloaded_switch_port_drops_at_the_tail_and_counts_it() {
    let r = run_file("switched-udp.toml");
    let sent = metric(&r, "alice", "sent") + metric(&r, "bob", "sent");
    let got = metric(&r, "server", "frames");
    let dropped = metric(&r, "sw", "drops");
    assert!(dropped > 0.0, "1.2 Gb/s into a 1 Gb/s port must drop");
    assert_eq!(metric(&r, "server", "bad_checksums"), 0.0);
    assert_eq!(metric(&r, "server", "unparsed"), 0.0);
    // Every frame sent is received, dropped, or still in flight at the end (a few).
    let in_flight = sent - got - dropped;
    assert!((0.0..=70.0).contains(&in_flight), "unaccounted frames: {in_flight}");
    // The sink sees the drops as gaps in the stamped sequence numbers.
    assert!(metric(&r, "server", "lost") >= dropped - 70.0);
    assert!(metric(&r, "sw", "port2_max_queue") == 64.0);
    let util = metric(&r, "sw-server", "a_to_b_utilization");
    assert!(util > 0.99, "the congested port is busy all the time: {util}");
}

#[test]
fn every_shipped_scenario_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in walk(&dir) {
        let plan = nicsim::scenario::load(&entry).unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
        if plan.parts.iter().any(|p| matches!(p.plan, nicsim::scenario::PartPlan::Tap(_))) {
            continue; // bridged to Linux: run inside a network namespace by tests/test_bridge.py
        }
        run(&plan, &RunOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
        n += 1;
    }
    assert!(n >= 2);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "toml") && !p.ends_with("study.toml") {
            // study.toml files describe sweeps of these scenarios (nicsim reproduce).
            out.push(p);
        }
    }
    out
}

#[test]
fn the_malta_dma_calibration_point_is_reproduced() {
    // Wadge, Malta 2001: adapter to host, 1512-byte transfers, 665.6 Mb/s.
    let r = run_file("papers/malta2001/dma.toml");
    let got = metric(&r, "host", "dma_mbps");
    assert!((got / 665.6 - 1.0).abs() < 0.001, "{got} Mb/s");
}

#[test]
fn direct_segmentation_writes_no_payload_of_a_large_send_into_adapter_memory() {
    let r = run_file("papers/patent-direct-tso/tso.toml");
    // Only the frames the stack sent whole (its SYN, the ACK of the SYN-ACK, its
    // FIN, and any send of one segment or less) pass through adapter memory.
    let whole = metric(&r, "server", "adapter_memory_payload_bytes");
    assert!(whole < 2000.0, "{whole} bytes");
    let bytes = 64.0 * 1024.0 * 1024.0;
    assert_eq!(metric(&r, "receiver", "ttcp_bytes"), bytes);
    assert_eq!(metric(&r, "receiver", "transfer_complete"), 1.0);
    assert_eq!(metric(&r, "server", "tcp_retransmits"), 0.0);
    assert!(metric(&r, "server", "segmented_sends") > 1000.0, "the stack's large sends, cut by the adapter");
}
