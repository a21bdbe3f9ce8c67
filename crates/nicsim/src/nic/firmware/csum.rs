//! Checksum offload (RFC 1071 sums, as offloading adapters insert and check them): insert the IPv4 header, TCP and UDP
//! checksums of a frame on transmit; verify them on receive and report the result
//! beside the frame, as an adapter's receive status does.

use etherparse::IpNumber;

use crate::nic::firmware::headers::Layout;
use crate::wire::checksum::{accumulate, fold};

/// The end of the IP packet (frames may carry padding after it).
fn packet_end(frame: &[u8], l: &Layout) -> Result<usize, String> {
    let total = u16::from_be_bytes([frame[l.ip + 2], frame[l.ip + 3]]) as usize;
    let end = l.ip + total;
    if total < l.ip_len + l.l4_len || end > frame.len() {
        return Err(format!("IPv4 total length {total} does not fit the {}-byte frame", frame.len()));
    }
    Ok(end)
}

/// The one's-complement sum of the pseudo-header and segment, checksum field included.
pub fn l4_sum(frame: &[u8], l: &Layout, end: usize) -> u16 {
    let pseudo = accumulate(0, &frame[l.ip + 12..l.ip + 20]) + l.proto.0 as u64 + (end - l.l4) as u64;
    fold(accumulate(pseudo, &frame[l.l4..end]))
}

fn l4_field(l: &Layout) -> usize {
    l.l4 + if l.proto == IpNumber::TCP { 16 } else { 6 }
}

/// Fill in every checksum of an IPv4 TCP or UDP frame. Returns its layout.
pub fn insert(frame: &mut [u8]) -> Result<Layout, String> {
    let l = Layout::of(frame)?;
    let end = packet_end(frame, &l)?;
    frame[l.ip + 10..l.ip + 12].fill(0);
    let ip_sum = !fold(accumulate(0, &frame[l.ip..l.ip + l.ip_len]));
    frame[l.ip + 10..l.ip + 12].copy_from_slice(&ip_sum.to_be_bytes());
    let at = l4_field(&l);
    frame[at..at + 2].fill(0);
    let mut c = !l4_sum(frame, &l, end);
    if c == 0 && l.proto == IpNumber::UDP {
        c = 0xffff; // zero means "no checksum" in UDP over IPv4
    }
    frame[at..at + 2].copy_from_slice(&c.to_be_bytes());
    Ok(l)
}

/// Zero the checksums of an IPv4 TCP or UDP frame, as a driver leaves them
/// for the adapter that `insert`s them (a frame of another kind is left whole).
pub fn clear(frame: &mut [u8]) {
    if let Ok(l) = Layout::of(frame) {
        frame[l.ip + 10..l.ip + 12].fill(0);
        let at = l4_field(&l);
        frame[at..at + 2].fill(0);
    }
}

/// What receive checksum offload reports for a frame; `None` where it does not apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub ipv4: Option<bool>,
    pub l4: Option<bool>,
}

impl Verdict {
    pub fn bad(&self) -> bool {
        self.ipv4 == Some(false) || self.l4 == Some(false)
    }
}

pub fn verify(frame: &[u8]) -> Verdict {
    let Ok(l) = Layout::of(frame) else { return Verdict::default() };
    let ip_ok = fold(accumulate(0, &frame[l.ip..l.ip + l.ip_len])) == 0xffff;
    let l4 = match packet_end(frame, &l) {
        Err(_) => Some(false),
        Ok(_) if l.proto == IpNumber::UDP && frame[l.l4 + 6..l.l4 + 8] == [0, 0] => None,
        Ok(end) => Some(l4_sum(frame, &l, end) == 0xffff),
    };
    Verdict { ipv4: Some(ip_ok), l4 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{build, verify_checksums, Headers, TcpFields, L3, L4};

    pub fn frame(l4: L4, payload: &[u8]) -> Vec<u8> {
        let h = Headers {
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_mac: [2, 0, 0, 0, 0, 1],
            vlan: None,
            l3: L3::Ipv4 { src: [198, 18, 0, 1], dst: [198, 18, 0, 2], ttl: 64, id: 9, l4 },
        };
        build(&h, payload).unwrap()
    }

    fn tcp() -> L4 {
        L4::Tcp(TcpFields { src_port: 1, dst_port: 2, seq: 3, ack: Some(4), window: 5, psh: true, fin: false })
    }

    #[test]
    fn insert_restores_what_a_zeroed_frame_lost() {
        for l4 in [tcp(), L4::Udp { src_port: 7, dst_port: 9 }] {
            let good = frame(l4, b"some payload bytes!");
            let mut f = good.clone();
            let l = Layout::of(&f).unwrap();
            f[l.ip + 10..l.ip + 12].fill(0);
            f[l4_field(&l)..l4_field(&l) + 2].fill(0);
            assert!(verify_checksums(&f).is_err());
            insert(&mut f).unwrap();
            assert_eq!(f, good);
            assert_eq!(verify(&f), Verdict { ipv4: Some(true), l4: Some(true) });
        }
    }

    #[test]
    fn verify_reports_which_layer_is_wrong() {
        let good = frame(tcp(), &[0x55; 100]);
        let mut f = good.clone();
        f[60] ^= 1; // payload
        assert_eq!(verify(&f), Verdict { ipv4: Some(true), l4: Some(false) });
        let mut f = good.clone();
        f[14 + 8] ^= 1; // TTL
        assert_eq!(verify(&f).ipv4, Some(false));
        assert!(verify(&f).bad());
        assert_eq!(verify(&[0u8; 60]), Verdict::default(), "not IPv4: nothing to report");
    }

    #[test]
    fn a_short_packet_in_a_padded_frame_verifies() {
        let f = frame(L4::Udp { src_port: 7, dst_port: 9 }, b"hi");
        assert_eq!(f.len(), 60);
        assert_eq!(verify(&f), Verdict { ipv4: Some(true), l4: Some(true) });
    }
}
