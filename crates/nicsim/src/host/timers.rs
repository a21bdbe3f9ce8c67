//! What a host does when one of its timers falls due: the host's own (`Tag`),
//! or one of an adapter's, by its kind (`RingDue`, `OffloadDue`, a programmable
//! adapter's `Due`).

use crate::engine::timers::{part_of, space_of};
use crate::engine::{Ctx, Msg, PortId};
use crate::host::cpu::{Item, OffloadStep};
use crate::host::machine::Machine;
use crate::host::offload::OffloadDue;
use crate::host::port::{Adapter, RingDue};
use crate::host::tag::{IrqAlarm, Tag};
use crate::wire::ethernet::wire_time;

impl Machine {
    /// Inlined into `handle`, as it was before it had a file of its own: it is
    /// on the path of every step end.
    #[inline(always)]
    pub(super) fn timer(&mut self, tag: u64, ctx: &mut Ctx) {
        let now = ctx.now();
        if let Some(p) = part_of(space_of(tag)) {
            // An adapter's own timer: a timer taken back brings nothing.
            match &mut self.ports[p].adapter {
                Adapter::Ring(r) => {
                    if let Some(due) = r.timers.fire(tag) {
                        self.ring_due(p, due, ctx);
                    }
                }
                Adapter::Offload(o) => {
                    if let Some(due) = o.timers.fire(tag) {
                        self.offload_due(p, due, ctx);
                    }
                }
                Adapter::Programmable(a) => {
                    if let Some(due) = a.timers.fire(tag) {
                        self.programmable_due(p, due, ctx);
                    }
                }
            }
            return;
        }
        // A timer taken back brings nothing.
        let Some(tag) = self.timers.fire(tag) else { return };
        match tag {
            Tag::Irq(p) if self.ports[p].irq.fire(now) => self.interrupt(p, ctx),
            Tag::StepEnd(k) => {
                self.cpus[k].end_timer = None;
                self.end_step(k, ctx)
            }
            // Also when the sessions asked for a time already past when it was
            // armed: it fires at once (it used to be dropped).
            Tag::Sessions => {
                self.sessions_timer.fired();
                self.cpus[0].queue.push_back(Item::SessionTimer);
                self.dispatch(0, ctx);
            }
            Tag::Thread(k) => {
                if k == self.cfg.driver.poll_cpu as usize {
                    self.wake_poller(now);
                }
                self.blast_waiting = false;
                self.dispatch(k, ctx);
            }
            _ => {}
        }
    }

    /// What fell due at ring adapter `p`.
    #[inline]
    fn ring_due(&mut self, p: usize, due: RingDue, ctx: &mut Ctx) {
        let now = ctx.now();
        match due {
            RingDue::RxPost(n) => {
                let bus = &mut self.buses[self.ports[p].bus];
                self.ports[p].ring().rx.post(n, now, bus, &mut self.visible);
                self.completed(p, ctx);
            }
            RingDue::RxFlush => {
                let bus = &mut self.buses[self.ports[p].bus];
                let ring = self.ports[p].ring();
                ring.flush_timer.fired();
                ring.rx.flush(now, bus, &mut self.visible);
                self.completed(p, ctx);
            }
            RingDue::TxTail => {
                let measuring = self.measuring(now);
                let bus = &mut self.buses[self.ports[p].bus];
                let (tx_interrupt, rate) = (self.cfg.adapters[p].nic.tx_interrupt, self.cfg.adapters[p].nic.link_rate_bps);
                for (at, frame) in self.ports[p].ring().transmit(now, bus) {
                    if tx_interrupt {
                        self.ports[p].ring().timers.arm(ctx, at + wire_time(frame.len(), rate), RingDue::TxDone);
                    }
                    if let Some(w) = &mut self.wires {
                        w.sent(&frame.bytes, at);
                    }
                    if measuring {
                        self.latency.sent(frame.meta.created, at);
                    }
                    ctx.send_at(p as PortId, at, Msg::frame(frame));
                }
                self.wake_sender_for(p, ctx);
                self.sends_in_adapter(p, ctx);
            }
            // A polling driver finds the sends done on its passes.
            RingDue::TxDone if !self.polling() => {
                self.ports[p].irq.completed(now, 1, &mut IrqAlarm { timers: &mut self.timers, ctx, port: p });
            }
            _ => {}
        }
    }

    /// What fell due at offload engine `p`.
    fn offload_due(&mut self, p: usize, due: OffloadDue, ctx: &mut Ctx) {
        match due {
            OffloadDue::Arrive => self.offload_arrived(p, ctx),
            OffloadDue::RunEnd => self.offload_run_end(p, ctx),
            OffloadDue::Timer => self.offload_timer(p, ctx),
            OffloadDue::Send => {
                self.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Send));
                self.dispatch(0, ctx);
            }
            OffloadDue::Ask(s) => {
                self.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Ask(s)));
                self.dispatch(0, ctx);
            }
        }
    }
}
