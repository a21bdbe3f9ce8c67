//! Gratuitous ARP: the broadcast a station sends when its interface comes up,
//! naming its own address, so that switches learn where it is (RFC 5227's ARP
//! announcement). Built with etherparse.

use etherparse::{ArpHardwareId, ArpOperation, ArpPacket, EtherType, PacketBuilder};

use crate::wire::ethernet::{FCS, MIN_FRAME};

/// An ARP announcement from `mac` for `ip`, padded to the minimum frame.
pub fn announcement(mac: [u8; 6], ip: [u8; 4]) -> Vec<u8> {
    let arp = ArpPacket::new(ArpHardwareId::ETHERNET, EtherType::IPV4, ArpOperation::REQUEST, &mac, &ip, &[0; 6], &ip)
        .expect("Ethernet and IPv4 address lengths");
    let builder = PacketBuilder::ethernet2(mac, [0xff; 6]).arp(arp);
    let mut bytes = Vec::with_capacity(MIN_FRAME);
    builder.write(&mut bytes).expect("writing to memory");
    bytes.resize(bytes.len().max(MIN_FRAME - FCS), 0);
    bytes
}

/// Whether `frame` is an ARP packet.
pub fn is_arp(frame: &[u8]) -> bool {
    frame.get(12..14) == Some(&[0x08, 0x06])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_is_a_broadcast_request_for_the_senders_own_address() {
        let f = announcement([2, 0, 0, 0, 0, 7], [198, 18, 0, 7]);
        assert_eq!(f.len(), 60, "padded to 64 bytes with the FCS");
        assert!(is_arp(&f) && f[..6] == [0xff; 6]);
        let (eth, rest) = etherparse::Ethernet2Header::from_slice(&f).unwrap();
        assert_eq!(eth.source, [2, 0, 0, 0, 0, 7]);
        let arp = ArpPacket::from_slice(rest).unwrap();
        assert_eq!(arp.operation, ArpOperation::REQUEST);
        assert_eq!((arp.sender_protocol_addr(), arp.target_protocol_addr()), (&[198, 18, 0, 7][..], &[198, 18, 0, 7][..]));
    }
}
