//! A TTCP transfer's figures at one host, whichever TCP carries it (the
//! host's stack or an offload engine): throughput of the data frames on the
//! wire, segment sizes and ACKs, and what the transfer cost the host's
//! processors and its adapter's, per megabyte and per packet.

use crate::observe::Report;
use crate::stack::tally::{classify_on, Class, Tally};
use crate::time::{Duration, Time};
use crate::wire::ethernet::wire_bytes;

/// Payload between the marks a tally keeps of its progress.
const MARK_EVERY: u64 = 1 << 20;

/// Where a tally stood when its payload passed a mark.
#[derive(Clone, Copy, Debug)]
struct Mark {
    bytes: u64,
    payload: u64,
    at: Time,
}

/// Data frames one way: their wire bytes and TCP payload, the first and last.
#[derive(Debug, Default)]
pub struct WireTally {
    /// Wire bytes after the first frame: N frames span N - 1 gaps between starts.
    pub bytes: u64,
    pub payload: u64,
    pub first: Option<Time>,
    pub last: Option<Time>,
    /// One mark a MiB of payload: how the rate held once the transfer was under way.
    marks: Vec<Mark>,
}

impl WireTally {
    /// A frame that left (`outbound`) or arrived at `at`; counted if it carries
    /// TCP data of a connection on `port` (of any, without one).
    fn add(&mut self, frame: &[u8], at: Time, port: Option<u16>, outbound: bool) {
        let Class::Data { len, .. } = classify_on(frame, port, outbound) else { return };
        if self.first.is_some() {
            self.bytes += wire_bytes(frame.len()) as u64;
            self.payload += len as u64;
            if self.payload >= MARK_EVERY * (self.marks.len() as u64 + 1) {
                self.marks.push(Mark { bytes: self.bytes, payload: self.payload, at });
            }
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

    /// Wire bits per second over the transfer's second half (from the first
    /// mark past half its payload to the last frame): what it sustained once
    /// slow start and its waits were behind it. The whole span's rate where
    /// it carried under 2 MiB.
    fn sustained_bps(&self) -> f64 {
        let half = self.payload / 2;
        match (self.marks.iter().find(|m| m.payload >= half), self.last) {
            (Some(m), Some(b)) if b > m.at && self.marks.len() >= 2 => (self.bytes - m.bytes) as f64 * 8.0 / b.since(m.at).as_secs_f64(),
            _ => self.rate_bps(self.bytes),
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
        .real("tcp_sustained_line_fraction", if t.line_rate_bps == 0 { 0.0 } else { wire.sustained_bps() / t.line_rate_bps as f64 })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::endpoint::{tcp_frame, Addr};

    #[test]
    fn the_sustained_rate_leaves_out_a_slow_start_the_whole_span_counts() {
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 1 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 2 };
        let mut tally = WireTally::default();
        let mut at = Time::ZERO;
        let mut seq = 1;
        // 4 MiB in 1,000-byte segments: the first 100 a millisecond apart, then one each 10 µs.
        for i in 0..4_195 {
            let f = tcp_frame(a, b, 1, seq, 1, 1000, false, &[7; 1000]);
            tally.add(&f.bytes, at, None, true);
            seq += 1000;
            at += Duration::from_us(if i < 100 { 1000 } else { 10 });
        }
        let fast = wire_bytes(tcp_frame(a, b, 1, 1, 1, 1000, false, &[7; 1000]).bytes.len()) as f64 * 8.0 / 10e-6;
        let sustained = tally.sustained_bps();
        assert!((sustained / fast - 1.0).abs() < 0.01, "{sustained} against {fast}");
        assert!(tally.rate_bps(tally.bytes) < 0.5 * fast, "the whole span's rate has the slow start in it");
    }

    #[test]
    fn a_short_transfer_is_sustained_over_its_whole_span() {
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 1 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 2 };
        let mut tally = WireTally::default();
        for i in 0..100u32 {
            let f = tcp_frame(a, b, 1, 1 + 1000 * i, 1, 1000, false, &[7; 1000]);
            tally.add(&f.bytes, Time::ZERO + Duration::from_us(u64::from(i) * (1 + u64::from(i))), None, true);
        }
        assert_eq!(tally.sustained_bps(), tally.rate_bps(tally.bytes));
    }
}
