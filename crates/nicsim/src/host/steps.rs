//! What a free processor runs next, and what each kind of step costs. In order:
//! the interrupt handler it is inside, a pending interrupt, a suspended deferred
//! step, its deferred work (when the stack lock allows), a suspended process,
//! then the run queue's processes in turn (the poller, the sender, background).

use crate::bus::Purpose;
use crate::engine::Ctx;
use crate::host::config::Buffers;
use crate::host::cpu::{Activity, Item, Plan, Step};
use crate::host::driver::OnInterrupt;
use crate::host::machine::{IrqAlarm, Machine, Tag};
use crate::host::sessions::{Sessions, Work};
use crate::nic::firmware::tso::cut;
use crate::nic::{Transfer, DMA_PROGRAM_WRITES};
use crate::time::{Duration, Time};
use crate::wire::{Frame, FrameMeta};

impl Machine {
    pub(super) fn dispatch(&mut self, k: usize, ctx: &mut Ctx) {
        let cpu = &self.procs.cpus[k];
        if !cpu.idle() || cpu.at_rest() && self.procs.nothing_queued(k) || self.procs.waking[k] {
            return;
        }
        let fresh = self.procs.then[k].is_none();
        let now = ctx.now();
        // A suspended step of deferred context (protocol work, or an application's
        // step taken from the deferred queue) resumes before other deferred work:
        // a step of its queue must not overtake it.
        let suspended = cpu.suspended.last().map(|s| s.step.deferred);
        let lock_free = !(self.cfg.serialized_stack && self.procs.stack_held);
        let own = lock_free && !cpu.queue.is_empty() && self.in_turn(cpu.queue.front());
        let shared = lock_free && !own && !self.procs.shared.is_empty() && self.in_turn(self.procs.shared.front());
        let deferred_ready = own || shared;
        let plan = if let Some(p) = cpu.in_handler {
            Some(self.handler_step(p, now, ctx))
        } else if let Some(p) = self.procs.cpus[k].irq_pending.pop_front() {
            Some(self.interrupt_entry(k, p, now))
        } else if suspended == Some(true) || suspended.is_some() && !deferred_ready && fresh {
            return self.resume(k, ctx);
        } else if let Some(then) = self.procs.then[k].take() {
            // The applications' part of the protocol step that just ended,
            // which holds the stack lock and its place in the send order.
            let mut plan = then.plan;
            plan.deferred = true;
            return self.start_planned(k, plan, then.turn, ctx);
        } else if deferred_ready {
            let item = self.procs.deferred_queue(k, shared).pop_front().expect("checked non-empty");
            let mut plan = self.deferred(k, item, shared, ctx);
            plan.deferred = true;
            Some(plan)
        } else {
            self.run_queue(k, ctx)
        };
        let Some(plan) = plan else { return };
        let send_turn = (!plan.effects.transmit.is_empty()).then(|| self.send_order.take_turn());
        if let Some(then) = self.procs.then[k].as_mut().filter(|t| fresh && !t.plan.effects.transmit.is_empty()) {
            then.turn = Some(self.send_order.take_turn());
        }
        self.start_planned(k, plan, send_turn, ctx);
    }

    /// Start a planned step on processor `k`, with its turn in the send order.
    fn start_planned(&mut self, k: usize, mut plan: Plan, send_turn: Option<u64>, ctx: &mut Ctx) {
        let now = ctx.now();
        if self.multi_queue {
            for (p, _) in plan.effects.transmit.iter_mut() {
                *p = self.transmit_queue(*p, k);
            }
        }
        plan.cycles += self.build_ahead(&plan.effects.transmit, now) + std::mem::take(&mut self.procs.owed[k]);
        let mut end = now + self.cfg.clock.cycles(plan.cycles);
        if let Some(t) = plan.until {
            end = end.max(t);
        }
        // Frames the host moves into an adapter's packet memory itself.
        for (p, f) in &plan.effects.transmit {
            end = self.move_frame(*p, end, f.len(), false);
        }
        if plan.holds_stack {
            self.procs.stack_held = true;
        }
        let step = Step {
            effects: plan.effects,
            holds_stack: plan.holds_stack,
            releases_order: plan.releases_order,
            deferred: plan.deferred,
            send_turn,
        };
        self.start_step(k, (plan.activity, plan.cycles), step, now, end, ctx);
    }

    /// Whether deferred `item` may run now: a frame waits for its adapter's
    /// earlier frames, queued on other processors, to go up first.
    fn in_turn(&self, item: Option<&Item>) -> bool {
        match item {
            Some(Item::Frame(p, order, _)) => self.ports[*p].ring_ref().is_some_and(|r| r.delivered.is_next(*order)),
            _ => true,
        }
    }

    /// Start `step` of `activity` costing `cycles` on processor `k`.
    fn start_step(&mut self, k: usize, cost: (Activity, u64), step: Step, now: Time, end: Time, ctx: &mut Ctx) {
        self.poller_busy(k, now, end);
        self.procs.cpus[k].start(cost, step, now, end);
        self.procs.cpus[k].end_timer = Some(self.timers.arm(ctx, end, Tag::StepEnd(k)));
    }

    /// Go back to the step an interrupt took the processor from.
    fn resume(&mut self, k: usize, ctx: &mut Ctx) {
        let end = self.procs.cpus[k].resume(ctx.now());
        self.poller_busy(k, ctx.now(), end);
        self.procs.cpus[k].end_timer = Some(self.timers.arm(ctx, end, Tag::StepEnd(k)));
    }

    /// Enter the handler of adapter `p`: mask its interrupt, read its cause
    /// register (the processor stalls for the read's round trip on the bus).
    fn interrupt_entry(&mut self, k: usize, p: usize, now: Time) -> Plan {
        let port = &mut self.ports[p];
        if let Some(t) = port.irq.disable() {
            self.timers.cancel(t);
        }
        port.irq.acknowledge(now);
        let costs = &self.cfg.costs;
        let mut plan = Plan::new(Activity::Interrupt, costs.interrupt_entry);
        plan.until = Some(self.buses[port.bus].register_read(now + self.cfg.clock.cycles(costs.interrupt_entry)));
        let deferred = match self.cfg.driver.on_interrupt() {
            OnInterrupt::Poll(budget) => Some(Item::Poll(p, budget)),
            OnInterrupt::Dpc => Some(Item::Handler(p)),
            OnInterrupt::Handle => None,
        };
        match deferred.filter(|_| port.offload().is_none()) {
            Some(item) => {
                plan.cycles += costs.interrupt_exit;
                plan.until = plan.until.map(|t| t + self.cfg.clock.cycles(costs.interrupt_exit));
                plan.effects.queue.push(item);
            }
            None => self.enter_handler(k, p, now),
        }
        plan
    }

    fn enter_handler(&mut self, k: usize, p: usize, now: Time) {
        self.procs.cpus[k].in_handler = Some(p);
        self.procs.cpus[k].handler_since = Some(now);
        self.tally.handler.enter(now);
    }

    /// Inside adapter `p`'s handler: take the next visible frame, or leave.
    fn handler_step(&mut self, p: usize, now: Time, ctx: &mut Ctx) -> Plan {
        if self.ports[p].offload().is_some() {
            return self.offload_handler_step(p);
        }
        let Some((order, frame, visible)) = self.take(p, now) else {
            let (_, built) = self.reclaim_sends(p, now, ctx);
            let exit = self.cfg.driver.loop_exit_cycles(self.cfg.costs.interrupt_exit);
            let mut plan = Plan::new(Activity::Interrupt, built + exit);
            plan.effects.enable_irq = Some(p);
            plan.effects.leave_handler = true;
            return plan;
        };
        if self.measuring(now) {
            self.tally.latency.taken(frame.meta.arrived, visible, now);
        }
        let copy = if self.cfg.driver.copy { (self.cfg.costs.copy_ns_per_byte * frame.len() as f64).round() as u64 } else { 0 };
        let mut cycles = self.driver_frame(p, now, frame.meta.dma_mark);
        let mut plan = Plan::new(Activity::Interrupt, 0);
        let moved = self.move_frame(p, now + self.cfg.clock.cycles(cycles), frame.len(), true);
        let took = moved.since(now) + Duration::from_ns(copy);
        plan.until = Some(now + took);
        self.tally.handler.frame(frame.len(), took);
        if self.cfg.driver.xdp.is_some() {
            cycles += self.xdp(p, order, frame, now, &mut plan.effects, ctx);
        } else {
            plan.effects.queue.push(Item::Frame(p, order, frame));
        }
        plan.cycles = cycles;
        let give = self.ports[p].ring().recycle(1, self.cfg.driver.refill_batch);
        if give > 0 {
            plan.effects.refill.push((p, give));
        }
        plan
    }

    /// Adapter `p`'s frame of `len` bytes moved from (`from_adapter`) or to its
    /// packet memory by the host from `at`: when the processor may go on. A
    /// bus master moves its own frames (at once); the processor moves them word
    /// by word; or it programs the system's DMA controller, which holds the bus
    /// and the processor until it is done.
    pub(super) fn move_frame(&mut self, p: usize, at: Time, len: usize, from_adapter: bool) -> Time {
        let Some(transfer) = self.ports[p].ring_ref().map(|r| r.transfer) else { return at };
        let bus = &mut self.buses[self.ports[p].bus];
        let purpose = if from_adapter { Purpose::RxData } else { Purpose::TxData };
        match transfer {
            Transfer::BusMaster => at,
            Transfer::Pio => bus.processor_moves(at, len as u64, from_adapter, false, purpose),
            Transfer::SharedMemory => bus.processor_moves(at, len as u64, from_adapter, true, purpose),
            Transfer::SystemDma { rate_bps } => {
                let programmed = bus.processor_moves(at, 4 * DMA_PROGRAM_WRITES, false, false, Purpose::Register);
                bus.controller_moves(programmed, len as u64, rate_bps, purpose)
            }
        }
    }

    /// The driver's work for one received frame of adapter `p`: its descriptor,
    /// the media work a dumb adapter leaves to it, a new buffer when it does
    /// not recycle (which stalls the memory the adapter writes to), and with
    /// DDIO, a load from memory when the frame (DMA count `mark` once in) was
    /// evicted from the cache before the driver came to it.
    #[inline(always)]
    fn driver_frame(&mut self, p: usize, now: Time, mark: u64) -> u64 {
        let c = &self.cfg.costs;
        let mut cycles = c.rx_frame;
        if let Some(d) = self.cfg.ddio {
            if self.buses[self.ports[p].bus].dma.get() - mark >= d.bytes {
                cycles += self.cfg.clock.cycles_in(d.miss);
                if self.measuring(now) {
                    self.tally.ddio_misses += 1;
                }
            }
        }
        if !self.ports[p].smart() {
            cycles += c.media_frame;
        }
        if self.cfg.driver.buffers == Buffers::Reallocate {
            cycles += c.rx_alloc;
            if c.alloc_stall > Duration::ZERO {
                self.buses[self.ports[p].bus].stall(now + self.cfg.clock.cycles(cycles), c.alloc_stall);
            }
        }
        cycles
    }

    /// Run deferred `item`, taken from the host-wide queue when `shared`.
    fn deferred(&mut self, k: usize, item: Item, shared: bool, ctx: &mut Ctx) -> Plan {
        let now = ctx.now();
        let mut plan = Plan::new(Activity::Deferred, 0);
        plan.holds_stack = self.cfg.serialized_stack;
        match item {
            Item::Frame(p, order, frame) => {
                // Set long before the plan is moved: a byte written just before a
                // move stalls the load of the word around it.
                plan.releases_order = true;
                self.frames_up(k, shared, (p, order, frame), &mut plan, ctx);
            }
            Item::Poll(p, left) => {
                // The driver hands buffers back every refill batch as it goes
                // (e1000 writes the tail every 16), so a poll runs in pieces.
                let budget = self.cfg.driver.budget;
                let piece = self.cfg.driver.refill_batch.min(left);
                if left == budget {
                    self.tally.polls += 1;
                    plan.cycles = self.cfg.costs.poll + self.reclaim_sends(p, now, ctx).1;
                }
                let n = self.poll_ring(p, now, piece, &mut plan, ctx);
                if n < piece {
                    plan.effects.enable_irq = Some(p);
                } else if left > n && self.cfg.driver.gro {
                    // GRO holds a poll's frames until the poll ends (Linux
                    // flushes its merges when a poll completes or spends its
                    // budget, all of them where HZ < 1000): the poll goes on
                    // before they go up, and a merge spans all its pieces.
                    plan.effects.first = Some(Item::Poll(p, left - n));
                } else if left > n {
                    plan.effects.queue.push(Item::Poll(p, left - n));
                } else {
                    plan.effects.queue.push(Item::Poll(p, budget));
                }
            }
            Item::Send(p) => plan.cycles = self.reclaim_sends(p, now, ctx).1,
            Item::Handed(p, frame) => {
                plan.effects.delivered.push(frame.meta.arrived);
                let mut then = None;
                plan.cycles = self.protocol(p, (frame, &mut Vec::new()), now, ctx, (&mut plan.effects.transmit, &mut then));
                if let Some(then) = then {
                    self.then_on(k, then, &mut plan.effects);
                }
            }
            Item::App(then) => return *then,
            Item::Socket(frame) => {
                plan.activity = Activity::App;
                plan.cycles = self.cfg.driver.xdp.as_ref().map_or(0, |x| x.socket_cycles);
                self.tally.socket_frames += 1;
                self.tally.socket_bytes += frame.len() as u64;
                ctx.give_frame(frame);
            }
            Item::Handler(p) => {
                self.enter_handler(k, p, now);
                return self.handler_step(p, now, ctx);
            }
            Item::SessionTimer => {
                plan.cycles = self.cfg.costs.protocol_segment;
                self.sessions_step(&mut plan, ctx, |s, now, measuring| s.timer(now, measuring));
            }
            Item::AppCall => {
                self.apps.call_queued = false;
                self.sessions_step(&mut plan, ctx, |s, now, measuring| s.call(now, measuring));
            }
            Item::Offload(p, step) => return self.offload_step(p, step, ctx),
            Item::EventRing(p, work) => return self.event_ring_step(k, p, work, ctx),
            Item::Start => {
                plan.activity = Activity::App;
                self.sessions_step(&mut plan, ctx, |s, now, _| s.start(now));
            }
        }
        plan
    }

    /// Take up to `limit` visible frames from adapter `p`'s ring, doing
    /// their driver work; their protocol work follows as deferred steps, one a
    /// frame, so what each one sends leaves when its own work ends. Returns how many.
    pub(super) fn poll_ring(&mut self, p: usize, now: Time, limit: u32, plan: &mut Plan, ctx: &mut Ctx) -> u32 {
        let mut n = 0;
        let (measuring, moved) = (self.measuring(now), self.ports[p].moved_by_host());
        while n < limit {
            let Some((order, frame, visible)) = self.take(p, now) else { break };
            if measuring {
                self.tally.latency.taken(frame.meta.arrived, visible, now);
            }
            n += 1;
            plan.cycles += self.driver_frame(p, now, frame.meta.dma_mark);
            if moved {
                let at = plan.until.unwrap_or(now).max(now + self.cfg.clock.cycles(plan.cycles));
                plan.until = Some(self.move_frame(p, at, frame.len(), true));
            }
            if self.cfg.driver.xdp.is_some() {
                plan.cycles += self.xdp(p, order, frame, now, &mut plan.effects, ctx);
                continue;
            }
            // Written straight into its slot: `push` builds the item on the
            // stack and copies it, and the copy stalls on the item's own stores.
            let queue = &mut plan.effects.queue;
            queue.reserve(1);
            queue.spare_capacity_mut()[0].write(Item::Frame(p, order, frame));
            // SAFETY: the slot after the last was just initialised.
            unsafe { queue.set_len(queue.len() + 1) };
        }
        let give = self.ports[p].ring().recycle(n, self.cfg.driver.refill_batch);
        if give > 0 {
            plan.effects.refill.push((p, give));
        }
        let left = self.adapters.rings_ref(p).rx.ready(now);
        self.ports[p].irq.polled(now, left, &mut IrqAlarm { timers: &mut self.timers, ctx, port: p });
        n
    }

    /// A step of the sessions' own (a timer, a call, the start): `act`'s work
    /// is charged to `plan`, the applications' next call queued behind it if
    /// one is due and none waits yet, and the sessions' next timer armed.
    fn sessions_step(&mut self, plan: &mut Plan, ctx: &mut Ctx, act: impl FnOnce(&mut Sessions, Time, bool) -> Work) {
        let (now, measuring) = (ctx.now(), self.measuring(ctx.now()));
        if let Some(s) = &mut self.apps.sessions {
            let work = act(s, now, measuring);
            plan.cycles += self.charge(work, &mut plan.effects.transmit);
        }
        if self.apps.sessions.as_ref().is_some_and(|s| s.calls_due()) && !std::mem::replace(&mut self.apps.call_queued, true) {
            plan.effects.queue.push(Item::AppCall);
        }
        self.arm_sessions(ctx);
    }

    pub(super) fn measuring(&self, now: Time) -> bool {
        now >= Time::ZERO + self.cfg.warmup
    }

    /// The cycles of what the sessions did (each request made or answered, each
    /// frame sent, each byte a TTCP end copied), with its frames queued to send.
    /// Where the stack leaves segmentation and TCP checksums to the adapter, the
    /// driver does both for an adapter that does not (GSO).
    pub(super) fn charge(&self, work: Work, out: &mut Vec<(usize, Frame)>) -> u64 {
        let c = &self.cfg.costs;
        // A copy runs at memory speed: its time, in cycles of this clock.
        let copied = if self.cfg.zero_copy { 0 } else { work.copied };
        let copy = (copied as f64 * c.copy_ns_per_byte * self.cfg.clock.hz() / 1e9).round() as u64;
        let before = out.len();
        let offloads = self.apps.sessions.as_ref().is_some_and(|s| s.stack().tso());
        for (p, f) in work.out {
            if offloads && self.ports[p].stack_segments() != Some(true) {
                let meta = FrameMeta { gso: 0, ..f.meta };
                out.extend(cut(&f.bytes, f.meta.gso).into_iter().map(|bytes| (p, Frame { bytes, meta })));
            } else {
                out.push((p, *f));
            }
        }
        // Each frame handed to an adapter costs one: a large send to an adapter
        // that segments it (TSO) is one frame.
        work.requests * c.app_request + (out.len() - before) as u64 * c.tx_frame + copy
    }
}
