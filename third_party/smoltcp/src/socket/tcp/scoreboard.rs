//! A sender's SACK scoreboard (RFC 6675): the ranges above the cumulative ACK
//! that the receiver reported holding (RFC 2018), so that fast recovery can
//! resend each hole between them in turn rather than only the first.

use alloc::vec::Vec;

use crate::wire::TcpSeqNumber;

/// Ranges kept; the lowest are kept when more are reported, as the holes
/// below them are the ones that hold the cumulative ACK back. As many as a
/// 4 MB window holds holes between full segments (Linux keeps all).
const RANGES: usize = 4096;

type Range = (TcpSeqNumber, TcpSeqNumber);

#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) struct Scoreboard {
    /// `[left, right)` ranges, ascending and disjoint.
    ranges: Vec<Range>,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Bytes the receiver reported holding.
    pub fn bytes(&self) -> usize {
        self.ranges.iter().map(|&(l, r)| r - l).sum()
    }

    /// Bytes of the holes at or after `from`, below the highest range.
    pub fn hole_bytes(&self, from: TcpSeqNumber) -> usize {
        let mut at = from;
        let mut sum = 0;
        for &(l, r) in &self.ranges {
            if l > at {
                sum += l - at;
            }
            if r > at {
                at = r;
            }
        }
        sum
    }

    /// The end of the highest range reported.
    pub fn highest(&self) -> Option<TcpSeqNumber> {
        self.ranges.last().map(|r| r.1)
    }

    /// Forget what the cumulative ACK `una` now covers.
    pub fn acked(&mut self, una: TcpSeqNumber) {
        let gone = self.ranges.iter().take_while(|r| r.1 <= una).count();
        self.ranges.drain(..gone);
        if let Some(first) = self.ranges.first_mut()
            && first.0 < una
        {
            first.0 = una;
        }
    }

    /// The receiver holds `[left, right)`.
    pub fn add(&mut self, left: TcpSeqNumber, right: TcpSeqNumber) {
        if left >= right {
            return;
        }
        // The first range that ends at or after `left`, and the first that starts after `right`:
        // those between overlap or touch the new one and merge with it.
        let from = self.ranges.partition_point(|r| r.1 < left);
        let to = self.ranges.partition_point(|r| r.0 <= right);
        let merged = if from < to {
            let l = if self.ranges[from].0 < left { self.ranges[from].0 } else { left };
            let r = if self.ranges[to - 1].1 > right { self.ranges[to - 1].1 } else { right };
            (l, r)
        } else {
            (left, right)
        };
        if from == to && from == RANGES {
            return;
        }
        self.ranges.splice(from..to, [merged]);
        self.ranges.truncate(RANGES);
    }

    /// The first hole at or after `from` that lies below a reported range:
    /// `(start, end)`, data the receiver does not hold though it holds later data.
    pub fn next_hole(&self, from: TcpSeqNumber) -> Option<Range> {
        let mut at = from;
        for &(l, r) in &self.ranges[self.ranges.partition_point(|r| r.1 <= from)..] {
            if l <= at {
                at = r;
                continue;
            }
            return Some((at, l));
        }
        None
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn s(n: i32) -> TcpSeqNumber {
        TcpSeqNumber(n)
    }

    #[test]
    fn holes_lie_between_the_ranges_reported() {
        let mut b = Scoreboard::default();
        b.add(s(300), s(400));
        b.add(s(100), s(200));
        b.add(s(400), s(450));
        assert_eq!(b.next_hole(s(0)), Some((s(0), s(100))));
        assert_eq!(b.next_hole(s(150)), Some((s(200), s(300))));
        assert_eq!(b.next_hole(s(300)), None, "nothing reported above 450");
        b.acked(s(250));
        assert_eq!(b.next_hole(s(250)), Some((s(250), s(300))));
        b.add(s(250), s(300));
        assert!(b.next_hole(s(250)).is_none());
        b.acked(s(450));
        assert!(b.is_empty());
    }

    #[test]
    fn past_its_room_the_lowest_ranges_are_kept() {
        let mut b = Scoreboard::default();
        for i in (0..(RANGES as i32 + 24)).rev() {
            b.add(s(i * 100 + 50), s(i * 100 + 100));
        }
        let last = RANGES as i32 - 1;
        assert_eq!(b.next_hole(s(0)), Some((s(0), s(50))));
        assert_eq!(b.next_hole(s(last * 100)), Some((s(last * 100), s(last * 100 + 50))));
        assert_eq!(b.next_hole(s(last * 100 + 100)), None, "ranges past the limit are not kept");
    }
}
