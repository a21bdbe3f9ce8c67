//! The interrupt cause register and its moderation. Completions set the cause;
//! the interrupt is raised when the cause is set, the driver has it enabled, and
//! the moderation rule allows. Its timer is set and taken back through an
//! `Alarm`, the host's timers.

use std::collections::VecDeque;

use crate::engine::timers::TimerHandle;
use crate::nic::Moderation;
use crate::time::Time;

/// Where the interrupt's timer is set and taken back. When the timer set last
/// falls due, its owner calls `Irq::fire`.
pub trait Alarm {
    fn set(&mut self, at: Time) -> TimerHandle;
    fn cancel(&mut self, timer: TimerHandle);
}

#[derive(Debug)]
pub struct Irq {
    moderation: Moderation,
    enabled: bool,
    /// Causes not yet signalled, in time order: when each becomes visible to
    /// the host, and the completions in it. A cause is reported when the
    /// adapter books its write-back, so it may lie ahead of the present: an
    /// interrupt raised before it does not signal it.
    causes: VecDeque<(Time, u32)>,
    /// The timer in flight: when, and its handle.
    timer: Option<(Time, TimerHandle)>,
    last_raised: Option<Time>,
    /// Frames waited for transmit descriptors while the interrupt was masked:
    /// when the oldest outstanding frame is sent, owed once it is unmasked.
    send_wait: Option<Time>,
    pub raised: u64,
}

impl Irq {
    pub fn new(moderation: Moderation) -> Self {
        Irq { moderation, enabled: true, causes: VecDeque::new(), timer: None, last_raised: None, send_wait: None, raised: 0 }
    }

    #[inline(always)]
    fn due(&self, latest: Time) -> Option<Time> {
        let first = self.causes.front()?.0;
        if !self.enabled {
            return None;
        }
        // Not before the cause is set.
        let latest = latest.max(first);
        Some(match self.moderation {
            Moderation::PerFrame => latest,
            Moderation::MinInterval(gap) => self.last_raised.map_or(latest, |l| (l + gap).max(latest)),
            Moderation::Coalesce { frames, time } => {
                if self.count() >= frames {
                    latest
                } else {
                    first + time
                }
            }
            Moderation::Backup { timeout, .. } => first + timeout,
        })
    }

    /// Set the timer for `due` unless one at or before it is in flight; a later
    /// one is taken back.
    #[inline(always)]
    fn arm(&mut self, due: Option<Time>, alarm: &mut impl Alarm) {
        let Some(due) = due else { return };
        if self.timer.is_some_and(|(a, _)| a <= due) {
            return;
        }
        self.cancel(alarm);
        self.timer = Some((due, alarm.set(due)));
    }

    fn cancel(&mut self, alarm: &mut impl Alarm) {
        if let Some((_, t)) = self.timer.take() {
            alarm.cancel(t);
        }
    }

    /// `n` completions became visible to the host at `at`.
    #[inline(always)]
    pub fn completed(&mut self, at: Time, n: u32, alarm: &mut impl Alarm) {
        self.cause(at, n);
        self.arm(self.due(at), alarm)
    }

    /// Set a cause at `at` for `n` completions, in time order.
    #[inline(always)]
    fn cause(&mut self, at: Time, n: u32) {
        // Almost always the latest: kept with one at the same time, else last.
        match self.causes.back_mut() {
            Some(last) if last.0 == at => last.1 += n,
            Some(last) if last.0 > at => {
                let i = self.causes.iter().rposition(|c| c.0 <= at).map_or(0, |i| i + 1);
                self.causes.insert(i, (at, n));
            }
            _ => self.causes.push_back((at, n)),
        }
    }

    /// Completions not yet signalled.
    pub fn count(&self) -> u32 {
        self.causes.iter().map(|c| c.1).sum()
    }

    /// The causes set by `now` are signalled (or read); later ones stay.
    fn clear_until(&mut self, now: Time) {
        // In time order, so found by halving: a poll clears a budget's worth.
        let signalled = self.causes.partition_point(|c| c.0 <= now);
        self.causes.drain(..signalled);
    }

    /// The timer set last fell due at `now`: true if the interrupt is raised.
    #[inline(always)]
    pub fn fire(&mut self, now: Time) -> bool {
        self.timer = None;
        if !self.enabled || self.causes.front().is_none_or(|c| c.0 > now) {
            return false;
        }
        self.clear_until(now);
        self.last_raised = Some(now);
        self.raised += 1;
        true
    }

    /// Whether the driver has it masked, so that it cannot be raised.
    pub fn masked(&self) -> bool {
        !self.enabled
    }

    /// The driver masks the interrupt (its handler or poll is running).
    /// Returns the timer in flight, which must not fire.
    pub fn disable(&mut self) -> Option<TimerHandle> {
        self.enabled = false;
        self.send_wait = None;
        self.timer.take().map(|(_, t)| t)
    }

    /// The driver unmasks it; completions left pending raise it per the moderation.
    pub fn enable(&mut self, now: Time, alarm: &mut impl Alarm) {
        self.enabled = true;
        let due = self.due(now);
        let owed = self.send_wait.take();
        if let Some(sent) = owed {
            self.cause(sent, 0);
        }
        self.arm([due, owed.map(|s| self.throttled(s.max(now)))].into_iter().flatten().min(), alarm)
    }

    /// The driver polled the ring at `now` (without an interrupt). With interrupt
    /// backup this restarts the adapter's timer: frames still waiting (`left`)
    /// are timed from this poll.
    pub fn polled(&mut self, now: Time, left: bool, alarm: &mut impl Alarm) {
        if !matches!(self.moderation, Moderation::Backup { .. }) {
            return;
        }
        self.cancel(alarm);
        self.causes.clear();
        if left {
            self.cause(now, 0);
        }
        self.arm(self.due(now), alarm)
    }

    /// `free` receive buffers are left to the adapter at `now`: with interrupt
    /// backup, few enough raise the interrupt at once.
    #[inline(always)]
    pub fn buffers_left(&mut self, now: Time, free: u32, alarm: &mut impl Alarm) {
        match self.moderation {
            Moderation::Backup { low_buffers, .. } if free <= low_buffers && !self.causes.is_empty() && self.enabled => {
                self.arm(Some(now), alarm)
            }
            _ => {}
        }
    }

    /// Frames wait in the driver for transmit descriptors: the adapter
    /// interrupts when the first outstanding frame is sent, at `sent`; if the
    /// interrupt is masked, once it is unmasked.
    pub fn sends_waiting(&mut self, sent: Time, alarm: &mut impl Alarm) {
        if !self.enabled {
            self.send_wait = Some(sent);
            return;
        }
        // A cause of its own: one of a receive completion still ahead would
        // not let the interrupt rise at `sent`.
        self.cause(sent, 0);
        self.arm(Some(self.throttled(sent)), alarm)
    }

    /// When an interrupt for a cause set at `at` may be raised: a throttle
    /// (the 8254x's ITR) spaces every interrupt, whatever its cause; the other
    /// rules time receive completions only.
    fn throttled(&self, at: Time) -> Time {
        match (self.moderation, self.last_raised) {
            (Moderation::MinInterval(gap), Some(last)) => (last + gap).max(at),
            _ => at,
        }
    }

    /// The driver read the cause register at `now`: it takes every
    /// completion visible by then.
    pub fn acknowledge(&mut self, now: Time) {
        self.clear_until(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::timers::Timers;
    use crate::engine::{component_rng, Ctx, Msg};
    use crate::processor::tests::us;
    use crate::time::Duration;

    /// The host's side: the timers the interrupt set and has not taken back.
    struct Alarms {
        timers: Timers<()>,
        live: Vec<(TimerHandle, Time, u64)>,
    }

    impl Alarm for Alarms {
        fn set(&mut self, at: Time) -> TimerHandle {
            let (mut rng, mut out) = (component_rng(0, "irq"), Vec::new());
            let handle = self.timers.arm(&mut Ctx::new(Time::ZERO, &mut out, &mut rng), at, ());
            let Msg::Timer(tag) = out[0].msg else { unreachable!() };
            self.live.push((handle, at, tag));
            handle
        }
        fn cancel(&mut self, timer: TimerHandle) {
            self.timers.cancel(timer);
            self.live.retain(|(h, ..)| *h != timer);
        }
    }

    impl Alarms {
        /// The driver masks the interrupt.
        fn off(&mut self, irq: &mut Irq) {
            if let Some(t) = irq.disable() {
                self.cancel(t);
            }
        }
        fn new() -> Self {
            Alarms { timers: Timers::new(0), live: Vec::new() }
        }
        /// When the timers in flight fall due, earliest first.
        fn pending(&self) -> Vec<Time> {
            let mut at: Vec<Time> = self.live.iter().map(|(_, t, _)| *t).collect();
            at.sort();
            at
        }
        /// The earliest timer in flight falls due: when.
        fn next(&mut self) -> Option<Time> {
            let i = (0..self.live.len()).min_by_key(|&i| self.live[i].1)?;
            let (_, at, tag) = self.live.remove(i);
            assert!(self.timers.fire(tag).is_some(), "a timer in flight was not cancelled");
            Some(at)
        }
    }

    #[test]
    fn per_frame_raises_at_each_completion() {
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::PerFrame));
        i.completed(us(1), 1, &mut a);
        let t = a.next().unwrap();
        assert_eq!(t, us(1));
        assert!(i.fire(t));
        assert!(a.next().is_none(), "a timer fires once");
    }

    #[test]
    fn a_completion_booked_ahead_survives_an_interrupt_raised_before_it() {
        // An intelligent adapter's processor makes its completions visible late:
        // the second is booked (at 1 us) to be visible at 30 us.
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::PerFrame));
        i.completed(us(1), 1, &mut a);
        i.completed(us(30), 1, &mut a);
        let t = a.next().unwrap();
        assert!(i.fire(t) && t == us(1));
        // The driver masks it, reads the cause register at 2 us and unmasks it.
        a.off(&mut i);
        i.acknowledge(us(2));
        i.enable(us(2), &mut a);
        assert_eq!(a.pending(), [us(30)], "raised again once the second is visible, not lost");
        assert!(i.fire(a.next().unwrap()));
        assert_eq!(i.raised, 2);
    }

    #[test]
    fn min_interval_spaces_interrupts() {
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::MinInterval(Duration::from_us(10))));
        i.completed(us(1), 1, &mut a);
        assert!(i.fire(a.next().unwrap()));
        i.completed(us(2), 1, &mut a);
        i.completed(us(3), 1, &mut a);
        assert_eq!(a.pending(), [us(11)], "armed once, for 11 us");
        assert!(i.fire(a.next().unwrap()));
        assert_eq!(i.raised, 2);
    }

    #[test]
    fn coalescing_fires_on_count_or_time() {
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::Coalesce { frames: 3, time: Duration::from_us(50) }));
        i.completed(us(0), 1, &mut a);
        assert_eq!(a.pending(), [us(50)]);
        i.completed(us(1), 1, &mut a);
        assert_eq!(a.pending(), [us(50)]);
        i.completed(us(2), 1, &mut a);
        assert_eq!(a.pending(), [us(2)], "the third frame brings it forward, and the later timer is taken back");
        assert!(i.fire(a.next().unwrap()));
    }

    #[test]
    fn backup_fires_exactly_when_the_timeout_passes_without_a_poll() {
        let timeout = Duration::from_us(100);
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::Backup { timeout, low_buffers: 2 }));
        i.completed(us(10), 1, &mut a);
        assert_eq!(a.pending(), [us(110)], "timed from the first frame not polled");
        i.completed(us(20), 1, &mut a);
        assert_eq!(a.pending(), [us(110)], "later frames do not move it");
        i.polled(us(50), true, &mut a);
        assert_eq!(a.pending(), [us(150)], "a frame left behind is timed from the poll, the first timer taken back");
        i.polled(us(60), false, &mut a);
        assert!(a.pending().is_empty(), "nothing left: no timer");
        i.completed(us(70), 1, &mut a);
        let t = a.next().unwrap();
        assert!(i.fire(t));
        assert_eq!((t, i.raised), (us(170), 1));
    }

    #[test]
    fn waiting_sends_raise_the_interrupt_when_a_frame_is_sent_unless_masked() {
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::Backup { timeout: Duration::from_ms(1), low_buffers: 4 }));
        i.sends_waiting(us(30), &mut a);
        let t = a.next().unwrap();
        assert_eq!(t, us(30), "at the send, not after the backup timeout");
        assert!(i.fire(t));
        a.off(&mut i);
        i.sends_waiting(us(40), &mut a);
        assert!(a.pending().is_empty(), "masked: the handler running takes it up");
        i.enable(us(35), &mut a);
        let t = a.next().expect("still waiting when unmasked");
        assert_eq!(t, us(40), "owed at the send, not at the unmasking");
        assert!(i.fire(t));
        a.off(&mut i);
        i.enable(us(50), &mut a);
        i.enable(us(60), &mut a);
        assert!(a.pending().is_empty(), "a wait is owed once, and only if made while masked");
    }

    #[test]
    fn backup_fires_at_once_when_buffers_run_low() {
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::Backup { timeout: Duration::from_ms(1), low_buffers: 4 }));
        i.completed(us(10), 1, &mut a);
        i.buffers_left(us(11), 5, &mut a);
        assert_eq!(a.pending(), [us(1010)]);
        i.buffers_left(us(12), 4, &mut a);
        assert_eq!(a.pending(), [us(12)]);
        assert!(i.fire(a.next().unwrap()));
    }

    #[test]
    fn polls_do_not_touch_other_policies() {
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::PerFrame));
        i.completed(us(1), 1, &mut a);
        i.polled(us(1), false, &mut a);
        assert_eq!(a.pending(), [us(1)]);
        assert!(i.fire(a.next().unwrap()));
    }

    #[test]
    fn masked_completions_wait_for_enable() {
        let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::PerFrame));
        a.off(&mut i);
        i.completed(us(1), 1, &mut a);
        assert!(a.pending().is_empty());
        i.enable(us(5), &mut a);
        let t = a.next().unwrap();
        assert_eq!(t, us(5));
        assert!(i.fire(t));
        a.off(&mut i);
        i.completed(us(6), 1, &mut a);
        i.acknowledge(us(7));
        i.enable(us(7), &mut a);
        assert!(a.pending().is_empty(), "the driver took them while masked");
    }

    proptest::proptest! {
        /// Whatever the completions, the frames waiting to be sent and the
        /// driver do, two interrupts are never closer than the interval.
        #[test]
        fn min_interval_is_never_broken(steps in proptest::collection::vec((0u64..40_000, 0u8..5), 1..300)) {
            let gap = Duration::from_ns(256 * 40);
            let (mut a, mut i) = (Alarms::new(), Irq::new(Moderation::MinInterval(gap)));
            let mut now = Time::ZERO;
            let mut raised: Vec<Time> = Vec::new();
            for (dt, action) in steps {
                now += Duration::from_ns(dt);
                // Fire every timer that fell due, in time order.
                while a.pending().first().is_some_and(|t| *t <= now) {
                    let t = a.next().expect("one is due");
                    if i.fire(t) {
                        raised.push(t);
                        a.off(&mut i);
                        i.acknowledge(t);
                        i.enable(t, &mut a);
                    }
                }
                match action {
                    0 | 1 => i.completed(now, 1, &mut a),
                    2 => a.off(&mut i),
                    3 => i.enable(now, &mut a),
                    _ => i.sends_waiting(now, &mut a),
                }
            }
            for w in raised.windows(2) {
                proptest::prop_assert!(w[1].since(w[0]) >= gap, "interrupts at {} and {}", w[0], w[1]);
            }
        }
    }
}
