//! A checked view of frame bytes from the wire or from DMA: etherparse slices the
//! headers; we keep the offsets and verify checksums.

use etherparse::{EtherType, LinkExtSlice, NetSlice, SlicedPacket, TransportSlice};

use crate::wire::checksum;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Udp,
    Tcp,
    /// An IP payload the model does not parse; the protocol number is kept.
    Other(u8),
}

/// Where each layer starts in a parsed frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The innermost EtherType (after any VLAN tag); unknown values are kept.
    pub ether_type: EtherType,
    pub vlan: Option<u16>,
    /// Offset of the network header (after Ethernet and VLAN).
    pub l3_offset: usize,
    /// Offset and protocol of the transport header, for IPv4 and IPv6.
    pub l4: Option<(usize, Transport)>,
    /// The payload after the innermost parsed header, padding excluded where the IP
    /// length says where the packet ends.
    pub payload: std::ops::Range<usize>,
}

fn offset(whole: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

impl View {
    /// Parse `bytes` (no FCS). Errors name the layer, as etherparse reports it.
    pub fn parse(bytes: &[u8]) -> Result<View, String> {
        let p = SlicedPacket::from_ethernet(bytes).map_err(|e| e.to_string())?;
        let eth = match &p.link {
            Some(etherparse::LinkSlice::Ethernet2(e)) => e.clone(),
            _ => return Err("not an Ethernet II frame".into()),
        };
        let mut ether_type = eth.ether_type();
        let mut vlan = None;
        let mut l3_offset = 14;
        for ext in &p.link_exts {
            if let LinkExtSlice::Vlan(v) = ext {
                vlan.get_or_insert(v.vlan_identifier().value());
                ether_type = v.ether_type();
                l3_offset = offset(bytes, v.payload_slice());
            }
        }
        let mut payload = l3_offset..bytes.len();
        let mut l4 = None;
        if let Some(net) = &p.net {
            let ip_payload = match net {
                NetSlice::Ipv4(v4) => Some((v4.payload().payload, v4.payload().ip_number.0)),
                NetSlice::Ipv6(v6) => Some((v6.payload().payload, v6.payload().ip_number.0)),
                _ => None,
            };
            if let Some((data, proto)) = ip_payload {
                let at = offset(bytes, data);
                payload = at..at + data.len();
                l4 = Some((at, Transport::Other(proto)));
            }
        }
        match &p.transport {
            Some(TransportSlice::Udp(u)) => {
                let at = offset(bytes, u.slice());
                l4 = Some((at, Transport::Udp));
                payload = at + 8..at + u.slice().len();
            }
            Some(TransportSlice::Tcp(t)) => {
                let at = offset(bytes, t.slice());
                l4 = Some((at, Transport::Tcp));
                payload = at + t.header_len()..at + t.slice().len();
            }
            _ => {}
        }
        Ok(View { ether_type, vlan, l3_offset, l4, payload })
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{layer} checksum is wrong: one's-complement sum {sum:#06x}, should be 0xffff")]
pub struct ChecksumError {
    pub layer: &'static str,
    pub sum: u16,
}

/// Check the IPv4 header checksum and the UDP or TCP checksum of a frame.
pub fn verify_checksums(bytes: &[u8]) -> Result<View, String> {
    let view = View::parse(bytes)?;
    let Some((l4_at, proto)) = view.l4 else {
        return Ok(view);
    };
    let l3 = &bytes[view.l3_offset..];
    let segment = &bytes[l4_at..view.payload.end];
    let pseudo = match l3[0] >> 4 {
        4 => {
            let ihl = (l3[0] & 0x0f) as usize * 4;
            let s = checksum::sum(&l3[..ihl]);
            if s != 0xffff {
                return Err(ChecksumError { layer: "IPv4 header", sum: s }.to_string());
            }
            checksum::accumulate(0, &l3[12..20])
        }
        _ => checksum::accumulate(0, &l3[8..40]),
    };
    let (layer, proto_number) = match proto {
        Transport::Udp => ("UDP", 17u64),
        Transport::Tcp => ("TCP", 6u64),
        Transport::Other(_) => return Ok(view),
    };
    if proto == Transport::Udp && segment[6..8] == [0, 0] && l3[0] >> 4 == 4 {
        return Ok(view); // IPv4 UDP without checksum
    }
    let s = checksum::fold(checksum::accumulate(pseudo + proto_number + segment.len() as u64, segment));
    if s != 0xffff {
        return Err(ChecksumError { layer, sum: s }.to_string());
    }
    Ok(view)
}
