//! Segmentation offload on real bytes (US patent application 10/082,893, and the header rules of Linux and real adapters). The host
//! gives a header template and a block of TCP data; each segment gets its own
//! headers by the rules real adapters and Linux follow: IPv4 total length and
//! header checksum per segment, IPv4 ID +1 per segment, the sequence number
//! advanced by the bytes before it, FIN and PSH only on the last segment, CWR only
//! on the first, and the TCP checksum over the pseudo-header and the segment.
//!
//! Forming headers and summing the payload are separate, because in direct
//! segmentation they happen in different places: the firmware writes headers into
//! adapter memory while the MAC sums the payload as it gathers it from the host.

use etherparse::IpNumber;

use crate::nic::firmware::headers::Layout;
use crate::wire::checksum::{accumulate, fold};
use crate::wire::ethernet::{FCS, MIN_FRAME};

const FIN: u8 = 0x01;
const PSH: u8 = 0x08;
const CWR: u8 = 0x80;

/// The headers of a large send, as the host's stack formed them.
#[derive(Clone, Debug)]
pub struct Template {
    bytes: Vec<u8>,
    layout: Layout,
    seq: u32,
    id: u16,
    flags: u8,
}

/// One segment of a send: its number, where its payload starts in the send, how
/// long it is, and whether it is the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub index: u32,
    pub offset: usize,
    pub len: usize,
    pub last: bool,
}

/// The segments of `len` bytes cut at `mss` (one empty segment for an empty send).
pub fn plan(len: usize, mss: usize) -> impl Iterator<Item = Piece> {
    assert!(mss > 0, "an MSS of zero cuts nothing");
    let n = len.div_ceil(mss).max(1);
    (0..n).map(move |i| {
        let offset = i * mss;
        Piece { index: i as u32, offset, len: mss.min(len - offset), last: i + 1 == n }
    })
}

impl Template {
    /// Read a template: the headers of an IPv4 TCP frame (anything after them is ignored).
    pub fn parse(header: &[u8]) -> Result<Template, String> {
        let layout = Layout::of(header)?;
        if layout.proto != IpNumber::TCP {
            return Err("a segmentation template must be TCP".into());
        }
        let bytes = header[..layout.header_len()].to_vec();
        let t = layout.l4;
        let seq = u32::from_be_bytes([bytes[t + 4], bytes[t + 5], bytes[t + 6], bytes[t + 7]]);
        let id = u16::from_be_bytes([bytes[layout.ip + 4], bytes[layout.ip + 5]]);
        Ok(Template { flags: bytes[t + 13], bytes, layout, seq, id })
    }

    pub fn header_len(&self) -> usize {
        self.bytes.len()
    }

    /// Write the headers of `piece` into `out` (`header_len` bytes). `payload_sum`
    /// is `accumulate(0, payload)` of the piece's payload.
    pub fn write_header(&self, piece: Piece, payload_sum: u64, out: &mut [u8]) {
        let (l, out) = (&self.layout, &mut out[..self.bytes.len()]);
        out.copy_from_slice(&self.bytes);
        let ip_total = (l.ip_len + l.l4_len + piece.len) as u16;
        out[l.ip + 2..l.ip + 4].copy_from_slice(&ip_total.to_be_bytes());
        out[l.ip + 4..l.ip + 6].copy_from_slice(&self.id.wrapping_add(piece.index as u16).to_be_bytes());
        out[l.ip + 10..l.ip + 12].fill(0);
        let ip_sum = !fold(accumulate(0, &out[l.ip..l.ip + l.ip_len]));
        out[l.ip + 10..l.ip + 12].copy_from_slice(&ip_sum.to_be_bytes());
        let t = l.l4;
        out[t + 4..t + 8].copy_from_slice(&self.seq.wrapping_add(piece.offset as u32).to_be_bytes());
        let mut flags = self.flags;
        if !piece.last {
            flags &= !(FIN | PSH);
        }
        if piece.index > 0 {
            flags &= !CWR;
        }
        out[t + 13] = flags;
        out[t + 16..t + 18].fill(0);
        let tcp_len = (l.l4_len + piece.len) as u64;
        let sum = accumulate(accumulate(0, &out[l.ip + 12..l.ip + 20]) + 6 + tcp_len + payload_sum, &out[t..]);
        out[t + 16..t + 18].copy_from_slice(&(!fold(sum)).to_be_bytes());
    }

    /// One whole frame for `piece` of `payload` (the send's data), padded to the minimum.
    pub fn frame(&self, piece: Piece, payload: &[u8]) -> Vec<u8> {
        let data = &payload[piece.offset..piece.offset + piece.len];
        let h = self.header_len();
        let mut out = vec![0u8; (h + data.len()).max(MIN_FRAME - FCS)];
        self.write_header(piece, accumulate(0, data), &mut out);
        out[h..h + data.len()].copy_from_slice(data);
        out
    }
}

/// Every frame of a send: the reference the timed paths are tested against.
pub fn segment(template: &Template, payload: &[u8], mss: usize) -> Vec<Vec<u8>> {
    plan(payload.len(), mss).map(|p| template.frame(p, payload)).collect()
}

/// What a segmenting adapter (or a driver doing it in software, GSO) sends for
/// a frame of a stack that leaves segmentation and TCP checksums to it: a TCP
/// send larger than `gso` cut into segments with their own headers and
/// checksums; anything else with its checksums inserted.
pub fn cut(frame: &[u8], gso: u16) -> Vec<Vec<u8>> {
    if gso > 0 {
        if let Ok(t) = Template::parse(frame) {
            let payload = &frame[t.header_len()..];
            if payload.len() > gso as usize {
                return segment(&t, payload, gso as usize);
            }
        }
    }
    let mut f = frame.to_vec();
    let _ = crate::nic::firmware::csum::insert(&mut f);
    vec![f]
}

/// The TCP data of IPv4 frames put back in sequence order from the lowest
/// sequence number; an error if they leave a gap or overlap.
pub fn reassemble(frames: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let mut parts = Vec::new();
    for f in frames {
        let l = Layout::of(f)?;
        let t = l.l4;
        let seq = u32::from_be_bytes([f[t + 4], f[t + 5], f[t + 6], f[t + 7]]);
        let end = l.ip + u16::from_be_bytes([f[l.ip + 2], f[l.ip + 3]]) as usize;
        parts.push((seq, &f[l.header_len()..end]));
    }
    // Order by distance from the first frame given, so sequence numbers may wrap.
    let first = parts.first().map_or(0, |p| p.0);
    parts.sort_by_key(|p| p.0.wrapping_sub(first) as i32);
    let mut out = Vec::new();
    let base = parts.first().map_or(0, |p| p.0);
    for (seq, data) in parts {
        if seq.wrapping_sub(base) as usize != out.len() {
            return Err(format!("sequence {seq} is not at byte {} of the stream", out.len()));
        }
        out.extend_from_slice(data);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::firmware::{csum, testing};
    use proptest::prelude::*;

    fn template(fin: bool, psh: bool, cwr: bool) -> Template {
        let mut bytes = testing::template_bytes(5001, 0xfffe, 0xffff_f000, 1, psh, fin);
        if cwr {
            bytes[14 + 20 + 13] |= CWR;
        }
        Template::parse(&bytes).unwrap()
    }

    fn flags(f: &[u8]) -> u8 {
        f[14 + 20 + 13]
    }

    #[test]
    fn each_segment_follows_the_header_rules() {
        let t = template(true, true, true);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let frames = segment(&t, &data, 1460);
        assert_eq!(frames.len(), 7);
        for (i, f) in frames.iter().enumerate() {
            let v = csum::verify(f);
            assert_eq!(v, csum::Verdict { ipv4: Some(true), l4: Some(true) }, "segment {i}");
            let id = u16::from_be_bytes([f[18], f[19]]);
            assert_eq!(id, 0xfffeu16.wrapping_add(i as u16), "IPv4 ID +1 per segment, wrapping");
            let seq = u32::from_be_bytes(f[38..42].try_into().unwrap());
            assert_eq!(seq, 0xffff_f000u32.wrapping_add(i as u32 * 1460));
            let last = i == 6;
            assert_eq!(flags(f) & (FIN | PSH) != 0, last, "FIN and PSH only on the last");
            assert_eq!(flags(f) & CWR != 0, i == 0, "CWR only on the first");
            let total = u16::from_be_bytes([f[16], f[17]]) as usize;
            assert_eq!(total, 40 + if last { 10_000 - 6 * 1460 } else { 1460 });
        }
        assert_eq!(reassemble(&frames).unwrap(), data);
    }

    #[test]
    fn data_within_one_segment_passes_through_as_one_frame() {
        let t = template(false, true, false);
        let frames = segment(&t, &[1, 2, 3], 1460);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].len(), 60, "padded to the minimum frame");
        assert_eq!(flags(&frames[0]) & PSH, PSH);
        assert_eq!(reassemble(&frames).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn reassembly_finds_gaps() {
        let t = template(false, false, false);
        let mut frames = segment(&t, &[9u8; 5000], 1000);
        frames.remove(2);
        assert!(reassemble(&frames).unwrap_err().contains("not at byte 2000"));
    }

    proptest! {
        #[test]
        fn segment_then_reassemble_returns_the_input(
            data in proptest::collection::vec(any::<u8>(), 0..20_000),
            mss in 1usize..9000,
            fin in any::<bool>(),
        ) {
            let t = template(fin, true, false);
            let frames = segment(&t, &data, mss);
            prop_assert_eq!(frames.len(), data.len().div_ceil(mss).max(1));
            for f in &frames {
                prop_assert!(!csum::verify(f).bad());
                prop_assert!(crate::wire::verify_checksums(f).is_ok());
            }
            prop_assert_eq!(reassemble(&frames).unwrap(), data);
        }
    }
}
