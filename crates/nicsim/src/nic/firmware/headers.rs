//! Where the IPv4 and transport headers sit in a frame, found with etherparse's
//! header slices (they read headers alone, so a template with no payload and a
//! placeholder length still parses).

use etherparse::{EtherType, Ethernet2HeaderSlice, IpNumber, Ipv4HeaderSlice, SingleVlanHeaderSlice, TcpHeaderSlice, UdpHeaderSlice};

/// Offsets of an IPv4 frame's headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub ip: usize,
    pub ip_len: usize,
    pub l4: usize,
    /// The transport protocol and its header length (TCP with options, or 8 for UDP).
    pub proto: IpNumber,
    pub l4_len: usize,
}

impl Layout {
    /// Bytes of headers before the transport payload.
    pub fn header_len(&self) -> usize {
        self.l4 + self.l4_len
    }

    pub fn of(frame: &[u8]) -> Result<Layout, String> {
        let eth = Ethernet2HeaderSlice::from_slice(frame).map_err(|e| format!("Ethernet: {e}"))?;
        let (mut at, mut ether_type) = (eth.slice().len(), eth.ether_type());
        if ether_type == EtherType::VLAN_TAGGED_FRAME {
            let vlan = SingleVlanHeaderSlice::from_slice(&frame[at..]).map_err(|e| format!("VLAN tag: {e}"))?;
            at += vlan.slice().len();
            ether_type = vlan.ether_type();
        }
        if ether_type != EtherType::IPV4 {
            return Err(format!("EtherType {:#06x} is not IPv4", ether_type.0));
        }
        let ip = Ipv4HeaderSlice::from_slice(&frame[at..]).map_err(|e| format!("IPv4 header at byte {at}: {e}"))?;
        let (ip_at, ip_len) = (at, ip.slice().len());
        let l4 = ip_at + ip_len;
        let proto = ip.protocol();
        let l4_len = match proto {
            IpNumber::TCP => TcpHeaderSlice::from_slice(&frame[l4..]).map_err(|e| format!("TCP header at byte {l4}: {e}"))?.slice().len(),
            IpNumber::UDP => UdpHeaderSlice::from_slice(&frame[l4..]).map_err(|e| format!("UDP header at byte {l4}: {e}"))?.slice().len(),
            other => return Err(format!("IP protocol {} is neither TCP nor UDP", other.0)),
        };
        Ok(Layout { ip: ip_at, ip_len, l4, proto, l4_len })
    }
}
