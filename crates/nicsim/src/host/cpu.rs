//! One host processor: what it is running, what waits for it, and where its time
//! went. Work runs in steps. An interrupt preempts any step but an interrupt
//! step: the step is suspended with the time it has left and resumes after the
//! handler (a suspended deferred step before other deferred work, a process
//! after it).

use std::collections::VecDeque;

use crate::observe::{Report, SharedTrace, TrackId};
use crate::time::{Duration, Time};
use crate::wire::Frame;

/// What a processor's time goes to, for utilization and the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    Interrupt,
    Deferred,
    App,
    Poll,
    /// A process of the busy run queue.
    Background,
    /// The idle loop's polls that found nothing: not counted as busy.
    IdlePoll,
}

const ACTIVITIES: [(Activity, &str); 6] = [
    (Activity::Interrupt, "interrupt"),
    (Activity::Deferred, "deferred"),
    (Activity::App, "app"),
    (Activity::Poll, "poll"),
    (Activity::Background, "background"),
    (Activity::IdlePoll, "idle_poll"),
];

pub fn activity_name(a: Activity) -> &'static str {
    ACTIVITIES[a as usize].1
}

/// Deferred work queued on a processor (a DPC, a softirq).
#[derive(Debug)]
pub enum Item {
    /// Protocol work for a frame the handler took from an adapter, with its
    /// place in that adapter's order.
    Frame(usize, u64, Frame),
    /// A NAPI poll of an adapter's receive ring, with the budget it has left.
    Poll(usize, u32),
    /// The sessions' timer fell due (the stack's, or a request's).
    SessionTimer,
    /// The applications start (their first requests).
    Start,
    /// The application's work with the offload engine of adapter `p`.
    Offload(usize, OffloadStep),
    /// Host work a programmable adapter `p` calls for (a send, an event).
    Programmable(usize, crate::nic::smart::HostWork),
}

/// What the application does with an offload engine (`host::offload`).
#[derive(Debug)]
pub enum OffloadStep {
    Open,
    Send,
    /// Its part of a message the handler took from the adapter.
    Take(crate::toe::exec::Work),
}

/// What a step changes when it ends.
#[derive(Debug, Default)]
pub struct Effects {
    /// Frames to send, with the adapter each leaves by.
    pub transmit: Vec<(usize, Frame)>,
    /// Receive buffers to hand back to an adapter, one tail write each.
    pub refill: Vec<(usize, u32)>,
    /// The adapter whose interrupt the driver unmasks.
    pub enable_irq: Option<usize>,
    pub queue: Vec<Item>,
    pub leave_handler: bool,
    /// Messages to an adapter's offload engine.
    pub to_adapter: Vec<(usize, crate::toe::exec::Work)>,
    /// A programmable adapter's host step ended: its doorbell and deliveries.
    pub programmable: Option<(usize, crate::nic::smart::HostCost)>,
}

/// The step a processor is running: what it changes when it ends.
#[derive(Debug)]
pub struct Step {
    pub effects: Effects,
    /// Holds the stack lock (deferred protocol work on a serialized stack).
    pub holds_stack: bool,
    /// A frame's protocol work: its end may let another processor's next frame go.
    pub releases_order: bool,
}

/// A step an interrupt took the processor from.
#[derive(Debug)]
pub struct Suspended {
    pub step: Step,
    pub activity: Activity,
    pub left: Duration,
}

#[derive(Default)]
pub struct Cpu {
    pub step: Option<Step>,
    /// The running step's activity, start and end; its end timer's generation.
    pub running: Option<(Activity, Time, Time)>,
    pub generation: u64,
    pub suspended: Vec<Suspended>,
    /// Inside the interrupt handler of this adapter (between entry and exit).
    pub in_handler: Option<usize>,
    /// Adapters whose interrupt waits for this processor.
    pub irq_pending: VecDeque<usize>,
    pub queue: VecDeque<Item>,
    /// The run queue's next process, round robin.
    pub next_thread: usize,
    busy: [Duration; 6],
    /// Unbroken stretches of each activity (a handler run through a burst).
    runs: [u64; 6],
    last: Option<(Activity, Time)>,
    span: Option<(Activity, Time, Time)>,
    track: Option<TrackId>,
}

impl Cpu {
    pub fn idle(&self) -> bool {
        self.step.is_none()
    }

    /// Whether an interrupt may take this processor now.
    pub fn preemptible(&self) -> bool {
        self.in_handler.is_none() && self.running.is_none_or(|(a, _, _)| a != Activity::Interrupt)
    }

    /// Suspend the running step at `now`; it keeps the time it has left.
    pub fn preempt(&mut self, now: Time) {
        let (Some(step), Some((activity, start, end))) = (self.step.take(), self.running.take()) else { return };
        let left = end.since(now.max(start));
        self.busy[activity as usize] = Duration(self.busy[activity as usize].ps() - left.ps());
        self.last = Some((activity, now));
        if let Some((a, s, e)) = &mut self.span {
            if *a == activity && *e == end {
                *e = now;
                if *s == now {
                    self.span = None;
                }
            }
        }
        self.generation += 1;
        self.suspended.push(Suspended { step, activity, left });
    }

    pub fn trace_into(&mut self, trace: &SharedTrace, host: &str, index: usize) {
        self.track = Some(trace.borrow_mut().track(host, &format!("cpu{index}")));
    }

    /// Account a step of `activity` from `start` to `end`; in the trace,
    /// back-to-back steps of one activity form one span.
    pub fn account(&mut self, activity: Activity, start: Time, end: Time, trace: Option<&SharedTrace>) {
        self.busy[activity as usize] = self.busy[activity as usize] + end.since(start);
        if self.last != Some((activity, start)) {
            self.runs[activity as usize] += 1;
        }
        self.last = Some((activity, end));
        let (Some(trace), Some(track)) = (trace, self.track) else { return };
        match &mut self.span {
            Some((a, _, e)) if *a == activity && *e == start => *e = end,
            span => {
                if let Some((a, s, e)) = span.take() {
                    trace.borrow_mut().span(track, activity_name(a), s, e, &[]);
                }
                *span = Some((activity, start, end));
            }
        }
    }

    pub fn close_trace(&mut self, trace: Option<&SharedTrace>) {
        if let (Some(trace), Some(track), Some((a, s, e))) = (trace, self.track, self.span.take()) {
            trace.borrow_mut().span(track, activity_name(a), s, e, &[]);
        }
    }

    /// Time this processor was busy (idle-loop polls are idle).
    pub fn busy(&self) -> Duration {
        let busy = ACTIVITIES.iter().filter(|(a, _)| *a != Activity::IdlePoll).map(|(a, _)| self.busy[*a as usize]);
        busy.fold(Duration::ZERO, |a, b| a + b)
    }

    /// Fraction of the run this processor was busy.
    pub fn utilization(&self, end: Time) -> f64 {
        fraction(self.busy(), end)
    }

    pub fn report(&self, r: &mut Report, index: usize, end: Time) {
        let frac = |d: Duration| fraction(d, end);
        r.real(&format!("cpu{index}_utilization"), self.utilization(end));
        for (a, name) in ACTIVITIES {
            r.real(&format!("cpu{index}_{name}"), frac(self.busy[a as usize]));
        }
    }

    /// Busy time and unbroken runs of one activity.
    pub fn runs(&self, a: Activity) -> (Duration, u64) {
        (self.busy[a as usize], self.runs[a as usize])
    }
}

fn fraction(d: Duration, end: Time) -> f64 {
    if end.ps() == 0 {
        0.0
    } else {
        d.ps().min(end.ps()) as f64 / end.ps() as f64
    }
}
