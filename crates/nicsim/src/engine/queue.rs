//! A priority queue of events ordered by (time, sequence): events due at the same
//! instant run in the order they were scheduled, so runs are reproducible.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Time;

/// One queued item: `item` becomes due at `time`; `seq` breaks ties. Both live
/// in one 128-bit key (time high, sequence low), so the heap compares and moves
/// less than a tuple would: it is the hottest structure of every run.
#[derive(Debug)]
pub struct Scheduled<T> {
    key: u128,
    pub item: T,
}

impl<T> Scheduled<T> {
    pub fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

impl<T> PartialEq for Scheduled<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Scheduled<T> {}
impl<T> PartialOrd for Scheduled<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Scheduled<T> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Earliest-first queue; sequence numbers are handed out on push.
#[derive(Debug)]
pub struct EventQueue<T> {
    heap: BinaryHeap<Scheduled<T>>,
    next_seq: u64,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0 }
    }
}

impl<T> EventQueue<T> {
    pub fn push(&mut self, time: Time, item: T) {
        let key = (time.0 as u128) << 64 | self.next_seq as u128;
        self.next_seq += 1;
        self.heap.push(Scheduled { key, item });
    }
    pub fn pop(&mut self) -> Option<Scheduled<T>> {
        self.heap.pop()
    }
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|s| s.time())
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_push_order() {
        let mut q = EventQueue::default();
        for i in 0..100 {
            q.push(Time(5), i);
        }
        q.push(Time(1), -1);
        assert_eq!(q.pop().unwrap().item, -1);
        for i in 0..100 {
            assert_eq!(q.pop().unwrap().item, i);
        }
        assert!(q.pop().is_none());
    }

    proptest! {
        #[test]
        fn pops_are_sorted_by_time_then_push_order(times in proptest::collection::vec(0u64..20, 0..200)) {
            let mut q = EventQueue::default();
            for (i, t) in times.iter().enumerate() {
                q.push(Time(*t), i);
            }
            let mut last: Option<(Time, usize)> = None;
            while let Some(s) = q.pop() {
                if let Some(prev) = last {
                    prop_assert!(prev < (s.time(), s.item));
                }
                last = Some((s.time(), s.item));
            }
        }
    }
}
