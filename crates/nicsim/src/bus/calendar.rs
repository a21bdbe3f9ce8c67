//! A bus as a calendar of busy intervals. A master asks for the bus from some time
//! on; it gets the first gap long enough for its transaction, in the order the
//! requests are made (first come, first served arbitration). A request may reach
//! back in time a little (an adapter that starts its DMA while a frame is still
//! arriving, computed when the last bit is in), so recent intervals are kept:
//! those that end within `reach_back` of the present. A master may also book
//! ahead (an adapter's transmit DMA paced by its wire), so the present is told
//! to the calendar (`settle`), not taken from the latest request. A calendar
//! never told (an adapter processor's, its memory port's, with reach-backs far
//! longer than anything booked ahead) forgets by each request instead.

use crate::bus::intervals::{Flat, Store};
use crate::time::{Duration, Time};

/// A calendar of busy intervals [start, end), sorted, non-overlapping, touching
/// ones merged, those ending more than the reach-back ago forgotten, kept in
/// `S`: one vector (`Flat`, a bus's few dozen, booked at or near the end), or
/// chunks (`bus::chunked::Chunked`, for a calendar that keeps thousands, with
/// bookings reaching back among hundreds booked ahead).
#[derive(Debug, Default)]
pub struct Calendar<S = Flat> {
    busy: S,
    /// How far before the present a request may reach back.
    reach_back: Duration,
    /// Bookings that ended before this are forgotten.
    floor: Time,
    /// Whether the present is told (`settle`); if not, each request stands for it.
    told: bool,
    busy_total: Duration,
}

impl<S: Store + Default> Calendar<S> {
    pub fn new(reach_back: Duration) -> Self {
        Calendar { busy: S::default(), reach_back, floor: Time::ZERO, told: false, busy_total: Duration::ZERO }
    }

    /// Reserve the first gap from `at` on that fits the transaction; `len(start)`
    /// gives its length if it starts at `start` (wait states depend on when).
    /// Returns its start and end.
    pub fn reserve(&mut self, at: Time, len: impl Fn(Time) -> Duration) -> (Time, Time) {
        let (start, end, ()) = self.reserve_with(at, |s| (len(s), ()));
        (start, end)
    }

    /// As `reserve`, for a length that comes with facts about it (its wait
    /// states), returned for the start chosen without computing them again.
    #[inline]
    pub fn reserve_with<T>(&mut self, at: Time, len: impl Fn(Time) -> (Duration, T)) -> (Time, Time, T) {
        self.untold(at);
        let s = &mut self.busy;
        let mut start = at;
        let mut i = s.first_ending_after(at);
        let (end, facts) = loop {
            let (length, facts) = len(start);
            let end = start + length;
            match s.get(i) {
                Some((b0, b1)) if b0 < end => {
                    start = start.max(b1);
                    i = s.next(i);
                }
                _ => break (end, facts),
            }
        };
        self.busy_total = self.busy_total + end.since(start);
        s.insert(i, (start, end));
        (start, end, facts)
    }

    /// Reserve `len` of bus time from `at` on for a transaction that travels as
    /// packets of `piece` (PCIe TLPs), which interleave with other traffic:
    /// every gap from `at` on that holds a piece is filled, the rest goes after
    /// the last interval in its way. Returns when its first piece starts and
    /// its last ends; `each` is told every piece.
    pub fn reserve_pieces(&mut self, at: Time, len: Duration, piece: Duration, mut each: impl FnMut(Time, Time)) -> (Time, Time) {
        self.untold(at);
        self.busy_total = self.busy_total + len;
        let s = &mut self.busy;
        let (mut cursor, mut left, mut first) = (at, len, None);
        let mut i = s.first_ending_after(at);
        while let Some((b0, b1)) = s.get(i).filter(|b| b.0 < cursor + left) {
            if b0 > cursor && b0.since(cursor) >= piece.min(left) {
                // Fill the gap up to the interval, which the piece then joins.
                first.get_or_insert(cursor);
                left = Duration(left.ps() - b0.since(cursor).ps());
                s.insert(i, (cursor, b0));
                each(cursor, b0);
            }
            cursor = cursor.max(b1);
            i = s.first_ending_after(cursor);
        }
        s.insert(i, (cursor, cursor + left));
        each(cursor, cursor + left);
        (first.unwrap_or(cursor), cursor + left)
    }

    /// The simulation has reached `now`: no request will reach back further
    /// than `reach_back` from it, so intervals that ended before are dropped.
    pub fn settle(&mut self, now: Time) {
        self.told = true;
        self.forget_before(now);
    }

    /// Where the present is not told, a request at `at` stands for it.
    fn untold(&mut self, at: Time) {
        if !self.told {
            self.forget_before(at);
        }
        debug_assert!(at >= self.floor, "a request at {at:?} reaches back past the bookings kept (from {:?})", self.floor);
    }

    #[inline(always)]
    fn forget_before(&mut self, now: Time) {
        let t = Time(now.ps().saturating_sub(self.reach_back.ps()));
        // Nothing booked since the last forgetting ends before the floor then.
        if t <= self.floor {
            return;
        }
        self.floor = t;
        self.busy.forget_before(t);
    }

    /// Time the bus has been reserved so far.
    pub fn busy_total(&self) -> Duration {
        self.busy_total
    }
    /// Time reserved up to `end`: what is booked past it (kept, as it lies
    /// ahead of any present before `end`) is left out.
    pub fn busy_until(&self, end: Time) -> Duration {
        let ahead: u64 = self.busy.kept().rev().take_while(|b| b.1 > end).map(|(s, e)| e.since(s.max(end)).ps()).sum();
        Duration(self.busy_total.ps().saturating_sub(ahead))
    }
    /// When the last reservation made so far ends.
    pub fn free_from(&self) -> Time {
        self.busy.kept().next_back().map_or(Time::ZERO, |b| b.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::chunked::Chunked;

    fn ns(n: u64) -> Duration {
        Duration::from_ns(n)
    }
    fn at(n: u64) -> Time {
        Time::ZERO + ns(n)
    }

    #[test]
    fn requests_queue_first_come_first_served() {
        let mut c = Calendar::<Flat>::new(ns(1000));
        assert_eq!(c.reserve(at(0), |_| ns(10)), (at(0), at(10)));
        assert_eq!(c.reserve(at(5), |_| ns(10)), (at(10), at(20)), "waits for the bus");
        assert_eq!(c.reserve(at(50), |_| ns(10)), (at(50), at(60)));
        assert_eq!(c.busy_total(), ns(30));
    }

    #[test]
    fn a_request_reaching_back_takes_the_first_gap_that_fits() {
        let mut c = Calendar::<Flat>::new(ns(1000));
        c.reserve(at(100), |_| ns(10));
        c.reserve(at(130), |_| ns(10));
        // Fits before the first interval.
        assert_eq!(c.reserve(at(0), |_| ns(50)), (at(0), at(50)));
        // Too long for the 20 ns gap: goes after the last.
        assert_eq!(c.reserve(at(105), |_| ns(30)), (at(140), at(170)));
        // Exactly fits the gap.
        assert_eq!(c.reserve(at(110), |_| ns(20)), (at(110), at(130)));
        assert_eq!(c.free_from(), at(170));
    }

    #[test]
    fn time_booked_past_the_end_is_not_counted_up_to_it() {
        let mut c = Calendar::<Flat>::new(ns(1000));
        c.settle(at(0));
        c.reserve(at(0), |_| ns(10));
        c.reserve(at(95), |_| ns(10));
        c.reserve(at(200), |_| ns(10));
        assert_eq!(c.busy_until(at(100)), ns(15), "10, and 5 of the booking across the end");
        assert_eq!(c.busy_until(at(300)), ns(30));
    }

    #[test]
    fn a_booking_ahead_does_not_make_the_calendar_forget_the_present() {
        let mut c = Calendar::<Flat>::new(ns(1000));
        c.settle(at(100));
        c.reserve(at(100), |_| ns(10));
        // A transmit burst booked 5 us ahead of the present.
        c.reserve(at(5000), |_| ns(10));
        // A request now still finds the bus taken.
        assert_eq!(c.reserve(at(95), |_| ns(10)), (at(110), at(120)));
        c.settle(at(6100));
        assert_eq!(c.busy.kept().count(), 0, "all ended more than reach_back ago");
    }

    #[test]
    fn packets_fill_the_gaps_that_hold_one() {
        // Gaps of 10, 5 and 15 ns before three bookings.
        let mut c = Calendar::<Flat>::new(ns(1000));
        c.reserve(at(10), |_| ns(10));
        c.reserve(at(25), |_| ns(10));
        c.reserve(at(50), |_| ns(10));
        // 30 ns in packets of 8 ns: 10 in the first gap, none in the 5 ns one,
        // 15 in the third, the last 5 after it.
        let mut pieces = Vec::new();
        assert_eq!(c.reserve_pieces(at(0), ns(30), ns(8), |s, e| pieces.push((s, e))), (at(0), at(65)));
        assert_eq!(pieces, vec![(at(0), at(10)), (at(35), at(50)), (at(60), at(65))]);
        assert_eq!(c.busy.kept().collect::<Vec<_>>(), vec![(at(0), at(20)), (at(25), at(65))]);
        assert_eq!(c.busy_total(), ns(60));
        // A transaction shorter than a packet is one piece.
        assert_eq!(c.reserve_pieces(at(0), ns(3), ns(8), |_, _| {}), (at(20), at(23)));
    }

    proptest::proptest! {
        /// Pieces never overlap what was booked, and take exactly their length.
        #[test]
        fn pieces_never_overlap(
            booked in proptest::collection::vec((0u64..400, 1u64..30), 0..40),
            requests in proptest::collection::vec((0u64..400, 1u64..200, 1u64..40), 1..20),
        ) {
            let mut c = Calendar::<Flat>::new(ns(100_000));
            for (t, len) in booked {
                c.reserve(at(t), |_| ns(len));
            }
            for (t, len, piece) in requests {
                let before = c.busy.kept().map(|(s, e)| e.since(s).ps()).sum::<u64>();
                let mut sum = 0;
                let (s, e) = c.reserve_pieces(at(t), ns(len), ns(piece), |s, e| sum += e.since(s).ps());
                proptest::prop_assert_eq!(sum, ns(len).ps(), "the pieces told add up to the length");
                let after = c.busy.kept().map(|(s, e)| e.since(s).ps()).sum::<u64>();
                proptest::prop_assert_eq!(after - before, ns(len).ps(), "exactly its length is added");
                proptest::prop_assert!(s >= at(t) && e.since(s) >= ns(len));
                for w in c.busy.kept().collect::<Vec<_>>().windows(2) {
                    proptest::prop_assert!(w[0].1 < w[1].0, "sorted, apart, merged when touching");
                }
            }
        }
    }

    /// The calendar's answers from a plain sorted list of every booking, never
    /// forgotten and never merged: what the union of busy time gives.
    #[derive(Default)]
    struct Plain(Vec<(Time, Time)>);

    impl Plain {
        fn add(&mut self, s: Time, e: Time) {
            let i = self.0.partition_point(|b| b.0 < s);
            self.0.insert(i, (s, e));
        }
        fn reserve(&mut self, at: Time, len: Duration) -> (Time, Time) {
            let mut start = at;
            for &(b0, b1) in &self.0 {
                if b1 > start && b0 < start + len {
                    start = b1;
                }
            }
            self.add(start, start + len);
            (start, start + len)
        }
        fn pieces(&mut self, at: Time, len: Duration, piece: Duration) -> Vec<(Time, Time)> {
            let (mut cursor, mut left, mut out) = (at, len, Vec::new());
            while let Some(&(b0, b1)) = self.0.iter().find(|b| b.1 > cursor && b.0 < cursor + left) {
                if b0 > cursor && b0.since(cursor) >= piece.min(left) {
                    out.push((cursor, b0));
                    left = Duration(left.ps() - b0.since(cursor).ps());
                }
                cursor = cursor.max(b1);
            }
            out.push((cursor, cursor + left));
            for &(s, e) in &out {
                self.add(s, e);
            }
            out
        }
    }

    /// Hundreds of bookings, reaching back and booked ahead, with the present
    /// moving on: a calendar kept in `S` answers as the plain list does.
    fn as_a_plain_list<S: Store + Default>(ops: &[(u8, u64, u64, u64)]) -> Result<(), proptest::test_runner::TestCaseError> {
        let reach = 20_000;
        let mut c = Calendar::<S>::new(ns(reach));
        let mut plain = Plain::default();
        let mut now = reach;
        c.settle(at(now));
        for &(op, dt, len, piece) in ops {
            // From the reach-back before the present to a little ahead of it.
            let t = at(now - reach + dt * 8 % (reach + 4_000));
            match op {
                0 => {
                    now += dt % 200;
                    c.settle(at(now));
                }
                1 => proptest::prop_assert_eq!(c.reserve(t, |_| ns(len)), plain.reserve(t, ns(len))),
                2 => {
                    let mut got = Vec::new();
                    c.reserve_pieces(t, ns(len * 5), ns(piece), |s, e| got.push((s, e)));
                    proptest::prop_assert_eq!(got, plain.pieces(t, ns(len * 5), ns(piece)));
                }
                _ => {
                    let end = at(now);
                    let ahead: u64 = plain.0.iter().filter(|b| b.1 > end).map(|&(s, e)| e.since(s.max(end)).ps()).sum();
                    proptest::prop_assert_eq!(c.busy_until(end), Duration(c.busy_total().ps() - ahead));
                    let last = plain.0.iter().map(|b| b.1).max().unwrap_or(Time::ZERO);
                    if last >= at(now - reach) {
                        proptest::prop_assert_eq!(c.free_from(), last);
                    }
                }
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// In one vector and in chunks (which split and forget their front).
        #[test]
        fn many_bookings_answer_as_a_plain_list(ops in proptest::collection::vec((0u8..4, 0u64..3_000, 1u64..40, 1u64..20), 1..1_500)) {
            as_a_plain_list::<Flat>(&ops)?;
            as_a_plain_list::<Chunked>(&ops)?;
        }
    }

    #[test]
    fn the_length_may_depend_on_the_start() {
        let mut c = Calendar::<Flat>::new(ns(1000));
        c.reserve(at(0), |_| ns(100));
        // A burst that waits for data until 150 ns: later starts are shorter.
        let (s, e) = c.reserve(at(20), |s| at(150).since(s).max(ns(10)));
        assert_eq!((s, e), (at(100), at(150)));
    }

    fn looking_back<S: Store + Default>(requests: &[(u64, u64)], probes: &[u64]) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut c = Calendar::<S>::new(ns(100_000));
        for &(t, len) in requests {
            c.reserve(at(t), |_| ns(len));
        }
        for &p in probes {
            let kept: Vec<_> = c.busy.kept().collect();
            let by_halves = kept.partition_point(|&(_, end)| end <= at(p));
            proptest::prop_assert_eq!(c.busy.index(c.busy.first_ending_after(at(p))), by_halves);
        }
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn looking_back_from_the_end_finds_what_a_search_by_halves_finds(
            requests in proptest::collection::vec((0u64..400, 1u64..30), 1..200),
            probes in proptest::collection::vec(0u64..500, 1..20),
        ) {
            looking_back::<Flat>(&requests, &probes)?;
            looking_back::<Chunked>(&requests, &probes)?;
        }
    }
}
