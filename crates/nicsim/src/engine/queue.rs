//! A priority queue of events ordered by (time, sequence): events due at the same
//! instant run in the order they were scheduled, so runs are reproducible.

use std::ptr;

use crate::time::Time;

/// One queued item: `item` becomes due at `time`; `seq` breaks ties. Both live
/// in one 128-bit key (time high, sequence low), unique per item, so the heap
/// compares and moves less than a tuple would: it is the hottest structure of
/// every run.
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

/// Earliest-first queue (a binary min-heap); sequence numbers are handed out on
/// push. Written out rather than `std::collections::BinaryHeap` because that one
/// stores a pushed item and reads it straight back as it sifts up: the wide read
/// of narrow fresh writes stalls store forwarding, a fifth of a link flood's
/// engine time. Here a push walks up comparing keys, moves parents down, and
/// writes the item once where it belongs.
#[derive(Debug)]
pub struct EventQueue<T> {
    heap: Vec<Scheduled<T>>,
    next_seq: u64,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue { heap: Vec::new(), next_seq: 0 }
    }
}

impl<T> EventQueue<T> {
    pub fn push(&mut self, time: Time, item: T) {
        let key = (time.0 as u128) << 64 | self.next_seq as u128;
        self.next_seq += 1;
        self.heap.reserve(1);
        let len = self.heap.len();
        // SAFETY: `reserve` made room for slot `len`. Every slot on the path is
        // initialised before it is read: a parent's item moves to its child's
        // place (leaving the parent's a hole) and the new item fills the last
        // hole; the length then covers exactly the initialised slots.
        unsafe {
            let p = self.heap.as_mut_ptr();
            let hole = Self::sift_up(p, len, key);
            ptr::write(p.add(hole), Scheduled { key, item });
            self.heap.set_len(len + 1);
        }
    }

    /// From the hole at `pos`, move parents with later keys down; returns where
    /// an item with `key` belongs.
    ///
    /// # Safety
    /// Slots `0..pos` are initialised; slot `pos` is a hole.
    unsafe fn sift_up(p: *mut Scheduled<T>, mut pos: usize, key: u128) -> usize {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if (*p.add(parent)).key <= key {
                break;
            }
            ptr::copy_nonoverlapping(p.add(parent), p.add(pos), 1);
            pos = parent;
        }
        pos
    }

    pub fn pop(&mut self) -> Option<Scheduled<T>> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some(last);
        }
        // SAFETY: slots `0..n` are initialised. The root is read out, leaving a
        // hole that moves down (the earlier child filling it each time) to the
        // bottom, then up to where `last` belongs, which fills it.
        unsafe {
            let p = self.heap.as_mut_ptr();
            let first = ptr::read(p);
            let (mut pos, mut child) = (0, 1);
            while child + 1 < n {
                if (*p.add(child + 1)).key < (*p.add(child)).key {
                    child += 1;
                }
                ptr::copy_nonoverlapping(p.add(child), p.add(pos), 1);
                pos = child;
                child = 2 * pos + 1;
            }
            if child == n - 1 {
                ptr::copy_nonoverlapping(p.add(child), p.add(pos), 1);
                pos = child;
            }
            let hole = Self::sift_up(p, pos, last.key);
            ptr::write(p.add(hole), last);
            Some(first)
        }
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|s| s.time())
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

    #[test]
    fn every_item_is_dropped_once_whether_taken_or_left_in_the_queue() {
        let item = std::rc::Rc::new(());
        let mut q = EventQueue::default();
        for t in [5, 3, 9, 1, 7, 3, 8, 2, 6, 4] {
            q.push(Time(t), item.clone());
        }
        for _ in 0..4 {
            drop(q.pop());
        }
        assert_eq!(std::rc::Rc::strong_count(&item), 7, "six left in the queue");
        drop(q);
        assert_eq!(std::rc::Rc::strong_count(&item), 1);
    }

    proptest! {
        #[test]
        fn pushes_and_pops_interleaved_give_what_a_sorted_set_gives(ops in proptest::collection::vec((any::<bool>(), 0u64..50), 0..400)) {
            let mut q = EventQueue::default();
            let mut reference = std::collections::BTreeSet::new();
            let (mut seq, mut now) = (0u64, 0u64);
            for (pop, dt) in ops {
                if pop {
                    let got = q.pop().map(|s| (s.time().0, s.item));
                    let want = reference.pop_first();
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = want {
                        now = t;
                    }
                } else {
                    // Never before the last event taken, as in a run.
                    q.push(Time(now + dt), seq);
                    reference.insert((now + dt, seq));
                    seq += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(s) = q.pop() {
                prop_assert_eq!(Some((s.time().0, s.item)), reference.pop_first());
            }
            prop_assert!(reference.is_empty());
        }

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
