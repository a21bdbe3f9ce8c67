//! A processor that runs to completion (the i960 firmware's executive, and in
//! the same shape the host's interrupt and system-call path): work waits in one
//! queue; when the processor is free it takes everything waiting as one run and
//! handles each item to completion. Work that arrives during a run waits for
//! the next, so a busy processor batches by itself.

use std::collections::VecDeque;

use super::{Account, Activity, ADAPTER};
use crate::time::{Clock, Time};

pub struct Batches<W> {
    pub account: Account,
    queue: VecDeque<W>,
    busy: bool,
}

impl<W> Batches<W> {
    pub fn new(clock: Clock) -> Self {
        Batches { account: Account::new(clock, ADAPTER), queue: VecDeque::new(), busy: false }
    }

    /// Queue `w`; true when the processor is free and a run should start now.
    pub fn push(&mut self, w: W) -> bool {
        self.queue.push_back(w);
        !self.busy
    }

    /// Start a run: everything waiting, in arrival order.
    pub fn take(&mut self) -> Vec<W> {
        self.busy = true;
        self.queue.drain(..).collect()
    }

    /// A run of `run` ended; true when more work is waiting.
    pub fn finish(&mut self, run: &Run) -> bool {
        self.busy = false;
        self.account.account(Activity::Firmware, run.start, run.at, run.cycles);
        !self.queue.is_empty()
    }
}

/// The time a run has taken so far: processor cycles, and waits for the bus.
#[derive(Debug)]
pub struct Run {
    pub start: Time,
    pub at: Time,
    clock: Clock,
    pub cycles: u64,
}

impl Run {
    pub fn new(start: Time, clock: Clock) -> Run {
        Run { start, at: start, clock, cycles: 0 }
    }
    pub fn cycles(&mut self, n: u64) {
        self.cycles += n;
        self.at += self.clock.cycles(n);
    }
    /// Stall until `t` (a programmed-I/O write or a DMA the run waits for).
    pub fn until(&mut self, t: Time) {
        self.at = self.at.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::time::Duration;

    #[test]
    fn work_arriving_during_a_run_waits_and_is_taken_together() {
        let mut p = Batches::new(Clock::from_mhz(100));
        assert!(p.push(1), "idle: start at once");
        let batch = p.take();
        assert_eq!(batch.len(), 1);
        assert!(!p.push(2), "busy: wait");
        assert!(!p.push(3));
        let mut run = Run::new(Time::ZERO, p.account.clock);
        run.cycles(1000);
        assert_eq!(run.at, Time::ZERO + Duration::from_us(10));
        assert!(p.finish(&run), "two are waiting");
        assert_eq!(p.take(), vec![2, 3], "both in one run");
        assert_eq!(p.account.busy(), Duration::from_us(10));
        assert_eq!(p.account.cycles(), 1000);
    }
}
