//! Whether a connection moves: bytes acknowledged by the peer or received from
//! it. A connection with bytes to send (or a SYN out) that moves nothing for
//! longer than its retransmission timeout has stalled: the run names it
//! (`tcp_stalled`) instead of ending quietly.

use crate::time::{Duration, Time};

#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes the application wrote and read, over the whole run.
    pub written: u64,
    pub read: u64,
    /// Bytes acknowledged plus bytes received, at the last look.
    moved: u64,
    /// Since when bytes have waited with nothing moving.
    waiting_since: Option<Time>,
    /// The longest such wait that ended.
    longest: Duration,
    /// The socket's least retransmission timeout.
    pub min_rto: Duration,
    /// Since the application first wrote, the time data waited unsent for
    /// room in the congestion window, and in the window the peer offers.
    pub cwnd_limited: Duration,
    pub rwnd_limited: Duration,
    /// The time data was queued (unacknowledged or unsent).
    pub queued: Duration,
    /// What held the sender back at the last look, whether data was queued
    /// then, and when that was.
    limits: (bool, bool),
    was_queued: bool,
    last_look: Time,
}

impl Progress {
    /// A look at the socket at `now`: `unacked` bytes in its send buffer,
    /// `unread` in its receive buffer, `opening` while its SYN is out.
    pub fn observe(&mut self, now: Time, unacked: usize, unread: usize, opening: bool, limits: (bool, bool)) {
        // Most looks at a receiving connection find nothing queued and nothing waiting.
        if unacked == 0 && !opening && !self.was_queued && self.waiting_since.is_none() && self.limits == (false, false) {
            self.moved = self.written + self.read + unread as u64;
            self.last_look = now;
            return;
        }
        self.account_limits(now);
        self.limits = limits;
        self.was_queued = unacked > 0;
        let moved = self.written - unacked as u64 + self.read + unread as u64;
        if moved != self.moved {
            self.moved = moved;
            self.end_wait(now);
        }
        if unacked > 0 || opening {
            self.waiting_since.get_or_insert(now);
        } else {
            self.end_wait(now);
        }
    }

    /// The time since the last look, to the window that held the sender back
    /// (the peer's first: with it full, the congestion window does not matter).
    fn account_limits(&mut self, now: Time) {
        let dt = now.since(self.last_look.min(now));
        if self.was_queued {
            self.queued = self.queued + dt;
        }
        match self.limits {
            (_, true) => self.rwnd_limited = self.rwnd_limited + dt,
            (true, false) => self.cwnd_limited = self.cwnd_limited + dt,
            _ => {}
        }
        self.last_look = now;
    }

    /// The time the congestion window and the peer's window held data back,
    /// and the time data was queued, up to `end`.
    pub fn limited(&self, end: Time) -> (Duration, Duration, Duration) {
        let mut p = Progress { limits: self.limits, was_queued: self.was_queued, last_look: self.last_look, ..Progress::default() };
        p.account_limits(end);
        (self.cwnd_limited + p.cwnd_limited, self.rwnd_limited + p.rwnd_limited, self.queued + p.queued)
    }

    fn end_wait(&mut self, now: Time) {
        if let Some(since) = self.waiting_since.take() {
            self.longest = self.longest.max(now.since(since));
        }
    }

    /// How long bytes have waited at `end` with nothing moving, if longer than
    /// the retransmission timeout.
    pub fn stalled(&self, end: Time) -> Option<Duration> {
        self.waiting_since.map(|s| end.since(s)).filter(|w| *w > self.min_rto)
    }

    /// The longest time bytes waited with nothing moving, up to `end`.
    pub fn longest(&self, end: Time) -> Duration {
        self.longest.max(self.waiting_since.map_or(Duration::ZERO, |s| end.since(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_ms(ms)
    }

    fn watched(min_rto_ms: u64) -> Progress {
        Progress { min_rto: Duration::from_ms(min_rto_ms), ..Progress::default() }
    }

    #[test]
    fn bytes_that_wait_past_the_timeout_with_nothing_moving_are_a_stall() {
        let mut p = watched(200);
        p.written = 10_000;
        p.observe(at(0), 10_000, 0, false, (false, false));
        p.observe(at(100), 10_000, 0, false, (false, false));
        assert_eq!(p.stalled(at(150)), None, "within the retransmission timeout");
        assert_eq!(p.stalled(at(300)), Some(Duration::from_ms(300)));
        assert_eq!(p.longest(at(300)), Duration::from_ms(300));
    }

    #[test]
    fn an_acknowledgement_or_a_received_byte_is_progress() {
        let mut p = watched(200);
        p.written = 10_000;
        p.observe(at(0), 10_000, 0, false, (false, false));
        p.observe(at(250), 8_000, 0, false, (false, false));
        assert_eq!(p.stalled(at(400)), None, "2,000 bytes acknowledged at 250 ms");
        p.observe(at(420), 8_000, 1, false, (false, false));
        assert_eq!(p.stalled(at(600)), None, "a byte received at 420 ms");
        assert_eq!(p.longest(at(600)), Duration::from_ms(250));
    }

    #[test]
    fn nothing_to_send_is_no_stall_and_an_unanswered_syn_is_one() {
        let mut p = watched(200);
        p.observe(at(0), 0, 0, false, (false, false));
        assert_eq!(p.stalled(at(5_000)), None);
        p.observe(at(10), 0, 0, true, (false, false));
        assert_eq!(p.stalled(at(1_000)), Some(Duration::from_ms(990)));
    }

    #[test]
    fn the_time_a_window_held_the_sender_back_is_its_own() {
        let mut p = watched(200);
        p.written = 10_000;
        p.observe(at(0), 10_000, 0, false, (true, false));
        p.observe(at(30), 10_000, 0, false, (true, true));
        p.observe(at(40), 5_000, 0, false, (false, false));
        p.observe(at(60), 0, 0, false, (false, false));
        let (cwnd, rwnd, queued) = p.limited(at(100));
        assert_eq!((cwnd, rwnd, queued), (Duration::from_ms(30), Duration::from_ms(10), Duration::from_ms(60)));
    }
}
