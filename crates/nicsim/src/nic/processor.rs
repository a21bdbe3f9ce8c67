//! The processor of an intelligent bus-master adapter (Novell's "intelligent
//! bus master", the PRO/100 Smart's i960): it does the per-frame work that a
//! dumb adapter leaves to the host driver (filling the receive control block's
//! fields, building media headers). One frame at a time, in arrival order.

use crate::observe::Report;
use crate::time::{Clock, Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessorConfig {
    pub clock: Clock,
    /// Cycles of per-frame work, each way.
    pub frame_cycles: u64,
}

#[derive(Debug)]
pub struct FrameProcessor {
    cfg: ProcessorConfig,
    free: Time,
    busy: Duration,
    frames: u64,
}

impl FrameProcessor {
    pub fn new(cfg: ProcessorConfig) -> Self {
        FrameProcessor { cfg, free: Time::ZERO, busy: Duration::ZERO, frames: 0 }
    }

    /// Work on `n` frames that are ready at `at`; returns when the last is done.
    pub fn run(&mut self, at: Time, n: u32) -> Time {
        let work = self.cfg.clock.cycles(self.cfg.frame_cycles * n as u64);
        self.free = self.free.max(at) + work;
        self.busy = self.busy + work;
        self.frames += n as u64;
        self.free
    }

    pub fn report(&self, r: &mut Report, end: Time) {
        r.count("adapter_cpu_frames", self.frames);
        r.real("adapter_cpu_utilization", if end.ps() == 0 { 0.0 } else { self.busy.ps().min(end.ps()) as f64 / end.ps() as f64 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_queue_behind_each_other() {
        let mut p = FrameProcessor::new(ProcessorConfig { clock: Clock::from_mhz(25), frame_cycles: 250 });
        let t0 = Time::ZERO + Duration::from_us(100);
        assert_eq!(p.run(t0, 1), t0 + Duration::from_us(10));
        assert_eq!(p.run(t0, 2), t0 + Duration::from_us(30), "the second and third wait for the first");
        let later = t0 + Duration::from_us(100);
        assert_eq!(p.run(later, 1), later + Duration::from_us(10), "idle until the frame is ready");
    }
}
