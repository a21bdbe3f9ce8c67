//! The preemptive policy: a processor runs steps in execution contexts (an
//! interrupt handler, deferred work, processes, the idle loop). An interrupt
//! preempts any step but an interrupt step: the step is suspended with the time
//! it has left and resumes after the handler. What runs next is the owner's
//! choice (`host::steps`); this keeps what is running, what was suspended and
//! what waits, over the steps `S` and deferred items `I` of its owner.

use std::collections::VecDeque;

use super::{Account, Activity};
use crate::engine::timers::TimerHandle;
use crate::time::{Clock, Duration, Time};

/// A step an interrupt took the processor from.
#[derive(Debug)]
pub struct Suspended<S> {
    pub step: S,
    pub activity: Activity,
    pub left: Duration,
}

pub struct Cpu<S, I> {
    pub step: Option<S>,
    /// The running step's activity, start and end.
    pub running: Option<(Activity, Time, Time)>,
    /// The running step's end timer, which its owner arms; a preemption hands it
    /// back to be cancelled.
    pub end_timer: Option<TimerHandle>,
    pub suspended: Vec<Suspended<S>>,
    /// Inside the interrupt handler of this source (between entry and exit).
    pub in_handler: Option<usize>,
    /// When the handler run in progress began.
    pub handler_since: Option<Time>,
    /// Sources whose interrupt waits for this processor.
    pub irq_pending: VecDeque<usize>,
    /// Deferred work (DPCs, softirqs).
    pub queue: VecDeque<I>,
    /// Work the handler run in progress took, queued where it belongs when it ends.
    pub held: VecDeque<I>,
    /// The run queue's next process, round robin.
    pub next_thread: usize,
    /// Where its time went.
    pub account: Account,
}

impl<S, I> Cpu<S, I> {
    pub fn new(clock: Clock, activities: &'static [Activity]) -> Self {
        Cpu {
            step: None,
            running: None,
            end_timer: None,
            suspended: Vec::new(),
            in_handler: None,
            handler_since: None,
            irq_pending: VecDeque::new(),
            queue: VecDeque::new(),
            held: VecDeque::new(),
            next_thread: 0,
            account: Account::new(clock, activities),
        }
    }

    pub fn idle(&self) -> bool {
        self.step.is_none()
    }

    /// Idle with nothing begun that it must come back to: not inside a handler,
    /// no interrupt pending, no step suspended.
    pub fn at_rest(&self) -> bool {
        self.idle() && self.in_handler.is_none() && self.irq_pending.is_empty() && self.suspended.is_empty()
    }

    /// Whether an interrupt may take this processor now.
    pub fn preemptible(&self) -> bool {
        self.in_handler.is_none() && self.running.is_none_or(|(a, _, _)| a != Activity::Interrupt)
    }

    /// Run `step` of `activity` costing `cycles` from `now` to `end`.
    pub fn start(&mut self, (activity, cycles): (Activity, u64), step: S, now: Time, end: Time) {
        self.account.account(activity, now, end, cycles);
        self.step = Some(step);
        self.running = Some((activity, now, end));
    }

    /// Suspend the running step at `now`; it keeps the time it has left. Returns
    /// its end timer, which must not fire.
    pub fn preempt(&mut self, now: Time) -> Option<TimerHandle> {
        let (Some(step), Some((activity, start, end))) = (self.step.take(), self.running.take()) else { return None };
        let now = now.max(start);
        self.account.stop(activity, now, end);
        self.suspended.push(Suspended { step, activity, left: end.since(now) });
        self.end_timer.take()
    }

    /// Go back at `now` to the step last suspended; returns when it ends.
    pub fn resume(&mut self, now: Time) -> Time {
        let s = self.suspended.pop().expect("a suspended step");
        let end = now + s.left;
        self.start((s.activity, 0), s.step, now, end);
        end
    }

    /// The running step ended: it is no longer running.
    pub fn end(&mut self) -> Option<S> {
        self.running = None;
        self.step.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processor::tests::us;
    use crate::processor::HOST;

    #[test]
    fn a_preempted_step_resumes_with_the_time_it_had_left_and_hands_back_its_end_timer() {
        let mut cpu: Cpu<&str, ()> = Cpu::new(Clock::from_mhz(100), HOST);
        let mut rng = crate::engine::component_rng(1, "cpu");
        let mut outbox = Vec::new();
        let mut ctx = crate::engine::Ctx::new(us(0), &mut outbox, &mut rng);
        let mut timers = crate::engine::timers::Timers::new(0);
        cpu.start((Activity::Deferred, 1000), "protocol", us(0), us(10));
        let end_timer = timers.arm(&mut ctx, us(10), "end");
        cpu.end_timer = Some(end_timer);
        assert!(cpu.preemptible());
        assert_eq!(cpu.preempt(us(4)), Some(end_timer), "the old end timer is handed back");
        assert!(cpu.idle());
        cpu.start((Activity::Interrupt, 300), "handler", us(4), us(7));
        assert!(!cpu.preemptible(), "an interrupt step is not preempted");
        assert_eq!(cpu.end(), Some("handler"));
        let end = cpu.resume(us(7));
        assert_eq!((end, cpu.step), (us(13), Some("protocol")));
        assert_eq!(cpu.account.busy(), Duration::from_us(13), "4 + 3 + 6 us");
        assert_eq!(cpu.account.runs(Activity::Deferred).1, 2, "split in two by the handler");
    }
}
