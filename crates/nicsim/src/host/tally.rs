//! What the host counts of its own work for its results: polls, preemptions,
//! GRO's merges, frames that waited or went unclaimed, the handler's runs and
//! where frames' time went. The parts that do the work add to it; `report`
//! writes it.

use crate::host::handler_runs::HandlerRuns;
use crate::host::latency::Latency;
use crate::observe::Report;
use crate::xdp::Verdicts;

#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Polls of the receive rings (a NAPI poll, a poll loop's pass).
    pub polls: u64,
    /// Steps an interrupt suspended.
    pub preemptions: u64,
    /// GRO: protocol passes that took several segments, and the segments in them.
    pub gro_batches: u64,
    pub gro_segments: u64,
    /// Frames that waited in a driver's send queue for a free descriptor.
    pub tx_waited: u64,
    /// Received frames no session or sink claimed.
    pub unclaimed: u64,
    /// Frames for another station that the adapters' address filter dropped.
    pub not_for_us: u64,
    pub handler: HandlerRuns,
    /// Where frames' time went between the wire and the stack.
    pub latency: Latency,
    /// The XDP program's verdicts.
    pub xdp: Verdicts,
    /// The verdicts after the warm-up, for their rates.
    pub xdp_measured: Verdicts,
    /// Frames and bytes the AF_XDP sockets' applications took.
    pub socket_frames: u64,
    pub socket_bytes: u64,
    /// Frames DDIO had evicted before the driver took them (after the warm-up).
    pub ddio_misses: u64,
}

impl Tally {
    /// The counts, with polls a second of `whole` seconds; GRO's only where
    /// the driver merges (`gro`). The handler's runs are reported on their own.
    pub fn report(&self, r: &mut Report, whole: f64, gro: bool) {
        r.count("polls", self.polls);
        r.real("polls_per_s", if whole > 0.0 { self.polls as f64 / whole } else { 0.0 });
        r.count("preemptions", self.preemptions);
        if gro {
            r.count("gro_batches", self.gro_batches).count("gro_segments", self.gro_segments);
        }
        r.count("tx_waited_for_descriptor", self.tx_waited);
        r.count("rx_unclaimed", self.unclaimed);
        r.count("frames_not_for_us", self.not_for_us);
        self.latency.report(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_reported_by_name_and_gros_only_where_the_driver_merges() {
        let t = Tally { polls: 50, gro_batches: 3, gro_segments: 9, unclaimed: 2, ..Tally::default() };
        let mut r = Report::default();
        t.report(&mut r, 0.5, false);
        assert_eq!((r.get("polls"), r.get("polls_per_s"), r.get("rx_unclaimed")), (Some(50.0), Some(100.0), Some(2.0)));
        assert_eq!(r.get("gro_batches"), None);
        let mut r = Report::default();
        t.report(&mut r, 0.0, true);
        assert_eq!((r.get("gro_segments"), r.get("polls_per_s")), (Some(9.0), Some(0.0)), "no time, no rate");
    }
}
