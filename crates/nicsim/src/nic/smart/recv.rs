//! The receiving side: the MAC puts each arriving frame in adapter memory; the
//! firmware verifies its checksums and reports them, optionally merges TCP
//! segments (LRO) and packs frames into one host buffer (packet coalescing),
//! then moves them by DMA into buffers the host posted and writes an event
//! (its length, frames and wire frames: `layout::rx_event`). The host's driver
//! (`host::event_driver`) takes it from there.

use crate::bus::{HostBus, Purpose};
use crate::engine::Ctx;
use crate::engine::Msg;
use crate::nic::firmware::csum;
use crate::nic::firmware::gro::Out;
use crate::nic::firmware::headers::Layout;
use crate::nic::smart::config::ChecksumAt;
use crate::nic::smart::layout::*;
use crate::nic::smart::node::{Due, Programmable};
use crate::observe::Report;
use crate::time::Time;
use crate::wire::{Frame, FrameMeta};
use crate::xdp::{RxCtx, Verdict};

/// Receive work runs on the second processor where there is one.
const RX_CPU: usize = 1;

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
        self.recv.arrived.push_back(now);
        let outs = match &mut self.lro {
            Some(lro) => {
                t = self.hw.run(RX_CPU, t, lro_cost);
                lro.push(&bytes, t)
            }
            None => vec![Out { bytes, segments: 1, reason: None, gso: 0 }],
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
            let event = rx_event(r.bytes.len() as u32, r.frames, r.segments);
            let seen = self.hw.write_host(bus, t, RX_EVENTS + (slot % EVENT_SLOTS) * 16, &event, Purpose::RxStatus).expect("mapped");
            let n = (r.segments as usize).min(self.recv.arrived.len());
            self.recv.slots.insert(slot, self.recv.arrived.drain(..n).collect());
            self.timers.arm(ctx, seen, Due::RxDone(slot));
        }
    }

    /// The host adapter posted `n` more buffers.
    pub(super) fn buffers_posted(&mut self, n: u64, bus: &mut HostBus, ctx: &mut Ctx) {
        let t = self.hw.run(RX_CPU, ctx.now(), self.cfg.adapter.costs.doorbell);
        self.recv.posted += n;
        self.dma_out(t, bus, ctx);
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
        if let Some(g) = &self.lro {
            r.count("lro_merged_segments", g.merged_segments);
        }
    }
}
