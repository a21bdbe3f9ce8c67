//! A TTCP transfer's figures at one host, whichever TCP carries it (the
//! host's stack or an offload engine): throughput of the data frames on the
//! wire, segment sizes and ACKs, and what the transfer cost the host's
//! processors and its adapter's, per megabyte and per packet.

use crate::observe::Report;
use crate::stack::tally::{classify_on, Class, Tally};
use crate::time::{Duration, Time};
use crate::wire::ethernet::wire_bytes;

/// Data frames one way: their wire bytes and TCP payload, the first and last.
#[derive(Debug, Default)]
pub struct WireTally {
    /// Wire bytes after the first frame: N frames span N - 1 gaps between starts.
    pub bytes: u64,
    pub payload: u64,
    pub first: Option<Time>,
    pub last: Option<Time>,
}

impl WireTally {
    /// A frame that left (`outbound`) or arrived at `at`; counted if it carries
    /// TCP data of a connection on `port` (of any, without one).
    fn add(&mut self, frame: &[u8], at: Time, port: Option<u16>, outbound: bool) {
        let Class::Data { len, .. } = classify_on(frame, port, outbound) else { return };
        if self.first.is_some() {
            self.bytes += wire_bytes(frame.len()) as u64;
            self.payload += len as u64;
        }
        self.first.get_or_insert(at);
        self.last = Some(at);
    }

    /// Bits per second of `bytes` over the span from the first frame to the last.
    fn rate_bps(&self, bytes: u64) -> f64 {
        match (self.first, self.last) {
            (Some(a), Some(b)) if b > a => bytes as f64 * 8.0 / b.since(a).as_secs_f64(),
            _ => 0.0,
        }
    }
}

/// The data frames of a host's transfer, each way: those of the connections
/// on its `port` (a TTCP end beside other sessions), or all.
#[derive(Debug, Default)]
pub struct Wires {
    pub out: WireTally,
    pub inbound: WireTally,
    pub port: Option<u16>,
}

impl Wires {
    pub fn sent(&mut self, frame: &[u8], at: Time) {
        self.out.add(frame, at, self.port, true);
    }
    pub fn received(&mut self, frame: &[u8], at: Time) {
        self.inbound.add(frame, at, self.port, false);
    }
}

/// What a transfer's report is made of.
pub struct Transfer<'a> {
    pub sender: bool,
    pub tally: &'a Tally,
    /// Bytes through the application.
    pub bytes: u64,
    /// Host processor time (all processors, idle-loop polls left out) and interrupts.
    pub host_busy: Duration,
    pub interrupts: u64,
    /// Firmware cycles of an offload engine, and send calls made.
    pub adapter_cycles: Option<u64>,
    pub messages: u64,
    /// The rate of the link the transfer crosses.
    pub line_rate_bps: u64,
}

fn per(x: f64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        x / n as f64
    }
}

pub fn report(r: &mut Report, t: &Transfer, wires: &Wires, end: Time) {
    let tally = t.tally;
    // The data direction, seen from this host.
    let (wire, data_packets, payload, acks) = if t.sender {
        (&wires.out, tally.data_out, tally.payload_out, tally.acks_in)
    } else {
        (&wires.inbound, tally.data_in, tally.payload_in, tally.acks_out)
    };
    let wire_bps = wire.rate_bps(wire.bytes);
    r.real("tcp_goodput_mbps", wire.rate_bps(wire.payload) / 1e6)
        .real("tcp_wire_mbps", wire_bps / 1e6)
        .real("tcp_line_fraction", if t.line_rate_bps == 0 { 0.0 } else { wire_bps / t.line_rate_bps as f64 })
        .count("data_packets", data_packets)
        .real("mean_segment_bytes", per(payload as f64, data_packets))
        .real("acks_per_data_packet", per(acks as f64, data_packets));
    let mb = t.bytes as f64 / 1e6;
    let per_mb = |x: f64| if mb == 0.0 { 0.0 } else { x / mb };
    // Busy over the transfer: from the first data frame to the last.
    let span = match (wire.first, wire.last) {
        (Some(a), Some(b)) if b > a => b.since(a).as_secs_f64(),
        _ => end.as_secs_f64(),
    };
    let busy = t.host_busy.as_secs_f64();
    r.real("host_cpu_seconds", busy)
        .real("host_cpu_us_per_mb", per_mb(busy * 1e6))
        .real("host_cpu_share_of_transfer", if span == 0.0 { 0.0 } else { (busy / span).min(1.0) })
        .real("interrupts_per_mb", per_mb(t.interrupts as f64));
    if let Some(cycles) = t.adapter_cycles {
        r.real("adapter_cycles_per_packet", per(cycles as f64, data_packets))
            .real("adapter_cycles_per_message", per(cycles as f64, t.messages));
    }
}
