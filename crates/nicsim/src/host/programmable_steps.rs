//! A host's programmable adapters in time: what the adapter's model
//! (`nic::smart`, a device) calls for from the host (a send call, an event
//! from the event ring, which the driver polls) runs as a step of the polling
//! processor, and the doorbell it rings at its end goes back to the adapter.

use crate::engine::Ctx;
use crate::host::cpu::{Activity, Item};
use crate::host::machine::Machine;
use crate::host::port::Adapter;
use crate::host::steps::{Plan, Then};
use crate::nic::smart::{HostStep, HostWork, Programmable};
use crate::time::{Duration, Time};
use crate::wire::{Frame, FrameMeta};

impl Machine {
    /// The work adapter `p` asked of the host goes to the polling processor.
    pub(super) fn programmable_host_work(&mut self, p: usize, ctx: &mut Ctx) {
        let k = self.cfg.driver.poll_cpu as usize;
        let work = std::mem::take(&mut self.ports[p].programmable_mut().expect("programmable").host_work);
        if work.is_empty() {
            return;
        }
        self.cpus[k].queue.extend(work.into_iter().map(|w| Item::Programmable(p, w)));
        self.dispatch(k, ctx);
    }

    pub(super) fn programmable_start(&mut self, ctx: &mut Ctx) {
        for p in 0..self.ports.len() {
            if self.ports[p].programmable().is_some() {
                self.with_device(p, ctx, programmable, |prog, cx| {
                    prog.settle(cx.now());
                    prog.start(cx.bus, cx.ctx);
                    cx.out.driver_work = true;
                });
            }
        }
    }

    /// A frame of the host's stack leaves by programmable adapter `p`.
    pub(super) fn programmable_send(&mut self, p: usize, frame: Frame, ctx: &mut Ctx) {
        self.with_device(p, ctx, programmable, |prog, cx| {
            let now = cx.now();
            prog.settle(now);
            prog.send_frame(frame, now, cx.bus, cx.ctx);
        });
    }

    /// The host step for adapter `p`'s `work`: a send call is the
    /// application's, the rest the driver's poll of the event ring.
    pub(super) fn programmable_step(&mut self, k: usize, p: usize, work: HostWork, ctx: &mut Ctx) -> Plan {
        let now = ctx.now();
        let prog = self.ports[p].programmable_mut().expect("programmable");
        prog.settle(now);
        let cost = prog.host_step(work, now, ctx);
        let c = &self.cfg.costs;
        let copy = Duration::from_ps((cost.copy_bytes as f64 * c.copy_ns_per_byte * 1e3) as u64);
        let cycles = c.app_request * cost.send_calls
            + c.tx_frame * cost.frames_built
            + c.completion * cost.completions
            + c.rx_frame * cost.buffers_taken
            + c.gro_segment * cost.gro_segments
            + c.protocol_segment * cost.protocol_passes;
        let delivered = std::mem::take(&mut prog.delivered);
        let taken = std::mem::take(&mut prog.taken);
        let went_up = std::mem::take(&mut prog.went_up);
        if self.measuring(now) {
            for (arrived, in_memory) in taken {
                self.latency.taken(arrived, in_memory, now);
            }
        }
        let activity = if work == HostWork::Send { Activity::App } else { Activity::Poll };
        let mut plan = Plan::new(activity, cycles);
        // Frames for the host's own stack pass its protocol one by one; the
        // applications' work on them follows as one step.
        let mut apps: Option<Plan> = None;
        for bytes in delivered {
            let frame = Box::new(Frame { bytes, meta: FrameMeta::default() });
            let mut then = None;
            plan.cycles += self.protocol(p, (frame, &mut Vec::new()), now, ctx, (&mut plan.effects.transmit, &mut then));
            match (&mut apps, then) {
                (Some(a), Some(mut t)) => {
                    a.cycles += t.cycles;
                    a.effects.transmit.append(&mut t.effects.transmit);
                    a.effects.queue.append(&mut t.effects.queue);
                }
                (None, t) => apps = t,
                (Some(_), None) => {}
            }
        }
        if let Some(plan) = apps {
            self.then[k] = Some(Then { plan, turn: None });
        }
        plan.until = Some(now + self.cfg.clock.cycles(plan.cycles) + copy);
        plan.effects.programmable = Some((p, cost));
        plan.effects.delivered.extend(went_up);
        plan
    }

    pub(super) fn programmable_step_end(&mut self, p: usize, cost: HostStep, end: Time, ctx: &mut Ctx) {
        self.with_device(p, ctx, programmable, |prog, cx| {
            prog.settle(cx.now());
            prog.host_step_end(cost, end, cx.bus, cx.ctx);
            cx.out.driver_work = true;
        });
    }
}

/// The programmable adapter of a port that has one.
fn programmable(a: &mut Adapter) -> &mut Programmable {
    a.programmable()
}
