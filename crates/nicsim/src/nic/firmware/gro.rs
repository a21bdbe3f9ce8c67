//! Receive segment coalescing in the GRO style (Linux's GRO, net/core/gro.c), as the
//! adapter firmware runs it (LRO, or GRO for the host): in-order TCP segments of
//! one flow merge into one large segment with correct headers and checksums, by
//! the rule of `merge`; a held segment is also flushed when the timeout passes.

use crate::nic::firmware::csum;
use crate::nic::firmware::headers::Layout;
pub use crate::nic::firmware::merge::Flush;
use crate::nic::firmware::merge::{Merge, Seg};
use crate::time::{Duration, Time};

/// A frame handed up, and, for a merged one, why it was flushed and the size
/// of the segments it was merged from (Linux's `gso_size`: the stack counts
/// the wire's segments by it; 0 for a frame as it came).
#[derive(Debug, PartialEq, Eq)]
pub struct Out {
    pub bytes: Vec<u8>,
    pub segments: u32,
    pub reason: Option<Flush>,
    pub gso: u16,
}

#[derive(Debug)]
struct Held {
    merge: Merge,
    bytes: Vec<u8>,
    layout: Layout,
    segments: u32,
    /// The payload of each segment merged (the first's, per wire frame in it).
    gso: u16,
    since: Time,
}

#[derive(Debug)]
pub struct Gro {
    timeout: Duration,
    held: Vec<Held>,
    pub merged_segments: u64,
}

impl Gro {
    pub fn new(timeout: Duration) -> Self {
        Gro { timeout, held: Vec::new(), merged_segments: 0 }
    }

    fn close(h: Held, reason: Flush) -> Out {
        let mut bytes = h.bytes;
        let l = h.layout;
        let total = (bytes.len() - l.ip) as u16;
        bytes[l.ip + 2..l.ip + 4].copy_from_slice(&total.to_be_bytes());
        if bytes.len() < 60 {
            bytes.resize(60, 0);
        }
        csum::insert(&mut bytes).expect("a held segment parsed when it came in");
        let gso = if h.segments > 1 { h.gso } else { 0 };
        Out { bytes, segments: h.segments, reason: Some(reason), gso }
    }

    fn hold(&mut self, f: &[u8], s: &Seg, now: Time, weight: u32) {
        let gso = (s.len as u32).div_ceil(weight.max(1)) as u16;
        self.held.push(Held {
            merge: Merge::first(s, f, weight),
            bytes: f[..s.end].to_vec(),
            layout: s.layout,
            segments: weight,
            gso,
            since: now,
        });
    }

    /// Take in one received frame; returns what must go up now, in order.
    pub fn push(&mut self, frame: &[u8], now: Time) -> Vec<Out> {
        self.push_weighted(frame, now, 1)
    }

    /// As `push`, for a frame that already stands for `weight` wire frames
    /// (merged before), so that each `Out` counts the wire frames in it.
    pub fn push_weighted(&mut self, frame: &[u8], now: Time, weight: u32) -> Vec<Out> {
        let pass = |f: &[u8]| Out { bytes: f.to_vec(), segments: weight, reason: None, gso: 0 };
        let Some(s) = Seg::of(frame) else { return vec![pass(frame)] };
        let i = self.held.iter().position(|h| h.merge.key == s.key);
        let mut out = Vec::new();
        // PSH or FIN ends a merge: the segment joins what is held (as in
        // Linux's GRO) and all of it goes up. Any other flag goes up alone.
        let (ends, joins) = (s.ends(), s.joins());
        let i = match i {
            Some(i) if joins => i,
            _ if ends || s.len == 0 => {
                if let Some(i) = i {
                    out.push(Self::close(self.held.remove(i), Flush::Flag));
                }
                out.push(pass(frame));
                return out;
            }
            _ => {
                self.hold(frame, &s, now, weight);
                return out;
            }
        };
        if let Some(reason) = self.held[i].merge.refuses(&s, frame) {
            out.push(Self::close(self.held.remove(i), reason));
            if ends {
                out.push(pass(frame));
            } else {
                self.hold(frame, &s, now, weight);
            }
            return out;
        }
        let h = &mut self.held[i];
        let end = h.merge.join(&s, weight);
        h.bytes.extend_from_slice(&frame[s.layout.header_len()..s.end]);
        h.segments += weight;
        h.bytes[h.layout.l4 + 13] |= s.flags;
        self.merged_segments += 1;
        if let Some(reason) = end {
            out.push(Self::close(self.held.remove(i), reason));
        }
        out
    }

    /// The earliest time a held segment must be flushed.
    pub fn deadline(&self) -> Option<Time> {
        self.held.iter().map(|h| h.since + self.timeout).min()
    }

    /// Flush what has been held for the timeout by `now`.
    pub fn expire(&mut self, now: Time) -> Vec<Out> {
        let timeout = self.timeout;
        let (due, keep): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held).into_iter().partition(|h| h.since + timeout <= now);
        self.held = keep;
        due.into_iter().map(|h| Self::close(h, Flush::Timeout)).collect()
    }

    pub fn holding(&self) -> usize {
        self.held.len()
    }
}

/// The merged frame of segments a driver's GRO took together by the rule
/// (`host::gro`, which holds them during a poll rather than for a timeout):
/// built as the adapter's GRO builds it, so one merge makes one frame.
pub fn merged<'a>(first: &[u8], rest: impl Iterator<Item = &'a [u8]>) -> Vec<Out> {
    let mut g = Gro::new(Duration::ZERO);
    let mut out = g.push(first, Time::ZERO);
    for f in rest {
        out.extend(g.push(f, Time::ZERO));
    }
    out.extend(g.expire(Time::ZERO));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::firmware::merge::{MAX_IP, PSH};
    use crate::nic::firmware::testing;
    use crate::nic::firmware::tso::{self, Template};
    use proptest::prelude::*;

    fn template(port: u16, ack: u32, psh: bool, fin: bool) -> Template {
        testing::template(port, 100, 1000, ack, psh, fin)
    }

    fn frames(len: usize, mss: usize) -> Vec<Vec<u8>> {
        let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
        tso::segment(&template(5001, 1, false, false), &data, mss)
    }

    fn at(us: u64) -> Time {
        Time::ZERO + Duration::from_us(us)
    }

    fn gro() -> Gro {
        Gro::new(Duration::from_us(20))
    }

    #[test]
    fn full_segments_merge_and_a_short_one_flushes() {
        let input = frames(5000, 1460);
        let mut g = gro();
        let mut out = Vec::new();
        for f in &input {
            out.extend(g.push(f, at(0)));
        }
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].segments, out[0].reason), (4, Some(Flush::Short)));
        assert_eq!(out[0].gso, 1460, "the size of the segments it was merged from");
        assert!(crate::wire::verify_checksums(&out[0].bytes).is_ok());
        assert_eq!(tso::reassemble(&[out[0].bytes.clone()]).unwrap(), tso::reassemble(&input).unwrap());
    }

    /// The frames with IPv4 IDs `ids` and the don't-fragment bit as given.
    fn with_ids(ids: &[u16], dont_fragment: bool) -> Vec<Vec<u8>> {
        let mut fs = frames(1460 * ids.len(), 1460);
        for (f, id) in fs.iter_mut().zip(ids) {
            f[18..20].copy_from_slice(&id.to_be_bytes());
            f[20] = if dont_fragment { f[20] | 0x40 } else { f[20] & !0x40 };
            csum::insert(f).unwrap();
        }
        fs
    }

    fn reasons(fs: &[Vec<u8>]) -> Vec<Option<Flush>> {
        let mut g = gro();
        let mut out: Vec<Out> = fs.iter().flat_map(|f| g.push(f, at(0))).collect();
        out.extend(g.expire(at(20)));
        out.into_iter().map(|o| o.reason).collect()
    }

    #[test]
    fn a_fixed_id_merges_only_where_the_datagram_may_not_be_fragmented() {
        // smoltcp: ID 0 and don't-fragment on every segment, as Linux's GRO takes.
        assert_eq!(reasons(&with_ids(&[0, 0, 0], true)), [Some(Flush::Timeout)]);
        assert_eq!(reasons(&with_ids(&[7, 8, 9], false)), [Some(Flush::Timeout)]);
        assert_eq!(reasons(&with_ids(&[0, 0], false)), [Some(Flush::Id), Some(Flush::Timeout)]);
        // The IDs keep to the way the first two went.
        assert_eq!(reasons(&with_ids(&[4, 5, 5], true)), [Some(Flush::Id), Some(Flush::Timeout)]);
        assert_eq!(reasons(&with_ids(&[4, 4, 5], true)), [Some(Flush::Id), Some(Flush::Timeout)]);
    }

    #[test]
    fn a_merge_held_for_its_timeout_keeps_the_wire_segments_size() {
        // Two segments the adapter's LRO merged (1,000 bytes each), held by the
        // driver's GRO until its timeout: it stands for 2 wire segments of 1,000 bytes.
        let input = frames(3000, 1000);
        let two = merged(&input[0], std::iter::once(input[1].as_slice()));
        let [two] = &two[..] else { panic!("one merge") };
        assert_eq!((two.segments, two.gso), (2, 1000));
        let mut g = gro();
        assert!(g.push_weighted(&two.bytes, at(0), two.segments).is_empty(), "held");
        let out = g.expire(at(100));
        let [held] = &out[..] else { panic!("one merge: {}", out.len()) };
        assert_eq!((held.segments, held.gso), (2, 1000));
        // One segment alone is a frame as it came.
        assert!(g.push(&input[2], at(200)).is_empty());
        assert_eq!(g.expire(at(300)).iter().map(|o| (o.segments, o.gso)).collect::<Vec<_>>(), [(1, 0)]);
    }

    #[test]
    fn a_held_merge_takes_the_segment_whose_id_follows_all_it_stands_for() {
        // The adapter's LRO merged segments with IDs 7, 8 and 9; the merged
        // frame carries 7, and the next wire segment comes with 10.
        for (dont_fragment, next, joins) in [(false, 10, true), (false, 8, false), (true, 7, true), (true, 9, false)] {
            let ids = if next == 7 { [7, 7, 7, 7] } else { [7, 8, 9, next] };
            let input = with_ids(&ids, dont_fragment);
            let three = merged(&input[0], input[1..3].iter().map(Vec::as_slice));
            let [three] = &three[..] else { panic!("one merge") };
            let mut g = gro();
            assert!(g.push_weighted(&three.bytes, at(0), three.segments).is_empty(), "held");
            let mut out = g.push(&input[3], at(1));
            out.extend(g.expire(at(100)));
            let got: Vec<_> = out.iter().map(|o| (o.segments, o.reason)).collect();
            let want = if joins { vec![(4, Some(Flush::Timeout))] } else { vec![(3, Some(Flush::Id)), (1, Some(Flush::Timeout))] };
            assert_eq!(got, want, "ID {next} after 7 merged with two more (don't fragment: {dont_fragment})");
            if joins {
                assert_eq!(out[0].gso, 1460, "still the wire segments' size");
            }
        }
    }

    #[test]
    fn a_gap_flushes_and_starts_again() {
        let input = frames(1460 * 4, 1460);
        let mut g = gro();
        assert!(g.push(&input[0], at(0)).is_empty());
        let out = g.push(&input[2], at(0));
        assert_eq!((out[0].segments, out[0].reason), (1, Some(Flush::Gap)));
        assert_eq!(g.holding(), 1);
    }

    #[test]
    fn psh_ends_a_merge_with_its_segment_in_it() {
        let data = vec![1u8; 2920];
        let f = tso::segment(&template(5001, 1, true, false), &data, 1460);
        let mut g = gro();
        assert!(g.push(&f[0], at(0)).is_empty());
        let out = g.push(&f[1], at(0));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].segments, out[0].reason), (2, Some(Flush::Flag)), "the PSH segment joins, then all goes up");
        assert_eq!(out[0].bytes[14 + 20 + 13] & PSH, PSH, "the merged segment carries PSH");
        assert_eq!(tso::reassemble(&[out[0].bytes.clone()]).unwrap(), tso::reassemble(&f).unwrap());
        // A PSH segment with nothing held, or a SYN, goes up alone at once.
        assert_eq!(g.push(&f[1], at(0)).iter().map(|o| (o.segments, o.reason)).collect::<Vec<_>>(), [(1, None)]);
    }

    #[test]
    fn a_different_ack_or_options_flushes() {
        let a = tso::segment(&template(5001, 1, false, false), &[1u8; 1460], 1460);
        let b = tso::segment(&template(5001, 2, false, false), &[1u8; 1460], 1460);
        let mut b_next = b[0].clone();
        b_next[38..42].copy_from_slice(&(1000u32 + 1460).to_be_bytes());
        b_next[18..20].copy_from_slice(&101u16.to_be_bytes());
        csum::insert(&mut b_next).unwrap();
        let mut g = gro();
        g.push(&a[0], at(0));
        assert_eq!(g.push(&b_next, at(0))[0].reason, Some(Flush::Ack));

        let mut g = gro();
        let mut opt = a[0].clone();
        opt[14 + 20 + 12] = 0x60; // data offset 6: a 4-byte option
        opt.splice(54..54, [1u8, 1, 1, 1]);
        opt[16..18].copy_from_slice(&(1464u16 + 40).to_be_bytes());
        csum::insert(&mut opt).unwrap();
        let mut second = opt.clone();
        second[38..42].copy_from_slice(&(1000u32 + 1460).to_be_bytes());
        second[18..20].copy_from_slice(&101u16.to_be_bytes());
        second[56] = 2; // a different option byte (NOP -> 2)
        csum::insert(&mut second).unwrap();
        g.push(&opt, at(0));
        assert_eq!(g.push(&second, at(0))[0].reason, Some(Flush::Options));
    }

    #[test]
    fn the_timeout_flushes_and_flows_are_kept_apart() {
        let a = frames(2920, 1460);
        let b = tso::segment(&template(6000, 1, false, false), &[3u8; 2920], 1460);
        let mut g = gro();
        g.push(&a[0], at(0));
        g.push(&b[0], at(5));
        assert_eq!(g.holding(), 2);
        assert_eq!(g.deadline(), Some(at(20)));
        let out = g.expire(at(20));
        assert_eq!((out.len(), out[0].reason), (1, Some(Flush::Timeout)));
        assert_eq!(g.expire(at(25)).len(), 1);
        assert_eq!(g.holding(), 0);
    }

    #[test]
    fn merging_stops_below_64_kb() {
        let input = frames(1460 * 50, 1460);
        let mut g = gro();
        let out: Vec<Out> = input.iter().flat_map(|f| g.push(f, at(0))).collect();
        assert_eq!((out[0].segments, out[0].reason), (44, Some(Flush::Full)));
        assert!(out[0].bytes.len() - 14 <= MAX_IP);
    }

    #[test]
    fn frames_that_are_not_tcp_or_are_corrupt_pass_untouched() {
        let mut g = gro();
        let mut bad = frames(1460, 1460).remove(0);
        bad[60] ^= 0xff;
        assert_eq!(g.push(&bad, at(0)), vec![Out { bytes: bad.clone(), segments: 1, reason: None, gso: 0 }]);
        assert_eq!(g.push(&[0u8; 60], at(0)).len(), 1);
        assert_eq!(g.holding(), 0);
    }

    proptest! {
        #[test]
        fn coalescing_then_resegmenting_gives_back_the_frames(len in 1usize..40_000, mss in 200usize..1460) {
            let input = frames(len, mss);
            let mut g = gro();
            let mut out: Vec<Out> = input.iter().flat_map(|f| g.push(f, at(0))).collect();
            out.extend(g.expire(at(1000)));
            let mut back = Vec::new();
            for o in out {
                let t = Template::parse(&o.bytes).unwrap();
                let l = Layout::of(&o.bytes).unwrap();
                let end = l.ip + u16::from_be_bytes([o.bytes[l.ip + 2], o.bytes[l.ip + 3]]) as usize;
                back.extend(tso::segment(&t, &o.bytes[t.header_len()..end], mss));
            }
            prop_assert_eq!(back, input);
        }
    }
}
