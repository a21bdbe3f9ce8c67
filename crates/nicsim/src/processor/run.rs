//! A run of an adapter processor measured as it goes: its cycles, and its
//! stalls for the bus (a programmed-I/O write, a DMA it waits for). The offload
//! engine's executive makes one of everything waiting when its processor is
//! free, so a busy processor batches by itself, and books it on its
//! [`Timeline`](super::Timeline) when it is done.

use crate::time::{Clock, Time};

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
    use crate::processor::tests::us;

    use crate::processor::Timeline;
    use crate::time::Duration;

    #[test]
    fn a_run_takes_its_cycles_and_its_stalls_and_is_booked_whole() {
        let mut p = Timeline::new(Clock::from_mhz(100));
        let mut run = Run::new(us(0), p.account.clock);
        run.cycles(1000);
        assert_eq!(run.at, us(10));
        run.until(us(25));
        run.until(us(20));
        assert_eq!(run.at, us(25), "a stall that ended already costs nothing");
        run.cycles(500);
        p.book(&run);
        assert_eq!((p.account.busy(), p.account.cycles()), (Duration::from_us(30), 1500), "stalls count as busy");
        assert_eq!(p.run(us(5), 100), us(31), "later work waits for the run");
    }
}
