//! Received frames going up the stack: the deferred step that does their
//! protocol and application work. A processor's own queue of frames is worked
//! through in one step, as Linux's softirq takes frame after frame in one run
//! (`process_backlog`, or the stack called from a NAPI poll), until a frame's
//! work sends something: the step ends there, so what it sends leaves when its
//! own work ends.

use crate::engine::Ctx;
use crate::host::cpu::{Activity, Effects, Item};
use crate::host::cpu::{Plan, Then};
use crate::host::gro;
use crate::host::machine::Machine;
use crate::host::sessions::Work;
use crate::time::Time;
use crate::wire::Frame;

impl Machine {
    /// Plan the protocol work of the `first` frame (adapter, place in its ring,
    /// frame) and of the frames behind it in processor `k`'s own queue (not the
    /// host-wide one, whose frames any free processor may take), with GRO's merges.
    pub(super) fn frames_up(&mut self, k: usize, shared: bool, first: (usize, u64, Box<Frame>), plan: &mut Plan, ctx: &mut Ctx) {
        let now = ctx.now();
        // Nothing in planning changes it: asked once, after the first frame.
        let mut between_none = None;
        let mut next = Some(first);
        while let Some((p, order, frame)) = next.take() {
            debug_assert!(self.ports[p].ring().delivered.is_next(order), "frames go up in ring order");
            let merged = if self.cfg.driver.gro { self.merge(k, shared, p, order, &frame) } else { Vec::new() };
            if !merged.is_empty() {
                self.tally.gro_batches += 1;
                self.tally.gro_segments += 1 + merged.len() as u64;
            }
            let gone_up = &mut self.ports[p].ring().delivered;
            gone_up.went_up(order);
            // Most frames merge with none: an empty list's iterator is still a call.
            let mut merged: Vec<Box<Frame>> = if merged.is_empty() {
                Vec::new()
            } else {
                merged
                    .into_iter()
                    .map(|(o, f)| {
                        gone_up.went_up(o);
                        f
                    })
                    .collect()
            };
            let from = plan.effects.delivered.len();
            plan.effects.delivered.push(frame.meta.arrived);
            for f in &merged {
                plan.effects.delivered.push(f.meta.arrived);
            }
            let gro = if self.cfg.driver.gro { self.cfg.costs.gro_segment * (1 + merged.len() as u64) } else { 0 };
            let at = if plan.cycles == 0 { now } else { now + self.cfg.clock.cycles(plan.cycles) };
            let mut then = None;
            plan.cycles += gro + self.protocol(p, (frame, &mut merged), at, ctx, (&mut plan.effects.transmit, &mut then));
            if let Some(then) = then {
                self.then_on(k, then, &mut plan.effects);
                break;
            }
            // What it sent leaves when its work ends: at the step's end.
            if !plan.effects.transmit.is_empty() || !*between_none.get_or_insert_with(|| self.nothing_between(k, shared)) {
                break;
            }
            // Nothing will stretch the step: the frames went up when their work ended.
            let up = now + self.cfg.clock.cycles(plan.cycles);
            // As a step ending after the run's end would not count its frames.
            let counted = self.measuring(up) && up <= ctx.end();
            for arrived in plan.effects.delivered.drain(from..) {
                if counted {
                    self.tally.latency.delivered(arrived, up);
                }
            }
            // A frame whose work would begin after the run's end never begins.
            if up <= ctx.end() {
                next = self.next_frame_in_turn(k);
            }
        }
    }

    /// The applications' part of a protocol step on processor `k`: the step
    /// that follows it there, or, where the applications run on another
    /// processor (`app_cpu`), that processor's deferred work when the step ends.
    pub(super) fn then_on(&mut self, k: usize, then: Plan, effects: &mut Effects) {
        match self.cfg.app_cpu.filter(|&a| a != k) {
            Some(a) => effects.remote.push((a, Item::App(Box::new(then)))),
            None => self.procs.then[k] = Some(Then { plan: then, turn: None }),
        }
    }

    /// Whether nothing could come between two frames' work on processor `k`:
    /// they are its own (the host-wide queue's are for any free processor), no
    /// other processor waits on the stack's lock, and every interrupt bound to
    /// `k` is masked (one would preempt the work between two frames).
    fn nothing_between(&self, k: usize, shared: bool) -> bool {
        let lock_contended = self.cfg.serialized_stack && self.procs.cpus.len() > 1;
        !shared && !lock_contended && self.ports.iter().zip(&self.cfg.adapters).all(|(port, a)| a.irq_cpu != k || port.irq.masked())
    }

    /// The frame at the head of processor `k`'s own queue, if it may go up now.
    fn next_frame_in_turn(&mut self, k: usize) -> Option<(usize, u64, Box<Frame>)> {
        let queue = &mut self.procs.cpus[k].queue;
        let Some(Item::Frame(p, order, _)) = queue.front() else { return None };
        if self.ports[*p].ring_ref().is_none_or(|r| !r.delivered.is_next(*order)) {
            return None;
        }
        let Some(Item::Frame(p, order, frame)) = queue.pop_front() else { unreachable!("looked at") };
        Some((p, order, frame))
    }

    /// GRO: the frames queued behind frame `order` of adapter `p` that join its
    /// merge, taken to go up the stack with it (`host::gro`).
    fn merge(&mut self, k: usize, shared: bool, p: usize, order: u64, first: &Frame) -> Vec<(u64, Box<Frame>)> {
        let queue = if shared { &mut self.procs.shared } else { &mut self.procs.cpus[k].queue };
        let gone_up = &self.ports[p].ring_ref().expect("frames go up from a ring").delivered;
        gro::take_merge(queue, p, (order, gone_up), first)
    }

    /// Protocol and application work, from `at`, for frames received by adapter
    /// `p`: one frame, or the segments GRO merged, which pass the protocol once.
    /// Returns its cycles; the applications' work, when there is some, goes in
    /// `then`: the step that follows this one on its processor. (Not returned
    /// with the cycles: a caller reading a wide result its callee just wrote
    /// narrowly stalls, on every frame.)
    #[allow(clippy::vec_box, reason = "frames travel boxed from the wire; unboxing them here would copy each")]
    pub(super) fn protocol(
        &mut self,
        p: usize,
        (frame, merged): (Box<Frame>, &mut Vec<Box<Frame>>),
        at: Time,
        ctx: &mut Ctx,
        (out, then_plan): (&mut Vec<(usize, Frame)>, &mut Option<Plan>),
    ) -> u64 {
        let measuring = self.measuring(at);
        let by = if self.multi_queue { self.stack_port(p) } else { p };
        if let Some(s) = self.apps.sessions.as_mut().filter(|s| s.claims(&frame.bytes)) {
            if merged.is_empty() {
                s.input(by, frame);
            } else {
                for f in gro::merged(&frame, merged) {
                    s.input(by, f);
                }
            }
            let (answer, apps) = s.run_apart(at, measuring, Work::default());
            let due = s.calls_due();
            let cycles = self.cfg.costs.protocol_segment + self.charge(answer, out);
            // The applications' part follows as a step of its own, so that the
            // stack's answer does not wait for their reads and writes.
            let more = due && !std::mem::replace(&mut self.apps.call_queued, true);
            if more || apps.requests > 0 || apps.copied > 0 || !apps.out.is_empty() {
                let mut then = Plan::new(Activity::Deferred, 0);
                then.cycles = self.charge(apps, &mut then.effects.transmit);
                if more {
                    // The applications' further calls wait behind the work queued by then.
                    then.effects.queue.push(Item::AppCall);
                }
                if then.cycles > 0 || !then.effects.transmit.is_empty() || more {
                    then.holds_stack = self.cfg.serialized_stack;
                    *then_plan = Some(then);
                }
            }
            self.arm_sessions_from(at, ctx);
            return cycles;
        }
        self.sink_frame(frame, measuring, ctx);
        if !merged.is_empty() {
            for f in merged.drain(..) {
                self.sink_frame(f, measuring, ctx);
            }
        }
        self.cfg.costs.protocol_segment
    }

    /// A frame no session claims: the host's sink counts it, if it has one.
    fn sink_frame(&mut self, frame: Box<Frame>, measuring: bool, ctx: &mut Ctx) {
        match &mut self.apps.sink {
            Some(s) if measuring => {
                s.frames += 1;
                s.bytes += frame.len() as u64;
            }
            Some(_) => {}
            None => self.tally.unclaimed += 1,
        }
        // Taken whole: a source may write its next frame into it.
        ctx.give_frame(frame);
    }
}
