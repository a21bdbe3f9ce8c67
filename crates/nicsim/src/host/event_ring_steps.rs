//! A host's event-ring adapters (a programmable adapter) in time: the work
//! its driver (`host::event_driver`) finds (a send call, an event from the
//! event ring, which the driver polls) runs as a step of the polling
//! processor, priced with the host's costs from what the step did
//! (`DriverStep`); the doorbells it rings at its end are register writes
//! across the bus. The host reaches the adapter through `device::Device` alone.

use crate::engine::Ctx;
use crate::host::adapters::Adapters;
use crate::host::cpu::{Activity, Item};
use crate::host::cpu::{Plan, Then};
use crate::host::event_driver::{DriverWork, EventDriver};
use crate::host::machine::Machine;
use crate::host::port::{Driver, Port};
use crate::host::tag::Tag;
use crate::time::{Duration, Time};
use crate::wire::{Frame, FrameMeta};

impl Machine {
    /// The work adapter `p`'s driver finds goes to the polling processor.
    pub(super) fn event_ring_work(&mut self, p: usize, ctx: &mut Ctx) {
        let k = self.cfg.driver.poll_cpu as usize;
        let events = self.adapters.device(p).events();
        let Driver::Events(d) = &mut self.ports[p].driver else { return };
        let work = d.work(events);
        if work.is_empty() {
            return;
        }
        self.procs.cpus[k].queue.extend(work.into_iter().map(|w| Item::EventRing(p, w)));
        self.dispatch(k, ctx);
    }

    pub(super) fn event_ring_start(&mut self, ctx: &mut Ctx) {
        for p in 0..self.ports.len() {
            if let Driver::Events(d) = &mut self.ports[p].driver {
                d.start();
                self.tell_device(p, ctx, |d, cx| d.start(cx));
            }
        }
    }

    /// Adapter `p`'s driver's GRO timeout fell due.
    pub(super) fn event_ring_gro(&mut self, p: usize, ctx: &mut Ctx) {
        if let Driver::Events(d) = &mut self.ports[p].driver {
            d.gro_due();
        }
        self.event_ring_work(p, ctx);
    }

    /// A frame of the host's stack leaves by event-ring adapter `p`.
    pub(super) fn event_ring_send(&mut self, p: usize, frame: Frame, ctx: &mut Ctx) {
        let now = ctx.now();
        let (d, mem) = event_driver(&mut self.ports, &mut self.adapters, p);
        if let Some(reg) = d.send_frame(frame, now, mem) {
            self.write_register(p, reg, now, ctx);
        }
    }

    /// The host step for adapter `p`'s `work`: a send call is the
    /// application's, the rest the driver's poll of the event ring.
    pub(super) fn event_ring_step(&mut self, k: usize, p: usize, work: DriverWork, ctx: &mut Ctx) -> Plan {
        let now = ctx.now();
        let (activity, frames) = match work {
            DriverWork::Send => (Activity::App, self.send_call_frames(p, now, ctx)),
            _ => (Activity::Poll, Vec::new()),
        };
        let (d, mem) = event_driver(&mut self.ports, &mut self.adapters, p);
        let (cost, gro_due) = d.step(work, frames, now, mem);
        if let Some(due) = gro_due {
            d.gro_timer.set(&mut self.timers, ctx, due, now, Tag::EventRingGro(p));
        }
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
        let mut plan = Plan::new(activity, cycles);
        // Frames for the host's own stack pass its protocol one by one; the
        // applications' work on them follows as one step.
        let mut apps: Option<Plan> = None;
        for (bytes, gso) in cost.delivered {
            let frame = Box::new(Frame { bytes, meta: FrameMeta { gso, ..FrameMeta::default() } });
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

    /// The frames the host's sender builds for its send call through adapter
    /// `p` at `now`: as many as a call makes, or what is left of its count.
    fn send_call_frames(&mut self, p: usize, now: Time, ctx: &mut Ctx) -> Vec<Frame> {
        let Driver::Events(d) = &self.ports[p].driver else { return Vec::new() };
        let per_call = d.per_call() as u64;
        let measuring = self.measuring(now);
        let apps = &mut self.apps;
        let Some(sender) = apps.blast.iter_mut().chain(apps.send.iter_mut()).find(|s| s.cfg.port == p) else { return Vec::new() };
        let left = sender.cfg.count.map_or(per_call, |c| c.saturating_sub(sender.sent));
        (0..per_call.min(left)).map(|_| sender.next(now, measuring, ctx.rng())).collect()
    }

    /// A step of adapter `p`'s driver ended at `end`: it rings its doorbells,
    /// and finds what came meanwhile.
    pub(super) fn event_ring_step_end(&mut self, p: usize, end: Time, ctx: &mut Ctx) {
        let (d, mem) = event_driver(&mut self.ports, &mut self.adapters, p);
        for reg in d.step_end(end, mem) {
            self.write_register(p, reg, end, ctx);
        }
        self.event_ring_work(p, ctx);
    }
}

/// Event-ring port `p`'s driver, and the host memory its adapter's model holds.
fn event_driver<'a>(ports: &'a mut [Port], adapters: &'a mut Adapters, p: usize) -> (&'a mut EventDriver, &'a mut crate::mem::Memory) {
    let Driver::Events(d) = &mut ports[p].driver else { unreachable!("only an event-ring port comes here") };
    (d, adapters.device(p).host_memory().expect("an event-ring adapter holds the host memory it reaches"))
}
