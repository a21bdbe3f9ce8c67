//! What arrives at the edge of the simulation from a real network, sorted by
//! what it is. A real MAC cannot take a frame shorter than an Ethernet header or
//! longer than its largest frame, so those are dropped. Everything else is
//! passed on untouched, as a wire would carry it, and counted by class: the
//! simulated stations behind the edge check their own input (etherparse here,
//! smoltcp and the model's own views there).

use etherparse::err::packet::SliceError;
use etherparse::{EtherType, LinkSlice, NetSlice, SlicedPacket};

use crate::observe::Report;
use crate::wire::ethernet::HEADER;
use crate::wire::verify_checksums;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeClass {
    /// Shorter than an Ethernet header: dropped.
    Runt,
    /// Longer than the link's largest frame: dropped.
    Oversized,
    /// A header says there are more bytes than there are.
    Truncated,
    /// A header field or checksum is wrong.
    Malformed,
    /// An EtherType the model does not know (kept, as smoltcp keeps `Unknown`).
    UnknownProtocol,
    /// ARP, or IPv4/IPv6 whose headers and checksums verify.
    Good,
}

impl EdgeClass {
    pub fn passes(self) -> bool {
        !matches!(self, EdgeClass::Runt | EdgeClass::Oversized)
    }
}

/// Sort one frame (no FCS) for a link whose largest frame is `max_frame` bytes.
pub fn classify(bytes: &[u8], max_frame: usize) -> EdgeClass {
    if bytes.len() < HEADER {
        return EdgeClass::Runt;
    }
    if bytes.len() > max_frame {
        return EdgeClass::Oversized;
    }
    match SlicedPacket::from_ethernet(bytes) {
        Err(SliceError::Len(_)) => EdgeClass::Truncated,
        Err(_) => EdgeClass::Malformed,
        Ok(p) => match p.net {
            Some(NetSlice::Arp(_)) => EdgeClass::Good,
            Some(NetSlice::Ipv4(_) | NetSlice::Ipv6(_)) => match verify_checksums(bytes) {
                Ok(_) => EdgeClass::Good,
                Err(_) => EdgeClass::Malformed,
            },
            None => match last_ether_type(&p) {
                Some(EtherType::IPV4 | EtherType::IPV6 | EtherType::ARP) => EdgeClass::Truncated,
                _ => EdgeClass::UnknownProtocol,
            },
        },
    }
}

/// The EtherType that names the frame's payload (after any VLAN tags).
fn last_ether_type(p: &SlicedPacket) -> Option<EtherType> {
    let outer = match &p.link {
        Some(LinkSlice::Ethernet2(e)) => Some(e.ether_type()),
        _ => None,
    };
    p.link_exts.iter().filter_map(|x| x.ether_payload().map(|e| e.ether_type)).next_back().or(outer)
}

/// Frames that came in at the edge, by class; every frame is in exactly one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeCounts {
    pub frames: u64,
    pub bytes: u64,
    pub runt: u64,
    pub oversized: u64,
    pub truncated: u64,
    pub malformed: u64,
    pub unknown_protocol: u64,
    pub good: u64,
}

impl EdgeCounts {
    pub fn add(&mut self, class: EdgeClass, len: usize) {
        self.frames += 1;
        self.bytes += len as u64;
        *match class {
            EdgeClass::Runt => &mut self.runt,
            EdgeClass::Oversized => &mut self.oversized,
            EdgeClass::Truncated => &mut self.truncated,
            EdgeClass::Malformed => &mut self.malformed,
            EdgeClass::UnknownProtocol => &mut self.unknown_protocol,
            EdgeClass::Good => &mut self.good,
        } += 1;
    }

    /// Frames passed on into the simulation.
    pub fn passed(&self) -> u64 {
        self.frames - self.runt - self.oversized
    }

    /// Under `prefix` (`in_` gives `in_frames`, `in_runt`, ...).
    pub fn report(&self, r: &mut Report, prefix: &str) {
        let rows = [
            ("frames", self.frames),
            ("bytes", self.bytes),
            ("passed", self.passed()),
            ("dropped_runt", self.runt),
            ("dropped_oversized", self.oversized),
            ("truncated", self.truncated),
            ("malformed", self.malformed),
            ("unknown_protocol", self.unknown_protocol),
            ("good", self.good),
        ];
        for (name, n) in rows {
            r.count(&format!("{prefix}{name}"), n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ping() -> Vec<u8> {
        let builder = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1])
            .ipv4([198, 18, 0, 2], [198, 18, 0, 1], 64)
            .icmpv4_echo_request(7, 1);
        let mut out = Vec::new();
        builder.write(&mut out, &[0xab; 56]).unwrap();
        out
    }

    #[test]
    fn sorts_each_kind_of_frame() {
        let good = ping();
        assert_eq!(classify(&good, 1518), EdgeClass::Good);
        assert_eq!(classify(&good[..10], 1518), EdgeClass::Runt);
        assert_eq!(classify(&good, 60), EdgeClass::Oversized);
        assert_eq!(classify(&good[..30], 1518), EdgeClass::Truncated);
        let mut bad_sum = good.clone();
        bad_sum[24] ^= 0xff; // IPv4 header checksum
        assert_eq!(classify(&bad_sum, 1518), EdgeClass::Malformed);
        let mut bad_version = good.clone();
        bad_version[14] = 0x75;
        assert_eq!(classify(&bad_version, 1518), EdgeClass::Malformed);
        let mut unknown = good.clone();
        unknown[12..14].copy_from_slice(&[0x88, 0xb5]);
        assert_eq!(classify(&unknown, 1518), EdgeClass::UnknownProtocol);
        assert_eq!(classify(&good[..14], 1518), EdgeClass::Truncated);
    }

    proptest! {
        /// Any bytes at all are sorted into exactly one class, and counted once.
        #[test]
        fn every_frame_is_counted_once(frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..1600), 1..40)) {
            let mut counts = EdgeCounts::default();
            for f in &frames {
                counts.add(classify(f, 1518), f.len());
            }
            let c = counts;
            prop_assert_eq!(c.frames, frames.len() as u64);
            prop_assert_eq!(c.runt + c.oversized + c.truncated + c.malformed + c.unknown_protocol + c.good, c.frames);
        }
    }
}
