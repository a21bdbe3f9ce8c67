//! One processor model for host and adapter processors alike. [`Account`] is
//! what every processor has: its clock, where its time went (by activity), the
//! cycles its work cost, its unbroken runs, its trace track and its figures
//! under one set of names. Two policies decide when work runs on it:
//! - preemptive steps in execution contexts (interrupt, deferred, process, idle
//!   loop) ([`preemptive`]), a host processor's;
//! - run to completion, one piece of work at a time ([`Timeline`]), an adapter
//!   processor's: each piece is booked in the first gap from when it is ready
//!   (a programmable adapter's firmware; an intelligent bus master's per-frame
//!   work, `nic::processor`, which books a frame to send in the gap before it
//!   must go on the wire), or, measured as it went with its stalls on the bus
//!   ([`run::Run`]), from when the one before it ended (an offload engine's
//!   executive, which takes everything waiting as one run).

pub mod preemptive;
pub mod run;

use crate::bus::calendar::Calendar;
use crate::bus::chunked::Chunked;
use crate::observe::{Report, SharedTrace, TrackId};
use crate::time::{Clock, Duration, Time};

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
    /// An adapter processor's firmware.
    Firmware,
}

const ACTIVITIES: [(Activity, &str); 7] = [
    (Activity::Interrupt, "interrupt"),
    (Activity::Deferred, "deferred"),
    (Activity::App, "app"),
    (Activity::Poll, "poll"),
    (Activity::Background, "background"),
    (Activity::IdlePoll, "idle_poll"),
    (Activity::Firmware, "firmware"),
];

/// The activities a host processor reports.
pub const HOST: &[Activity] =
    &[Activity::Interrupt, Activity::Deferred, Activity::App, Activity::Poll, Activity::Background, Activity::IdlePoll];
/// The activity an adapter processor reports.
pub const ADAPTER: &[Activity] = &[Activity::Firmware];

pub fn activity_name(a: Activity) -> &'static str {
    ACTIVITIES[a as usize].1
}

/// One processor's time, cycles, runs and trace.
pub struct Account {
    pub clock: Clock,
    busy: [Duration; 7],
    /// Unbroken stretches of each activity (a handler run through a burst).
    runs: [u64; 7],
    cycles: u64,
    /// The run's end: time booked past it is not in the run's figures.
    end: Time,
    last: Option<(Activity, Time)>,
    /// The trace span being drawn: back-to-back work of one activity is one span.
    span: Option<(Activity, Time, Time, u64)>,
    track: Option<(SharedTrace, TrackId)>,
    kinds: &'static [Activity],
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account").field("clock", &self.clock).field("cycles", &self.cycles).finish_non_exhaustive()
    }
}

impl Account {
    /// A processor at `clock` whose figures list the activities `kinds`.
    pub fn new(clock: Clock, kinds: &'static [Activity]) -> Self {
        Account { clock, busy: [Duration::ZERO; 7], runs: [0; 7], cycles: 0, end: Time::MAX, last: None, span: None, track: None, kinds }
    }

    /// The run ends at `end`: work booked to run past it counts only up to it.
    pub fn ends_at(&mut self, end: Time) {
        self.end = end;
    }

    /// `start` and `end` clipped to the run.
    fn within(&self, start: Time, end: Time) -> (Time, Time) {
        (start.min(self.end), end.min(self.end))
    }

    /// Draw this processor's work into `trace`, on thread `thread` of `process`.
    pub fn trace_into(&mut self, trace: &SharedTrace, process: &str, thread: &str) {
        let track = trace.borrow_mut().track(process, thread);
        self.track = Some((trace.clone(), track));
    }

    /// Work of `activity` from `start` to `end` that cost `cycles` (stalls on
    /// the bus and copies take time without cycles of their own).
    pub fn account(&mut self, activity: Activity, start: Time, end: Time, cycles: u64) {
        let (start, end) = self.within(start, end);
        self.busy[activity as usize] = self.busy[activity as usize] + end.since(start);
        self.cycles += cycles;
        if self.last != Some((activity, start)) {
            self.runs[activity as usize] += 1;
        }
        self.last = Some((activity, end));
        if self.track.is_none() {
            return;
        }
        match &mut self.span {
            Some((a, _, e, c)) if *a == activity && *e == start => {
                *e = end;
                *c += cycles;
            }
            span => {
                let old = span.replace((activity, start, end, cycles));
                self.draw(old);
            }
        }
    }

    /// Work of `activity` that was to end at `end` stopped at `now` (an
    /// interrupt took the processor): the rest is not spent yet.
    pub fn stop(&mut self, activity: Activity, now: Time, end: Time) {
        let (now, end) = self.within(now, end);
        let left = end.since(now);
        self.busy[activity as usize] = Duration(self.busy[activity as usize].ps() - left.ps());
        self.last = Some((activity, now));
        if let Some((a, s, e, c)) = &mut self.span {
            if *a == activity && *e == end {
                *e = now;
                // A step stopped as it began keeps its span if it has cycles to show.
                if *s == now && *c == 0 {
                    self.span = None;
                }
            }
        }
    }

    fn draw(&self, span: Option<(Activity, Time, Time, u64)>) {
        if let (Some((trace, track)), Some((a, s, e, c))) = (&self.track, span) {
            trace.borrow_mut().span(*track, activity_name(a), s, e, &[("cycles", c)]);
        }
    }

    /// Draw the last span (at the end of the run).
    pub fn close_trace(&mut self) {
        let span = self.span.take();
        self.draw(span);
    }

    /// Time this processor was busy (idle-loop polls are idle).
    pub fn busy(&self) -> Duration {
        let busy = ACTIVITIES.iter().filter(|(a, _)| *a != Activity::IdlePoll).map(|(a, _)| self.busy[*a as usize]);
        busy.fold(Duration::ZERO, |a, b| a + b)
    }

    /// Fraction of the run to `end` this processor was busy.
    pub fn utilization(&self, end: Time) -> f64 {
        fraction(self.busy(), end)
    }

    /// The cycles of all the work charged to it.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Busy time and unbroken runs of one activity.
    pub fn runs(&self, a: Activity) -> (Duration, u64) {
        (self.busy[a as usize], self.runs[a as usize])
    }

    /// `NAME_utilization`, `NAME_ACTIVITY` (a fraction of the run each),
    /// `NAME_cycles` and `NAME_runs` (unbroken stretches of work).
    pub fn report(&self, r: &mut Report, name: &str, end: Time) {
        r.real(&format!("{name}_utilization"), self.utilization(end));
        for &a in self.kinds {
            r.real(&format!("{name}_{}", activity_name(a)), fraction(self.busy[a as usize], end));
        }
        r.count(&format!("{name}_cycles"), self.cycles);
        r.count(&format!("{name}_runs"), self.runs.iter().sum());
    }
}

/// An adapter processor running one piece of work at a time, to completion:
/// each starts in the first gap, from when it is ready, long enough for it;
/// work of no cycles takes no time and is not a run. A run that stalls on the
/// bus as it goes is measured first, then booked whole (`book`).
#[derive(Debug)]
pub struct Timeline {
    pub account: Account,
    /// When the processor is busy: work ready at `at` runs in the first gap from
    /// then that holds it, so firmware that waits on a DMA engine does other
    /// ready work (the next doorbell) in the meantime.
    busy: Calendar<Chunked>,
}

impl Timeline {
    pub fn new(clock: Clock) -> Self {
        Timeline { account: Account::new(clock, ADAPTER), busy: Calendar::new(Duration::from_ms(100)) }
    }

    /// The simulation has reached `now` (see `Calendar::settle`).
    pub fn settle(&mut self, now: Time) {
        self.busy.settle(now);
    }

    /// Run `cycles` of firmware, ready at `at`; returns when done.
    pub fn run(&mut self, at: Time, cycles: u64) -> Time {
        let len = self.account.clock.cycles(cycles);
        if len == Duration::ZERO {
            return at;
        }
        let (start, end) = self.busy.reserve(at, |_| len);
        self.account.account(Activity::Firmware, start, end, cycles);
        end
    }

    /// Book `run`, measured as it went from its start, which the work before it
    /// had left free.
    pub fn book(&mut self, run: &run::Run) {
        let (start, end) = self.busy.reserve(run.start, |_| run.at.since(run.start));
        debug_assert_eq!(start, run.start, "a run starts when the processor is free");
        self.account.account(Activity::Firmware, start, end, run.cycles);
    }
}

fn fraction(d: Duration, end: Time) -> f64 {
    if end.ps() == 0 {
        0.0
    } else {
        d.ps().min(end.ps()) as f64 / end.ps() as f64
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `n` microseconds into a run, for the tests of the policies and of
    /// whatever else times things within a run.
    pub(crate) fn us(n: u64) -> Time {
        Time::ZERO + Duration::from_us(n)
    }

    #[test]
    fn back_to_back_work_of_one_activity_is_one_run() {
        let mut a = Account::new(Clock::from_mhz(100), HOST);
        a.account(Activity::Interrupt, us(0), us(10), 1000);
        a.account(Activity::Interrupt, us(10), us(20), 1000);
        a.account(Activity::Interrupt, us(30), us(40), 1000);
        a.account(Activity::IdlePoll, us(40), us(100), 0);
        assert_eq!(a.runs(Activity::Interrupt), (Duration::from_us(30), 2));
        assert_eq!(a.busy(), Duration::from_us(30), "idle polls are idle");
        assert_eq!(a.cycles(), 3000);
        assert!((a.utilization(us(100)) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn stopped_work_gives_back_what_it_did_not_spend() {
        let mut a = Account::new(Clock::from_mhz(100), HOST);
        a.account(Activity::Deferred, us(0), us(10), 1000);
        a.stop(Activity::Deferred, us(4), us(10));
        assert_eq!(a.busy(), Duration::from_us(4));
    }

    #[test]
    fn a_step_stopped_as_it_began_keeps_its_cycles_on_the_timeline() {
        let path = std::env::temp_dir().join(format!("nicsim-account-{}.json", std::process::id()));
        let trace = crate::observe::Trace::create(&path, 100).unwrap();
        let mut a = Account::new(Clock::from_mhz(100), HOST);
        a.trace_into(&trace, "host", "cpu0");
        a.account(Activity::Deferred, us(10), us(20), 1000);
        a.stop(Activity::Deferred, us(10), us(20));
        assert_eq!(a.span.map(|(_, s, e, c)| (s, e, c)), Some((us(10), us(10), 1000)));
        a.account(Activity::Interrupt, us(10), us(30), 0);
        a.stop(Activity::Interrupt, us(10), us(30));
        assert!(a.span.is_none(), "a span with nothing to show is dropped");
    }

    #[test]
    fn work_booked_past_the_end_of_the_run_counts_only_up_to_it() {
        let mut a = Account::new(Clock::from_mhz(100), HOST);
        a.ends_at(us(100));
        a.account(Activity::App, us(0), us(60), 6000);
        a.account(Activity::Deferred, us(60), us(130), 7000);
        a.account(Activity::Poll, us(130), us(150), 0);
        assert_eq!(a.busy(), Duration::from_us(100));
        // Stopped before the end, it gives back only what fell within the run.
        a.stop(Activity::Deferred, us(90), us(130));
        assert_eq!(a.runs(Activity::Deferred).0, Duration::from_us(30));
        a.stop(Activity::Poll, us(140), us(150));
        assert_eq!(a.busy(), Duration::from_us(90));
    }

    #[test]
    fn a_timeline_runs_work_in_order() {
        let mut t = Timeline::new(Clock::from_mhz(100));
        assert_eq!(t.run(us(0), 1000), us(10));
        assert_eq!(t.run(us(5), 1000), us(20), "waits for the work before it");
        assert_eq!(t.run(us(50), 500), us(55), "idle until its work is ready");
        let mut r = Report::default();
        t.account.report(&mut r, "adapter_cpu0", us(100));
        assert_eq!(r.get("adapter_cpu0_cycles"), Some(2500.0));
        assert_eq!(r.get("adapter_cpu0_runs"), Some(2.0));
        assert!((r.get("adapter_cpu0_utilization").unwrap() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn work_ready_sooner_runs_in_a_gap_left_before_later_work() {
        let mut t = Timeline::new(Clock::from_mhz(100));
        // (ready, cycles, done): work planned for after a DMA, the next doorbell
        // (run while the firmware waits on the DMA), then work too long for the gap.
        for (ready, cycles, done) in [(40, 1000, 50), (0, 1000, 10), (35, 1000, 60)] {
            assert_eq!(t.run(us(ready), cycles), us(done), "ready at {ready} us");
        }
    }
}
