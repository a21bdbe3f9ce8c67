//! The receiving side: the MAC puts each arriving frame in adapter memory; the
//! firmware verifies its checksums and reports them, optionally merges TCP
//! segments (LRO) and packs frames into one host buffer (packet coalescing),
//! then moves them by DMA into buffers the host posted and writes an event. The
//! host polls the event ring, optionally merges segments itself (GRO), counts and
//! checks what arrived, and posts buffers back in batches.

use crate::bus::{HostBus, Purpose};
use crate::engine::Ctx;
use crate::engine::Msg;
use crate::nic::firmware::gro::Out;
use crate::nic::firmware::headers::Layout;
use crate::nic::firmware::{chunk, csum};
use crate::nic::smart::config::ChecksumAt;
use crate::nic::smart::layout::*;
use crate::nic::smart::node::{Due, HostStep, Programmable};
use crate::observe::Report;
use crate::time::Time;
use crate::wire::{verify_checksums, Frame, FrameMeta};
use crate::xdp::{RxCtx, Verdict};

/// Receive work runs on the second processor where there is one.
const RX_CPU: usize = 1;
const RX_EVENTS: u64 = EVENT_RING + EVENT_SLOTS * 16;

/// Something ready to move to one host buffer: its bytes, frames and segments.
#[derive(Debug)]
pub(super) struct Ready {
    bytes: Vec<u8>,
    frames: u32,
    segments: u32,
}

impl Programmable {
    pub(super) fn post_initial_buffers(&mut self) {
        self.recv.posted = self.cfg.host.rx_buffers as u64;
    }

    fn rx_slots(&self) -> u64 {
        let slot = (self.cfg.adapter.mtu as u64 + 18).next_multiple_of(64);
        (self.cfg.adapter.rx_memory_bytes / slot).max(1)
    }

    /// A frame's last bit has arrived from the wire.
    pub(super) fn arrive(&mut self, mut bytes: Vec<u8>, bus: &mut HostBus, ctx: &mut Ctx) {
        let now = ctx.now();
        self.recv.frames_in += 1;
        self.recv.first.get_or_insert(now);
        if self.recv.held >= self.rx_slots() {
            self.recv.overruns += 1;
            return;
        }
        self.recv.held += 1;
        let costs = &self.cfg.adapter.costs;
        let (rx_frame, per_byte, lro_cost) = (costs.rx_frame, costs.checksum_per_byte, costs.lro);
        let mut t = self.hw.memory(now, bytes.len() as u64);
        let checksum = self.cfg.adapter.checksum;
        let cycles = rx_frame
            + (per_byte * checksum.firmware_bytes(bytes.len(), Layout::of(&bytes).map_or(bytes.len(), |l| l.header_len())) as f64) as u64;
        if checksum == ChecksumAt::Firmware {
            t = self.hw.memory(t, bytes.len() as u64);
        }
        if csum::verify(&bytes).bad() {
            self.recv.bad_checksums += 1;
        }
        t = self.hw.run(RX_CPU, t, cycles);
        if let Some(xdp) = &self.cfg.receive.xdp {
            t = self.hw.run(RX_CPU, t, xdp.cycles);
            // An adapter has no other port to redirect to, nor sockets or host processors.
            let verdict = match xdp.run(&mut bytes, RxCtx::ONE) {
                Verdict::Redirect(_) | Verdict::User(_) | Verdict::Cpu(_) => Verdict::Aborted,
                v => v,
            };
            self.recv.xdp.count(verdict);
            match verdict {
                Verdict::Pass => {}
                Verdict::Tx => {
                    self.recv.held -= 1;
                    let start = self.hw.transmit(t, bytes.len());
                    ctx.send_at(self.wire(), start, Msg::frame(Frame { bytes, meta: FrameMeta { created: t, ..FrameMeta::default() } }));
                    return;
                }
                _ => {
                    self.recv.held -= 1;
                    return;
                }
            }
        }
        if !self.cfg.receive.to_host {
            // Counted as a sink counts: Ethernet payload, arrival times, the
            // first frame only opening the interval.
            self.recv.held -= 1;
            if self.recv.counted > 0 {
                self.recv.counted_bytes += bytes.len().max(60) as u64 - 14;
            }
            self.recv.counted += 1;
            self.recv.last = now;
            return;
        }
        self.recv.arrived_for_driver.push_back(now);
        self.recv.arrived_for_stack.push_back(now);
        let outs = match &mut self.lro {
            Some(lro) => {
                t = self.hw.run(RX_CPU, t, lro_cost);
                lro.push(&bytes, t)
            }
            None => vec![Out { bytes, segments: 1, reason: None }],
        };
        self.take_in(outs, t, bus, ctx);
    }

    /// Frames ready for the host: pack them (coalescing) or queue each alone.
    fn take_in(&mut self, outs: Vec<Out>, mut t: Time, bus: &mut HostBus, ctx: &mut Ctx) {
        for o in outs {
            match &mut self.coalescer {
                Some(c) => {
                    self.pending_segments += o.segments;
                    let batches = c.push(&o.bytes, t);
                    t = self.hw.run(RX_CPU, t, self.cfg.adapter.costs.coalesce);
                    for b in batches {
                        let segments = std::mem::take(&mut self.pending_segments);
                        self.ready.push_back(Ready { bytes: b.bytes, frames: b.frames, segments });
                    }
                }
                None => self.ready.push_back(Ready { bytes: o.bytes, frames: 1, segments: o.segments }),
            }
        }
        self.arm_rx_flush(ctx);
        self.dma_out(t, bus, ctx);
    }

    fn arm_rx_flush(&mut self, ctx: &mut Ctx) {
        let due = [self.coalescer.as_ref().and_then(|c| c.deadline()), self.lro.as_ref().and_then(|g| g.deadline())];
        if let Some(due) = due.into_iter().flatten().min() {
            let now = ctx.now();
            self.flush_timer.set(&mut self.timers, ctx, due, now, Due::RxFlush);
        }
    }

    pub(super) fn rx_flush(&mut self, bus: &mut HostBus, ctx: &mut Ctx) {
        let now = ctx.now();
        self.flush_timer.fired();
        let outs = self.lro.as_mut().map_or_else(Vec::new, |g| g.expire(now));
        self.take_in(outs, now, bus, ctx);
        if let Some(b) = self.coalescer.as_mut().and_then(|c| c.expire(now)) {
            let segments = std::mem::take(&mut self.pending_segments);
            self.ready.push_back(Ready { bytes: b.bytes, frames: b.frames, segments });
            self.dma_out(now, bus, ctx);
        }
        self.arm_rx_flush(ctx);
    }

    /// Move ready buffers into posted host buffers, each with its event.
    fn dma_out(&mut self, mut t: Time, bus: &mut HostBus, ctx: &mut Ctx) {
        let (dma_setup, event_cost) = (self.cfg.adapter.costs.dma_setup, self.cfg.adapter.costs.event);
        while self.recv.posted > 0 {
            let Some(r) = self.ready.pop_front() else { break };
            self.recv.posted -= 1;
            let slot = self.recv.next_slot % self.cfg.host.rx_buffers as u64;
            self.recv.next_slot += 1;
            t = self.hw.run(RX_CPU, t, dma_setup);
            let done = self.hw.write_host(bus, t, RX_BUFFERS + slot * RX_SLOT, &r.bytes, Purpose::RxData).expect("mapped");
            self.recv.held -= r.segments as u64;
            t = self.hw.run(RX_CPU, done, event_cost);
            let mut event = [0u8; 16];
            event[..4].copy_from_slice(&(r.bytes.len() as u32).to_le_bytes());
            event[4..8].copy_from_slice(&r.frames.to_le_bytes());
            let seen = self.hw.write_host(bus, t, RX_EVENTS + (slot % EVENT_SLOTS) * 16, &event, Purpose::RxStatus).expect("mapped");
            self.recv.slots.insert(slot, (r.bytes.len(), r.frames, r.segments, seen));
            self.timers.arm(ctx, seen, Due::RxDone(slot));
        }
    }

    /// The host adapter posted `n` more buffers.
    pub(super) fn buffers_posted(&mut self, n: u64, bus: &mut HostBus, ctx: &mut Ctx) {
        let t = self.hw.run(RX_CPU, ctx.now(), self.cfg.adapter.costs.doorbell);
        self.recv.posted += n;
        self.dma_out(t, bus, ctx);
    }

    /// The host finds a filled buffer in its event ring: it takes the buffer,
    /// merges segments (GRO, if on), hands each frame or merged segment to the
    /// protocol (copying its payload unless zero copy) and posts buffers back
    /// in batches.
    pub(super) fn host_receive(&mut self, slot: u64, now: Time, ctx: &mut Ctx) -> HostStep {
        let Some((len, frames, segments, seen)) = self.recv.slots.remove(&slot) else { return HostStep::default() };
        // Counted as the host takes them, as the segments they carry are: a
        // backlog's transfers are booked ahead, some to end after the run.
        self.recv.batches += 1;
        self.recv.delivered_segments += segments as u64;
        let n = (segments as usize).min(self.recv.arrived_for_driver.len());
        let arrivals = self.recv.arrived_for_driver.drain(..n);
        self.taken.extend(arrivals.map(|a| (a, seen)));
        let mut buf = vec![0u8; len];
        self.hw.mem.read(RX_BUFFERS + slot * RX_SLOT, &mut buf).expect("mapped");
        let list = if self.coalescer.is_some() { chunk::split(&buf).unwrap_or_default() } else { std::iter::once(0..len).collect() };
        // The wire frames each piece stands for: one a coalesced frame, all of
        // the buffer's an LRO segment.
        let weight = if self.coalescer.is_some() { 1 } else { segments };
        if list.len() != frames as usize {
            self.recv.host_bad += frames as u64;
        }
        let mut outs = Vec::new();
        let mut gro_in = 0u64;
        for r in list {
            match &mut self.gro {
                Some(g) => {
                    gro_in += 1;
                    outs.extend(g.push_weighted(&buf[r], now, weight));
                }
                None => outs.push(Out { bytes: buf[r].to_vec(), segments: weight, reason: None }),
            }
        }
        let mut cost = self.deliver(outs);
        cost.completions += 1;
        cost.buffers_taken += 1;
        cost.gro_segments += gro_in;
        self.recv.to_repost += 1;
        if self.recv.to_repost >= self.cfg.host.repost_batch as u64 {
            cost.doorbell = Some(Due::RxPost(std::mem::take(&mut self.recv.to_repost)));
        }
        self.arm_gro(ctx);
        cost
    }

    /// The protocol takes frames (or merged segments): checked, counted, copied.
    fn deliver(&mut self, outs: Vec<Out>) -> HostStep {
        let mut cost = HostStep { delivers: true, ..Default::default() };
        // The host's own stack pays for its protocol work and copies itself.
        let stack = self.stack_frames();
        for o in outs {
            let payload = match verify_checksums(&o.bytes) {
                Ok(v) => v.payload.len() as u64,
                Err(_) => {
                    self.recv.host_bad += 1;
                    0
                }
            };
            self.recv.delivered_frames += 1;
            self.recv.delivered_payload += payload;
            let n = (o.segments as usize).min(self.recv.arrived_for_stack.len());
            self.went_up.extend(self.recv.arrived_for_stack.drain(..n));
            if stack {
                self.delivered.push(o.bytes);
            } else {
                cost.protocol_passes += 1;
                cost.copy_bytes += payload;
            }
        }
        cost
    }

    fn arm_gro(&mut self, ctx: &mut Ctx) {
        if let Some(due) = self.gro.as_ref().and_then(|g| g.deadline()) {
            let now = ctx.now();
            self.gro_timer.set(&mut self.timers, ctx, due, now, Due::GroFlush);
        }
    }

    /// The driver's GRO timeout: what it holds goes up the stack.
    pub(super) fn gro_flush(&mut self, now: Time, ctx: &mut Ctx) -> HostStep {
        self.gro_timer.fired();
        let outs = self.gro.as_mut().map_or_else(Vec::new, |g| g.expire(now));
        let cost = self.deliver(outs);
        self.arm_gro(ctx);
        cost
    }

    pub(super) fn recv_report(&self, r: &mut Report) {
        let s = &self.recv;
        if self.cfg.receive.xdp.is_some() {
            s.xdp.report(r, "xdp_offload_");
        }
        let Some(first) = s.first else { return };
        let secs = s.last.since(first).as_secs_f64().max(1e-12);
        r.count("rx_frames", s.frames_in);
        r.count("rx_overruns", s.overruns);
        r.count("rx_bad_checksums", s.bad_checksums);
        if !self.cfg.receive.to_host {
            r.count("rx_counted", s.counted);
            r.real("rx_frames_per_s", s.counted.saturating_sub(1) as f64 / secs);
            r.real("rx_l2_payload_mbps", s.counted_bytes as f64 * 8.0 / secs / 1e6);
            return;
        }
        r.count("rx_host_buffers", s.batches);
        r.count("rx_delivered_segments", s.delivered_segments);
        r.count("rx_delivered_frames", s.delivered_frames);
        r.count("rx_payload_bytes", s.delivered_payload);
        r.count("rx_host_bad", s.host_bad);
        r.real("rx_goodput_mbps", s.delivered_payload as f64 * 8.0 / secs / 1e6);
        r.real("rx_frames_per_s", s.delivered_segments as f64 / secs);
        r.real("rx_frames_per_host_buffer", s.delivered_segments as f64 / s.batches.max(1) as f64);
        for (name, g) in [("lro", &self.lro), ("gro", &self.gro)] {
            if let Some(g) = g {
                r.count(&format!("{name}_merged_segments"), g.merged_segments);
            }
        }
    }
}
