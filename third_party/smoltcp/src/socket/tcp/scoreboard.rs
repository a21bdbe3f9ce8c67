//! A sender's SACK scoreboard (RFC 6675): the ranges above the cumulative ACK
//! that the receiver reported holding (RFC 2018), so that fast recovery can
//! resend each hole between them in turn rather than only the first.

use crate::wire::TcpSeqNumber;

/// Ranges kept; the lowest are kept when more are reported, as the holes
/// below them are the ones that hold the cumulative ACK back.
const RANGES: usize = 16;

type Range = (TcpSeqNumber, TcpSeqNumber);

#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) struct Scoreboard {
    /// `[left, right)` ranges, ascending and disjoint; `None`s last.
    ranges: [Option<Range>; RANGES],
}

impl Scoreboard {
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn is_empty(&self) -> bool {
        self.ranges[0].is_none()
    }

    /// Bytes the receiver reported holding.
    pub fn bytes(&self) -> usize {
        self.ranges.iter().flatten().map(|&(l, r)| r - l).sum()
    }

    /// Bytes of the holes at or after `from`, below the highest range.
    pub fn hole_bytes(&self, from: TcpSeqNumber) -> usize {
        let mut at = from;
        let mut sum = 0;
        while let Some((start, end)) = self.next_hole(at) {
            sum += end - start;
            at = end;
        }
        sum
    }

    /// The end of the highest range reported.
    pub fn highest(&self) -> Option<TcpSeqNumber> {
        self.ranges.iter().flatten().last().map(|r| r.1)
    }

    /// Forget what the cumulative ACK `una` now covers.
    pub fn acked(&mut self, una: TcpSeqNumber) {
        if self.ranges[0].is_none_or(|r| r.0 >= una) {
            return;
        }
        let mut kept: [Option<Range>; RANGES] = [None; RANGES];
        let above = self.ranges.iter().flatten().filter(|r| r.1 > una);
        for (slot, &(left, right)) in kept.iter_mut().zip(above) {
            *slot = Some((if left < una { una } else { left }, right));
        }
        self.ranges = kept;
    }

    /// The receiver holds `[left, right)`.
    pub fn add(&mut self, left: TcpSeqNumber, right: TcpSeqNumber) {
        if left >= right {
            return;
        }
        let mut all: [Option<Range>; RANGES + 1] = [None; RANGES + 1];
        let mut n = 0;
        let mut new = Some((left, right));
        for &(l, r) in self.ranges.iter().flatten() {
            if let Some(x) = new.filter(|x| x.0 < l) {
                all[n] = Some(x);
                n += 1;
                new = None;
            }
            all[n] = Some((l, r));
            n += 1;
        }
        if let Some(x) = new {
            all[n] = Some(x);
        }
        // Merge ranges that overlap or touch, in order.
        let mut merged: [Option<Range>; RANGES] = [None; RANGES];
        let mut m: usize = 0;
        for (l, r) in all.into_iter().flatten() {
            match merged.get_mut(m.wrapping_sub(1)).and_then(|x| x.as_mut()) {
                Some(last) if l <= last.1 => {
                    if r > last.1 {
                        last.1 = r;
                    }
                }
                _ if m < RANGES => {
                    merged[m] = Some((l, r));
                    m += 1;
                }
                _ => break,
            }
        }
        self.ranges = merged;
    }

    /// The first hole at or after `from` that lies below a reported range:
    /// `(start, end)`, data the receiver does not hold though it holds later data.
    pub fn next_hole(&self, from: TcpSeqNumber) -> Option<Range> {
        let mut at = from;
        for &(l, r) in self.ranges.iter().flatten() {
            if r <= at {
                continue;
            }
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
        for i in (0..40).rev() {
            b.add(s(i * 100 + 50), s(i * 100 + 100));
        }
        assert_eq!(b.next_hole(s(0)), Some((s(0), s(50))));
        assert_eq!(b.next_hole(s(1500)), Some((s(1500), s(1550))));
        assert_eq!(b.next_hole(s(1600)), None, "ranges past the sixteenth are not kept");
    }
}
