//! What a host does when one of its timers falls due: its tag (`Tag`, or a
//! programmable adapter's `Due`) says which part acts.

use crate::engine::timers::space_of;
use crate::engine::{Ctx, Msg, PortId};
use crate::host::cpu::{Item, OffloadStep};
use crate::host::machine::Machine;
use crate::host::tag::{IrqAlarm, Tag, HOST_TIMERS};
use crate::wire::ethernet::wire_time;

impl Machine {
    /// Inlined into `handle`, as it was before it had a file of its own: it is
    /// on the path of every step end.
    #[inline(always)]
    pub(super) fn timer(&mut self, tag: u64, ctx: &mut Ctx) {
        let now = ctx.now();
        let space = space_of(tag);
        if space != HOST_TIMERS {
            // A programmable adapter's own timer.
            let p = space as usize - 1;
            if let Some(due) = self.ports[p].programmable_mut().and_then(|a| a.timers.fire(tag)) {
                self.programmable_due(p, due, ctx);
            }
            return;
        }
        // A timer taken back brings nothing.
        let Some(tag) = self.timers.fire(tag) else { return };
        match tag {
            Tag::Irq(p) if self.ports[p].irq.fire(now) => self.interrupt(p, ctx),
            Tag::RxPost(p, n) => {
                let bus = &mut self.buses[self.ports[p].bus];
                self.ports[p].ring().rx.post(n, now, bus, &mut self.visible);
                self.completed(p, ctx);
            }
            Tag::RxFlush(p) => {
                let bus = &mut self.buses[self.ports[p].bus];
                let ring = self.ports[p].ring();
                ring.flush_timer = None;
                ring.rx.flush(now, bus, &mut self.visible);
                self.completed(p, ctx);
            }
            Tag::TxTail(p) => {
                let measuring = self.measuring(now);
                let bus = &mut self.buses[self.ports[p].bus];
                let (tx_interrupt, rate) = (self.cfg.adapters[p].nic.tx_interrupt, self.cfg.adapters[p].nic.link_rate_bps);
                for (at, frame) in self.ports[p].ring().transmit(now, bus) {
                    if tx_interrupt {
                        self.timers.arm(ctx, at + wire_time(frame.len(), rate), Tag::TxDone(p));
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
            Tag::TxDone(p) if !self.polling() => {
                self.ports[p].irq.completed(now, 1, &mut IrqAlarm { timers: &mut self.timers, ctx, port: p });
            }
            Tag::StepEnd(k) => {
                self.cpus[k].end_timer = None;
                self.end_step(k, ctx)
            }
            // Also when the sessions asked for a time already past when it was
            // armed: it fires at once (it used to be dropped).
            Tag::Sessions => {
                self.sessions_timer = None;
                self.cpus[0].queue.push_back(Item::SessionTimer);
                self.dispatch(0, ctx);
            }
            Tag::OffloadArrive(p) => self.offload_arrived(p, ctx),
            Tag::OffloadRunEnd(p) => self.offload_run_end(p, ctx),
            Tag::OffloadTimer(p) => self.offload_timer(p, ctx),
            Tag::OffloadSend(p) => {
                self.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Send));
                self.dispatch(0, ctx);
            }
            Tag::OffloadAsk(p, s) => {
                self.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Ask(s)));
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
}
