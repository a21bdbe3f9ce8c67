//! The driver's XDP stage: each received frame's verdict, and where the frame
//! goes by it (`crate::xdp` runs the program).

use crate::engine::Ctx;
use crate::host::cpu::{Effects, Item};
use crate::host::machine::Machine;
use crate::time::Time;
use crate::wire::Frame;
use crate::xdp::{RxCtx, Verdict};

impl Machine {
    /// Frame `order` of adapter `p`, just taken by the driver at `now`: run the
    /// XDP program over it; a frame that passes is queued for the stack, one
    /// sent back out or redirected goes to the step's transmit list, one for
    /// an AF_XDP socket to its application's ring, one for another processor
    /// to that processor's queue, and one dropped is freed.
    /// Any but a passed frame counts as gone up, so the frames behind it may
    /// go. Returns the program's cycles.
    pub(super) fn xdp(&mut self, p: usize, order: u64, mut frame: Box<Frame>, now: Time, effects: &mut Effects, ctx: &mut Ctx) -> u64 {
        let xdp = self.cfg.driver.xdp.as_ref().expect("called with a program");
        let cycles = xdp.cycles;
        let slot = &self.cfg.adapters[p];
        let rx = RxCtx { queue: u32::from(slot.queue), queues: u32::from(slot.queues), cpus: self.procs.cpus.len() as u32 };
        let mut verdict = xdp.run(&mut frame.bytes, rx);
        if let Verdict::Redirect(to) = verdict {
            // Out of a host's adapter the driver sends by, or nowhere.
            if self.ports.get(to as usize).is_none_or(|port| port.ring_ref().is_none()) {
                verdict = Verdict::Aborted;
            }
        }
        self.tally.xdp.count(verdict);
        if self.measuring(now) {
            self.tally.xdp_measured.count(verdict);
        }
        let out = match verdict {
            Verdict::Pass => {
                effects.queue.push(Item::Frame(p, order, frame));
                return cycles;
            }
            Verdict::User(_) => {
                self.ports[p].ring().delivered.went_up(order);
                effects.queue.push(Item::Socket(frame));
                return cycles;
            }
            Verdict::Cpu(c) => {
                // Its stack work is the other processor's, out of the ring's order.
                self.ports[p].ring().delivered.went_up(order);
                effects.remote.push((c as usize, Item::Handed(p, frame)));
                return cycles + self.cfg.costs.handoff;
            }
            Verdict::Tx => Some(p),
            Verdict::Redirect(to) => Some(to as usize),
            Verdict::Drop | Verdict::Aborted => None,
        };
        self.ports[p].ring().delivered.went_up(order);
        match out {
            Some(port) => {
                frame.meta.created = now;
                effects.transmit.push((port, *frame));
            }
            None => ctx.give_frame(frame),
        }
        cycles
    }
}
