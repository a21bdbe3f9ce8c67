//! The sending side: the host's driver hands the adapter large TCP sends with
//! a header template (segmented directly from host memory, or stored and
//! forwarded), or chunks of ready frames (fragmentation; one frame per chunk is
//! the standard firmware), each a descriptor in host memory and a doorbell;
//! the firmware can also make frames itself or run a DMA loop.

use crate::bus::{HostBus, Purpose};
use crate::engine::{Ctx, Msg};
use crate::nic::firmware::tso::{plan, Template};
use crate::nic::firmware::{chunk, csum};
use crate::nic::smart::config::{ChecksumAt, Segmentation, Workload};
use crate::nic::smart::layout::*;
use crate::nic::smart::node::{Due, Programmable};
use crate::observe::Report;
use crate::time::Time;
use crate::wire::checksum::accumulate;
use crate::wire::endpoint::udp_frame;
use crate::wire::ethernet::{FCS, MIN_FRAME};
use crate::wire::{Frame, FrameMeta};

const TX_CPU: usize = 0;
/// Ethernet, IPv4 and UDP headers of the frames a host's frame sender or the
/// firmware's generator makes.
const UDP_HEADERS: usize = 42;

impl Programmable {
    /// The firmware takes send `n`: fetch its descriptor, then cut and send it.
    pub(super) fn adapter_send(&mut self, n: u64, bus: &mut HostBus, ctx: &mut Ctx) {
        let costs = self.cfg.adapter.costs.clone();
        let slot = n % SEND_SLOTS;
        self.send.making = self.send.made.remove(&n);
        let t = self.hw.run(TX_CPU, ctx.now(), costs.doorbell + costs.dma_setup);
        let desc = A_DESC + slot * SEND_SLOT;
        let t = self.hw.to_adapter(bus, t, SEND_RING + slot * SEND_SLOT, desc, SEND_SLOT as usize, false).expect("mapped");
        let mut d = [0u8; SEND_SLOT as usize];
        self.hw.mem.read(desc, &mut d).expect("mapped");
        let (addr, len, extra) = parse_descriptor(&d);
        // The host buffer is free once its payload has been read: after the
        // last gather in direct segmentation, after the copy in store and forward.
        let (fw, released) = if extra & SEGMENT != 0 {
            let (h, mss) = ((extra & 0xff) as usize, (extra >> 8 & 0xffff) as usize);
            self.segment_send(bus, t, addr, len as usize, (&d[16..16 + h], mss), ctx)
        } else {
            self.chunk_send(bus, t, addr, len as usize, extra & CHUNK != 0, ctx)
        };
        self.send.making = None;
        let done = fw.max(released);
        let t = self.hw.run(TX_CPU, done, costs.event);
        let mut event = [0u8; 16];
        event[..8].copy_from_slice(&n.to_le_bytes());
        let at = self.hw.write_host(bus, t, EVENT_RING + (n % EVENT_SLOTS) * 16, &event, Purpose::TxStatus).expect("mapped");
        self.timers.arm(ctx, at, Due::SendDone(n));
    }

    /// Hand one frame to the MAC: gather it, finish its checksums if the MAC does
    /// them, and send it when the wire is free. Returns when the gather is done.
    fn mac_send(
        &mut self,
        bus: &mut HostBus,
        at: Time,
        pieces: &[(u64, usize)],
        fix: impl FnOnce(&mut Vec<u8>),
        payload: usize,
        ctx: &mut Ctx,
    ) -> (Time, Time) {
        let (ready, mut bytes) = self.hw.gather(bus, at, pieces).expect("mapped");
        fix(&mut bytes);
        if bytes.len() < MIN_FRAME - FCS {
            bytes.resize(MIN_FRAME - FCS, 0);
        }
        let start = self.hw.transmit(ready, bytes.len());
        // A send's frames were made with it; the firmware's own when gathered.
        let meta = FrameMeta { created: self.send.making.unwrap_or(at), ..Default::default() };
        ctx.send_at(self.wire(), start, Msg::frame(Frame { bytes, meta }));
        self.send.frames += 1;
        self.send.payload += payload as u64;
        self.send.last_wire_end = self.hw.wire_idle_at();
        (ready, start)
    }

    /// Segmentation of one large send (mechanism 1), directly or by store and
    /// forward: its header template, and the segment size the host's stack asked for.
    fn segment_send(
        &mut self,
        bus: &mut HostBus,
        at: Time,
        addr: u64,
        len: usize,
        (template, mss): (&[u8], usize),
        ctx: &mut Ctx,
    ) -> (Time, Time) {
        let Ok(template) = Template::parse(template) else { return (at, at) };
        let mut released = at;
        let a = self.cfg.adapter.clone();
        let hlen = template.header_len();
        let mut fw = at;
        let mut staged: Option<(u64, u64, u64)> = None; // (send offset, length, adapter address)
        if len > mss {
            self.send.segmented_sends += 1;
        }
        for piece in plan(len, mss) {
            let payload_addr = match a.segmentation {
                Segmentation::Direct => addr + piece.offset as u64,
                Segmentation::StoreAndForward => {
                    let within = staged.filter(|s| (piece.offset as u64) >= s.0 && (piece.offset + piece.len) as u64 <= s.0 + s.1);
                    match within {
                        Some(s) => s.2 + (piece.offset as u64 - s.0),
                        None => {
                            // Stage the next run of whole segments, up to half the ring.
                            let run = ((STAGING_HALF as usize / mss.max(1)).max(1) * mss).min(len - piece.offset);
                            let (dst, free) = self.send.staging.take(run as u64);
                            let t = self.hw.run(TX_CPU, fw.max(free), a.costs.dma_setup);
                            fw = self.hw.to_adapter(bus, t, addr + piece.offset as u64, dst, run, true).expect("mapped");
                            released = fw;
                            staged = Some((piece.offset as u64, run as u64, dst));
                            dst
                        }
                    }
                }
            };
            let mut cycles = a.costs.segment;
            let mut sum = 0;
            if a.checksum == ChecksumAt::Firmware {
                let mut data = vec![0u8; piece.len];
                self.hw.mem.read(payload_addr, &mut data).expect("mapped");
                sum = accumulate(0, &data);
                fw = self.hw.memory(fw, piece.len as u64);
            }
            cycles += (a.costs.checksum_per_byte * a.checksum.firmware_bytes(piece.len, hlen) as f64) as u64;
            fw = self.hw.run(TX_CPU, fw, cycles);
            let mut header = vec![0u8; hlen];
            template.write_header(piece, sum, &mut header);
            let hdr_addr = A_HEADERS + (self.send.frames % A_HEADER_SLOTS) * 128;
            self.hw.mem.write(hdr_addr, &header).expect("mapped");
            fw = self.hw.memory(fw, hlen as u64);
            // The MAC sums the payload when the firmware has not (the split design
            // combines its sum with the firmware's header sum: the same bytes).
            let at_mac = a.checksum != ChecksumAt::Firmware;
            let fix = |b: &mut Vec<u8>| {
                if at_mac {
                    let (h, p) = b.split_at_mut(hlen);
                    template.write_header(piece, accumulate(0, p), h);
                }
            };
            let (gathered, _) = self.mac_send(bus, fw, &[(hdr_addr, hlen), (payload_addr, piece.len)], fix, piece.len, ctx);
            if staged.is_some() {
                self.send.staging.used_until(gathered);
            } else {
                released = gathered;
            }
        }
        (fw, released)
    }

    /// A buffer of ready frames: one DMA into adapter memory, then each frame to
    /// the MAC (split from the buffer when its descriptor says it is a
    /// `chunk`), checksums inserted.
    fn chunk_send(&mut self, bus: &mut HostBus, at: Time, addr: u64, len: usize, chunked: bool, ctx: &mut Ctx) -> (Time, Time) {
        let a = self.cfg.adapter.clone();
        let (dst, free) = self.send.staging.take(len as u64);
        let t = self.hw.run(TX_CPU, at.max(free), a.costs.dma_setup);
        let mut fw = self.hw.to_adapter(bus, t, addr, dst, len, true).expect("mapped");
        let released = fw;
        let mut buf = vec![0u8; len];
        self.hw.mem.read(dst, &mut buf).expect("mapped");
        let frames = if chunked { chunk::split(&buf) } else { Ok(std::iter::once(0..len).collect()) };
        let Ok(frames) = frames else { return (fw, released) };
        for r in frames {
            let mut cycles = a.costs.tx_frame + if chunked { a.costs.split } else { 0 };
            if a.checksum == ChecksumAt::Firmware {
                fw = self.hw.memory(fw, r.len() as u64);
            }
            cycles += (a.costs.checksum_per_byte * a.checksum.firmware_bytes(r.len(), UDP_HEADERS) as f64) as u64;
            // The firmware takes the next frame from the chunk when the MAC has
            // room for it, and does other ready work (the next send's DMA) between.
            fw = self.hw.run(TX_CPU, fw.max(self.hw.mac_room()), cycles);
            let payload = r.len().saturating_sub(42);
            let fix = |b: &mut Vec<u8>| {
                let _ = csum::insert(b);
            };
            let (gathered, _) = self.mac_send(bus, fw, &[(dst + r.start as u64, r.len())], fix, payload, ctx);
            self.send.staging.used_until(gathered);
        }
        (fw, released)
    }

    /// The firmware makes one frame in adapter memory and sends it, then comes
    /// back for the next when that frame starts on the wire.
    pub(super) fn generate(&mut self, bus: &mut HostBus, ctx: &mut Ctx) {
        let Workload::Generate { from, to, frame_size, count } = self.cfg.workload else { return };
        if count.is_some_and(|c| self.send.frames >= c) {
            return;
        }
        let cost = self.cfg.adapter.costs.generate;
        let fw = self.hw.run(TX_CPU, ctx.now(), cost);
        let f = udp_frame(from, to, self.send.frames, frame_size, false);
        let at = A_STAGING + (self.send.frames % 2) * STAGING_HALF;
        self.hw.mem.write(at, &f).expect("mapped");
        let fw = self.hw.memory(fw, f.len() as u64);
        self.send.first.get_or_insert(ctx.now());
        let payload = f.len() - 42;
        let (_, start) = self.mac_send(bus, fw, &[(at, f.len())], |_| {}, payload, ctx);
        self.timers.arm(ctx, start.max(fw), Due::Generate);
    }

    /// The firmware's DMA loop programs its next transfer (of `count`, each
    /// of `length` bytes, programmed after the last completes) and wakes when
    /// it completes. The bus is shared: other masters' bookings come between.
    pub(super) fn dma_next(&mut self, bus: &mut HostBus, ctx: &mut Ctx) {
        let Workload::Dma { to_host, length, count } = self.cfg.workload else { return };
        if self.send.dma_programmed == count {
            return;
        }
        let t = self.hw.run(TX_CPU, ctx.now(), self.cfg.adapter.costs.dma_setup);
        let host = RX_BUFFERS + (self.send.dma_programmed % 16) * RX_SLOT;
        let done = if to_host {
            self.hw.to_host(bus, t, A_STAGING, host, length as usize, Purpose::RxData)
        } else {
            self.hw.to_adapter(bus, t, host, A_STAGING, length as usize, true)
        }
        .expect("mapped");
        self.send.dma_programmed += 1;
        self.timers.arm(ctx, done, Due::DmaDone);
    }

    /// A transfer of the DMA loop completed at `now`.
    pub(super) fn dma_done(&mut self, now: Time) {
        let Workload::Dma { length, .. } = self.cfg.workload else { return };
        self.send.dma_bytes += length as u64;
        self.send.last_wire_end = now;
    }

    pub(super) fn send_report(&self, r: &mut Report) {
        let s = &self.send;
        let Some(first) = s.first else { return };
        let secs = s.last_wire_end.since(first).as_secs_f64().max(1e-12);
        if let Workload::Dma { .. } = self.cfg.workload {
            r.count("dma_bytes", s.dma_bytes);
            r.real("dma_mbps", s.dma_bytes as f64 * 8.0 / secs / 1e6);
            return;
        }
        r.count("tx_frames", s.frames);
        r.count("tx_payload_bytes", s.payload);
        r.count("segmented_sends", s.segmented_sends);
        r.real("tx_goodput_mbps", s.payload as f64 * 8.0 / secs / 1e6);
        r.real("tx_frames_per_s", s.frames as f64 / secs);
    }
}
