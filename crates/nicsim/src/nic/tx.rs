//! Transmit: the driver puts frames in host buffers behind descriptors and writes
//! the tail; the adapter fetches descriptors in groups, reads each frame into its
//! FIFO when there is room, sends it when the wire is free, and writes status back
//! in groups (once the frames are read, or once they are sent: `tx_done`), after
//! which the driver may reclaim the descriptors. An adapter the host moves
//! frames for has them in its packet memory already.

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::bus::{Fill, HostBus, Purpose};
use crate::device::rings::TxRing;
use crate::nic::firmware::headers::Layout;
use crate::nic::firmware::tso::cut;
use crate::nic::{NicConfig, TxDone, DESCRIPTOR_BYTES};
use crate::observe::Report;
use crate::time::Time;
use crate::wire::ethernet::{wire_time, FCS};
use crate::wire::{Frame, FrameMeta};

/// A frame the adapter sends: when its first bit goes on the wire, and when
/// its status is written back (the driver may reclaim it from then).
#[derive(Debug)]
pub struct Sent {
    pub start: Time,
    pub frame: Frame,
    pub status: Time,
}

#[derive(Debug)]
pub struct Tx {
    cfg: NicConfig,
    unwritten: u32,
    fetch_free: Time,
    dma_free: Time,
    /// When the MAC is free: one adapter's queues share it.
    mac: Rc<Cell<Time>>,
    /// Frames in the FIFO: (when their last bit leaves, bytes), and their bytes.
    fifo: VecDeque<(Time, u64)>,
    fifo_bytes: u64,
    frames: u64,
    bytes: u64,
}

impl Tx {
    /// When its MAC is free, a clock another queue of the adapter may share.
    pub fn mac(&self) -> Rc<Cell<Time>> {
        self.mac.clone()
    }

    /// Send through `mac`, another queue's MAC.
    pub fn share_mac(&mut self, mac: Rc<Cell<Time>>) {
        self.mac = mac;
    }

    pub fn new(cfg: NicConfig) -> Self {
        Tx {
            cfg,
            unwritten: 0,
            fetch_free: Time::ZERO,
            dma_free: Time::ZERO,
            mac: Rc::new(Cell::new(Time::ZERO)),
            fifo: VecDeque::new(),
            fifo_bytes: 0,
            frames: 0,
            bytes: 0,
        }
    }

    /// The tail write reached the adapter at `now`: move every frame posted
    /// in `ring`. Returns each frame with the times its first bit goes on the
    /// wire and its status is written back.
    pub fn tail(&mut self, now: Time, bus: &mut HostBus, ring: &mut TxRing) -> Vec<Sent> {
        let mut out = Vec::with_capacity(ring.posted());
        if self.cfg.host_moves() {
            // The host already moved each frame into packet memory: the tail
            // write is the transmit command; frames go as the wire frees (with
            // TSO, a send's segments are cut from packet memory).
            while let Some(frame) = ring.fetch() {
                for f in self.segments(frame) {
                    let start = now.max(self.mac.get());
                    self.mac.set(start + wire_time(f.len(), self.cfg.link_rate_bps));
                    self.frames += 1;
                    self.bytes += f.len() as u64;
                    out.push(Sent { start, frame: f, status: Time::ZERO });
                }
                written(&mut out, self.mac.get());
                ring.written_back(self.mac.get(), 1);
            }
            return out;
        }
        while ring.posted() > 0 {
            let n = (ring.posted() as u32).min(self.cfg.tx_desc_fetch);
            let (issued, fetched) = bus.read_pipelined(now.max(self.fetch_free), n as u64 * DESCRIPTOR_BYTES, Purpose::TxDescFetch);
            self.fetch_free = issued;
            for _ in 0..n {
                let frame = ring.fetch().expect("n <= posted");
                self.send(frame, fetched, bus, ring, &mut out);
            }
        }
        out
    }

    /// Move one descriptor's frame to the wire, into `out`. With TSO the
    /// adapter cuts a large send into segments, reading its headers once and
    /// each segment's data as FIFO room allows, and sums TCP checksums.
    fn send(&mut self, frame: Frame, desc_ready: Time, bus: &mut HostBus, ring: &mut TxRing, out: &mut Vec<Sent>) {
        let ready = if self.cfg.tso {
            let frames = self.segments(frame);
            let header = if frames.len() > 1 { Layout::of(&frames[0].bytes).map_or(0, |l| l.header_len()) } else { 0 };
            let mut ready = desc_ready;
            for (i, f) in frames.into_iter().enumerate() {
                let read = if i == 0 { f.len() } else { f.len() - header };
                let (start, done) = self.onto_wire(f.len(), read, desc_ready, bus);
                ready = done;
                out.push(Sent { start, frame: f, status: Time::ZERO });
            }
            ready
        } else {
            let (start, ready) = self.onto_wire(frame.len(), frame.len(), desc_ready, bus);
            out.push(Sent { start, frame, status: Time::ZERO });
            ready
        };
        let ready = match self.cfg.tx_done {
            TxDone::Read => ready,
            TxDone::Sent => self.mac.get(),
        };
        self.unwritten += 1;
        if self.unwritten >= self.cfg.tx_writeback || ring.posted() == 0 {
            let n = self.unwritten as u64;
            let done = bus.write_parts(ready, n * DESCRIPTOR_BYTES, Fill::Ready, Purpose::TxStatus, self.cfg.status_wait_clocks);
            ring.written_back(done, n as u32);
            written(out, done);
            self.unwritten = 0;
        }
    }

    /// With TSO, a send cut into its segments, TCP checksums summed; else the frame.
    fn segments(&self, frame: Frame) -> Vec<Frame> {
        if !self.cfg.tso {
            return vec![frame];
        }
        let meta = FrameMeta { gso: 0, ..frame.meta };
        cut(&frame.bytes, frame.meta.gso).into_iter().map(|bytes| Frame { bytes, meta }).collect()
    }

    /// A frame of `len` bytes, `read` of them fetched from host memory, into
    /// the FIFO and onto the wire: when its first bit goes, and when it was read.
    fn onto_wire(&mut self, len: usize, read: usize, desc_ready: Time, bus: &mut HostBus) -> (Time, Time) {
        let bytes = (len + FCS) as u64;
        // Wait for FIFO room: frames leave when their last bit is on the wire.
        let mut room_at = desc_ready.max(self.dma_free);
        while self.fifo_bytes + bytes > self.cfg.tx_fifo {
            let (left, b) = self.fifo.pop_front().expect("a frame bigger than the FIFO is refused at check");
            room_at = room_at.max(left);
            self.fifo_bytes -= b;
        }
        let (issued, ready) = bus.read_pipelined(room_at, read as u64, Purpose::TxData);
        self.dma_free = issued;
        let start = ready.max(self.mac.get());
        let occupancy = wire_time(len, self.cfg.link_rate_bps);
        self.mac.set(start + occupancy);
        self.fifo.push_back((start + occupancy, bytes));
        self.fifo_bytes += bytes;
        self.frames += 1;
        self.bytes += len as u64;
        (start, ready)
    }

    pub fn report(&self, r: &mut Report) {
        r.count("tx_frames", self.frames);
        r.count("tx_bytes", self.bytes);
    }
}

/// The frames at the end of `out` not yet written back get their status at `at`.
fn written(out: &mut [Sent], at: Time) {
    for s in out.iter_mut().rev().take_while(|s| s.status == Time::ZERO) {
        s.status = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::pcie::PcieConfig;
    use crate::bus::BusConfig;
    use crate::time::Duration;

    fn bus() -> HostBus {
        let link = PcieConfig::gen3x8();
        HostBus::new(BusConfig::Pcie { link, read_latency: Duration::from_ns(500) }, Duration::from_us(10))
    }

    #[test]
    fn frames_leave_at_line_rate_after_the_reads() {
        let cfg = NicConfig { link_rate_bps: 10_000_000_000, tx_writeback: 8, tx_desc_fetch: 40, ..NicConfig::gigabit() };
        let mut tx = Tx::new(cfg.clone());
        let mut ring = TxRing::new(cfg.tx_ring);
        let mut bus = bus();
        for _ in 0..64 {
            ring.fill(Frame { bytes: vec![0; 60], meta: Default::default() });
        }
        assert_eq!(ring.room(), 255 - 64);
        let sent = tx.tail(Time::ZERO, &mut bus, &mut ring);
        assert_eq!(sent.len(), 64);
        // Descriptor fetch then data read: two round trips before the first bit.
        assert!(sent[0].start > Time::ZERO + Duration::from_ns(1000));
        let gaps: Vec<u64> = sent.windows(2).map(|w| w[1].start.ps() - w[0].start.ps()).collect();
        assert!(gaps.iter().all(|g| *g >= 67_200), "never faster than 64-byte frames at 10 Gb/s");
        assert!(gaps.iter().filter(|g| **g == 67_200).count() > 32, "mostly back to back: {gaps:?}");
        assert_eq!(ring.reclaim(Time::ZERO + Duration::from_ms(1)), 64);
        assert_eq!(ring.room(), 255);
    }

    #[test]
    fn a_segmenting_adapter_cuts_a_large_send_from_one_descriptor() {
        use crate::nic::firmware::{csum, testing, tso};
        let cfg = NicConfig { tso: true, ..NicConfig::gigabit() };
        let mut tx = Tx::new(cfg.clone());
        let mut ring = TxRing::new(cfg.tx_ring);
        let mut bus = bus();
        // A 10,000-byte send as a stack with offload leaves it: headers, no TCP checksum.
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let mut send = testing::template_bytes(5001, 7, 1000, 1, true, false);
        send.truncate(54); // its headers, not the padding of a short frame
        send.extend_from_slice(&data);
        ring.fill(Frame { bytes: send, meta: FrameMeta { gso: 1460, ..Default::default() } });
        let sent = tx.tail(Time::ZERO, &mut bus, &mut ring);
        let frames: Vec<Vec<u8>> = sent.iter().map(|s| s.frame.bytes.clone()).collect();
        assert_eq!(frames.len(), 7, "ceil(10000 / 1460) segments");
        assert!(frames.iter().all(|f| !csum::verify(f).bad()), "each with its checksums");
        assert!(tso::reassemble(&frames).unwrap() == data, "the send's data, in order");
        assert!(sent.windows(2).all(|w| w[1].start > w[0].start), "one after another on the wire");
        assert_eq!(ring.reclaim(Time::ZERO + Duration::from_ms(1)), 1, "one descriptor, one status");
        let mut r = Report::default();
        tx.report(&mut r);
        assert_eq!(r.get("tx_frames"), Some(7.0));
    }

    #[test]
    fn a_command_block_completes_once_its_frame_is_on_the_wire() {
        let mut statuses = Vec::new();
        for done in [TxDone::Read, TxDone::Sent] {
            let cfg = NicConfig { tx_done: done, ..NicConfig::gigabit() };
            let mut tx = Tx::new(cfg.clone());
            let mut ring = TxRing::new(cfg.tx_ring);
            ring.fill(Frame { bytes: vec![0; 1514], meta: Default::default() });
            let sent = tx.tail(Time::ZERO, &mut bus(), &mut ring);
            let wire_end = sent[0].start + wire_time(1514, cfg.link_rate_bps);
            statuses.push((sent[0].status, wire_end));
            assert_eq!(ring.reclaim(sent[0].status), 1, "reclaimable from its status");
        }
        let [(read, wire_end), (sent, _)] = statuses[..] else { unreachable!() };
        assert!(read < wire_end, "the 8254x's status: once the frame is read ({read:?} before {wire_end:?})");
        assert!(sent > wire_end, "a command block's: after the last bit ({sent:?} after {wire_end:?})");
    }
}
