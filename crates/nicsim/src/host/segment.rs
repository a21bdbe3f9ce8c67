//! TCP segments as the host stack sees them: parsed from frame bytes with
//! etherparse, and payload bytes that follow a fixed pattern so every byte that
//! reaches an application can be checked.

use etherparse::{NetSlice, SlicedPacket, TransportSlice};

use crate::wire::{build, Frame, Headers, TcpFields, L3, L4};

/// Where a TCP endpoint lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub port: u16,
}

/// The fields of a received segment the stack acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: Option<u32>,
    pub window: u16,
    pub payload: std::ops::Range<usize>,
}

impl Segment {
    /// Parse an IPv4 TCP frame; anything else is `None`.
    pub fn parse(bytes: &[u8]) -> Option<Segment> {
        let p = SlicedPacket::from_ethernet(bytes).ok()?;
        let Some(NetSlice::Ipv4(ip)) = &p.net else { return None };
        let Some(TransportSlice::Tcp(tcp)) = &p.transport else { return None };
        let start = tcp.payload().as_ptr() as usize - bytes.as_ptr() as usize;
        Some(Segment {
            src_ip: ip.header().source(),
            dst_ip: ip.header().destination(),
            src_port: tcp.source_port(),
            dst_port: tcp.destination_port(),
            seq: tcp.sequence_number(),
            ack: tcp.ack().then(|| tcp.acknowledgment_number()),
            window: tcp.window_size(),
            payload: start..start + tcp.payload().len(),
        })
    }
}

const PERIOD: usize = 251;

/// The pattern laid out once, long enough for any segment from any phase, so
/// making and checking payload are plain copies and compares.
fn table() -> &'static [u8] {
    static TABLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| (0..PERIOD + 65_536).map(|i| (i % PERIOD) as u8).collect())
}

/// The bytes of a stream from `offset`: a repeating 251-byte pattern (a prime, so
/// it never lines up with segment sizes).
pub fn pattern(offset: u64, len: usize) -> &'static [u8] {
    let start = (offset % PERIOD as u64) as usize;
    &table()[start..start + len]
}

/// Whether `bytes` are the stream's bytes from `offset`.
pub fn matches_pattern(offset: u64, bytes: &[u8]) -> bool {
    bytes.len() <= 65_536 && pattern(offset, bytes.len()) == bytes
}

/// IPv4 headers from `from` to `to` with IPv4 ID `id`, carrying `l4`.
pub fn ipv4_headers(from: Addr, to: Addr, id: u16, l4: L4) -> Headers {
    Headers { dst_mac: to.mac, src_mac: from.mac, vlan: None, l3: L3::Ipv4 { src: from.ip, dst: to.ip, ttl: 64, id, l4 } }
}

/// Build one TCP/IPv4 frame from `from` to `to`.
#[allow(clippy::too_many_arguments)]
pub fn tcp_frame(from: Addr, to: Addr, id: u16, seq: u32, ack: u32, window: u16, psh: bool, payload: &[u8]) -> Frame {
    let tcp = TcpFields { src_port: from.port, dst_port: to.port, seq, ack: Some(ack), window, psh, fin: false };
    let bytes = build(&ipv4_headers(from, to, id, L4::Tcp(tcp)), payload).expect("a segment no larger than the MSS always builds");
    Frame { bytes, meta: Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_segment_parses_back() {
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [198, 18, 0, 1], port: 1024 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [198, 18, 0, 2], port: 80 };
        let f = tcp_frame(a, b, 7, 1000, 55, 8760, true, pattern(999, 100));
        let s = Segment::parse(&f.bytes).unwrap();
        assert_eq!((s.src_port, s.dst_port, s.seq, s.ack, s.window), (1024, 80, 1000, Some(55), 8760));
        assert!(matches_pattern(999, &f.bytes[s.payload.clone()]));
        assert!(!matches_pattern(1000, &f.bytes[s.payload]));
        assert!(crate::wire::verify_checksums(&f.bytes).is_ok());
    }
}
