//! Packet coalescing (Wadge, Malta 2001): the host posts one large buffer; the
//! adapter packs received frames into it and moves it in one DMA when it holds
//! `max_frames` frames, when the next frame would not fit, or when `timeout` has
//! passed since its first frame.

use crate::nic::firmware::chunk;
use crate::time::{Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoalesceConfig {
    pub max_frames: u32,
    pub capacity: usize,
    pub timeout: Duration,
}

/// A packed buffer ready to move, and how many frames it holds.
#[derive(Debug, PartialEq, Eq)]
pub struct Batch {
    pub bytes: Vec<u8>,
    pub frames: u32,
}

#[derive(Debug)]
pub struct Coalescer {
    cfg: CoalesceConfig,
    open: Vec<u8>,
    frames: u32,
    first_at: Option<Time>,
}

impl Coalescer {
    pub fn new(cfg: CoalesceConfig) -> Self {
        assert!(cfg.max_frames > 0 && cfg.capacity >= chunk::footprint(1518), "a buffer must hold a frame");
        Coalescer { cfg, open: Vec::with_capacity(cfg.capacity), frames: 0, first_at: None }
    }

    fn take(&mut self) -> Option<Batch> {
        self.first_at = None;
        let frames = std::mem::take(&mut self.frames);
        (frames > 0).then(|| Batch { bytes: std::mem::replace(&mut self.open, Vec::with_capacity(self.cfg.capacity)), frames })
    }

    /// Add a frame; returns the batches it completes (the one it did not fit
    /// into, and its own if that is now full).
    pub fn push(&mut self, frame: &[u8], now: Time) -> Vec<Batch> {
        let mut out = Vec::new();
        if self.open.len() + chunk::footprint(frame.len()) > self.cfg.capacity {
            out.extend(self.take());
        }
        chunk::push(&mut self.open, frame);
        self.frames += 1;
        self.first_at.get_or_insert(now);
        if self.frames >= self.cfg.max_frames {
            out.extend(self.take());
        }
        out
    }

    /// When the open buffer must go, if it holds anything.
    pub fn deadline(&self) -> Option<Time> {
        self.first_at.map(|t| t + self.cfg.timeout)
    }

    /// The open buffer, if its timeout has passed by `now`.
    pub fn expire(&mut self, now: Time) -> Option<Batch> {
        self.deadline().filter(|&d| d <= now).and_then(|_| self.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Time {
        Time::ZERO + Duration::from_us(us)
    }

    fn coalescer(max_frames: u32) -> Coalescer {
        Coalescer::new(CoalesceConfig { max_frames, capacity: chunk::MAX_CHUNK, timeout: Duration::from_us(50) })
    }

    #[test]
    fn a_full_count_moves_at_once() {
        let mut c = coalescer(3);
        assert!(c.push(&[1; 100], at(0)).is_empty());
        assert!(c.push(&[2; 100], at(1)).is_empty());
        let out = c.push(&[3; 100], at(2));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].frames, 3);
        assert_eq!(chunk::split(&out[0].bytes).unwrap().len(), 3);
        assert_eq!(c.deadline(), None);
    }

    #[test]
    fn the_timeout_runs_from_the_first_frame() {
        let mut c = coalescer(42);
        c.push(&[1; 100], at(10));
        c.push(&[2; 100], at(40));
        assert_eq!(c.deadline(), Some(at(60)));
        assert!(c.expire(at(59)).is_none());
        assert_eq!(c.expire(at(60)).unwrap().frames, 2);
        assert!(c.expire(at(1000)).is_none(), "nothing left to move");
    }

    #[test]
    fn a_frame_that_does_not_fit_closes_the_buffer() {
        let mut c = coalescer(100);
        let mut moved = 0;
        for i in 0..44 {
            moved += c.push(&[0; 1514], at(i)).iter().map(|b| b.frames).sum::<u32>();
        }
        assert_eq!(moved, 43, "43 full frames fill 64 KB; the 44th starts the next buffer");
    }
}
