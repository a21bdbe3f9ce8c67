//! What a host does when one of its timers falls due: the host's own (`Tag`),
//! or one of an adapter's, which its device takes (`device::Device::timer`).

use crate::engine::timers::{part_of, space_of};
use crate::engine::Ctx;
use crate::host::cpu::{Item, OffloadStep};
use crate::host::machine::Machine;
use crate::host::tag::Tag;

impl Machine {
    /// Inlined into `handle`, as it was before it had a file of its own: it is
    /// on the path of every step end.
    #[inline(always)]
    pub(super) fn timer(&mut self, tag: u64, ctx: &mut Ctx) {
        let now = ctx.now();
        if let Some(p) = part_of(space_of(tag)) {
            self.tell_device(p, ctx, |d, cx| d.timer(tag, cx));
            return;
        }
        // A timer taken back brings nothing.
        let Some(tag) = self.timers.fire(tag) else { return };
        match tag {
            Tag::Irq(p) if self.ports[p].irq.fire(now) => self.interrupt(p, ctx),
            Tag::StepEnd(k) => {
                self.procs.cpus[k].end_timer = None;
                self.end_step(k, ctx)
            }
            // Also when the sessions asked for a time already past when it was
            // armed: it fires at once (it used to be dropped).
            Tag::Sessions => {
                self.apps.sessions_timer.fired();
                self.procs.cpus[0].queue.push_back(Item::SessionTimer);
                self.dispatch(0, ctx);
            }
            Tag::Register(p, reg) => self.tell_device(p, ctx, |d, cx| d.register_write(reg, cx)),
            Tag::OffloadSend(p) => {
                self.procs.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Send));
                self.dispatch(0, ctx);
            }
            Tag::OffloadAsk(p, s) => {
                self.procs.cpus[0].queue.push_back(Item::Offload(p, OffloadStep::Ask(s)));
                self.dispatch(0, ctx);
            }
            Tag::EventRingGro(p) => self.event_ring_gro(p, ctx),
            Tag::Wake(k) => {
                self.procs.waking[k] = false;
                self.dispatch(k, ctx);
            }
            Tag::Thread(k) => {
                self.wake_poller(k, now);
                self.apps.blast_waiting = false;
                self.dispatch(k, ctx);
            }
            _ => {}
        }
    }
}
