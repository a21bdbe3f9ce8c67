//! How a calendar keeps its busy intervals: sorted, non-overlapping, touching
//! ones merged, those that ended more than its reach-back ago forgotten. A bus
//! holds a few dozen, booked at or near the end, and keeps them in one vector
//! (`Flat`); an adapter's memory port and processors keep thousands, with
//! bookings reaching back among hundreds booked ahead, in chunks
//! (`chunked::Chunked`), where such a booking moves only the rest of its chunk.

use crate::time::Time;

pub type Interval = (Time, Time);

/// A calendar's intervals, reached through positions.
pub trait Store {
    type Pos: Copy;
    /// The first interval kept that ends after `at`, or the end.
    fn first_ending_after(&self, at: Time) -> Self::Pos;
    fn get(&self, p: Self::Pos) -> Option<Interval>;
    fn next(&self, p: Self::Pos) -> Self::Pos;
    /// Put `v` at `p`, between the intervals there, joining those it touches.
    fn insert(&mut self, p: Self::Pos, v: Interval);
    /// Forget the intervals that end before `t`.
    fn forget_before(&mut self, t: Time);
    /// The intervals kept, oldest first.
    fn kept(&self) -> impl DoubleEndedIterator<Item = Interval> + '_;
    /// How many intervals are kept before `p`.
    #[cfg(test)]
    fn index(&self, p: Self::Pos) -> usize;
}

/// One vector: those from `head` on are kept (a plain vector indexes faster
/// than a ring buffer; the forgotten front is dropped now and then).
#[derive(Debug, Default)]
pub struct Flat {
    busy: Vec<Interval>,
    head: usize,
}

impl Flat {
    /// Book [start, end) before interval `i` (a request reaching back).
    #[inline(never)]
    fn insert_within(&mut self, i: usize, start: Time, end: Time) {
        let joins_prev = i > self.head && self.busy[i - 1].1 == start;
        let joins_next = self.busy.get(i).is_some_and(|n| n.0 == end);
        match (joins_prev, joins_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
    }
}

impl Store for Flat {
    type Pos = usize;

    /// Requests come at or near the end of the calendar, so it looks back
    /// from there a few intervals before it searches by halves.
    #[inline]
    fn first_ending_after(&self, at: Time) -> usize {
        let n = self.busy.len();
        for back in 0..4.min(n - self.head) {
            if self.busy[n - 1 - back].1 <= at {
                return n - back;
            }
        }
        self.head + self.busy[self.head..].partition_point(|&(_, end)| end <= at)
    }

    #[inline]
    fn get(&self, i: usize) -> Option<Interval> {
        self.busy.get(i).copied()
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        i + 1
    }

    #[inline]
    fn insert(&mut self, i: usize, (start, end): Interval) {
        if i == self.busy.len() {
            // Most bookings go after the last one kept, or join it.
            match self.busy.last_mut() {
                Some(last) if i > self.head && last.1 == start => last.1 = end,
                _ => self.busy.push((start, end)),
            }
            return;
        }
        self.insert_within(i, start, end);
    }

    #[inline]
    fn forget_before(&mut self, t: Time) {
        while self.busy.get(self.head).is_some_and(|&(_, end)| end < t) {
            self.head += 1;
        }
        // Drop the forgotten front once it is a quarter of the vector: each interval
        // forgotten moves at most three kept ones, and the vector stays small.
        if self.head >= 32 && self.head * 4 >= self.busy.len() {
            self.busy.drain(..self.head);
            self.head = 0;
        }
    }

    fn kept(&self) -> impl DoubleEndedIterator<Item = Interval> + '_ {
        self.busy[self.head..].iter().copied()
    }

    #[cfg(test)]
    fn index(&self, i: usize) -> usize {
        i - self.head
    }
}
