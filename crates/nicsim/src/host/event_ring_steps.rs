//! A host's event-ring adapters (a programmable adapter) in time: what the
//! adapter's events call for from its driver (a send call, an event from the
//! event ring, which the driver polls) runs as a step of the polling
//! processor, priced with the host's costs from what the step did
//! (`device::DriverStep`), and the doorbell it rings at its end goes back to
//! the adapter. The host reaches the adapter through `device::Device` alone.

use crate::device::DriverWork;
use crate::engine::Ctx;
use crate::host::cpu::{Activity, Item};
use crate::host::cpu::{Plan, Then};
use crate::host::machine::Machine;
use crate::time::{Duration, Time};
use crate::wire::{Frame, FrameMeta};

impl Machine {
    /// The work adapter `p` asked of the host goes to the polling processor.
    pub(super) fn event_ring_work(&mut self, p: usize, ctx: &mut Ctx) {
        let k = self.cfg.driver.poll_cpu as usize;
        let work = self.ports[p].device.driver_work();
        if work.is_empty() {
            return;
        }
        self.procs.cpus[k].queue.extend(work.into_iter().map(|w| Item::EventRing(p, w)));
        self.dispatch(k, ctx);
    }

    pub(super) fn event_ring_start(&mut self, ctx: &mut Ctx) {
        for p in 0..self.ports.len() {
            if self.ports[p].events() {
                self.tell_device(p, ctx, |d, cx| d.start(cx));
            }
        }
    }

    /// A frame of the host's stack leaves by event-ring adapter `p`.
    pub(super) fn event_ring_send(&mut self, p: usize, frame: Frame, ctx: &mut Ctx) {
        self.tell_device(p, ctx, |d, cx| d.send(frame, cx));
    }

    /// The host step for adapter `p`'s `work`: a send call is the
    /// application's, the rest the driver's poll of the event ring.
    pub(super) fn event_ring_step(&mut self, k: usize, p: usize, work: DriverWork, ctx: &mut Ctx) -> Plan {
        let now = ctx.now();
        let cost = self.tell_device(p, ctx, |d, cx| d.driver_step(work, cx));
        let c = &self.cfg.costs;
        let copy = Duration::from_ps((cost.copy_bytes as f64 * c.copy_ns_per_byte * 1e3) as u64);
        let cycles = c.app_request * cost.send_calls
            + c.tx_frame * cost.frames_built
            + c.completion * cost.completions
            + c.rx_frame * cost.buffers_taken
            + c.gro_segment * cost.gro_segments
            + c.protocol_segment * cost.protocol_passes;
        if self.measuring(now) {
            for (arrived, in_memory) in cost.taken {
                self.tally.latency.taken(arrived, in_memory, now);
            }
        }
        let activity = if work == DriverWork::Send { Activity::App } else { Activity::Poll };
        let mut plan = Plan::new(activity, cycles);
        // Frames for the host's own stack pass its protocol one by one; the
        // applications' work on them follows as one step.
        let mut apps: Option<Plan> = None;
        for bytes in cost.delivered {
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
            self.procs.then[k] = Some(Then { plan, turn: None });
        }
        plan.until = Some(now + self.cfg.clock.cycles(plan.cycles) + copy);
        plan.effects.event_ring = Some(p);
        plan.effects.delivered.extend(cost.went_up);
        plan
    }

    pub(super) fn event_ring_step_end(&mut self, p: usize, end: Time, ctx: &mut Ctx) {
        self.tell_device(p, ctx, |d, cx| d.driver_step_end(end, cx));
    }
}
