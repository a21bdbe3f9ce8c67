//! A host's programmable adapters in time: frames from the wire and the
//! adapter's own timers go to its model (`nic::smart`); what that calls for
//! from the host (a send call, an event from the event ring, which the driver
//! polls) runs as a step of the polling processor, and the doorbell it rings
//! at its end goes back to the adapter.

use crate::engine::Ctx;
use crate::host::cpu::{Activity, Item};
use crate::host::machine::Machine;
use crate::host::steps::Plan;
use crate::nic::smart::{Due, HostCost, HostWork, Programmable};
use crate::time::Time;

impl Machine {
    /// Adapter `p`'s model and the bus it is on.
    fn with_programmable<R>(&mut self, p: usize, f: impl FnOnce(&mut Programmable, &mut crate::bus::HostBus) -> R) -> R {
        let b = self.ports[p].bus;
        let prog = self.ports[p].programmable.as_mut().expect("a programmable adapter's port");
        f(prog, &mut self.buses[b])
    }

    /// The work adapter `p` asked of the host goes to the polling processor.
    fn programmable_host_work(&mut self, p: usize, ctx: &mut Ctx) {
        let k = self.cfg.driver.poll_cpu as usize;
        let work = std::mem::take(&mut self.ports[p].programmable.as_mut().expect("programmable").host_work);
        if work.is_empty() {
            return;
        }
        self.cpus[k].queue.extend(work.into_iter().map(|w| Item::Programmable(p, w)));
        self.dispatch(k, ctx);
    }

    pub(super) fn programmable_start(&mut self, ctx: &mut Ctx) {
        for p in 0..self.ports.len() {
            if self.ports[p].programmable.is_some() {
                self.with_programmable(p, |prog, bus| prog.start(bus, ctx));
                self.programmable_host_work(p, ctx);
            }
        }
    }

    pub(super) fn programmable_frame(&mut self, p: usize, bytes: Vec<u8>, ctx: &mut Ctx) {
        self.with_programmable(p, |prog, bus| prog.frame_in(bytes, bus, ctx));
        self.programmable_host_work(p, ctx);
    }

    pub(super) fn programmable_due(&mut self, p: usize, due: Due, ctx: &mut Ctx) {
        self.with_programmable(p, |prog, bus| prog.due(due, bus, ctx));
        self.programmable_host_work(p, ctx);
    }

    /// The host step for adapter `p`'s `work`: a send call is the
    /// application's, the rest the driver's poll of the event ring.
    pub(super) fn programmable_step(&mut self, p: usize, work: HostWork, ctx: &mut Ctx) -> Plan {
        let now = ctx.now();
        let prog = self.ports[p].programmable.as_mut().expect("programmable");
        let cost = prog.host_step(work, now, ctx);
        let copy = prog.copy_time(cost.copy_bytes);
        let activity = if work == HostWork::Send { Activity::App } else { Activity::Poll };
        let mut plan = Plan::new(activity, cost.cycles);
        plan.until = Some(now + self.cfg.clock.cycles(cost.cycles) + copy);
        plan.effects.programmable = Some((p, cost));
        plan
    }

    pub(super) fn programmable_step_end(&mut self, p: usize, cost: HostCost, end: Time, ctx: &mut Ctx) {
        self.with_programmable(p, |prog, bus| prog.host_step_end(&cost, end, bus, ctx));
        self.programmable_host_work(p, ctx);
    }
}
