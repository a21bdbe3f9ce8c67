//! Where a frame's time goes between the wire and the host's stack. A received
//! frame's stages are timed from its last bit at the adapter: until its data
//! and status are in host memory (FIFO, DMA, write-back), until the driver
//! takes it (interrupt, moderation, a poll coming round), and until its
//! protocol work ends (the deferred queue, the stack). A sent frame is timed
//! from when the stack or application made it to its first bit on the wire
//! (the rest of its step, the driver's queue, the tail write, the descriptor
//! and data reads, the adapter's FIFO and the wire before it).

use crate::observe::{Report, Waits};
use crate::time::Time;

#[derive(Debug, Default)]
pub struct Latency {
    to_memory: Waits,
    to_driver: Waits,
    to_stack: Waits,
    to_wire: Waits,
    forwarded: Waits,
}

impl Latency {
    /// The driver took a frame at `now` that arrived at `arrived` and was in
    /// host memory from `in_memory`.
    #[inline]
    pub fn taken(&mut self, arrived: Time, in_memory: Time, now: Time) {
        debug_assert!(arrived <= in_memory && in_memory <= now, "a frame in memory at {in_memory}, arrived at {arrived}, taken at {now}");
        self.to_memory.add(in_memory.since(arrived));
        self.to_driver.add(now.since(arrived));
    }

    /// Frames the driver took (after the warm-up).
    pub fn taken_frames(&self) -> u64 {
        self.to_driver.count()
    }

    /// A frame that arrived at `arrived` went up the stack by `end`.
    #[inline]
    pub fn delivered(&mut self, arrived: Time, end: Time) {
        debug_assert!(arrived <= end, "a frame that arrived at {arrived} went up at {end}");
        self.to_stack.add(end.since(arrived));
    }

    /// A frame made at `made` started on the wire at `start`.
    #[inline]
    pub fn sent(&mut self, made: Time, start: Time) {
        debug_assert!(made <= start, "a frame made at {made} went on the wire at {start}");
        self.to_wire.add(start.since(made));
    }

    /// A frame the host received (its last bit in at `arrived`) and sends
    /// back out without its stack (XDP `TX` or `REDIRECT`) started on the
    /// wire at `start`.
    #[inline]
    pub fn forwarded(&mut self, arrived: Time, start: Time) {
        debug_assert!(arrived <= start, "a frame that arrived at {arrived} left at {start}");
        self.forwarded.add(start.since(arrived));
    }

    /// The mean and the longest of each stage (`mean_rx_to_memory_us`,
    /// `max_rx_to_memory_us`, ..., `max_tx_to_wire_us`), over the frames that
    /// reached it (none where none did).
    pub fn report(&self, r: &mut Report) {
        self.to_memory.report(r, "rx_to_memory");
        self.to_driver.report(r, "rx_to_driver");
        self.to_stack.report(r, "rx_to_stack");
        self.to_wire.report(r, "tx_to_wire");
        self.forwarded.report(r, "forward");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processor::tests::us;

    #[test]
    fn each_stage_is_timed_from_the_frames_arrival() {
        let mut l = Latency::default();
        l.taken(us(1), us(3), us(10));
        l.taken(us(2), us(4), us(10));
        l.delivered(us(1), us(12));
        l.sent(us(1), us(3));
        l.sent(us(2), us(3));
        l.forwarded(us(1), us(4));
        let mut r = Report::default();
        l.report(&mut r);
        assert_eq!(r.get("mean_forward_us"), Some(3.0));
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
