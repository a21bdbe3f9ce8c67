//! Receive: frames enter the FIFO from the wire; the DMA engine moves each to the
//! host buffer of the next descriptor once `rx_dma_threshold` bytes are in (while
//! the rest still arrives), then writes the descriptors' status back in groups.
//! Descriptors the driver posts are fetched in groups into an on-chip cache. A
//! frame that finds the FIFO full is dropped and counted.
//!
//! An adapter the host moves frames for (programmed I/O, shared memory, system
//! DMA) keeps each in its packet memory, visible at once, until the driver takes
//! it.
//!
//! The wire hands over a frame when its last bit is in; the DMA that started
//! during its reception is booked then, back-dated to when the threshold was
//! reached (the bus calendar allows that).

use std::collections::VecDeque;

use crate::bus::{Fill, HostBus, Purpose};
use crate::device::rings::RxRing;
use crate::nic::{FrameProcessor, NicConfig, DESCRIPTOR_BYTES};
use crate::observe::Report;
use crate::stack::tally::{classify, continues, Class};
use crate::time::{Duration, Time};
use crate::wire::ethernet::FCS;
use crate::wire::Frame;

/// Where the adapter writes completions: the receive ring in host memory, and
/// the list of (when, how many) that became visible, for the interrupt logic.
pub type Written<'a> = (&'a mut RxRing, &'a mut Vec<(Time, u32)>);

/// The room a frame takes in the receive FIFO: padded to the minimum, with its FCS.
fn fifo_bytes(frame: &Frame) -> u64 {
    (frame.len().max(60) + FCS) as u64
}

#[derive(Debug)]
struct Waiting {
    frame: Box<Frame>,
    first_byte: Time,
}

#[derive(Debug)]
pub struct Rx {
    cfg: NicConfig,
    /// Frames in the FIFO with no DMA booked yet (no descriptor), oldest first.
    waiting: VecDeque<Waiting>,
    /// Frames whose DMA is booked: (when it ends, bytes), which hold FIFO space until then.
    draining: VecDeque<(Time, u64)>,
    /// Bytes held by `waiting` and `draining`.
    fifo_bytes: u64,
    /// Descriptors the driver posted that the adapter has not fetched.
    posted: u32,
    /// Frame slots fetched so far, for multi-packet buffers' descriptors.
    slots_fetched: u64,
    /// Fetched descriptors, each usable from the time its fetch completes.
    cache: VecDeque<Time>,
    /// Frames moved whose status is not yet written back, and when the first
    /// of them was moved.
    #[allow(clippy::vec_box, reason = "frames travel boxed from the wire to the stack: a move is a pointer")]
    unwritten: Vec<Box<Frame>>,
    unwritten_since: Time,
    pub processor: Option<FrameProcessor>,
    dma_free: Time,
    /// The wire time of `rx_dma_threshold` bytes (a division, once).
    threshold_wire: Duration,
    frames: u64,
    bytes: u64,
    overruns: u64,
    waited_for_descriptor: u64,
    /// When the ring last took a frame, and the frames lost since then.
    last_taken: Time,
    lost_since_taken: u64,
}

impl Rx {
    /// A receive side with no buffers posted yet.
    pub fn new(cfg: NicConfig) -> Self {
        let threshold_wire = Duration::for_bits(cfg.rx_dma_threshold * 8, cfg.link_rate_bps.max(1));
        Rx {
            threshold_wire,
            processor: cfg.processor.map(FrameProcessor::new),
            cfg,
            waiting: VecDeque::new(),
            draining: VecDeque::new(),
            fifo_bytes: 0,
            posted: 0,
            slots_fetched: 0,
            cache: VecDeque::new(),
            unwritten: Vec::new(),
            unwritten_since: Time::ZERO,
            dma_free: Time::ZERO,
            frames: 0,
            bytes: 0,
            overruns: 0,
            waited_for_descriptor: 0,
            last_taken: Time::ZERO,
            lost_since_taken: 0,
        }
    }

    fn wire_time(&self, bytes: u64) -> Duration {
        Duration::for_bits(bytes * 8, self.cfg.link_rate_bps)
    }

    fn dma_bytes(&self, frame: &Frame) -> u64 {
        (frame.len() + if self.cfg.strip_crc { 0 } else { FCS }) as u64
    }

    fn fifo_used(&mut self, now: Time) -> u64 {
        while let Some((_, bytes)) = self.draining.pop_front_if(|(end, _)| *end <= now) {
            self.fifo_bytes -= bytes;
        }
        self.fifo_bytes
    }

    /// A frame's last bit arrived at `now`. Adds to `visible` the completions
    /// that became visible (time and count), for the interrupt logic.
    #[inline(always)]
    pub fn arrive(&mut self, mut frame: Box<Frame>, now: Time, bus: &mut HostBus, (ring, visible): Written) {
        let on_wire = fifo_bytes(&frame);
        frame.meta.arrived = now;
        if self.fifo_used(now) + on_wire > self.cfg.rx_fifo {
            self.overruns += 1;
            self.lost_since_taken += 1;
            return;
        }
        if self.cfg.host_moves() {
            // In the adapter's packet memory until the host moves it: visible
            // (a status register) as soon as it is all in.
            self.fifo_bytes += on_wire;
            self.took(now);
            self.bytes += frame.len() as u64;
            ring.complete(frame, now);
            visible.push((now, 1));
            return;
        }
        let first_byte = Time(now.ps() - self.wire_time(on_wire).ps().min(now.ps()));
        if self.cache.is_empty() && self.posted == 0 {
            self.waited_for_descriptor += 1;
        }
        self.fifo_bytes += (frame.len() + FCS) as u64;
        self.waiting.push_back(Waiting { frame, first_byte });
        self.pump(now, bus, (ring, visible));
    }

    /// The driver posted `n` more buffers (its tail write reached the adapter at `now`).
    pub fn post(&mut self, n: u32, now: Time, bus: &mut HostBus, written: Written) {
        self.posted += n;
        self.pump(now, bus, written);
    }

    #[inline]
    fn fetch(&mut self, now: Time, bus: &mut HostBus) {
        let room = self.cfg.rx_desc_cache as usize - self.cache.len();
        if self.posted == 0 || (room < self.cfg.rx_desc_fetch as usize && !self.cache.is_empty()) {
            return;
        }
        let n = self.posted.min(self.cfg.rx_desc_fetch).min(room as u32);
        let ready = bus.read(now, self.descriptor_bytes(n), Purpose::RxDescFetch);
        self.posted -= n;
        self.cache.extend(std::iter::repeat_n(ready, n as usize));
    }

    /// Book DMA for waiting frames while descriptors last.
    #[inline(always)]
    fn pump(&mut self, now: Time, bus: &mut HostBus, (ring, visible): Written) {
        while !self.waiting.is_empty() {
            self.fetch(now, bus);
            let Some(desc_ready) = self.cache.pop_front() else {
                // No frame can join the group until the driver posts buffers, and
                // it posts them for frames it sees: without a delay timer the
                // group goes now (else a group nearly the ring's size waits for ever).
                if !self.unwritten.is_empty() && self.cfg.rx_writeback_delay.is_none() {
                    visible.push(self.write_back(self.dma_free, bus, ring));
                }
                break;
            };
            let mut w = self.waiting.pop_front().expect("checked non-empty");
            let bytes = self.dma_bytes(&w.frame);
            // A frame shorter than the threshold goes once it is all in.
            let threshold = (w.first_byte + self.threshold_wire).min(w.frame.meta.arrived);
            let start = threshold.max(self.dma_free).max(desc_ready);
            let fill = Fill::Arriving { first_byte: w.first_byte, rate_bps: self.cfg.link_rate_bps, last_bit: w.frame.meta.arrived };
            let end = bus.write(start, bytes, fill, Purpose::RxData);
            w.frame.meta.dma_mark = bus.dma.add(bytes);
            self.dma_free = end;
            self.draining.push_back((end, (w.frame.len() + FCS) as u64));
            self.took(now);
            self.bytes += w.frame.len() as u64;
            if self.unwritten.is_empty() {
                self.unwritten_since = end;
            }
            // Only in-order data of one connection may wait for a group: any
            // other frame writes the group back at once, itself included.
            let urgent = self.cfg.rx_writeback_data_only && !self.continues_group(&w.frame);
            self.unwritten.push(w.frame);
            let idle = self.waiting.is_empty() && self.cfg.rx_writeback_delay.is_none();
            if self.unwritten.len() >= self.cfg.rx_writeback as usize || idle || urgent {
                visible.push(self.write_back(self.dma_free, bus, ring));
            }
        }
        self.fetch(now, bus);
    }

    /// Whether `frame` is TCP data that carries on the data of the group
    /// waiting for its write-back (or starts a group).
    fn continues_group(&self, frame: &Frame) -> bool {
        match self.unwritten.last() {
            Some(prev) => continues(&prev.bytes, &frame.bytes),
            None => matches!(classify(&frame.bytes), Class::Data { .. }),
        }
    }

    #[inline(always)]
    fn write_back(&mut self, start: Time, bus: &mut HostBus, ring: &mut RxRing) -> (Time, u32) {
        let n = self.unwritten.len() as u64;
        // A status says the frame came in whole (its FCS checked): not before
        // the last frame of the group has.
        let start = self.unwritten.last().map_or(start, |f| start.max(f.meta.arrived));
        let mut at = bus.write_parts(start, self.completion_bytes(n), Fill::Ready, Purpose::RxStatus, self.cfg.status_wait_clocks);
        self.dma_free = at;
        if let Some(p) = &mut self.processor {
            at = p.run(at, n as u32);
        }
        // In order, popped: a drain's drop is a call of its own, every group.
        self.unwritten.reverse();
        while let Some(frame) = self.unwritten.pop() {
            ring.complete(frame, at);
        }
        (at, n as u32)
    }

    /// Bytes read to fetch `n` frames' descriptors: one a frame, or one for
    /// each multi-packet buffer begun (which a real adapter fetches once and
    /// fills frame after frame; counted here as the frames come).
    fn descriptor_bytes(&mut self, n: u32) -> u64 {
        let per = self.cfg.rx_buffer_frames as u64;
        if per == 1 {
            return n as u64 * DESCRIPTOR_BYTES;
        }
        let before = self.slots_fetched;
        self.slots_fetched += n as u64;
        (self.slots_fetched.div_ceil(per) - before.div_ceil(per)) * DESCRIPTOR_BYTES
    }

    /// Bytes written back for `n` completions at once: each whole, or, with
    /// completion compression, the first whole and the rest eight to an entry.
    fn completion_bytes(&self, n: u64) -> u64 {
        let whole = self.cfg.rx_completion_bytes;
        match (self.cfg.cqe_compression, n) {
            (_, 0) => 0,
            (true, n) => whole + (n - 1).div_ceil(8) * 64,
            (false, n) => n * whole,
        }
    }

    /// When a partial write-back group falls due (with a write-back delay).
    pub fn flush_due(&self) -> Option<Time> {
        let delay = self.cfg.rx_writeback_delay?;
        (!self.unwritten.is_empty()).then(|| self.unwritten_since + delay)
    }

    /// The write-back delay timer fired at `now`: write a partial group if due.
    pub fn flush(&mut self, now: Time, bus: &mut HostBus, (ring, visible): Written) {
        if self.flush_due().is_some_and(|due| due <= now) {
            visible.push(self.write_back(self.dma_free.max(now), bus, ring));
        }
    }

    /// Run the adapter processor (if any) on a frame posted at `posted` to be
    /// sent at `due`; returns when it may go. The transmit side shares it.
    pub fn process_before(&mut self, posted: Time, due: Time) -> Time {
        self.processor.as_mut().map_or(due, |p| p.run_before(posted, due))
    }

    /// Receive buffers the adapter still has: fetched and posted descriptors.
    pub fn buffers_left(&self) -> u32 {
        self.cache.len() as u32 + self.posted
    }

    /// The host moved a frame it took out of the adapter's packet memory (an
    /// adapter that is no bus master): its room there is free.
    pub fn moved_out(&mut self, frame: &Frame) {
        self.fifo_bytes -= fifo_bytes(frame);
    }

    fn took(&mut self, now: Time) {
        self.frames += 1;
        self.last_taken = now;
        self.lost_since_taken = 0;
    }

    /// Whether the ring stopped taking frames while frames kept arriving: none
    /// taken in the run's last tenth (at least 1 ms) and some lost since.
    pub fn stalled(&self, end: Time) -> bool {
        let quiet = end.since(self.last_taken);
        self.lost_since_taken > 0 && quiet >= Duration::from_ms(1).max(Duration::from_ps(end.ps() / 10))
    }

    pub fn report(&self, r: &mut Report, end: Time) {
        r.count("rx_ring_stalled", u64::from(self.stalled(end)));
        r.count("rx_frames", self.frames);
        r.count("rx_bytes", self.bytes);
        r.count("rx_fifo_overruns", self.overruns);
        r.count("rx_waited_for_descriptor", self.waited_for_descriptor);
        // Frames still in the FIFO when the run ended (not lost: not yet moved).
        r.count("rx_in_fifo_at_end", self.waiting.len() as u64);
    }

    pub fn report_processor(&self, r: &mut Report, end: Time) {
        if let Some(p) = &self.processor {
            p.report(r, end);
        }
    }
}

#[cfg(test)]
#[path = "rx_tests.rs"]
mod tests;
