//! The interrupt handler's runs, entry to exit: how many, how long, how many
//! frames each took, the time between one run's end and the next one's start
//! (what the IBM study's bus trace shows as "OS and DD" between bursts), and
//! the time per frame of the largest frames (those a published per-frame
//! figure describes).

use crate::observe::Report;
use crate::time::{Duration, Time};

#[derive(Debug, Default)]
pub struct HandlerRuns {
    frames: u64,
    runs: u64,
    time: Duration,
    last_end: Option<Time>,
    gaps: u64,
    between: Duration,
    largest_bytes: usize,
    largest_frames: u64,
    largest_time: Duration,
}

impl HandlerRuns {
    /// A handler run starts at `now`.
    pub fn enter(&mut self, now: Time) {
        if let Some(end) = self.last_end.take() {
            self.gaps += 1;
            self.between = self.between + now.since(end);
        }
    }

    /// The run that started at `since` ends at `now`.
    pub fn leave(&mut self, since: Time, now: Time) {
        self.runs += 1;
        self.time = self.time + now.since(since);
        self.last_end = Some(now);
    }

    /// The handler took a frame of `bytes`, which cost it `took`.
    pub fn frame(&mut self, bytes: usize, took: Duration) {
        self.frames += 1;
        if bytes > self.largest_bytes {
            (self.largest_bytes, self.largest_frames, self.largest_time) = (bytes, 0, Duration::ZERO);
        }
        if bytes == self.largest_bytes {
            self.largest_frames += 1;
            self.largest_time = self.largest_time + took;
        }
    }

    pub fn report(&self, r: &mut Report) {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let per = |d: Duration, n: u64| us(d) / n.max(1) as f64;
        r.count("handler_frames", self.frames).count("handler_runs", self.runs);
        r.real("frames_per_handler_run", self.frames as f64 / self.runs.max(1) as f64);
        r.real("mean_handler_run_us", per(self.time, self.runs));
        r.real("handler_us_per_frame", per(self.time, self.frames));
        r.real("handler_us_per_full_frame", per(self.largest_time, self.largest_frames));
        r.real("mean_handler_gap_us", per(self.between, self.gaps));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_gaps_and_full_frames_are_told_apart() {
        let us = |n| Time::ZERO + Duration::from_us(n);
        let mut h = HandlerRuns::default();
        h.enter(us(0));
        h.frame(1514, Duration::from_us(19));
        h.frame(60, Duration::from_us(5));
        h.frame(1514, Duration::from_us(21));
        h.leave(us(0), us(45));
        h.enter(us(845));
        h.frame(1514, Duration::from_us(20));
        h.leave(us(845), us(865));
        let mut r = Report::default();
        h.report(&mut r);
        assert_eq!(r.get("handler_runs"), Some(2.0));
        assert_eq!(r.get("frames_per_handler_run"), Some(2.0));
        assert_eq!(r.get("mean_handler_run_us"), Some(32.5));
        assert_eq!(r.get("handler_us_per_full_frame"), Some(20.0), "the 60-byte frame is apart");
        assert_eq!(r.get("mean_handler_gap_us"), Some(800.0));
    }
}
