//! A TCP host's results: the transfer (bytes, digest, throughput on the wire and
//! as a fraction of line rate), host CPU per megabyte, interrupts per megabyte,
//! adapter cycles per packet and per message, ACKs per data packet, and the bus.

use crate::observe::Report;
use crate::time::Time;
use crate::toe::config::{Design, Role};
use crate::toe::node::{TcpHost, WireTally};

fn rate_bps(bytes: u64, w: &WireTally) -> f64 {
    match (w.first, w.last) {
        (Some(a), Some(b)) if b > a => bytes as f64 * 8.0 / b.since(a).as_secs_f64(),
        _ => 0.0,
    }
}

fn per(x: f64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        x / n as f64
    }
}

impl TcpHost {
    pub(super) fn report_into(&self, end: Time) -> Report {
        let mut r = Report::default();
        let t = &self.stack.tally;
        let sender = self.cfg.ttcp.role == Role::Send;
        let bytes = self.app.bytes();
        let mb = bytes as f64 / 1e6;
        let per_mb = |x: f64| if mb == 0.0 { 0.0 } else { x / mb };
        // The data direction, seen from this host.
        let (wire, data_packets, payload, acks) = if sender {
            (&self.wire_out, t.data_out, t.payload_out, t.acks_in)
        } else {
            (&self.wire_in, t.data_in, t.payload_in, t.acks_out)
        };
        let wire_bps = rate_bps(wire.bytes, wire);
        let goodput_bps = rate_bps(wire.payload, wire);
        r.count("design", self.cfg.design as u64)
            .count("ttcp_messages", self.app.messages)
            .count("ttcp_bytes", bytes)
            .count("ttcp_digest48", self.app.stream.digest48())
            .count(
                "transfer_complete",
                u64::from(if sender {
                    self.app.all_offered() && self.stack.send_queue(self.sock) == 0
                } else {
                    self.app.stream.done.is_some()
                }),
            )
            .real("goodput_mbps", goodput_bps / 1e6)
            .real("wire_mbps", wire_bps / 1e6)
            .real("line_fraction", wire_bps / self.cfg.line_rate_bps as f64)
            .count("data_packets", data_packets)
            .real("mean_segment_bytes", per(payload as f64, data_packets))
            .real("acks_per_data_packet", per(acks as f64, data_packets));
        r.count("data_out", t.data_out).count("data_in", t.data_in).count("acks_out", t.acks_out).count("acks_in", t.acks_in);
        r.count("other_out", t.other_out).count("other_in", t.other_in).count("syns", t.syns).count("fins", t.fins);
        r.count("retransmits", t.retransmits);
        let host_busy = self.host.busy_time.as_secs_f64();
        // Utilization over the transfer: from the first data frame to the last.
        let span = match (wire.first, wire.last) {
            (Some(a), Some(b)) if b > a => b.since(a).as_secs_f64(),
            _ => end.as_secs_f64(),
        };
        let busy_share = |busy: f64| if span == 0.0 { 0.0 } else { (busy / span).min(1.0) };
        r.real("host_cpu_seconds", host_busy)
            .real("host_cpu_utilization", busy_share(host_busy))
            .real("host_cpu_us_per_mb", per_mb(host_busy * 1e6))
            .count("interrupts", self.interrupts)
            .real("interrupts_per_mb", per_mb(self.interrupts as f64));
        if self.cfg.design == Design::FullOffload {
            let cycles = self.adapter.cycles as f64;
            r.count("adapter_cycles", self.adapter.cycles)
                .real("adapter_utilization", busy_share(self.adapter.busy_time.as_secs_f64()))
                .real("adapter_cycles_per_packet", per(cycles, data_packets))
                .real("adapter_cycles_per_message", per(cycles, self.app.messages))
                .count("adapter_runs", self.adapter.runs)
                .count("host_messages", self.messages)
                .count("completions", self.completions)
                .count("deliveries", self.deliveries);
        }
        if self.cfg.design == Design::PartialOffload {
            r.count("fast_path_segments", self.fast_segments).count("fast_path_batches", self.fast_batches);
        }
        self.bus.report(&mut r, end);
        r
    }
}
