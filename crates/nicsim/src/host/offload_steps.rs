//! A host's offload-engine adapters in time: frames into adapter memory, the
//! engine's runs and its stack timer, messages both ways, and the host steps
//! of the application that uses them (`host::offload` says what each costs).

use crate::engine::{Ctx, Msg, PortId};
use crate::host::cpu::{Activity, Item, OffloadStep};
use crate::host::machine::{IrqAlarm, Machine};
use crate::host::offload::{Call, Costs, Offload, OffloadDue};
use crate::host::steps::Plan;
use crate::toe::work::Work;
use crate::wire::{Frame, FrameMeta};

impl Machine {
    fn offload(&mut self, p: usize) -> &mut Offload {
        self.ports[p].offload_mut().expect("an offload engine's port")
    }

    /// A frame from the wire: the MAC writes it to adapter memory, then the
    /// engine's processor takes it.
    pub(super) fn offload_frame(&mut self, p: usize, frame: Box<Frame>, ctx: &mut Ctx) {
        let now = ctx.now();
        let o = self.offload(p);
        let at = o.engine.receive(now, frame.len());
        o.arriving.push_back((at, frame));
        self.offload(p).timers.arm(ctx, at, OffloadDue::Arrive);
    }

    pub(super) fn offload_arrived(&mut self, p: usize, ctx: &mut Ctx) {
        let now = ctx.now();
        while let Some((at, _)) = self.offload(p).arriving.front() {
            if *at > now {
                break;
            }
            let (_, frame) = self.offload(p).arriving.pop_front().expect("looked at");
            self.hand_to_engine(p, Work::Frame(frame), ctx);
        }
    }

    /// Hand `w` to adapter `p`'s processor; a free processor starts a run.
    pub(super) fn hand_to_engine(&mut self, p: usize, w: Work, ctx: &mut Ctx) {
        if self.offload(p).engine.push(w) {
            let bus = &mut self.buses[self.ports[p].bus];
            let o = self.ports[p].offload_mut().expect("an offload engine's port");
            let end = o.engine.start_run(ctx.now(), bus);
            o.timers.arm(ctx, end, OffloadDue::RunEnd);
        }
    }

    /// A run ended: its frames go to the MAC, its messages to the host (one
    /// interrupt for them), and the next run starts if work waits.
    pub(super) fn offload_run_end(&mut self, p: usize, ctx: &mut Ctx) {
        let now = ctx.now();
        let o = self.ports[p].offload_mut().expect("an offload engine's port");
        let (out, more) = o.engine.end_run();
        for bytes in out.frames {
            let at = o.engine.transmit(now, bytes.len());
            if let Some(w) = &mut self.wires {
                w.sent(&bytes, at);
            }
            ctx.send_at(p as PortId, at, Msg::frame(Frame { bytes, meta: FrameMeta::default() }));
        }
        let n = out.to_host.len() as u32;
        o.events.extend(out.to_host);
        if n > 0 {
            self.ports[p].irq.completed(now, n, &mut IrqAlarm { timers: &mut self.timers, ctx, port: p });
        }
        if more {
            let bus = &mut self.buses[self.ports[p].bus];
            let o = self.ports[p].offload_mut().expect("an offload engine's port");
            let end = o.engine.start_run(now, bus);
            o.timers.arm(ctx, end, OffloadDue::RunEnd);
        }
        let o = self.offload(p);
        if let Some(t) = o.engine.next_timer(now) {
            o.stack_timer.set(&mut o.timers, ctx, t, now, OffloadDue::Timer);
        }
    }

    pub(super) fn offload_timer(&mut self, p: usize, ctx: &mut Ctx) {
        self.offload(p).stack_timer.fired();
        self.hand_to_engine(p, Work::Timer, ctx);
    }

    /// Inside adapter `p`'s handler: take the next message from the engine
    /// (its application part follows as a step of its own), or leave.
    pub(super) fn offload_handler_step(&mut self, p: usize) -> Plan {
        let costs = &self.cfg.costs;
        let (exit, completion) = (costs.interrupt_exit, costs.completion);
        match self.offload(p).events.pop_front() {
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
                if let Some(t) = o.ttcp.as_ref().filter(|t| t.sender()) {
                    o.timers.arm(ctx, now + t.start, OffloadDue::Send);
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
                self.offload(p).timers.arm(ctx, at.max(now), OffloadDue::Ask(s));
            }
        }
        plan
    }

    /// The applications on offload engines open their sockets.
    pub(super) fn offload_start(&mut self) {
        for p in 0..self.ports.len() {
            if self.ports[p].offload().is_some() {
                self.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Open));
            }
        }
    }
}
