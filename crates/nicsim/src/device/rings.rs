//! A ring adapter's descriptor rings as they lie in host memory, between the
//! driver and the adapter: the driver fills transmit descriptors and reclaims
//! those written back; the adapter fetches them (its DMA reads) and writes
//! back receive completions, which the driver takes in ring order once
//! visible. Neither side reaches into the other: the driver has these and the
//! adapter's registers, the adapter these and its own state.

use std::collections::VecDeque;

use crate::time::Time;
use crate::wire::Frame;

/// One adapter's rings.
#[derive(Debug, Default)]
pub struct Rings {
    pub rx: RxRing,
    pub tx: TxRing,
}

impl Rings {
    /// Rings of `tx_size` transmit descriptors (the receive ring's size is
    /// the driver's to post).
    pub fn new(tx_size: u32) -> Self {
        Rings { rx: RxRing::default(), tx: TxRing::new(tx_size) }
    }
}

/// Receive completions written back, with their buffers, in ring order.
#[derive(Debug, Default)]
pub struct RxRing {
    done: VecDeque<(Box<Frame>, Time)>,
}

impl RxRing {
    /// The adapter wrote back `frame`'s descriptor; the driver sees it from `visible`.
    pub fn complete(&mut self, frame: Box<Frame>, visible: Time) {
        self.done.push_back((frame, visible));
    }

    /// Whether a completed frame is visible at `now`.
    pub fn ready(&self, now: Time) -> bool {
        self.done.front().is_some_and(|d| d.1 <= now)
    }

    /// The next frame the driver can see at `now`, and since when it could.
    pub fn take(&mut self, now: Time) -> Option<(Box<Frame>, Time)> {
        self.done.pop_front_if(|d| d.1 <= now)
    }

    /// When the next completed frame becomes visible, if one is written.
    pub fn next_visible(&self) -> Option<Time> {
        self.done.front().map(|d| d.1)
    }
}

/// Transmit descriptors: those the driver filled and made visible with its
/// tail write, not yet fetched, and the write-back times of those sent.
#[derive(Debug, Default)]
pub struct TxRing {
    size: u32,
    /// The most descriptors the driver keeps filled at once.
    limit: u32,
    /// Frames behind descriptors the driver filled, not yet fetched.
    posted: VecDeque<Frame>,
    /// Descriptors the driver has filled and not reclaimed.
    in_ring: u32,
    /// Write-back times of sent frames, oldest first; reclaimable from then.
    completions: VecDeque<Time>,
}

impl TxRing {
    pub fn new(size: u32) -> Self {
        TxRing { size, limit: size - 1, ..TxRing::default() }
    }

    /// The driver keeps at most `n` descriptors filled at once.
    pub fn keep_at_most(&mut self, n: u32) {
        self.limit = n.min(self.size - 1);
    }

    /// Free descriptors, as the driver sees them (one slot stays empty).
    pub fn room(&self) -> u32 {
        self.limit.saturating_sub(self.in_ring)
    }

    /// The driver fills a descriptor (its tail write comes separately).
    pub fn fill(&mut self, frame: Frame) {
        debug_assert!(self.room() > 0, "driver filled a full ring");
        self.in_ring += 1;
        self.posted.push_back(frame);
    }

    /// Reclaim descriptors whose status is written back by `now`; returns how many.
    pub fn reclaim(&mut self, now: Time) -> u32 {
        let mut n = 0;
        while self.completions.pop_front_if(|t| *t <= now).is_some() {
            n += 1;
        }
        self.in_ring -= n;
        n
    }

    /// When the next descriptor becomes reclaimable, if one is in flight.
    pub fn next_reclaim(&self) -> Option<Time> {
        self.completions.front().copied()
    }

    /// The adapter fetches the next filled descriptor's frame.
    pub fn fetch(&mut self) -> Option<Frame> {
        self.posted.pop_front()
    }

    /// Filled descriptors the adapter has not fetched.
    pub fn posted(&self) -> usize {
        self.posted.len()
    }

    /// The adapter wrote back `n` descriptors' status at `at`.
    pub fn written_back(&mut self, at: Time, n: u32) {
        self.completions.extend(std::iter::repeat_n(at, n as usize));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> Frame {
        Frame { bytes: vec![0; 60], meta: Default::default() }
    }

    #[test]
    fn a_driver_that_keeps_one_frame_in_flight_waits_for_its_status() {
        let mut ring = TxRing::new(256);
        assert_eq!(ring.room(), 255, "one slot stays empty");
        ring.keep_at_most(1);
        assert_eq!(ring.room(), 1);
        ring.fill(frame());
        assert_eq!(ring.room(), 0, "the one frame is out");
        ring.fetch();
        ring.written_back(Time(5_000), 1);
        assert_eq!(ring.reclaim(Time(4_999)), 0, "not before its status is written");
        assert_eq!(ring.room(), 0);
        assert_eq!(ring.reclaim(Time(5_000)), 1);
        assert_eq!(ring.room(), 1);
        ring.keep_at_most(1000);
        assert_eq!(ring.room(), 255, "never more than the ring holds");
    }
}
