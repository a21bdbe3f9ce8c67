//! A long calendar's busy intervals, sorted, in chunks of at most `CHUNK`: a booking
//! that reaches back among many booked ahead (an adapter's memory port, whose
//! DMA bursts are booked across a whole transfer, the MAC's accesses filling
//! the gaps between them) moves the rest of its chunk, not every interval after
//! it. One vector moved about 480 intervals an insertion there; a gap buffer
//! did not help, as the insertions alternate between places some 250 apart.
//! Intervals before the front chunk's `head` are forgotten.

use std::collections::VecDeque;

use crate::bus::intervals::{Interval, Store};
use crate::time::Time;

/// Intervals a chunk holds before it splits in two.
const CHUNK: usize = 64;

/// Where an interval is (or would go): chunk `c`, place `j` in it. Only the
/// end of all intervals has `j` equal to its chunk's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    c: usize,
    j: usize,
}

#[derive(Debug, Default)]
pub struct Chunked {
    chunks: VecDeque<Vec<Interval>>,
    /// Intervals of the front chunk before this are forgotten.
    head: usize,
}

impl Chunked {
    #[inline]
    fn normal(&self, p: Pos) -> Pos {
        if p.j == self.chunks[p.c].len() && p.c + 1 < self.chunks.len() {
            Pos { c: p.c + 1, j: 0 }
        } else {
            p
        }
    }

    /// The interval kept just before `p`.
    #[inline]
    fn prev_pos(&self, p: Pos) -> Option<Pos> {
        if p.j > 0 {
            (p.c > 0 || p.j > self.head).then_some(Pos { c: p.c, j: p.j - 1 })
        } else if p.c > 0 {
            let c = p.c - 1;
            let j = self.chunks[c].len() - 1;
            (c > 0 || j >= self.head).then_some(Pos { c, j })
        } else {
            None
        }
    }

    fn put(&mut self, p: Pos, v: Interval) {
        if self.chunks.is_empty() {
            self.chunks.push_back(Vec::new());
        }
        let last = p.c + 1 == self.chunks.len();
        let ch = &mut self.chunks[p.c];
        if p.j == ch.len() && ch.len() >= CHUNK && last {
            // The end, and the last chunk full: a new one.
            self.chunks.push_back(vec![v]);
            return;
        }
        ch.insert(p.j, v);
        if ch.len() > CHUNK {
            if p.c == 0 {
                // Forgotten intervals go before the chunk is split.
                ch.drain(..self.head);
                self.head = 0;
            }
            let back = ch.split_off(ch.len() / 2);
            self.chunks.insert(p.c + 1, back);
        }
    }

    fn remove(&mut self, p: Pos) {
        self.chunks[p.c].remove(p.j);
        if self.chunks[p.c].len() == if p.c == 0 { self.head } else { 0 } {
            self.chunks.remove(p.c);
            if p.c == 0 {
                self.head = 0;
            }
        }
    }
}

impl Store for Chunked {
    type Pos = Pos;

    /// The first interval kept that ends after `at`, or the end: requests come
    /// at or near the end, so the last chunk is looked at first.
    #[inline]
    fn first_ending_after(&self, at: Time) -> Pos {
        let Some(last) = self.chunks.back() else { return Pos { c: 0, j: 0 } };
        let c = self.chunks.len() - 1;
        if last[last.len() - 1].1 <= at {
            return Pos { c, j: last.len() };
        }
        let c = if last[0].1 > at { self.chunks.partition_point(|ch| ch[ch.len() - 1].1 <= at) } else { c };
        let from = if c == 0 { self.head } else { 0 };
        let ch = &self.chunks[c];
        Pos { c, j: from + ch[from..].partition_point(|&(_, end)| end <= at) }
    }

    #[inline]
    fn get(&self, p: Pos) -> Option<Interval> {
        self.chunks.get(p.c).and_then(|ch| ch.get(p.j).copied())
    }

    #[inline]
    fn next(&self, p: Pos) -> Pos {
        self.normal(Pos { c: p.c, j: p.j + 1 })
    }

    /// Put `v` at `p`: touching the interval before or after, it joins them.
    /// `v` lies between them.
    fn insert(&mut self, p: Pos, (start, end): Interval) {
        let prev = self.prev_pos(p);
        let joins_prev = prev.is_some_and(|q| self.chunks[q.c][q.j].1 == start);
        let joins_next = self.get(p).is_some_and(|n| n.0 == end);
        match (prev, joins_prev, joins_next) {
            (Some(q), true, true) => {
                self.chunks[q.c][q.j].1 = self.chunks[p.c][p.j].1;
                self.remove(p);
            }
            (Some(q), true, false) => self.chunks[q.c][q.j].1 = end,
            (_, _, true) => self.chunks[p.c][p.j].0 = start,
            _ => self.put(p, (start, end)),
        }
    }

    /// Forget the intervals that end before `t`.
    #[inline]
    fn forget_before(&mut self, t: Time) {
        while let Some(front) = self.chunks.front() {
            let k = self.head + front[self.head..].partition_point(|&(_, end)| end < t);
            if k < front.len() {
                self.head = k;
                return;
            }
            self.chunks.pop_front();
            self.head = 0;
        }
    }

    /// The intervals kept, oldest first.
    fn kept(&self) -> impl DoubleEndedIterator<Item = Interval> + '_ {
        self.chunks.iter().enumerate().flat_map(move |(c, ch)| ch[if c == 0 { self.head } else { 0 }..].iter().copied())
    }

    /// How many intervals are kept before `p`.
    #[cfg(test)]
    fn index(&self, p: Pos) -> usize {
        self.chunks.iter().take(p.c).map(Vec::len).sum::<usize>() + p.j - self.head
    }
}
