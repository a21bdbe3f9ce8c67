//! The interrupt cause register and its moderation. Completions set the cause;
//! the interrupt is raised when the cause is set, the driver has it enabled, and
//! the moderation rule allows. Timers cannot be taken back, so each one carries a
//! generation and a stale one is ignored.

use crate::nic::Moderation;
use crate::time::Time;

#[derive(Debug)]
pub struct Irq {
    moderation: Moderation,
    enabled: bool,
    /// First completion not yet signalled, and how many since.
    first: Option<Time>,
    count: u32,
    /// The timer in flight: when, and its generation.
    armed: Option<Time>,
    generation: u64,
    last_raised: Option<Time>,
    /// Frames waited for transmit descriptors while the interrupt was masked:
    /// when the oldest outstanding frame is sent, owed once it is unmasked.
    send_wait: Option<Time>,
    pub raised: u64,
}

impl Irq {
    pub fn new(moderation: Moderation) -> Self {
        Irq { moderation, enabled: true, first: None, count: 0, armed: None, generation: 0, last_raised: None, send_wait: None, raised: 0 }
    }

    fn due(&self, latest: Time) -> Option<Time> {
        let first = self.first?;
        if !self.enabled {
            return None;
        }
        Some(match self.moderation {
            Moderation::PerFrame => latest,
            Moderation::MinInterval(gap) => self.last_raised.map_or(latest, |l| (l + gap).max(latest)),
            Moderation::Coalesce { frames, time } => {
                if self.count >= frames {
                    latest
                } else {
                    first + time
                }
            }
            Moderation::Backup { timeout, .. } => first + timeout,
        })
    }

    /// Arm a timer for `due` unless one at or before it is in flight. Returns the
    /// (time, generation) to schedule.
    fn arm(&mut self, due: Option<Time>) -> Option<(Time, u64)> {
        let due = due?;
        if self.armed.is_some_and(|a| a <= due) {
            return None;
        }
        self.generation += 1;
        self.armed = Some(due);
        Some((due, self.generation))
    }

    /// `n` completions became visible to the host at `at`.
    pub fn completed(&mut self, at: Time, n: u32) -> Option<(Time, u64)> {
        self.first.get_or_insert(at);
        self.count += n;
        self.arm(self.due(at))
    }

    /// A timer of `generation` fired at `now`: true if the interrupt is raised.
    pub fn fire(&mut self, generation: u64, now: Time) -> bool {
        if generation != self.generation {
            return false;
        }
        self.armed = None;
        if !self.enabled || self.first.is_none() {
            return false;
        }
        self.first = None;
        self.count = 0;
        self.last_raised = Some(now);
        self.raised += 1;
        true
    }

    /// Whether the driver has it masked, so that it cannot be raised.
    pub fn masked(&self) -> bool {
        !self.enabled
    }

    /// The driver masks the interrupt (its handler or poll is running).
    pub fn disable(&mut self) {
        self.enabled = false;
        self.send_wait = None;
        self.armed = None;
        self.generation += 1;
    }

    /// The driver unmasks it; completions left pending raise it per the moderation.
    pub fn enable(&mut self, now: Time) -> Option<(Time, u64)> {
        self.enabled = true;
        let due = self.due(now);
        let owed = self.send_wait.take();
        if let Some(sent) = owed {
            self.first.get_or_insert(sent);
        }
        self.arm([due, owed.map(|s| self.throttled(s.max(now)))].into_iter().flatten().min())
    }

    /// The driver polled the ring at `now` (without an interrupt). With interrupt
    /// backup this restarts the adapter's timer: frames still waiting (`left`)
    /// are timed from this poll.
    pub fn polled(&mut self, now: Time, left: bool) -> Option<(Time, u64)> {
        if !matches!(self.moderation, Moderation::Backup { .. }) {
            return None;
        }
        self.armed = None;
        self.generation += 1;
        self.count = 0;
        self.first = left.then_some(now);
        self.arm(self.due(now))
    }

    /// `free` receive buffers are left to the adapter at `now`: with interrupt
    /// backup, few enough raise the interrupt at once.
    pub fn buffers_left(&mut self, now: Time, free: u32) -> Option<(Time, u64)> {
        match self.moderation {
            Moderation::Backup { low_buffers, .. } if free <= low_buffers && self.first.is_some() && self.enabled => self.arm(Some(now)),
            _ => None,
        }
    }

    /// Frames wait in the driver for transmit descriptors: the adapter
    /// interrupts when the first outstanding frame is sent, at `sent`; if the
    /// interrupt is masked, once it is unmasked.
    pub fn sends_waiting(&mut self, sent: Time) -> Option<(Time, u64)> {
        if !self.enabled {
            self.send_wait = Some(sent);
            return None;
        }
        self.first.get_or_insert(sent);
        self.arm(Some(self.throttled(sent)))
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

    /// The driver has taken every completion so far (it read the cause register).
    pub fn acknowledge(&mut self) {
        self.first = None;
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processor::tests::us;
    use crate::time::Duration;

    #[test]
    fn per_frame_raises_at_each_completion() {
        let mut i = Irq::new(Moderation::PerFrame);
        let (t, g) = i.completed(us(1), 1).unwrap();
        assert_eq!(t, us(1));
        assert!(i.fire(g, t));
        assert!(!i.fire(g, t), "a timer fires once");
    }

    #[test]
    fn min_interval_spaces_interrupts() {
        let mut i = Irq::new(Moderation::MinInterval(Duration::from_us(10)));
        let (t, g) = i.completed(us(1), 1).unwrap();
        assert!(i.fire(g, t));
        let (t2, g2) = i.completed(us(2), 1).unwrap();
        assert_eq!(t2, us(11));
        assert!(i.completed(us(3), 1).is_none(), "already armed for 11 us");
        assert!(i.fire(g2, t2));
        assert_eq!(i.raised, 2);
    }

    #[test]
    fn coalescing_fires_on_count_or_time() {
        let mut i = Irq::new(Moderation::Coalesce { frames: 3, time: Duration::from_us(50) });
        let (t, _) = i.completed(us(0), 1).unwrap();
        assert_eq!(t, us(50));
        assert!(i.completed(us(1), 1).is_none());
        let (t3, g3) = i.completed(us(2), 1).unwrap();
        assert_eq!(t3, us(2), "the third frame brings it forward");
        assert!(i.fire(g3, t3));
    }

    #[test]
    fn backup_fires_exactly_when_the_timeout_passes_without_a_poll() {
        let timeout = Duration::from_us(100);
        let mut i = Irq::new(Moderation::Backup { timeout, low_buffers: 2 });
        let (t, g) = i.completed(us(10), 1).unwrap();
        assert_eq!(t, us(110), "timed from the first frame not polled");
        assert!(i.completed(us(20), 1).is_none(), "later frames do not move it");
        let (t2, g2) = i.polled(us(50), true).expect("a frame left behind is timed from the poll");
        assert_eq!(t2, us(150));
        assert!(!i.fire(g, t), "the poll cancelled the first timer");
        assert!(i.polled(us(60), false).is_none(), "nothing left: no timer");
        assert!(!i.fire(g2, t2), "and the second is cancelled too");
        let (t3, g3) = i.completed(us(70), 1).unwrap();
        assert!(i.fire(g3, t3));
        assert_eq!((t3, i.raised), (us(170), 1));
    }

    #[test]
    fn waiting_sends_raise_the_interrupt_when_a_frame_is_sent_unless_masked() {
        let mut i = Irq::new(Moderation::Backup { timeout: Duration::from_ms(1), low_buffers: 4 });
        let (t, g) = i.sends_waiting(us(30)).unwrap();
        assert_eq!(t, us(30), "at the send, not after the backup timeout");
        assert!(i.fire(g, t));
        i.disable();
        assert!(i.sends_waiting(us(40)).is_none(), "masked: the handler running takes it up");
        let (t, g) = i.enable(us(35)).expect("still waiting when unmasked");
        assert_eq!(t, us(40), "owed at the send, not at the unmasking");
        assert!(i.fire(g, t));
        i.disable();
        i.enable(us(50));
        assert!(i.enable(us(60)).is_none(), "a wait is owed once, and only if made while masked");
    }

    #[test]
    fn backup_fires_at_once_when_buffers_run_low() {
        let mut i = Irq::new(Moderation::Backup { timeout: Duration::from_ms(1), low_buffers: 4 });
        i.completed(us(10), 1);
        assert!(i.buffers_left(us(11), 5).is_none());
        let (t, g) = i.buffers_left(us(12), 4).unwrap();
        assert_eq!(t, us(12));
        assert!(i.fire(g, t));
    }

    #[test]
    fn polls_do_not_touch_other_policies() {
        let mut i = Irq::new(Moderation::PerFrame);
        let (t, g) = i.completed(us(1), 1).unwrap();
        assert!(i.polled(us(1), false).is_none());
        assert!(i.fire(g, t));
    }

    #[test]
    fn masked_completions_wait_for_enable() {
        let mut i = Irq::new(Moderation::PerFrame);
        i.disable();
        assert!(i.completed(us(1), 1).is_none());
        let (t, g) = i.enable(us(5)).unwrap();
        assert_eq!(t, us(5));
        assert!(i.fire(g, t));
        i.disable();
        i.completed(us(6), 1);
        i.acknowledge();
        assert!(i.enable(us(7)).is_none(), "the driver took them while masked");
    }

    proptest::proptest! {
        /// Whatever the completions, the frames waiting to be sent and the
        /// driver do, two interrupts are never closer than the interval.
        #[test]
        fn min_interval_is_never_broken(steps in proptest::collection::vec((0u64..40_000, 0u8..5), 1..300)) {
            let gap = Duration::from_ns(256 * 40);
            let mut i = Irq::new(Moderation::MinInterval(gap));
            let mut timers: Vec<(Time, u64)> = Vec::new();
            let mut now = Time::ZERO;
            let mut raised: Vec<Time> = Vec::new();
            for (dt, action) in steps {
                now += Duration::from_ns(dt);
                // Fire every timer that fell due, in time order.
                timers.sort();
                while let Some(&(t, g)) = timers.first().filter(|(t, _)| *t <= now) {
                    timers.remove(0);
                    if i.fire(g, t) {
                        raised.push(t);
                        i.disable();
                        i.acknowledge();
                        timers.extend(i.enable(t));
                    }
                }
                match action {
                    0 | 1 => timers.extend(i.completed(now, 1)),
                    2 => i.disable(),
                    3 => timers.extend(i.enable(now)),
                    _ => timers.extend(i.sends_waiting(now)),
                }
            }
            for w in raised.windows(2) {
                proptest::prop_assert!(w[1].since(w[0]) >= gap, "interrupts at {} and {}", w[0], w[1]);
            }
        }
    }
}
