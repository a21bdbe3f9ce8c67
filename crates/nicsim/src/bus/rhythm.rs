//! What a logic analyser on a PCI bus shows of the adapter's receive rhythm, in
//! bus clocks: receive data bursts start to start (the CERN 2007 traces: about
//! 45 clocks apart while the adapter keeps up, runs broken by stops of about
//! 4,000 clocks while the driver is late), how long they ran smoothly before
//! the first stop, the idle bus before each burst (the IBM 2001 trace's FIFO
//! refill), the least delay between one frame's data and the next's, how soon
//! a status write follows a frame, and the densest microsecond of traffic.
//!
//! Masters may book the bus a little in the past, so transactions arrive out of
//! order; they are held until no booking can come before them, then read in
//! order of their start, a batch at a time (sorted once, rather than each put
//! in its place as it comes).

use crate::bus::purpose::Purpose;
use crate::observe::Report;
use crate::time::{Duration, Time};

/// A gap longer than this is a stop.
pub const STOP_CLOCKS: usize = 1000;
/// Peak rates are over aligned windows of this length.
const PEAK_WINDOW: Duration = Duration::from_us(1);
/// Bookings held before the settled ones are read.
const BATCH: usize = 512;

/// Counts of lengths in clocks: exact up to `EXACT`, longer ones together.
#[derive(Clone)]
struct Histogram {
    counts: Vec<u32>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; Self::EXACT + 1] }
    }
}

impl Histogram {
    const EXACT: usize = 1 << 14;

    fn add(&mut self, clocks: usize) {
        self.counts[clocks.min(Self::EXACT)] += 1;
    }

    /// How many lengths of `from` clocks or more, and their median.
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
}

/// A transaction as read: times in picoseconds.
#[derive(Clone, Copy)]
struct Booking {
    start: u64,
    end: u64,
    bytes: u64,
    wait: u32,
    purpose: Purpose,
}

#[derive(Clone)]
pub struct Rhythm {
    period: u64,
    /// Clocks a transaction spends outside its data phases (arbitration,
    /// address, turnaround): between two back-to-back bursts' data.
    overhead_clocks: u64,
    /// How far before the present a request may reach back, in picoseconds.
    reach_back: u64,
    /// Bookings that start before this are all in.
    settled: u64,
    /// Bookings not yet read, in the order they came, and how many make the
    /// next batch (twice those still held after the last, so that a long
    /// reach-back is not sorted again and again).
    pending: Vec<Booking>,
    batch: usize,

    /// The last booking read (its purpose and end), and the latest end so far.
    previous: Option<(Purpose, u64)>,
    bus_free: Option<u64>,
    first_data: Option<u64>,
    last_data: Option<u64>,
    /// Clocks from the first receive burst to the first stop, and the gaps in them.
    smooth: Option<(usize, u64)>,
    gaps_before_stop: u64,
    gaps: Histogram,
    idle_before_data: Histogram,
    status_after_data: Histogram,
    data_waits: Histogram,
    least_delay: Option<u64>,
    /// The window still open (the one the latest transaction ended in) and
    /// its bytes; the busiest window closed.
    open: Option<(u64, f64)>,
    peak_bytes: f64,
}

impl Rhythm {
    pub fn new(period: Duration, overhead_clocks: u64, reach_back: Duration) -> Rhythm {
        Rhythm {
            period: period.ps().max(1),
            overhead_clocks,
            reach_back: reach_back.ps(),
            settled: 0,
            pending: Vec::with_capacity(BATCH),
            batch: BATCH,
            previous: None,
            bus_free: None,
            first_data: None,
            last_data: None,
            smooth: None,
            gaps_before_stop: 0,
            gaps: Histogram::default(),
            idle_before_data: Histogram::default(),
            status_after_data: Histogram::default(),
            data_waits: Histogram::default(),
            least_delay: None,
            open: None,
            peak_bytes: 0.0,
        }
    }

    /// Whole clocks in `ps` picoseconds.
    fn clocks(&self, ps: u64) -> usize {
        (ps / self.period) as usize
    }

    /// A transaction took the bus over [start, end). `wait`: the wait states
    /// the master inserted.
    pub fn booked(&mut self, (start, end): (Time, Time), purpose: Purpose, bytes: u64, wait: u64) {
        self.pending.push(Booking { start: start.ps(), end: end.ps(), bytes, wait: wait.min(u32::MAX as u64) as u32, purpose });
        if self.pending.len() >= self.batch {
            self.read_until(self.settled);
            self.batch = BATCH.max(2 * self.pending.len());
        }
    }

    /// The simulation has reached `now`: no request reaches further back than
    /// `reach_back` from it, so nothing can start before that any more.
    pub fn settle(&mut self, now: Time) {
        self.settled = self.settled.max(now.ps().saturating_sub(self.reach_back));
    }

    /// Reads the bookings that start before `settled`, in order of start
    /// (those that started together, in the order they came).
    fn read_until(&mut self, settled: u64) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|b| b.start);
        let n = pending.partition_point(|b| b.start < settled);
        for b in &pending[..n] {
            self.read(b);
        }
        pending.drain(..n);
        self.pending = pending;
    }

    fn read(&mut self, b: &Booking) {
        self.count_bytes(b);
        match b.purpose {
            Purpose::RxData => self.data_burst(b),
            Purpose::RxStatus => {
                if let Some(last) = self.last_data {
                    let c = self.clocks(b.start.saturating_sub(last));
                    self.status_after_data.add(c);
                }
            }
            _ => {}
        }
        self.bus_free = Some(self.bus_free.map_or(b.end, |f| f.max(b.end)));
        self.previous = Some((b.purpose, b.end));
    }

    fn data_burst(&mut self, b: &Booking) {
        self.data_waits.add(b.wait as usize);
        if let Some(free) = self.bus_free {
            self.idle_before_data.add(self.clocks(b.start.saturating_sub(free)));
        }
        if let Some((_, end)) = self.previous.filter(|p| matches!(p.0, Purpose::RxData | Purpose::RxRemainder)) {
            let delay = self.clocks(b.start.saturating_sub(end)) as u64 + self.overhead_clocks;
            self.least_delay = Some(self.least_delay.map_or(delay, |d| d.min(delay)));
        }
        if let Some(last) = self.last_data.replace(b.start) {
            let clocks = self.clocks(b.start.saturating_sub(last));
            self.gaps.add(clocks);
            if self.smooth.is_none() {
                if clocks > STOP_CLOCKS {
                    let first = self.first_data.unwrap_or(last);
                    self.smooth = Some((self.clocks(last.saturating_sub(first)), self.gaps_before_stop));
                } else {
                    self.gaps_before_stop += 1;
                }
            }
        }
        self.first_data.get_or_insert(b.start);
    }

    /// Spread a transaction's bytes over the windows it spans. The bus carries
    /// one transaction at a time (its calendar books none over another), so of
    /// the windows a transaction spans only the last can take more bytes later:
    /// the others are closed at once, and those it covers whole all hold the
    /// same share.
    fn count_bytes(&mut self, b: &Booking) {
        if b.bytes == 0 {
            return;
        }
        let w = PEAK_WINDOW.ps();
        let (s, e) = (b.start, b.end.max(b.start + 1));
        let (first, last) = (s / w, (e - 1) / w);
        // A transaction that starts before the open window (only one that
        // overlaps the last) counts from the open window.
        let (open, mut sum) = match self.open {
            Some((k, sum)) if k >= first => (k, sum),
            Some((_, sum)) => {
                self.peak_bytes = self.peak_bytes.max(sum);
                (first, 0.0)
            }
            None => (first, 0.0),
        };
        if open >= last {
            self.open = Some((open, sum + b.bytes as f64));
            return;
        }
        let per_ps = b.bytes as f64 / (e - s) as f64;
        sum += per_ps * ((open + 1) * w - s.max(open * w)) as f64;
        self.peak_bytes = self.peak_bytes.max(sum);
        if last > open + 1 {
            self.peak_bytes = self.peak_bytes.max(per_ps * w as f64);
        }
        self.open = Some((last, per_ps * (e - last * w) as f64));
    }

    pub fn report(&self, r: &mut Report, name: &str) {
        let mut all = self.clone();
        all.read_until(u64::MAX);
        let peak = all.open.map_or(all.peak_bytes, |(_, sum)| all.peak_bytes.max(sum));
        all.write(r, name, peak);
    }

    fn write(&self, r: &mut Report, name: &str, peak_bytes: f64) {
        let Some((_, median)) = self.gaps.median(0) else { return };
        r.real(&format!("bus_{name}_gap_median_clocks"), median as f64);
        let stops = self.gaps.median(STOP_CLOCKS + 1);
        r.count(&format!("bus_{name}_stops"), stops.map_or(0, |s| s.0));
        r.real(&format!("bus_{name}_stop_median_clocks"), stops.map_or(0.0, |s| s.1 as f64));
        if let Some((smooth, gaps)) = self.smooth {
            r.real(&format!("bus_{name}_first_stop_clocks"), smooth as f64);
            if gaps > 0 {
                r.real(&format!("bus_{name}_smooth_mean_gap_clocks"), smooth as f64 / gaps as f64);
            }
        }
        if let Some((_, idle)) = self.idle_before_data.median(0) {
            r.real(&format!("bus_{name}_idle_before_median_clocks"), idle as f64);
        }
        if let Some((_, w)) = self.data_waits.median(0) {
            r.real(&format!("bus_{name}_wait_median_clocks"), w as f64);
        }
        if let Some(d) = self.least_delay {
            r.real(&format!("bus_{name}_least_delay_clocks"), d as f64);
        }
        if let Some((_, s)) = self.status_after_data.median(0) {
            r.real(&format!("bus_{name}_status_after_median_clocks"), s as f64);
        }
        r.real("bus_peak_mbytes_per_s", peak_bytes / PEAK_WINDOW.ps() as f64 * 1e6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLOCK: Duration = Duration::from_ps(15_000);

    fn at(clocks: u64) -> Time {
        Time::ZERO + Duration::from_ps(15_000 * clocks)
    }

    #[test]
    fn gaps_and_stops_are_told_apart() {
        let mut g = Rhythm::new(CLOCK, 6, Duration::ZERO);
        let mut t = 0;
        for i in 0..100 {
            g.booked((at(t), at(t + 14)), Purpose::RxData, 60, if i % 2 == 0 { 3 } else { 5 });
            // 45 clocks apart, with a stop of 4,000 clocks every 20 bursts.
            t += if i % 20 == 19 { 4_000 } else { 45 };
        }
        let mut r = Report::default();
        g.report(&mut r, "rx_data");
        assert_eq!(r.get("bus_rx_data_gap_median_clocks"), Some(45.0));
        assert_eq!(r.get("bus_rx_data_stops"), Some(4.0));
        assert_eq!(r.get("bus_rx_data_stop_median_clocks"), Some(4000.0));
        assert_eq!(r.get("bus_rx_data_first_stop_clocks"), Some(19.0 * 45.0), "twenty bursts, then the first stop");
        assert_eq!(r.get("bus_rx_data_smooth_mean_gap_clocks"), Some(45.0));
        assert_eq!(r.get("bus_rx_data_idle_before_median_clocks"), Some(31.0), "45 apart, 14 long");
        assert_eq!(r.get("bus_rx_data_least_delay_clocks"), Some(31.0 + 6.0), "idle, then the next one's address phase");
        assert_eq!(r.get("bus_rx_data_wait_median_clocks"), Some(3.0), "half wait 3 clocks, half 5");
    }

    #[test]
    fn bookings_made_out_of_order_are_read_in_order() {
        let mut g = Rhythm::new(CLOCK, 6, Duration::from_ps(15_000 * 100));
        // A status write booked first, then the frame before it (reaching back).
        g.booked((at(50), at(60)), Purpose::RxStatus, 16, 0);
        g.booked((at(20), at(40)), Purpose::RxData, 64, 0);
        g.booked((at(60), at(80)), Purpose::RxData, 64, 0);
        let mut r = Report::default();
        g.report(&mut r, "rx_data");
        assert_eq!(r.get("bus_rx_data_status_after_median_clocks"), Some(30.0), "the status 30 clocks after its frame began");
        assert_eq!(r.get("bus_rx_data_gap_median_clocks"), Some(40.0));
        assert_eq!(r.get("bus_rx_data_least_delay_clocks"), None, "a status write came between the frames");
    }

    #[test]
    fn the_peak_rate_is_the_busiest_microsecond() {
        let mut g = Rhythm::new(CLOCK, 6, Duration::ZERO);
        // 66.7 clocks of 15 ns make a microsecond: 400 bytes in the first, 100 in the third.
        g.booked((at(0), at(10)), Purpose::RxData, 200, 0);
        g.booked((at(10), at(20)), Purpose::RxData, 200, 0);
        g.booked((at(140), at(150)), Purpose::RxData, 100, 0);
        let mut r = Report::default();
        g.report(&mut r, "rx_data");
        assert_eq!(r.get("bus_peak_mbytes_per_s"), Some(400.0));
    }

    #[test]
    fn a_transaction_over_several_windows_shares_its_bytes_by_time() {
        let mut g = Rhythm::new(Duration::from_ps(100_000), 6, Duration::ZERO);
        // 0.5 us of 50 bytes, then 3 us of 300 bytes from 0.5 us: 100 bytes in
        // each of the first three microseconds and 50 in the fourth, which
        // stays open for the 70 bytes of a transaction that follows.
        g.booked((at_ns(0), at_ns(500)), Purpose::RxData, 50, 0);
        g.booked((at_ns(500), at_ns(3_500)), Purpose::RxData, 300, 0);
        let peak = |g: &Rhythm| {
            let mut r = Report::default();
            g.report(&mut r, "rx_data");
            r.get("bus_peak_mbytes_per_s").unwrap()
        };
        assert!((peak(&g) - 100.0).abs() < 1e-9, "{}", peak(&g));
        g.booked((at_ns(3_700), at_ns(3_800)), Purpose::RxData, 70, 0);
        g.booked((at_ns(9_000), at_ns(9_100)), Purpose::RxData, 10, 0);
        assert!((peak(&g) - 120.0).abs() < 1e-9, "{}", peak(&g));
    }

    fn at_ns(ns: u64) -> Time {
        Time::ZERO + Duration::from_ps(1_000 * ns)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Held in batches and read as they settle, bookings that reach back
        /// (or ahead) give what reading them all in order of start gives.
        #[test]
        fn batches_read_as_one_ordered_stream(
            steps in proptest::collection::vec((0u64..6, -100i64..100, 1u64..30, 0usize..4, 0u64..300), 1200..3000),
        ) {
            let purposes = [Purpose::RxData, Purpose::RxStatus, Purpose::RxRemainder, Purpose::TxData];
            let mut live = Rhythm::new(CLOCK, 6, Duration::from_ps(15_000 * 100));
            let mut all = Vec::new();
            let mut now = 100;
            for (i, (advance, offset, len, p, bytes)) in steps.into_iter().enumerate() {
                now += advance;
                live.settle(at(now));
                let start = now.saturating_add_signed(offset);
                let b = (i, at(start), at(start + len), purposes[p], bytes);
                live.booked((b.1, b.2), b.3, b.4, 3);
                all.push(b);
            }
            all.sort_by_key(|b| (b.1, b.0));
            let mut ordered = Rhythm::new(CLOCK, 6, Duration::ZERO);
            for (_, s, e, p, bytes) in all {
                ordered.booked((s, e), p, bytes, 3);
            }
            let (mut a, mut b) = (Report::default(), Report::default());
            live.report(&mut a, "rx_data");
            ordered.report(&mut b, "rx_data");
            proptest::prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }
}
