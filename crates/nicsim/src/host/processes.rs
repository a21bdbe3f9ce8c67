//! The processes of a processor's run queue, each taking its turn when the
//! processor has nothing more urgent: the poller (every adapter's ring), the
//! sender (a blast of frames) and the background processes.

use crate::engine::Ctx;
use crate::host::cpu::{Activity, Effects};
use crate::host::machine::{Machine, Tag};
use crate::host::steps::Plan;
use crate::time::{Duration, Time};

/// A process of a processor's run queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Process {
    Poller,
    Sender,
    Background,
}

/// A processor's run queue: which processes it holds.
#[derive(Clone, Copy)]
struct RunQueue {
    poller: bool,
    sender: bool,
    background: usize,
}

impl RunQueue {
    fn len(self) -> usize {
        usize::from(self.poller) + usize::from(self.sender) + self.background
    }

    /// The process in place `i` (below `len`).
    fn at(self, i: usize) -> Process {
        match (self.poller, self.sender, i) {
            (true, _, 0) => Process::Poller,
            (true, true, 1) | (false, true, 0) => Process::Sender,
            _ => Process::Background,
        }
    }

    /// Round robin from place `next` (a processor's `next_thread`): each place
    /// once, in the order the processes get their turn.
    fn turns(self, next: usize) -> impl Iterator<Item = (usize, Process)> {
        let len = self.len();
        (0..len).map(move |j| (next + j) % len).map(move |i| (i, self.at(i)))
    }
}

impl Machine {
    /// A poll loop takes the frames: a dedicated poller or the OS's idle loop.
    pub(super) fn polling(&self) -> bool {
        self.cfg.driver.polls()
    }

    /// Account the poll loop's sleep up to `now`.
    pub(super) fn wake_poller(&mut self, now: Time) {
        if let Some(since) = self.poll_asleep_since.take() {
            self.spin(since, now);
        }
    }

    /// Processor `k` is busy until `end` with other work: a sleeping poller
    /// spins only in the gaps between, so its spin so far is accounted and
    /// resumes when that work ends.
    pub(super) fn poller_busy(&mut self, k: usize, now: Time, end: Time) {
        if k != self.cfg.driver.poll_cpu as usize {
            return;
        }
        if let Some(since) = self.poll_asleep_since {
            self.spin(since, now);
            self.poll_asleep_since = Some(since.max(now).max(end));
        }
    }

    /// The poll loop spun from `since` to `now` (if later) on an otherwise idle processor.
    fn spin(&mut self, since: Time, now: Time) {
        if now <= since {
            return;
        }
        let k = self.cfg.driver.poll_cpu as usize;
        let activity = self.idle_poll_activity();
        self.cpus[k].account.account(activity, since, now, 0);
        self.polls += self.polls_in(now.since(since));
    }

    /// Idle polling is busy time for a dedicated poller, idle time for the OS's.
    pub(super) fn idle_poll_activity(&self) -> Activity {
        self.cfg.driver.empty_poll()
    }

    /// How many back-to-back empty polling loops (a poll of every ring) fit in `d`.
    pub(super) fn polls_in(&self, d: Duration) -> u64 {
        let lap = self.cfg.costs.poll.max(1) * self.rings.len().max(1) as u64;
        d.ps() / self.cfg.clock.cycles(lap).ps().max(1)
    }

    /// Processor `k`'s run queue in its round-robin order: the poller, the
    /// sender, then the background processes (worked out, not listed, at each
    /// turn: a poll-mode host takes a turn per frame).
    fn run_queue_of(&self, k: usize) -> RunQueue {
        RunQueue {
            poller: self.polling() && k == self.cfg.driver.poll_cpu as usize,
            sender: self.blast.as_ref().is_some_and(|b| b.cfg.cpu as usize == k),
            background: self.cfg.background.as_ref().filter(|b| b.cpu as usize == k).map_or(0, |b| b.processes as usize),
        }
    }

    /// Whether a processor other than `k` may start work now that `k` let go of
    /// the stack lock, the order of frames or some shared work: only deferred
    /// work (its own or shared) or a process can be waiting for those. An idle
    /// processor is never inside a handler, with an interrupt pending or with a
    /// step suspended: it runs those as soon as it is free.
    pub(super) fn others_may_take(&self, k: usize) -> bool {
        let may = (0..self.cpus.len()).any(|j| j != k && !self.nothing_queued(j));
        debug_assert!(
            may || self.cpus.iter().enumerate().all(|(j, c)| j == k || !c.idle() || c.at_rest()),
            "an idle processor with work it has not started"
        );
        may
    }

    /// Processor `k` has no deferred work, none shared, and no process to run.
    pub(super) fn nothing_queued(&self, k: usize) -> bool {
        self.cpus[k].queue.is_empty() && self.then[k].is_none() && self.shared.is_empty() && self.run_queue_of(k).len() == 0
    }

    /// The next ready process of processor `k`, round robin: the one whose turn
    /// it is runs one step; one with nothing to do passes its turn on.
    pub(super) fn run_queue(&mut self, k: usize, ctx: &mut Ctx) -> Option<Plan> {
        let queue = self.run_queue_of(k);
        for (i, process) in queue.turns(self.cpus[k].next_thread) {
            self.cpus[k].next_thread = i + 1;
            if !self.ready(process) {
                continue;
            }
            // Every other place, in turn after this one.
            let others_ready = queue.turns(i + 1).take(queue.len() - 1).any(|(_, q)| self.ready(q));
            let plan = match process {
                Process::Poller => self.poller_step(others_ready, ctx),
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

    fn ready(&self, q: Process) -> bool {
        match q {
            Process::Poller => self.poll_asleep_since.is_none(),
            Process::Sender => !self.blast_waiting,
            Process::Background => true,
        }
    }

    /// One turn of the poller: poll every adapter. With nothing found and nothing
    /// else ready, it spins (busy for a dedicated poller, idle for the OS's loop)
    /// until the next completion booked, or one that any adapter books sooner:
    /// a real loop polls all the while, so it sees each the moment it is made.
    fn poller_step(&mut self, others_ready: bool, ctx: &mut Ctx) -> Option<Plan> {
        let now = ctx.now();
        let mut plan = Plan::new(Activity::Poll, 0);
        let mut n = 0;
        for i in 0..self.rings.len() {
            let p = self.rings[i];
            plan.cycles += self.cfg.costs.poll;
            n += self.reclaim_sends(p, now, ctx);
            n += self.poll_ring(p, now, self.cfg.driver.budget, &mut plan, ctx);
        }
        self.polls += 1;
        if n > 0 || others_ready {
            return Some(plan);
        }
        self.polls -= 1;
        Effects::recycle(plan.effects);
        let visible = self.ports.iter().filter_map(|p| p.rings.rx.next_visible()).min();
        let next = visible.into_iter().chain(self.next_send_room()).min();
        if let Some(t) = next.filter(|&t| t > now) {
            self.timers.arm(ctx, t, Tag::Thread(self.cfg.driver.poll_cpu as usize));
        }
        self.poll_asleep_since = Some(now);
        None
    }

    /// Adapter `p` took a tail write: a sender waiting for room on it learns
    /// when the first of those frames' descriptors comes back. (It found the
    /// ring full while every frame in it was still on its way to the adapter,
    /// so no completion was booked for it to wait for.)
    pub(super) fn wake_sender_for(&mut self, p: usize, ctx: &mut Ctx) {
        if !self.blast_waiting || p != self.blast_port {
            return;
        }
        let Some(blast) = self.blast.as_ref().filter(|b| b.cfg.count.is_none_or(|c| b.sent < c)) else { return };
        let cpu = blast.cfg.cpu as usize;
        if let Some(t) = self.ports[p].rings.tx.next_reclaim() {
            self.timers.arm(ctx, t.max(ctx.now()), Tag::Thread(cpu));
        }
    }

    /// The sender's turn: build a whole burst of frames if the ring has room.
    fn sender_step(&mut self, k: usize, ctx: &mut Ctx) -> Option<Plan> {
        let now = ctx.now();
        let blast = self.blast.as_mut()?;
        let tx = &mut self.ports[self.blast_port].rings.tx;
        tx.reclaim(now);
        let left = blast.cfg.count.map_or(u64::MAX, |c| c.saturating_sub(blast.sent));
        if left == 0 {
            self.blast_waiting = true;
            return None;
        }
        // Send whole bursts: with less room than that, wait for descriptors to be
        // reclaimed (as a DPDK application retries a burst the ring refused).
        let want = blast.cfg.burst.min(left.min(u32::MAX as u64) as u32);
        if tx.room() < want {
            self.blast_waiting = true;
            if let Some(t) = tx.next_reclaim() {
                self.timers.arm(ctx, t.max(now), Tag::Thread(k));
            }
            return None;
        }
        let measuring = now >= Time::ZERO + self.cfg.warmup;
        let mut plan = Plan::new(Activity::App, self.cfg.costs.poll + want as u64 * (self.cfg.costs.tx_frame + self.cfg.costs.app_request));
        for _ in 0..want {
            plan.effects.transmit.push((self.blast_port, blast.next(now, measuring, ctx.rng())));
        }
        Some(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_queue_holds_the_poller_then_the_sender_then_the_background() {
        let q = RunQueue { poller: true, sender: true, background: 2 };
        assert_eq!(q.len(), 4);
        let order: Vec<Process> = q.turns(0).map(|(_, p)| p).collect();
        assert_eq!(order, [Process::Poller, Process::Sender, Process::Background, Process::Background]);
        let q = RunQueue { poller: false, sender: true, background: 1 };
        assert_eq!((q.at(0), q.at(1)), (Process::Sender, Process::Background));
        assert_eq!(RunQueue { poller: false, sender: false, background: 0 }.turns(3).count(), 0, "an empty queue has no turns");
    }

    #[test]
    fn turns_go_round_from_the_place_after_the_last_one_run() {
        let q = RunQueue { poller: true, sender: false, background: 2 };
        let places: Vec<usize> = q.turns(2).map(|(i, _)| i).collect();
        assert_eq!(places, [2, 0, 1], "each place once, starting at the next");
        let places: Vec<usize> = q.turns(7).map(|(i, _)| i).collect();
        assert_eq!(places, [1, 2, 0], "a count past the end wraps");
    }
}
