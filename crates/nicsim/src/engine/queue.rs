//! A priority queue of events ordered by (time, sequence): events due at the same
//! instant run in the order they were scheduled, so runs are reproducible.
//!
//! Events for one destination mostly come in time order (a link delivers its
//! frames in the order they left), so they can wait in a lane, a FIFO of their
//! own, with only the lane's first in the heap: the heap then holds about one
//! event per busy destination rather than every frame in flight, and each
//! event costs a shorter sift. An event keeps the key it was given when it was
//! pushed, in its lane as in the heap, so the order of events is the same
//! whether or not they wait in lanes; one earlier than the last of its lane
//! goes straight into the heap.

use std::collections::VecDeque;
use std::ptr;

use crate::time::Time;

/// One queued item: `item` becomes due at `time`; `seq` breaks ties. Both live
/// in one 128-bit key (time high, sequence low), unique per item, so the heap
/// compares and moves less than a tuple would: it is the hottest structure of
/// every run.
#[derive(Debug)]
pub struct Scheduled<T> {
    key: u128,
    /// The lane it heads, or `NO_LANE` (it fits in the key's alignment padding).
    lane: u32,
    pub item: T,
}

const NO_LANE: u32 = u32::MAX;

/// Events for one destination waiting behind the one in the heap.
#[derive(Debug)]
struct Lane<T> {
    waiting: VecDeque<(u128, T)>,
    /// Whether its first event is in the heap.
    queued: bool,
    /// The key of its last event.
    last: u128,
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
    lanes: Vec<Lane<T>>,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue { heap: Vec::new(), next_seq: 0, lanes: Vec::new() }
    }
}

impl<T> EventQueue<T> {
    /// A new lane, for `push_in`.
    pub fn add_lane(&mut self) -> u32 {
        self.lanes.push(Lane { waiting: VecDeque::new(), queued: false, last: 0 });
        (self.lanes.len() - 1) as u32
    }

    fn key(&mut self, time: Time) -> u128 {
        let key = (time.0 as u128) << 64 | self.next_seq as u128;
        self.next_seq += 1;
        key
    }

    pub fn push(&mut self, time: Time, item: T) {
        let key = self.key(time);
        self.insert(key, NO_LANE, item);
    }

    /// Push an event for the destination of `lane`: it waits in the lane if
    /// the lane's last event is not later.
    #[inline]
    pub fn push_in(&mut self, lane: u32, time: Time, item: T) {
        let key = self.key(time);
        let l = &mut self.lanes[lane as usize];
        if !l.queued {
            l.queued = true;
            l.last = key;
            self.insert(key, lane, item);
        } else if key >> 64 >= l.last >> 64 {
            l.last = key;
            l.waiting.push_back((key, item));
        } else {
            self.insert(key, NO_LANE, item);
        }
    }

    fn insert(&mut self, key: u128, lane: u32, item: T) {
        self.heap.reserve(1);
        let len = self.heap.len();
        // SAFETY: `reserve` made room for slot `len`. Every slot on the path is
        // initialised before it is read: a parent's item moves to its child's
        // place (leaving the parent's a hole) and the new item fills the last
        // hole; the length then covers exactly the initialised slots.
        unsafe {
            let p = self.heap.as_mut_ptr();
            let hole = Self::sift_up(p, len, key);
            ptr::write(p.add(hole), Scheduled { key, lane, item });
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
        let lane = self.heap.first()?.lane;
        if lane != NO_LANE {
            let l = &mut self.lanes[lane as usize];
            match l.waiting.pop_front() {
                Some((key, item)) => return Some(self.replace_first(Scheduled { key, lane, item })),
                None => l.queued = false,
            }
        }
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

    /// Take the first event out and put `next`, not earlier, in its place.
    fn replace_first(&mut self, next: Scheduled<T>) -> Scheduled<T> {
        let n = self.heap.len();
        // SAFETY: slots `0..n` are initialised and n > 0. The root is read out,
        // leaving a hole that moves down while a child is earlier than `next`,
        // which then fills it.
        unsafe {
            let p = self.heap.as_mut_ptr();
            let first = ptr::read(p);
            let (mut pos, mut child) = (0, 1);
            while child < n {
                if child + 1 < n && (*p.add(child + 1)).key < (*p.add(child)).key {
                    child += 1;
                }
                if (*p.add(child)).key >= next.key {
                    break;
                }
                ptr::copy_nonoverlapping(p.add(child), p.add(pos), 1);
                pos = child;
                child = 2 * pos + 1;
            }
            ptr::write(p.add(pos), next);
            first
        }
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|s| s.time())
    }
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(|l| l.waiting.len()).sum::<usize>()
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

    #[test]
    fn a_lane_holds_its_events_behind_the_first_and_an_earlier_one_goes_around() {
        let mut q = EventQueue::default();
        let lane = q.add_lane();
        for t in [10, 20, 30] {
            q.push_in(lane, Time(t), t);
        }
        q.push_in(lane, Time(15), 15);
        q.push(Time(25), 25);
        assert_eq!(q.heap.len(), 3, "the lane's first, the one earlier than its last, and the timer");
        assert_eq!(q.len(), 5);
        let order: Vec<u64> = std::iter::from_fn(|| q.pop().map(|s| s.item)).collect();
        assert_eq!(order, [10, 15, 20, 25, 30]);
        assert!(!q.lanes[lane as usize].queued, "an emptied lane is no longer in the heap");
    }

    proptest! {
        /// Events pushed into lanes (any lane) or straight into the heap, at any
        /// time not before the last event taken (as in a run), come out in
        /// exactly the (time, push order) a sorted set gives.
        #[test]
        fn pushes_and_pops_interleaved_give_what_a_sorted_set_gives(ops in proptest::collection::vec((0u8..6, 0u64..40), 0..400)) {
            let mut q = EventQueue::default();
            let lanes: Vec<u32> = (0..4).map(|_| q.add_lane()).collect();
            let mut reference = std::collections::BTreeSet::new();
            let (mut seq, mut now) = (0u64, 0u64);
            for (op, dt) in ops {
                if op == 5 {
                    let got = q.pop().map(|s| (s.time().0, s.item));
                    let want = reference.pop_first();
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = want {
                        now = t;
                    }
                    continue;
                }
                match lanes.get(op as usize) {
                    Some(&lane) => q.push_in(lane, Time(now + dt), seq),
                    None => q.push(Time(now + dt), seq),
                }
                reference.insert((now + dt, seq));
                seq += 1;
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
