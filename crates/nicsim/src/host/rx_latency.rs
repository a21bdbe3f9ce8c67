//! Where a received frame's time goes on its way up, each stage timed from
//! the frame's last bit at the adapter: until its data and status are in host
//! memory (FIFO, DMA, write-back), until the driver takes it (interrupt,
//! moderation, a poll coming round), and until its protocol work ends (the
//! deferred queue, the stack).

use crate::observe::Report;
use crate::time::{Duration, Time};

#[derive(Debug, Default)]
struct Stage {
    frames: u64,
    total_ps: u128,
    longest: Duration,
}

impl Stage {
    fn add(&mut self, wait: Duration) {
        self.frames += 1;
        self.total_ps += wait.ps() as u128;
        self.longest = self.longest.max(wait);
    }

    fn mean_us(&self) -> f64 {
        self.total_ps as f64 / self.frames as f64 / 1e6
    }
}

#[derive(Debug, Default)]
pub struct RxLatency {
    memory: Stage,
    driver: Stage,
    stack: Stage,
}

impl RxLatency {
    /// The driver took a frame at `now` that arrived at `arrived` and was in
    /// host memory from `in_memory`.
    pub fn taken(&mut self, arrived: Time, in_memory: Time, now: Time) {
        self.memory.add(in_memory.since(arrived));
        self.driver.add(now.since(arrived));
    }

    /// A frame that arrived at `arrived` went up the stack by `end`.
    pub fn delivered(&mut self, arrived: Time, end: Time) {
        self.stack.add(end.since(arrived));
    }

    /// `mean_rx_to_memory_us`, `mean_rx_to_driver_us`, `mean_rx_to_stack_us` and
    /// `max_rx_to_stack_us`, each over the frames that reached that stage
    /// (none for a host that took no frame).
    pub fn report(&self, r: &mut Report) {
        if self.driver.frames > 0 {
            r.real("mean_rx_to_memory_us", self.memory.mean_us());
            r.real("mean_rx_to_driver_us", self.driver.mean_us());
        }
        if self.stack.frames > 0 {
            r.real("mean_rx_to_stack_us", self.stack.mean_us());
            r.real("max_rx_to_stack_us", self.stack.longest.ps() as f64 / 1e6);
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
        let mut l = RxLatency::default();
        l.taken(at(1000), at(3000), at(10_000));
        l.taken(at(2000), at(4000), at(10_000));
        l.delivered(at(1000), at(12_000));
        let mut r = Report::default();
        l.report(&mut r);
        assert_eq!(r.get("mean_rx_to_memory_us"), Some(2.0));
        assert_eq!(r.get("mean_rx_to_driver_us"), Some(8.5));
        assert_eq!((r.get("mean_rx_to_stack_us"), r.get("max_rx_to_stack_us")), (Some(11.0), Some(11.0)));
    }

    #[test]
    fn a_host_that_took_nothing_reports_nothing() {
        let mut r = Report::default();
        RxLatency::default().report(&mut r);
        assert!(r.entries().is_empty());
    }
}
