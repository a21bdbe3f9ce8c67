//! The order the stack made frames to send in: steps on several processors
//! may end out of order, and their frames go to the adapters in the order made.

use std::collections::BTreeMap;

use crate::wire::Frame;

/// The order the stack made frames to send in, step by step. Steps on
/// different processors may end in another order; a step's frames go to the
/// adapters only after those of the steps that made theirs earlier, as a
/// connection's lock keeps a real stack's segments in order.
#[derive(Debug, Default)]
pub struct SendOrder {
    made: u64,
    next: u64,
    held: BTreeMap<u64, Vec<(usize, Frame)>>,
}

impl SendOrder {
    /// The turn of a step that made frames to send.
    pub fn take_turn(&mut self) -> u64 {
        self.made += 1;
        self.made - 1
    }

    /// A step of `turn` ended with `transmit`: leaves in it what may go now,
    /// in order, its own frames and those held for it; else holds them.
    pub fn in_turn(&mut self, turn: Option<u64>, transmit: &mut Vec<(usize, Frame)>) {
        let Some(turn) = turn else { return };
        if turn == self.next && self.held.is_empty() {
            self.next += 1;
            return;
        }
        self.held.insert(turn, std::mem::take(transmit));
        while let Some(frames) = self.held.remove(&self.next) {
            transmit.extend(frames);
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(port: usize, tags: &[u8]) -> Vec<(usize, Frame)> {
        tags.iter().map(|&t| (port, Frame { bytes: vec![t], meta: Default::default() })).collect()
    }

    fn tags(v: &[(usize, Frame)]) -> Vec<u8> {
        v.iter().map(|(_, f)| f.bytes[0]).collect()
    }

    #[test]
    fn steps_that_end_in_their_turns_send_at_once() {
        let mut order = SendOrder::default();
        let (a, b) = (order.take_turn(), order.take_turn());
        let mut out = frames(0, &[1, 2]);
        order.in_turn(Some(a), &mut out);
        assert_eq!(tags(&out), vec![1, 2]);
        let mut out = frames(0, &[3]);
        order.in_turn(Some(b), &mut out);
        assert_eq!(tags(&out), vec![3]);
    }

    #[test]
    fn a_later_step_that_ends_first_waits_for_the_earlier_ones_frames() {
        let mut order = SendOrder::default();
        let (a, b, c) = (order.take_turn(), order.take_turn(), order.take_turn());
        let mut late = frames(1, &[30]);
        order.in_turn(Some(c), &mut late);
        assert!(late.is_empty(), "held until turns a and b have gone");
        let mut mid = frames(0, &[20, 21]);
        order.in_turn(Some(b), &mut mid);
        assert!(mid.is_empty(), "held until turn a has gone");
        let mut first = frames(0, &[10]);
        order.in_turn(Some(a), &mut first);
        assert_eq!(tags(&first), vec![10, 20, 21, 30], "all three, in the order they were made");
        // A step that made nothing to send has no turn and changes nothing.
        let mut none = frames(0, &[99]);
        order.in_turn(None, &mut none);
        assert_eq!(tags(&none), vec![99]);
        let d = order.take_turn();
        let mut next = frames(0, &[40]);
        order.in_turn(Some(d), &mut next);
        assert_eq!(tags(&next), vec![40]);
    }
}
