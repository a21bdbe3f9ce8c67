//! A host's offload-engine adapters in time: messages both ways, and the host
//! steps of the application that uses them (`host::offload` says what each
//! costs). The engine's own work is its device's (`toe::adapter`).

use crate::device::Message;
use crate::engine::Ctx;
use crate::host::cpu::Plan;
use crate::host::cpu::{Activity, Item, OffloadStep};
use crate::host::machine::{Machine, Tag};
use crate::host::offload::{Call, Costs};

impl Machine {
    /// A message from the host reaches adapter `p`.
    pub(super) fn hand_to_engine(&mut self, p: usize, m: Message, ctx: &mut Ctx) {
        self.tell_device(p, ctx, |d, cx| d.message(m, cx));
    }

    /// Inside adapter `p`'s handler: take the next message from the engine
    /// (its application part follows as a step of its own), or leave.
    pub(super) fn offload_handler_step(&mut self, p: usize) -> Plan {
        let costs = &self.cfg.costs;
        let (exit, completion) = (costs.interrupt_exit, costs.completion);
        match self.adapters.device(p).take_message() {
            None => {
                let mut plan = Plan::new(Activity::Interrupt, exit);
                plan.effects.enable_irq = Some(p);
                plan.effects.leave_handler = true;
                plan
            }
            Some(w) => {
                let mut plan = Plan::new(Activity::Interrupt, completion);
                plan.effects.queue.push(Item::Offload(p, OffloadStep::Take(w)));
                plan
            }
        }
    }

    /// The application's step with adapter `p`'s engine.
    pub(super) fn offload_step(&mut self, p: usize, step: OffloadStep, ctx: &mut Ctx) -> Plan {
        let now = ctx.now();
        let measuring = self.measuring(now);
        let copy_ns_per_byte = if self.cfg.zero_copy { 0.0 } else { self.cfg.costs.copy_ns_per_byte };
        let bus = &mut self.buses[self.ports[p].bus];
        let c = &mut Costs { clock: self.cfg.clock, syscall: self.cfg.costs.app_request, copy_ns_per_byte, bus };
        let o = self.ports[p].offload_mut().expect("an offload engine's port");
        let call = match step {
            OffloadStep::Open => {
                let call = o.open(now, c);
                if let Some(t) = o.ttcp.as_ref().filter(|t| t.app.sender()) {
                    self.timers.arm(ctx, now + t.app.start, Tag::OffloadSend(p));
                }
                Some(call)
            }
            OffloadStep::Send => o.send(now, c),
            OffloadStep::Ask(s) => Some(o.ask(s, now, c)),
            OffloadStep::Take(w) => Some(o.take(w, now, c, measuring)),
        };
        let mut plan = Plan::new(Activity::App, 0);
        if let Some(Call { cycles, until, to_adapter, again, asks }) = call {
            plan.cycles = cycles;
            plan.until = Some(until.max(now));
            plan.effects.to_adapter.extend(to_adapter.into_iter().map(|w| (p, w)));
            if again {
                plan.effects.queue.push(Item::Offload(p, OffloadStep::Send));
            }
            for (s, at) in asks {
                self.timers.arm(ctx, at.max(now), Tag::OffloadAsk(p, s));
            }
        }
        plan
    }

    /// The applications on offload engines open their sockets.
    pub(super) fn offload_start(&mut self) {
        for p in 0..self.ports.len() {
            if self.ports[p].offload().is_some() {
                self.procs.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Open));
            }
        }
    }
}
