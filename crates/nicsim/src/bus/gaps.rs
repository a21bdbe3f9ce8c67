//! The spacing of receive data bursts on a PCI bus, in bus clocks, start to
//! start: what a bus analyser shows of the adapter's receive rhythm (the CERN
//! 2007 traces: bursts about 45 clocks apart while the adapter keeps up, runs
//! broken by stops of about 4,000 clocks while the driver is late), and how long
//! the bursts ran smoothly before the first stop.

use crate::observe::Report;
use crate::time::{Duration, Time};

/// Gaps of up to this many clocks are counted one by one; longer ones together.
const EXACT: usize = 1 << 16;
/// A gap longer than this is a stop.
pub const STOP_CLOCKS: usize = 1000;

pub struct Gaps {
    period: Duration,
    first: Option<Time>,
    last: Option<Time>,
    /// Clocks from the first burst to the first stop: how long the smooth
    /// regime lasted.
    smooth: Option<usize>,
    /// Gaps by length in clocks; the last bucket holds every longer gap.
    counts: Vec<u32>,
}

impl Gaps {
    pub fn new(period: Duration) -> Gaps {
        Gaps { period, first: None, last: None, smooth: None, counts: Vec::new() }
    }

    /// A burst started at `at`.
    pub fn burst(&mut self, at: Time) {
        if let Some(last) = self.last.replace(at) {
            if self.counts.is_empty() {
                self.counts = vec![0; EXACT + 1];
            }
            let clocks = (at.since(last).ps() / self.period.ps().max(1)) as usize;
            self.counts[clocks.min(EXACT)] += 1;
            if clocks > STOP_CLOCKS && self.smooth.is_none() {
                let first = self.first.unwrap_or(last);
                self.smooth = Some((last.since(first).ps() / self.period.ps().max(1)) as usize);
            }
        }
        self.first.get_or_insert(at);
    }

    /// How many gaps of `from` clocks or more, and their median length.
    fn median(&self, from: usize) -> Option<(u64, usize)> {
        let n: u64 = self.counts.get(from..)?.iter().map(|c| *c as u64).sum();
        let mut seen = 0;
        for (len, c) in self.counts.iter().enumerate().skip(from) {
            seen += *c as u64;
            if seen * 2 >= n && n > 0 {
                return Some((n, len));
            }
        }
        None
    }

    pub fn report(&self, r: &mut Report, name: &str) {
        if let Some((_, median)) = self.median(0) {
            r.real(&format!("bus_{name}_gap_median_clocks"), median as f64);
            let stops = self.median(STOP_CLOCKS + 1);
            r.count(&format!("bus_{name}_stops"), stops.map_or(0, |s| s.0));
            r.real(&format!("bus_{name}_stop_median_clocks"), stops.map_or(0.0, |s| s.1 as f64));
            if let Some(smooth) = self.smooth {
                r.real(&format!("bus_{name}_first_stop_clocks"), smooth as f64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_and_stops_are_told_apart() {
        let mut g = Gaps::new(Duration::from_ps(15_000));
        let mut t = Time::ZERO;
        for i in 0..100 {
            g.burst(t);
            // 45 clocks apart, with a stop of 4,000 clocks every 20 bursts.
            t += Duration::from_ps(15_000 * if i % 20 == 19 { 4_000 } else { 45 });
        }
        let mut r = Report::default();
        g.report(&mut r, "rx_data");
        assert_eq!(r.get("bus_rx_data_gap_median_clocks"), Some(45.0));
        assert_eq!(r.get("bus_rx_data_stops"), Some(4.0));
        assert_eq!(r.get("bus_rx_data_stop_median_clocks"), Some(4000.0));
        assert_eq!(r.get("bus_rx_data_first_stop_clocks"), Some(19.0 * 45.0), "twenty bursts, then the first stop");
    }
}
