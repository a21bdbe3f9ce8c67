//! The processes of a processor's run queue, each taking its turn when the
//! processor has nothing more urgent: the poller (every adapter's ring), the
//! sender (a blast of frames) and the background processes.

use crate::engine::Ctx;
use crate::host::cpu::Plan;
use crate::host::cpu::{Activity, Effects};
use crate::host::machine::{Machine, Tag};
use crate::host::processors::Process;
use crate::time::{Duration, Time};

impl Machine {
    /// A poll loop takes the frames: a dedicated poller or the OS's idle loop.
    pub(super) fn polling(&self) -> bool {
        self.cfg.driver.polls()
    }

    /// Account processor `k`'s poll loop's sleep up to `now` (if it has one asleep).
    pub(super) fn wake_poller(&mut self, k: usize, now: Time) {
        if let Some(since) = self.procs.poll_asleep_since[k].take() {
            self.spin(k, since, now);
        }
    }

    /// Processor `k` is busy until `end` with other work: a sleeping poller
    /// spins only in the gaps between, so its spin so far is accounted and
    /// resumes when that work ends.
    pub(super) fn poller_busy(&mut self, k: usize, now: Time, end: Time) {
        if let Some(since) = self.procs.poll_asleep_since[k] {
            self.spin(k, since, now);
            self.procs.poll_asleep_since[k] = Some(since.max(now).max(end));
        }
    }

    /// Processor `k`'s poll loop spun from `since` to `now` (if later) on an otherwise idle processor.
    fn spin(&mut self, k: usize, since: Time, now: Time) {
        if now <= since {
            return;
        }
        let activity = self.idle_poll_activity();
        self.procs.cpus[k].account.account(activity, since, now, 0);
        self.tally.polls += self.polls_in(k, now.since(since));
    }

    /// Idle polling is busy time for a dedicated poller, idle time for the OS's.
    pub(super) fn idle_poll_activity(&self) -> Activity {
        self.cfg.driver.empty_poll()
    }

    /// How many back-to-back empty polling loops of processor `k` (a poll of
    /// each of its rings) fit in `d`.
    pub(super) fn polls_in(&self, k: usize, d: Duration) -> u64 {
        let lap = self.cfg.costs.poll.max(1) * self.poll_rings[k].len().max(1) as u64;
        d.ps() / self.cfg.clock.cycles(lap).ps().max(1)
    }

    /// The next ready process of processor `k`, round robin: the one whose turn
    /// it is runs one step; one with nothing to do passes its turn on.
    pub(super) fn run_queue(&mut self, k: usize, ctx: &mut Ctx) -> Option<Plan> {
        let queue = self.procs.run_queue(k);
        for (i, process) in queue.turns(self.procs.cpus[k].next_thread) {
            self.procs.cpus[k].next_thread = i + 1;
            if !self.ready(k, process) {
                continue;
            }
            // Every other place, in turn after this one.
            let others_ready = queue.turns(i + 1).take(queue.len() - 1).any(|(_, q)| self.ready(k, q));
            let plan = match process {
                Process::Poller => self.poller_step(k, others_ready, ctx),
                Process::Sender => self.sender_step(k, ctx),
                Process::Background => {
                    let slice = self.cfg.background.as_ref().expect("listed").slice;
                    let mut plan = Plan::new(Activity::Background, 0);
                    plan.until = Some(ctx.now() + slice);
                    Some(plan)
                }
            };
            if plan.is_some() {
                return plan;
            }
        }
        None
    }

    fn ready(&self, k: usize, q: Process) -> bool {
        match q {
            Process::Poller => self.procs.poll_asleep_since[k].is_none(),
            Process::Sender => !self.apps.blast_waiting,
            Process::Background => true,
        }
    }

    /// One turn of processor `k`'s poller: poll each of its adapters. With
    /// nothing found and nothing else ready, it spins (busy for a dedicated
    /// poller, idle for the OS's loop) until the next completion booked, or one
    /// that any adapter books sooner: a real loop polls all the while, so it
    /// sees each the moment it is made.
    fn poller_step(&mut self, k: usize, others_ready: bool, ctx: &mut Ctx) -> Option<Plan> {
        let now = ctx.now();
        let mut plan = Plan::new(Activity::Poll, 0);
        let mut n = 0;
        for i in 0..self.poll_rings[k].len() {
            let p = self.poll_rings[k][i];
            plan.cycles += self.cfg.costs.poll;
            let (posted, built) = self.reclaim_sends(p, now, ctx);
            n += posted;
            plan.cycles += built;
            n += self.poll_ring(p, now, self.cfg.driver.budget, &mut plan, ctx);
        }
        self.tally.polls += 1;
        if n > 0 || others_ready {
            return Some(plan);
        }
        self.tally.polls -= 1;
        Effects::recycle(plan.effects);
        // What the adapters this loop polls book (`poll_cpu`'s: and those without rings).
        let mine = (0..self.ports.len()).filter(|&p| self.poller_of[p] == k);
        let visible = mine.clone().filter_map(|p| self.adapters.rings_ref(p).rx.next_visible()).min();
        let next = visible.into_iter().chain(self.next_send_room_of(mine)).min();
        if let Some(t) = next.filter(|&t| t > now) {
            self.timers.arm(ctx, t, Tag::Thread(k));
        }
        self.procs.poll_asleep_since[k] = Some(now);
        None
    }

    /// Adapter `p` took a tail write: a sender waiting for room on it learns
    /// when the first of those frames' descriptors comes back. (It found the
    /// ring full while every frame in it was still on its way to the adapter,
    /// so no completion was booked for it to wait for.)
    pub(super) fn wake_sender_for(&mut self, p: usize, ctx: &mut Ctx) {
        if !self.apps.blast_waiting || p != self.apps.blast_port {
            return;
        }
        let Some(blast) = self.apps.blast.as_ref().filter(|b| b.cfg.count.is_none_or(|c| b.sent < c)) else { return };
        let cpu = blast.cfg.cpu as usize;
        if let Some(t) = self.adapters.rings_ref(p).tx.next_reclaim() {
            self.timers.arm(ctx, t.max(ctx.now()), Tag::Thread(cpu));
        }
    }

    /// The sender's turn: build a whole burst of frames if the ring has room.
    fn sender_step(&mut self, k: usize, ctx: &mut Ctx) -> Option<Plan> {
        let now = ctx.now();
        let blast = self.apps.blast.as_mut()?;
        let tx = &mut self.adapters.rings(self.apps.blast_port).tx;
        tx.reclaim(now);
        let left = blast.cfg.count.map_or(u64::MAX, |c| c.saturating_sub(blast.sent));
        if left == 0 {
            self.apps.blast_waiting = true;
            return None;
        }
        // Send whole bursts: with less room than that, wait for descriptors to be
        // reclaimed (as a DPDK application retries a burst the ring refused).
        let want = blast.cfg.burst.min(left.min(u32::MAX as u64) as u32);
        if tx.room() < want {
            self.apps.blast_waiting = true;
            if let Some(t) = tx.next_reclaim() {
                self.timers.arm(ctx, t.max(now), Tag::Thread(k));
            }
            return None;
        }
        let measuring = now >= Time::ZERO + self.cfg.warmup;
        let mut plan = Plan::new(Activity::App, self.cfg.costs.poll + want as u64 * (self.cfg.costs.tx_frame + self.cfg.costs.app_request));
        for _ in 0..want {
            plan.effects.transmit.push((self.apps.blast_port, blast.next(now, measuring, ctx.rng())));
        }
        Some(plan)
    }
}
