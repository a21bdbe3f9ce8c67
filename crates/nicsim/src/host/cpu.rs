//! One host processor: what it is running, what waits for it, and where its time
//! went. Work runs in steps that are not interrupted; an interrupt that arrives
//! during a step is taken when the step ends (preemption at step boundaries).

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
}

const ACTIVITIES: [(Activity, &str); 4] =
    [(Activity::Interrupt, "interrupt"), (Activity::Deferred, "deferred"), (Activity::App, "app"), (Activity::Poll, "poll")];

pub fn activity_name(a: Activity) -> &'static str {
    ACTIVITIES[a as usize].1
}

/// Deferred work queued on a processor (a DPC, a softirq).
#[derive(Debug)]
pub enum Item {
    /// Protocol work for a received frame the handler took.
    Frame(Frame),
    /// A NAPI poll of the adapter's receive ring.
    Poll,
    /// A TCP timer of one session fell due.
    ConnTimer(usize),
    /// The applications start (their first requests).
    Start,
}

/// What a step changes when it ends.
#[derive(Debug, Default)]
pub struct Effects {
    pub transmit: Vec<Frame>,
    /// Receive buffers to hand back with one tail write.
    pub refill: u32,
    pub enable_irq: bool,
    pub queue: Vec<Item>,
    pub leave_handler: bool,
}

/// The step a processor is running: what it changes when it ends.
#[derive(Debug)]
pub struct Step {
    pub effects: Effects,
    /// Holds the stack lock (deferred protocol work on a serialized stack).
    pub holds_stack: bool,
}

#[derive(Default)]
pub struct Cpu {
    pub step: Option<Step>,
    /// Inside the interrupt handler (between entry and exit steps).
    pub in_handler: bool,
    pub irq_pending: bool,
    pub queue: VecDeque<Item>,
    /// A thread pinned here (the poll loop, a sending application) that is ready.
    pub thread_ready: bool,
    busy: [Duration; 4],
    /// Unbroken stretches of each activity (a handler run through a burst).
    runs: [u64; 4],
    last: Option<(Activity, Time)>,
    span: Option<(Activity, Time, Time)>,
    track: Option<TrackId>,
}

impl Cpu {
    pub fn idle(&self) -> bool {
        self.step.is_none()
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

    /// Fraction of the run this processor was busy.
    pub fn utilization(&self, end: Time) -> f64 {
        fraction(self.busy.iter().fold(Duration::ZERO, |a, b| a + *b), end)
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
