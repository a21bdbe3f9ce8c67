//! TCP endpoints and the payload pattern: bytes that follow a fixed pattern, so
//! every byte that reaches an application can be checked.

use crate::wire::{Headers, L3, L4};

/// Where a TCP endpoint lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub port: u16,
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

/// The stream's bytes from `offset` written over `out` (a socket's maker of the
/// bytes it sends, `Stack::send_made`).
pub fn pattern_into(offset: u64, out: &mut [u8]) {
    for (i, piece) in out.chunks_mut(65_536).enumerate() {
        piece.copy_from_slice(pattern(offset + i as u64 * 65_536, piece.len()));
    }
}

/// Whether `bytes` are the stream's bytes from `offset`.
pub fn matches_pattern(offset: u64, bytes: &[u8]) -> bool {
    bytes.chunks(65_536).enumerate().all(|(i, c)| pattern(offset + i as u64 * 65_536, c.len()) == c)
}

/// IPv4 headers from `from` to `to` with IPv4 ID `id`, carrying `l4`.
pub fn ipv4_headers(from: Addr, to: Addr, id: u16, l4: L4) -> Headers {
    Headers { dst_mac: to.mac, src_mac: from.mac, vlan: None, l3: L3::Ipv4 { src: from.ip, dst: to.ip, ttl: 64, id, l4 } }
}

/// A UDP frame `n` from `from` to `to` of `frame_size` bytes with FCS (ID
/// `n`, its payload the pattern from `7n`); with `for_adapter` its checksums
/// are left for the adapter to fill.
pub fn udp_frame(from: Addr, to: Addr, n: u64, frame_size: u32, for_adapter: bool) -> Vec<u8> {
    let payload = frame_size as usize - crate::wire::ethernet::FCS - 42;
    let l4 = L4::Udp { src_port: from.port, dst_port: to.port };
    let mut bytes =
        crate::wire::build(&ipv4_headers(from, to, n as u16, l4), pattern(n * 7, payload)).expect("a checked frame size builds");
    if for_adapter {
        bytes[24..26].fill(0);
        bytes[40..42].fill(0);
    }
    bytes
}

/// Build one TCP/IPv4 frame from `from` to `to` (tests make segments with it).
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tcp_frame(from: Addr, to: Addr, id: u16, seq: u32, ack: u32, window: u16, psh: bool, payload: &[u8]) -> crate::wire::Frame {
    let tcp = crate::wire::TcpFields { src_port: from.port, dst_port: to.port, seq, ack: Some(ack), window, psh, fin: false };
    let bytes =
        crate::wire::build(&ipv4_headers(from, to, id, L4::Tcp(tcp)), payload).expect("a segment no larger than the MSS always builds");
    crate::wire::Frame { bytes, meta: Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{SlicedPacket, TransportSlice};

    #[test]
    fn reads_longer_than_the_laid_out_pattern_are_checked_whole() {
        let stream: Vec<u8> = (0..200_000u64).map(|i| pattern(i, 1)[0]).collect();
        assert!(matches_pattern(0, &stream));
        assert!(matches_pattern(7, &stream[7..]));
        let mut bad = stream.clone();
        bad[150_000] ^= 1;
        assert!(!matches_pattern(0, &bad), "a wrong byte past the first 64 KB is found");
    }

    #[test]
    fn a_built_segment_parses_back_with_its_pattern() {
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [198, 18, 0, 1], port: 1024 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [198, 18, 0, 2], port: 80 };
        let f = tcp_frame(a, b, 7, 1000, 55, 8760, true, pattern(999, 100));
        let p = SlicedPacket::from_ethernet(&f.bytes).unwrap();
        let Some(TransportSlice::Tcp(t)) = p.transport else { panic!("not TCP") };
        assert_eq!(
            (t.source_port(), t.destination_port(), t.sequence_number(), t.acknowledgment_number(), t.window_size()),
            (1024, 80, 1000, 55, 8760)
        );
        assert!(matches_pattern(999, t.payload()));
        assert!(!matches_pattern(1000, t.payload()));
        assert!(crate::wire::verify_checksums(&f.bytes).is_ok());
    }
}
