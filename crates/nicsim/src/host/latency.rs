//! Where a frame's time goes between the wire and the host's stack. A received
//! frame's stages are timed from its last bit at the adapter: until its data
//! and status are in host memory (FIFO, DMA, write-back), until the driver
//! takes it (interrupt, moderation, a poll coming round), and until its
//! protocol work ends (the deferred queue, the stack). A sent frame is timed
//! from when the stack or application made it to its first bit on the wire
//! (the rest of its step, the driver's queue, the tail write, the descriptor
//! and data reads, the adapter's FIFO and the wire before it).

use crate::observe::Report;
use crate::time::{Duration, Time};

/// Sums of picoseconds (a `u64` holds some 200 days of waiting): a stage's
/// mean is its sum over the frames that reached it.
#[derive(Debug, Default)]
pub struct Latency {
    taken: u64,
    to_memory_ps: u64,
    to_driver_ps: u64,
    delivered: u64,
    to_stack_ps: u64,
    longest_to_stack: Duration,
    sent: u64,
    to_wire_ps: u64,
    longest_to_wire: Duration,
}

impl Latency {
    /// The driver took a frame at `now` that arrived at `arrived` and was in
    /// host memory from `in_memory`.
    #[inline]
    pub fn taken(&mut self, arrived: Time, in_memory: Time, now: Time) {
        debug_assert!(arrived <= in_memory && in_memory <= now, "a frame in memory at {in_memory}, arrived at {arrived}, taken at {now}");
        self.taken += 1;
        self.to_memory_ps += in_memory.since(arrived).ps();
        self.to_driver_ps += now.since(arrived).ps();
    }

    /// A frame that arrived at `arrived` went up the stack by `end`.
    #[inline]
    pub fn delivered(&mut self, arrived: Time, end: Time) {
        debug_assert!(arrived <= end, "a frame that arrived at {arrived} went up at {end}");
        let wait = end.since(arrived);
        self.delivered += 1;
        self.to_stack_ps += wait.ps();
        self.longest_to_stack = self.longest_to_stack.max(wait);
    }

    /// A frame made at `made` started on the wire at `start`.
    #[inline]
    pub fn sent(&mut self, made: Time, start: Time) {
        debug_assert!(made <= start, "a frame made at {made} went on the wire at {start}");
        let wait = start.since(made);
        self.sent += 1;
        self.to_wire_ps += wait.ps();
        self.longest_to_wire = self.longest_to_wire.max(wait);
    }

    /// `mean_rx_to_memory_us`, `mean_rx_to_driver_us`, `mean_rx_to_stack_us`,
    /// `max_rx_to_stack_us`, `mean_tx_to_wire_us` and `max_tx_to_wire_us`, each
    /// over the frames that reached that stage (none where none did).
    pub fn report(&self, r: &mut Report) {
        let mean_us = |ps: u64, n: u64| ps as f64 / n as f64 / 1e6;
        if self.taken > 0 {
            r.real("mean_rx_to_memory_us", mean_us(self.to_memory_ps, self.taken));
            r.real("mean_rx_to_driver_us", mean_us(self.to_driver_ps, self.taken));
        }
        if self.delivered > 0 {
            r.real("mean_rx_to_stack_us", mean_us(self.to_stack_ps, self.delivered));
            r.real("max_rx_to_stack_us", self.longest_to_stack.ps() as f64 / 1e6);
        }
        if self.sent > 0 {
            r.real("mean_tx_to_wire_us", mean_us(self.to_wire_ps, self.sent));
            r.real("max_tx_to_wire_us", self.longest_to_wire.ps() as f64 / 1e6);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> Time {
        Time::ZERO + Duration::from_ns(ns)
    }

    #[test]
    fn each_stage_is_timed_from_the_frames_arrival() {
        let mut l = Latency::default();
        l.taken(at(1000), at(3000), at(10_000));
        l.taken(at(2000), at(4000), at(10_000));
        l.delivered(at(1000), at(12_000));
        l.sent(at(500), at(2500));
        l.sent(at(600), at(1600));
        let mut r = Report::default();
        l.report(&mut r);
        assert_eq!((r.get("mean_tx_to_wire_us"), r.get("max_tx_to_wire_us")), (Some(1.5), Some(2.0)));
        assert_eq!(r.get("mean_rx_to_memory_us"), Some(2.0));
        assert_eq!(r.get("mean_rx_to_driver_us"), Some(8.5));
        assert_eq!((r.get("mean_rx_to_stack_us"), r.get("max_rx_to_stack_us")), (Some(11.0), Some(11.0)));
    }

    #[test]
    fn a_host_that_took_nothing_reports_nothing() {
        let mut r = Report::default();
        Latency::default().report(&mut r);
        assert!(r.entries().is_empty());
    }
}
