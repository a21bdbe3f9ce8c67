//! A checked view of frame bytes from the wire or from DMA: etherparse slices the
//! headers; we keep the offsets and verify checksums.

use etherparse::{
    ip_number, ArpPacketSlice, EtherType, Ethernet2Slice, Icmpv4Slice, Icmpv6Slice, IgmpSlice, Ipv4Slice, Ipv6Slice, MacsecSlice,
    SingleVlanSlice, TcpSlice, UdpSlice,
};

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
    /// Layer by layer with etherparse's slices, as `SlicedPacket::from_ethernet`
    /// does, but keeping only offsets: building the whole sliced packet copied a
    /// few hundred bytes per frame, a tenth of a link flood's time.
    /// Inlined: its result, returned in memory and read back wide at once,
    /// stalled the sink's checksum check on every frame.
    #[inline(always)]
    pub fn parse(bytes: &[u8]) -> Result<View, String> {
        use etherparse::ether_type::{ARP, IPV4, IPV6, MACSEC, PROVIDER_BRIDGING, VLAN_DOUBLE_TAGGED_FRAME, VLAN_TAGGED_FRAME};
        let eth = Ethernet2Slice::from_slice_without_fcs(bytes).map_err(|e| e.to_string())?;
        let mut ether = eth.payload();
        let mut vlan = None;
        let mut l3_offset = 14;
        // As many tags as etherparse keeps (three); a fourth ends the parse.
        for _ in 0..3 {
            if !matches!(ether.ether_type, VLAN_TAGGED_FRAME | PROVIDER_BRIDGING | VLAN_DOUBLE_TAGGED_FRAME) {
                break;
            }
            let v = SingleVlanSlice::from_slice(ether.payload).map_err(|e| e.to_string())?;
            vlan.get_or_insert(v.vlan_identifier().value());
            ether = v.payload();
            l3_offset = offset(bytes, ether.payload);
        }
        let ether_type = ether.ether_type;
        let mut view = View { ether_type, vlan, l3_offset, l4: None, payload: l3_offset..bytes.len() };
        let ip = match ether_type {
            IPV4 => Ipv4Slice::from_slice(ether.payload).map_err(|e| e.to_string())?.payload().clone(),
            IPV6 => Ipv6Slice::from_slice(ether.payload).map_err(|e| e.to_string())?.payload().clone(),
            ARP => {
                ArpPacketSlice::from_slice(ether.payload).map_err(|e| e.to_string())?;
                return Ok(view);
            }
            // A MACsec header is checked as etherparse's packet slicing checks it;
            // its payload, and any other EtherType's, is kept unparsed.
            MACSEC => {
                MacsecSlice::from_slice(ether.payload).map_err(|e| e.to_string())?;
                return Ok(view);
            }
            _ => return Ok(view),
        };
        let at = offset(bytes, ip.payload);
        view.payload = at..at + ip.payload.len();
        view.l4 = Some((at, Transport::Other(ip.ip_number.0)));
        if ip.fragmented {
            return Ok(view);
        }
        match ip.ip_number {
            ip_number::UDP => {
                let u = UdpSlice::from_slice(ip.payload).map_err(|e| e.to_string())?;
                view.l4 = Some((at, Transport::Udp));
                view.payload = at + 8..at + u.slice().len();
            }
            ip_number::TCP => {
                let t = TcpSlice::from_slice(ip.payload).map_err(|e| e.to_string())?;
                view.l4 = Some((at, Transport::Tcp));
                view.payload = at + t.header_len()..at + t.slice().len();
            }
            // Checked for length as etherparse's packet slicing does.
            ip_number::ICMP => {
                Icmpv4Slice::from_slice(ip.payload).map_err(|e| e.to_string())?;
            }
            ip_number::IPV6_ICMP => {
                Icmpv6Slice::from_slice(ip.payload).map_err(|e| e.to_string())?;
            }
            ip_number::IGMP => {
                IgmpSlice::from_slice(ip.payload).map_err(|e| e.to_string())?;
            }
            _ => {}
        }
        Ok(view)
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
