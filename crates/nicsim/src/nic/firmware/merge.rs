//! The rule of GRO-style receive coalescing (Linux's GRO), apart from
//! building the merged frame: which segment may start a merge, and whether the
//! next segment of its flow joins it, ends it or is refused. A merge is flushed
//! when a segment brings a flag other than ACK (one with PSH or FIN joins it
//! first, as in Linux), a gap in sequence, a different ACK number or options,
//! when a segment is shorter than the first (merged, then flushed) or longer
//! (as Linux, whose merged segment keeps the first's size), or when the merge
//! would pass 64 KB. Like Linux, it also flushes when the IPv4 ID does not
//! follow on, so re-segmenting a merged frame gives back the frames that went
//! in; as Linux does for datagrams that may not be fragmented, it takes an ID
//! that stays the same from segment to segment too (smoltcp sends every segment
//! with ID 0 and don't-fragment).
//!
//! The adapter's LRO and GRO (`gro`) build merged frames by this rule; a host
//! driver's GRO groups a poll's segments by it (`Merge::start`, `Merge::meet`)
//! and builds the frame they make with `gro::merged`.

use etherparse::IpNumber;

use crate::nic::firmware::csum;
use crate::nic::firmware::headers::Layout;

const FIN: u8 = 0x01;
pub(super) const PSH: u8 = 0x08;
const ACK: u8 = 0x10;
pub(super) const MAX_IP: usize = 65_535;

/// A TCP/IPv4 flow: addresses and ports.
pub type Flow = [u8; 12];

/// What a frame queued after a merge's segments does to it, in a driver's GRO,
/// which holds several flows' merges at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meets {
    /// A segment of its flow that joins it; `ends` when the merge ends with it.
    Joins { ends: bool },
    /// A segment of its flow that ends it without joining.
    Ends,
    /// Another flow's segment that starts a merge of its own, held beside this one.
    Holds(Flow),
    /// Anything else: it goes up on its own, and the merge goes on.
    Passes,
}

/// Why a merge ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flush {
    Flag,
    Gap,
    Ack,
    Options,
    Short,
    Long,
    Full,
    Id,
    Timeout,
}

/// The fields a segment is judged by.
pub(super) struct Seg {
    pub key: Flow,
    pub layout: Layout,
    seq: u32,
    ack: [u8; 4],
    id: u16,
    dont_fragment: bool,
    pub flags: u8,
    pub len: usize,
    pub end: usize,
}

impl Seg {
    /// A TCP/IPv4 segment with a good checksum.
    pub fn of(f: &[u8]) -> Option<Seg> {
        let layout = Layout::of(f).ok()?;
        if layout.proto != IpNumber::TCP || csum::verify(f).bad() {
            return None;
        }
        let (ip, t) = (layout.ip, layout.l4);
        let end = ip + u16::from_be_bytes([f[ip + 2], f[ip + 3]]) as usize;
        let mut key = [0u8; 12];
        key[..8].copy_from_slice(&f[ip + 12..ip + 20]);
        key[8..].copy_from_slice(&f[t..t + 4]);
        Some(Seg {
            key,
            seq: u32::from_be_bytes(f[t + 4..t + 8].try_into().ok()?),
            ack: f[t + 8..t + 12].try_into().ok()?,
            id: u16::from_be_bytes([f[ip + 4], f[ip + 5]]),
            dont_fragment: f[ip + 6] & 0x40 != 0,
            flags: f[t + 13],
            len: end - layout.header_len(),
            end,
            layout,
        })
    }

    /// It brings a flag that ends a merge (anything but ACK).
    pub fn ends(&self) -> bool {
        self.flags & !ACK != 0
    }

    /// It may join a merge: data, with no flag but ACK, PSH and FIN.
    pub fn joins(&self) -> bool {
        self.flags & !(ACK | PSH | FIN) == 0 && self.len > 0
    }

    /// It may start a merge: data with no flag but ACK.
    fn starts(&self) -> bool {
        self.joins() && !self.ends()
    }

    /// Its IPv4 ID is `step` a segment on from `first`, `count` segments on:
    /// a step of 0 (a fixed ID) only where the datagram may not be fragmented.
    fn id_follows(&self, first: u16, count: u16, step: u16) -> bool {
        self.id == first.wrapping_add(step.wrapping_mul(count)) && (step != 0 || self.dont_fragment)
    }
}

/// A merge under way: what its flow's next segment is judged against.
#[derive(Clone, Debug)]
pub struct Merge {
    pub(super) key: Flow,
    ack: [u8; 4],
    /// The first segment's TCP options, and its header length.
    options: [u8; 40],
    options_len: usize,
    header_len: usize,
    /// The first segment's length (its segments', if it was merged before):
    /// a shorter one ends the merge.
    mss: usize,
    next_seq: u32,
    /// The first segment's IPv4 ID and the wire segments merged so far: the
    /// next one's ID is the first's plus their count, or the same (Linux's
    /// `inet_gro_receive` adds its count of segments likewise).
    first_id: u16,
    count: u16,
    /// How the IDs go: +1 a segment, or 0 (fixed, don't-fragment only); set by
    /// the second segment.
    id_step: Option<u16>,
    /// The merged datagram's length so far.
    ip_bytes: usize,
}

impl Merge {
    /// A merge that starts with segment `s` of frame `f`, which stands for
    /// `weight` wire segments (merged before, as by an adapter's LRO).
    pub(super) fn first(s: &Seg, f: &[u8], weight: u32) -> Merge {
        let options = &f[s.layout.l4 + 20..s.layout.header_len()];
        let mut kept = [0u8; 40];
        kept[..options.len()].copy_from_slice(options);
        Merge {
            key: s.key,
            ack: s.ack,
            options: kept,
            options_len: options.len(),
            header_len: s.layout.header_len(),
            mss: s.len.div_ceil(weight.max(1) as usize),
            next_seq: s.seq.wrapping_add(s.len as u32),
            first_id: s.id,
            count: weight as u16,
            id_step: None,
            ip_bytes: s.end - s.layout.ip,
        }
    }

    /// Why `s` (of this flow, one that `joins`) may not join, if it may not.
    pub(super) fn refuses(&self, s: &Seg, f: &[u8]) -> Option<Flush> {
        let options = &f[s.layout.l4 + 20..s.layout.header_len()];
        if s.seq != self.next_seq {
            Some(Flush::Gap)
        } else if s.ack != self.ack {
            Some(Flush::Ack)
        } else if self.header_len != s.layout.header_len() || options != &self.options[..self.options_len] {
            Some(Flush::Options)
        } else if self.id_step_of(s).is_none() {
            Some(Flush::Id)
        } else if s.len > self.mss {
            Some(Flush::Long)
        } else if self.ip_bytes + s.len > MAX_IP {
            Some(Flush::Full)
        } else {
            None
        }
    }

    /// The step of IDs `s` keeps to, if it keeps to one this merge allows.
    fn id_step_of(&self, s: &Seg) -> Option<u16> {
        let steps = self.id_step.map_or([1, 0], |d| [d, d]);
        steps.into_iter().find(|&d| s.id_follows(self.first_id, self.count, d))
    }

    /// `s`, standing for `weight` wire segments, joins; returns why the merge
    /// ends with it, if it does.
    pub(super) fn join(&mut self, s: &Seg, weight: u32) -> Option<Flush> {
        self.next_seq = self.next_seq.wrapping_add(s.len as u32);
        self.id_step = self.id_step_of(s);
        self.count = self.count.wrapping_add(weight as u16);
        self.ip_bytes += s.len;
        if s.ends() {
            Some(Flush::Flag)
        } else if s.len < self.mss {
            Some(Flush::Short)
        } else {
            None
        }
    }

    /// A merge that starts with frame `f`, if it may start one.
    pub fn start(f: &[u8]) -> Option<Merge> {
        Seg::of(f).filter(Seg::starts).map(|s| Merge::first(&s, f, 1))
    }

    /// Frame `f` comes after the merge's segments so far: what it does to it.
    pub fn meet(&mut self, f: &[u8]) -> Meets {
        let Some(s) = Seg::of(f) else { return Meets::Passes };
        if s.key != self.key {
            return if s.starts() { Meets::Holds(s.key) } else { Meets::Passes };
        }
        if !s.joins() || self.refuses(&s, f).is_some() {
            return Meets::Ends;
        }
        Meets::Joins { ends: self.join(&s, 1).is_some() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::firmware::testing::template;
    use crate::nic::firmware::tso;

    /// `n` full segments from sequence 1000, the last with PSH when `psh`.
    fn segments(n: usize, ack: u32, psh: bool) -> Vec<Vec<u8>> {
        tso::segment(&template(5001, 100, 1000, ack, psh, false), &vec![7u8; 1460 * n], 1460)
    }

    /// How a driver groups `frames`: the length of each merge, in order.
    fn groups(frames: &[Vec<u8>]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < frames.len() {
            let mut n = 1;
            if let Some(mut m) = Merge::start(&frames[i]) {
                while let Some(Meets::Joins { ends }) = frames.get(i + n).map(|f| m.meet(f)) {
                    n += 1;
                    if ends {
                        break;
                    }
                }
            }
            out.push(n);
            i += n;
        }
        out
    }

    #[test]
    fn a_driver_groups_a_flow_until_psh_which_joins_and_ends_it() {
        let mut frames = segments(3, 1, true);
        frames.extend(segments(2, 1, false).into_iter().map(|mut f| {
            // The next send: sequence on from the first three, IDs on from theirs.
            let seq = 1000 + 3 * 1460 + (u32::from_be_bytes(f[38..42].try_into().unwrap()) - 1000);
            f[38..42].copy_from_slice(&seq.to_be_bytes());
            let id = u16::from_be_bytes([f[18], f[19]]) + 3;
            f[18..20].copy_from_slice(&id.to_be_bytes());
            csum::insert(&mut f).unwrap();
            f
        }));
        assert_eq!(groups(&frames), [3, 2], "the PSH segment ends the first group");
    }

    #[test]
    fn a_different_ack_number_or_a_gap_starts_a_new_group() {
        let a = segments(2, 1, false);
        let mut b = segments(2, 9, false);
        for (k, f) in b.iter_mut().enumerate() {
            let seq = 1000 + (2 + k as u32) * 1460;
            f[38..42].copy_from_slice(&seq.to_be_bytes());
            f[18..20].copy_from_slice(&(102 + k as u16).to_be_bytes());
            csum::insert(f).unwrap();
        }
        let frames: Vec<Vec<u8>> = a.iter().chain(&b).cloned().collect();
        assert_eq!(groups(&frames), [2, 2], "the ACK number changed");
        let gap = [a[0].clone(), b[1].clone()];
        assert_eq!(groups(&gap), [1, 1]);
    }

    #[test]
    fn another_flows_data_is_held_beside_the_merge_and_its_pure_ack_passes() {
        let a = segments(2, 1, false);
        let mut m = Merge::start(&a[0]).expect("full data starts a merge");
        let other = tso::segment(&template(5002, 100, 1000, 1, false, false), &[7u8; 1460], 1460);
        assert!(matches!(m.meet(&other[0]), Meets::Holds(_)), "another flow's data starts a merge of its own");
        let ack = tso::segment(&template(5002, 101, 1000, 1, false, false), &[], 1460);
        assert_eq!(m.meet(&ack[0]), Meets::Passes, "another flow's pure ACK goes up alone");
        assert_eq!(m.meet(&a[1]), Meets::Joins { ends: false }, "the merge goes on after both");
        let own_ack = tso::segment(&template(5001, 102, 1000 + 2 * 1460, 1, false, false), &[], 1460);
        assert_eq!(m.meet(&own_ack[0]), Meets::Ends, "its own flow's pure ACK ends it");
    }

    #[test]
    fn a_short_segment_ends_its_group_and_a_flagged_first_goes_alone() {
        let frames = tso::segment(&template(5001, 100, 1000, 1, false, false), &[7u8; 1460 * 2 + 100], 1460);
        assert_eq!(groups(&frames), [3], "the short tail joins, then the group ends");
        let psh = segments(1, 1, true);
        assert!(Merge::start(&psh[0]).is_none(), "a PSH segment with nothing before it goes up alone");
        let short_first = tso::segment(&template(5001, 100, 1000, 1, false, false), &[7u8; 100 + 1460], 100);
        let mut longer = short_first[..2].to_vec();
        longer[1] = tso::segment(&template(5001, 101, 1100, 1, false, false), &[7u8; 1460], 1460).remove(0);
        assert_eq!(groups(&longer), [1, 1], "a segment longer than the first starts a merge of its own");
        let mut bad = segments(2, 1, false);
        bad[1][60] ^= 0xff;
        assert_eq!(groups(&bad), [1, 1], "a segment whose checksum fails joins nothing");
    }
}
