//! The driver's side of sending on a ring adapter. A frame goes behind a free
//! descriptor, or waits in the driver's send queue while the ring is full (an
//! NDIS or ODI driver queues the packet; Linux stops its queue) until a pass of
//! the driver reclaims sent descriptors. While frames wait, the adapter
//! interrupts when the oldest outstanding frame is sent: a transmit-complete
//! interrupt, and under NetWare's polling the AppNote's backup interrupt on
//! transmit buffers full. Reclaiming itself costs no cycles of its own.
//!
//! A dumb adapter's driver builds each frame's media header and transmit
//! command (`media_frame`) as it hands the frame to the adapter: in the send
//! call when a descriptor is free, else in the pass that frees one (the
//! AppNote's dumb bus master: "the ISR performs packet processing and
//! coordinates the receive or transmit operation"). The work is the host's,
//! and the adapter sees the frame only when it is done.

use crate::engine::Ctx;
use crate::host::machine::{IrqAlarm, Machine, Tag};
use crate::host::port::{Driver, Port};
use crate::time::Time;
use crate::wire::Frame;

impl Machine {
    /// Cycles a dumb adapter `p`'s driver spends building `n` frames' media
    /// headers and transmit commands as it hands them over.
    pub(super) fn build_cycles(&self, p: usize, n: u32) -> u64 {
        match self.ports[p].ring_ref() {
            Some(r) if !r.smart => u64::from(n) * self.cfg.costs.media_frame,
            _ => 0,
        }
    }

    /// At the start of a step that sends `transmit`: the frames that will find
    /// a free descriptor on a dumb adapter, whose driver builds them in the
    /// step's send calls; returns its cycles. The others wait for a pass that
    /// frees a descriptor, which builds them then.
    pub(super) fn build_ahead(&mut self, transmit: &[(usize, Frame)], now: Time) -> u64 {
        if self.cfg.costs.media_frame == 0 || transmit.is_empty() {
            return 0;
        }
        let mut cycles = 0;
        for p in 0..self.ports.len() {
            let n = transmit.iter().filter(|(q, _)| *q == p).count() as u32;
            let Port { driver: Driver::Rings(ring), .. } = &mut self.ports[p] else { continue };
            let rings = self.adapters.rings(p);
            if n == 0 || ring.smart || !ring.waiting.is_empty() {
                continue;
            }
            rings.tx.reclaim(now);
            let built = n.min(rings.tx.room().saturating_sub(ring.built_ahead));
            ring.built_ahead += built;
            cycles += u64::from(built) * self.cfg.costs.media_frame;
        }
        cycles
    }

    /// Send the frames a step built: each behind a free descriptor, or into
    /// its adapter's send queue; then one tail write per batch. A dumb
    /// adapter's frame goes behind a descriptor only if the step built it
    /// (`build_ahead`). Returns the adapter, if any, where a frame the step
    /// handed down unbuilt waits beside a free descriptor (one freed while the
    /// step ran): the send call goes on to build it (`Item::Send`).
    pub(super) fn send_frames(&mut self, transmit: &mut Vec<(usize, Frame)>, now: Time, ctx: &mut Ctx) -> Option<usize> {
        let builds = self.cfg.costs.media_frame > 0;
        let mut filled = std::mem::take(&mut self.tx_filled);
        filled.clear();
        filled.resize(self.ports.len(), 0);
        let mut unbuilt = None;
        for (p, f) in transmit.drain(..) {
            if self.ports[p].events() {
                self.event_ring_send(p, f, ctx);
                continue;
            }
            let Port { driver: Driver::Rings(ring), .. } = &mut self.ports[p] else {
                unreachable!("a frame of the stack leaves by a ring or an event ring")
            };
            let rings = self.adapters.rings(p);
            // A frame built ahead takes its credit whatever befalls it: one
            // that must wait after all (another processor filled the ring) is
            // built again when it goes.
            let built = !builds || ring.smart || ring.built_ahead > 0;
            if builds && !ring.smart && built {
                ring.built_ahead -= 1;
            }
            if ring.waiting.is_empty() && built {
                if rings.tx.room() == 0 {
                    rings.tx.reclaim(now);
                }
                if rings.tx.room() > 0 {
                    rings.tx.fill(f);
                    filled[p] += 1;
                    continue;
                }
            }
            if !built {
                unbuilt = Some(p);
            }
            ring.waiting.push_back(f);
            self.tally.tx_waited += 1;
        }
        // Every step re-arms the wait of ports with frames waiting: an interrupt
        // unmasked since the last arming takes it up.
        for (p, &n) in filled.iter().enumerate() {
            self.tail_writes(p, n, now, ctx);
            if self.ports[p].ring_ref().is_some_and(|r| !r.waiting.is_empty()) {
                self.arm_send_wait(p, ctx);
            }
        }
        self.tx_filled = filled;
        // Frames this step handed down unbuilt, with a descriptor free by now.
        let p = unbuilt?;
        let tx = &mut self.adapters.rings(p).tx;
        tx.reclaim(now);
        (tx.room() > 0).then_some(p)
    }

    /// A pass of the driver over adapter `p`: reclaim sent descriptors and put
    /// waiting frames behind them, building a dumb adapter's (the tail write
    /// follows the work). Returns how many it posted and the cycles it spent.
    pub(super) fn reclaim_sends(&mut self, p: usize, now: Time, ctx: &mut Ctx) -> (u32, u64) {
        let Port { driver: Driver::Rings(ring), .. } = &mut self.ports[p] else { return (0, 0) };
        let rings = self.adapters.rings(p);
        if ring.waiting.is_empty() {
            return (0, 0);
        }
        rings.tx.reclaim(now);
        let mut n = 0;
        while rings.tx.room() > 0 {
            let Some(f) = ring.waiting.pop_front() else { break };
            rings.tx.fill(f);
            n += 1;
        }
        let still = !ring.waiting.is_empty();
        let cycles = self.build_cycles(p, n);
        self.tail_writes(p, n, now + self.cfg.clock.cycles(cycles), ctx);
        if still {
            self.arm_send_wait(p, ctx);
        }
        (n, cycles)
    }

    /// When the next frame waiting on one of ports `of` could go: the first
    /// outstanding one sent.
    pub(super) fn next_send_room_of(&self, of: impl IntoIterator<Item = usize>) -> Option<Time> {
        of.into_iter()
            .filter(|&p| self.ports[p].ring_ref().is_some_and(|r| !r.waiting.is_empty()))
            .filter_map(|p| self.adapters.rings_ref(p).tx.next_reclaim())
            .min()
    }

    fn tail_writes(&mut self, p: usize, n: u32, now: Time, ctx: &mut Ctx) {
        for _ in 0..n.div_ceil(self.cfg.driver.tx_tail_batch.max(1)) {
            self.write_register(p, self.adapters.tx_tail(p), now, ctx);
        }
    }

    /// Adapter `p` took a tail write. Frames that found its ring full while
    /// every frame in it was still on its way there had no completion to wait
    /// for; now they have one: arm the interrupt, wake a sleeping poller.
    pub(super) fn sends_in_adapter(&mut self, p: usize, ctx: &mut Ctx) {
        if self.ports[p].ring_ref().is_none_or(|r| r.waiting.is_empty()) {
            return;
        }
        self.arm_send_wait(p, ctx);
        let k = self.poller_of[p];
        if self.polling() && self.procs.poll_asleep_since[k].is_some() {
            if let Some(at) = self.adapters.rings_ref(p).tx.next_reclaim() {
                self.timers.arm(ctx, at.max(ctx.now()), Tag::Thread(k));
            }
        }
    }

    /// Frames wait on adapter `p`: it interrupts when its oldest outstanding
    /// frame is sent (if its interrupt is unmasked). One that interrupts for
    /// every frame sent does so already, where the driver takes interrupts.
    fn arm_send_wait(&mut self, p: usize, ctx: &mut Ctx) {
        if self.cfg.adapters[p].nic.tx_interrupt && !self.polling() {
            return;
        }
        let Some(at) = self.adapters.rings_ref(p).tx.next_reclaim() else { return };
        self.ports[p].irq.sends_waiting(at, &mut IrqAlarm { timers: &mut self.timers, ctx, port: p });
    }
}
