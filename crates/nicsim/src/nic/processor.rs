//! The processor of an intelligent bus-master adapter (Novell's "intelligent
//! bus master", the PRO/100 Smart's i960): it does the per-frame work that a
//! dumb adapter leaves to the host driver (filling the receive control block's
//! fields, building media headers). One frame at a time, on the same
//! [`Timeline`] as a programmable adapter's processors: a frame to transmit is
//! worked on in the first gap before it must go on the wire, so received frames
//! slot in between (an event loop that takes whatever is due first).

use crate::observe::Report;
use crate::processor::Timeline;
use crate::time::{Clock, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessorConfig {
    pub clock: Clock,
    /// Cycles of per-frame work, each way.
    pub frame_cycles: u64,
}

#[derive(Debug)]
pub struct FrameProcessor {
    cfg: ProcessorConfig,
    pub timeline: Timeline,
    frames: u64,
}

impl FrameProcessor {
    pub fn new(cfg: ProcessorConfig) -> Self {
        FrameProcessor { cfg, timeline: Timeline::new(cfg.clock), frames: 0 }
    }

    /// Book `n` frames' work in the first gap from `from`; returns when it ends.
    fn book(&mut self, from: Time, n: u32) -> Time {
        self.frames += n as u64;
        self.timeline.run(from, self.cfg.frame_cycles * n as u64)
    }

    /// Work on `n` received frames that are ready at `at`; returns when done.
    pub fn run(&mut self, at: Time, n: u32) -> Time {
        self.book(at, n)
    }

    /// Work on a frame that is due on the wire at `due`, posted at `posted`;
    /// returns when it may go (`due`, unless the processor is too busy).
    pub fn run_before(&mut self, posted: Time, due: Time) -> Time {
        let work = self.cfg.clock.cycles(self.cfg.frame_cycles);
        let from = Time(due.ps().saturating_sub(work.ps())).max(posted);
        self.book(from, 1).max(due)
    }

    pub fn report(&self, r: &mut Report, end: Time) {
        r.count("adapter_cpu_frames", self.frames);
        self.timeline.account.report(r, "adapter_cpu0", end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn frames_queue_behind_each_other() {
        let mut p = FrameProcessor::new(ProcessorConfig { clock: Clock::from_mhz(25), frame_cycles: 250 });
        let t0 = Time::ZERO + Duration::from_us(100);
        assert_eq!(p.run(t0, 1), t0 + Duration::from_us(10));
        assert_eq!(p.run(t0, 2), t0 + Duration::from_us(30), "the second and third wait for the first");
        let later = t0 + Duration::from_us(100);
        assert_eq!(p.run(later, 1), later + Duration::from_us(10), "idle until the frame is ready");
    }

    #[test]
    fn transmit_work_is_done_just_before_the_wire_and_received_frames_fit_between() {
        let mut p = FrameProcessor::new(ProcessorConfig { clock: Clock::from_mhz(25), frame_cycles: 250 });
        let us = |n| Time::ZERO + Duration::from_us(n);
        assert_eq!(p.run_before(us(0), us(100)), us(100), "worked on from 90 to 100 us");
        assert_eq!(p.run_before(us(0), us(200)), us(200));
        assert_eq!(p.run(us(5), 1), us(15), "a received frame does not wait for later transmit work");
        assert_eq!(p.run(us(85), 1), us(100 + 10), "but waits for work already under way");
        assert_eq!(p.run_before(us(0), us(5)), us(25), "too late: the frame waits for the processor");
    }
}
