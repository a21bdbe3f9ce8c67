//! What a free processor runs next, and what each kind of step costs. In order:
//! the interrupt handler it is inside, a pending interrupt, its deferred work
//! (when the stack lock allows), the thread pinned to it.

use crate::engine::Ctx;
use crate::host::config::DriverMode;
use crate::host::cpu::{Activity, Effects, Item, Step};
use crate::host::machine::{wake, Machine, Tag};
use crate::time::{Duration, Time};
use crate::wire::Frame;

/// A step being planned: its activity, its cost and what it changes at its end.
struct Plan {
    activity: Activity,
    cycles: u64,
    /// Time the processor stalls beyond its cycles (a register read).
    until: Option<Time>,
    effects: Effects,
    holds_stack: bool,
}

impl Plan {
    fn new(activity: Activity, cycles: u64) -> Self {
        Plan { activity, cycles, until: None, effects: Effects::default(), holds_stack: false }
    }
}

impl Machine {
    pub(super) fn dispatch(&mut self, k: usize, ctx: &mut Ctx) {
        if !self.cpus[k].idle() {
            return;
        }
        let plan = if self.cpus[k].in_handler {
            Some(self.handler_step(ctx.now()))
        } else if self.cpus[k].irq_pending {
            self.cpus[k].irq_pending = false;
            Some(self.interrupt_entry(k, ctx.now()))
        } else if !(self.cpus[k].queue.is_empty() || self.cfg.serialized_stack && self.stack_held) {
            let item = self.cpus[k].queue.pop_front().expect("checked non-empty");
            Some(self.deferred(item, ctx))
        } else if self.cpus[k].thread_ready {
            self.thread_step(k, ctx)
        } else {
            None
        };
        let Some(plan) = plan else { return };
        let now = ctx.now();
        let mut end = now + self.cfg.clock.cycles(plan.cycles);
        if let Some(t) = plan.until {
            end = end.max(t);
        }
        if plan.holds_stack {
            self.stack_held = true;
        }
        let trace = self.trace.clone();
        self.cpus[k].account(plan.activity, now, end, trace.as_ref());
        self.cpus[k].step = Some(Step { effects: plan.effects, holds_stack: plan.holds_stack });
        wake(ctx, end, Tag::StepEnd(k));
    }

    /// Enter the handler: mask the adapter's interrupt, read its cause register
    /// (the processor stalls for the read's round trip on the bus).
    fn interrupt_entry(&mut self, k: usize, now: Time) -> Plan {
        self.irq.disable();
        self.irq.acknowledge();
        let costs = &self.cfg.costs;
        let mut p = Plan::new(Activity::Interrupt, costs.interrupt_entry);
        p.until = Some(self.bus.register_read(now + self.cfg.clock.cycles(costs.interrupt_entry)));
        match self.cfg.driver.mode {
            DriverMode::Handler => self.cpus[k].in_handler = true,
            _ => {
                p.cycles += costs.interrupt_exit;
                p.until = p.until.map(|t| t + self.cfg.clock.cycles(costs.interrupt_exit));
                p.effects.queue.push(Item::Poll);
            }
        }
        p
    }

    /// Inside the handler: take the next visible frame, or leave.
    fn handler_step(&mut self, now: Time) -> Plan {
        let costs = self.cfg.costs.clone();
        match self.rx.take(now) {
            Some(frame) => {
                self.handler_frames += 1;
                let copy = if self.cfg.driver.copy { (costs.copy_ns_per_byte * frame.len() as f64).round() as u64 } else { 0 };
                let mut p = Plan::new(Activity::Interrupt, costs.rx_frame);
                p.until = Some(now + self.cfg.clock.cycles(costs.rx_frame) + Duration::from_ns(copy));
                p.effects.queue.push(Item::Frame(frame));
                p.effects.refill = self.recycle(1);
                p
            }
            None => {
                let mut p = Plan::new(Activity::Interrupt, costs.interrupt_exit);
                p.effects.enable_irq = true;
                p.effects.leave_handler = true;
                p
            }
        }
    }

    /// The driver is done with `n` more receive buffers; returns how many to hand
    /// back now (a whole batch), keeping the rest.
    fn recycle(&mut self, n: u32) -> u32 {
        self.refill_pending += n;
        let batch = self.cfg.driver.refill_batch;
        let give = self.refill_pending / batch * batch;
        self.refill_pending -= give;
        give
    }

    fn deferred(&mut self, item: Item, ctx: &mut Ctx) -> Plan {
        let now = ctx.now();
        let mut p = Plan::new(Activity::Deferred, 0);
        p.holds_stack = self.cfg.serialized_stack;
        match item {
            Item::Frame(frame) => p.cycles = self.protocol(&frame, ctx, &mut p.effects.transmit),
            Item::Poll => {
                let n = self.poll_ring(now, &mut p, ctx);
                if n < self.cfg.driver.budget {
                    p.effects.enable_irq = true;
                } else {
                    p.effects.queue.push(Item::Poll);
                }
            }
            Item::ConnTimer(i) => {
                if let Some(f) = &mut self.files {
                    f.conns[i].on_timer(now);
                    p.cycles = self.cfg.costs.protocol_segment + f.output(i, now, &self.cfg.costs, &mut p.effects.transmit);
                }
                self.arm_conn(i, ctx);
            }
            Item::Start => {
                p.activity = Activity::App;
                if let Some(f) = &mut self.files {
                    p.cycles = f.start(now, &self.cfg.costs, &mut p.effects.transmit);
                }
                for i in 0..self.conn_armed.len() {
                    self.arm_conn(i, ctx);
                }
            }
        }
        p
    }

    /// Take up to a budget of visible frames from the ring and do their driver
    /// and protocol work. Returns how many.
    fn poll_ring(&mut self, now: Time, p: &mut Plan, ctx: &mut Ctx) -> u32 {
        p.cycles += self.cfg.costs.poll;
        let mut n = 0;
        while n < self.cfg.driver.budget {
            let Some(frame) = self.rx.take(now) else { break };
            n += 1;
            p.cycles += self.cfg.costs.rx_frame + self.protocol(&frame, ctx, &mut p.effects.transmit);
        }
        p.effects.refill = self.recycle(n);
        n
    }

    /// Protocol and application work for one received frame.
    fn protocol(&mut self, frame: &Frame, ctx: &mut Ctx, out: &mut Vec<Frame>) -> u64 {
        let now = ctx.now();
        let measuring = now >= Time::ZERO + self.cfg.warmup;
        if let Some(files) = &mut self.files {
            if let Some((cycles, i)) = files.receive(frame, now, measuring, &self.cfg.costs, out) {
                self.arm_conn(i, ctx);
                return cycles;
            }
        }
        match &mut self.sink {
            Some(s) => {
                if measuring {
                    s.frames += 1;
                    s.bytes += frame.len() as u64;
                }
            }
            None => self.unclaimed += 1,
        }
        self.cfg.costs.protocol_segment
    }

    /// The thread pinned to processor `k`: the poll loop or the sender.
    fn thread_step(&mut self, k: usize, ctx: &mut Ctx) -> Option<Plan> {
        let now = ctx.now();
        if self.cfg.driver.mode == DriverMode::Poll && k == self.cfg.driver.poll_cpu as usize {
            let mut p = Plan::new(Activity::Poll, 0);
            if self.poll_ring(now, &mut p, ctx) > 0 {
                return Some(p);
            }
            // Nothing yet: spin until the next booked completion, or sleep until
            // the adapter books one (the time still counts as polling).
            match self.rx.next_visible() {
                Some(t) if t > now => {
                    p.until = Some(t);
                    return Some(p);
                }
                _ => {
                    self.cpus[k].thread_ready = false;
                    self.poll_asleep_since = Some(now);
                    return None;
                }
            }
        }
        let blast = self.blast.as_mut()?;
        if k != blast.cfg.cpu as usize {
            self.cpus[k].thread_ready = false;
            return None;
        }
        self.tx.reclaim(now);
        let left = blast.cfg.count.map_or(u64::MAX, |c| c.saturating_sub(blast.sent));
        if left == 0 {
            self.cpus[k].thread_ready = false;
            return None;
        }
        // Send whole bursts: with less room than that, wait for descriptors to be
        // reclaimed (as a DPDK application retries a burst the ring refused).
        let want = blast.cfg.burst.min(left.min(u32::MAX as u64) as u32);
        let n = if self.tx.room() >= want { want } else { 0 };
        if n == 0 {
            self.cpus[k].thread_ready = false;
            if let Some(t) = self.tx.next_reclaim() {
                wake(ctx, t.max(now), Tag::Thread(k));
            }
            return None;
        }
        let measuring = now >= Time::ZERO + self.cfg.warmup;
        let mut p = Plan::new(Activity::App, self.cfg.costs.poll + n as u64 * (self.cfg.costs.tx_frame + self.cfg.costs.app_request));
        for _ in 0..n {
            p.effects.transmit.push(blast.next(now, measuring, ctx.rng()));
        }
        // The ring may fill beyond what is reclaimed: the next step will find out.
        Some(p)
    }
}
