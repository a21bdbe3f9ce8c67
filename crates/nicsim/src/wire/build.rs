//! Builders: header descriptions in, frame bytes out, with lengths and checksums
//! filled in by etherparse.

use etherparse::{EtherType, Ethernet2Header, IpNumber, Ipv4Header, Ipv6Header, SingleVlanHeader, TcpHeader, UdpHeader, VlanId};

use crate::wire::checksum;
use crate::wire::ethernet::{FCS, MIN_FRAME};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpFields {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: Option<u32>,
    pub window: u16,
    pub psh: bool,
    pub fin: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum L4 {
    Udp { src_port: u16, dst_port: u16 },
    Tcp(TcpFields),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum L3 {
    /// Raw Ethernet: the payload follows the (VLAN) header under this EtherType.
    Raw {
        ether_type: u16,
    },
    Ipv4 {
        src: [u8; 4],
        dst: [u8; 4],
        ttl: u8,
        id: u16,
        l4: L4,
    },
    Ipv6 {
        src: [u8; 16],
        dst: [u8; 16],
        hop_limit: u8,
        l4: L4,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Headers {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    /// 802.1Q VLAN identifier, 0..=4095.
    pub vlan: Option<u16>,
    pub l3: L3,
}

impl Headers {
    /// Bytes of header in front of the payload.
    pub fn header_len(&self) -> usize {
        let l2 = 14 + if self.vlan.is_some() { 4 } else { 0 };
        let l4 = |l4: &L4| match l4 {
            L4::Udp { .. } => 8,
            L4::Tcp(_) => 20,
        };
        l2 + match &self.l3 {
            L3::Raw { .. } => 0,
            L3::Ipv4 { l4: t, .. } => 20 + l4(t),
            L3::Ipv6 { l4: t, .. } => 40 + l4(t),
        }
    }
}

/// Why a frame could not be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BuildError {
    #[error("VLAN id {0} is above 4095")]
    Vlan(u16),
    #[error("payload of {0} bytes is too long for one IP packet")]
    TooLong(usize),
}

fn l3_ether_type(l3: &L3) -> EtherType {
    match l3 {
        L3::Raw { ether_type } => EtherType(*ether_type),
        L3::Ipv4 { .. } => EtherType::IPV4,
        L3::Ipv6 { .. } => EtherType::IPV6,
    }
}

fn tcp_header(t: &TcpFields) -> TcpHeader {
    let mut h = TcpHeader::new(t.src_port, t.dst_port, t.seq, t.window);
    if let Some(ack) = t.ack {
        h.ack = true;
        h.acknowledgment_number = ack;
    }
    h.psh = t.psh;
    h.fin = t.fin;
    h
}

/// The IP header a transport checksum's pseudo-header comes from.
enum Ip<'a> {
    V4(&'a Ipv4Header),
    V6(&'a Ipv6Header),
}

/// Writes the transport header. For TCP it leaves the checksum zero and returns
/// where the segment starts and its pseudo-header sum: `build` finishes it with our
/// own checksum once the payload is in (etherparse's runs a byte at a time).
fn write_l4(out: &mut Vec<u8>, ip: Ip, l4: &L4, payload: &[u8]) -> Result<Option<(usize, u64)>, BuildError> {
    let too_long = |_| BuildError::TooLong(payload.len());
    match l4 {
        L4::Udp { src_port, dst_port } => {
            let h = match ip {
                Ip::V4(ip) => UdpHeader::with_ipv4_checksum(*src_port, *dst_port, ip, payload),
                Ip::V6(ip) => UdpHeader::with_ipv6_checksum(*src_port, *dst_port, ip, payload),
            };
            out.extend_from_slice(&h.map_err(too_long)?.to_bytes());
        }
        L4::Tcp(t) => {
            let h = tcp_header(t);
            let seg_len = h.header_len() as u64 + payload.len() as u64;
            let (pseudo, max) = match ip {
                Ip::V4(ip) => (checksum::accumulate(checksum::accumulate(0, &ip.source), &ip.destination), u16::MAX as u64),
                Ip::V6(ip) => (checksum::accumulate(checksum::accumulate(0, &ip.source), &ip.destination), u32::MAX as u64),
            };
            if seg_len > max {
                return Err(BuildError::TooLong(payload.len()));
            }
            let at = out.len();
            out.extend_from_slice(&h.to_bytes());
            return Ok(Some((at, pseudo + 6 + seg_len)));
        }
    }
    Ok(None)
}

fn ip_number(l4: &L4) -> IpNumber {
    match l4 {
        L4::Udp { .. } => IpNumber::UDP,
        L4::Tcp(_) => IpNumber::TCP,
    }
}

/// The frame bytes (no FCS) for `headers` carrying `payload`, zero-padded to the
/// 64-byte minimum, with IPv4, UDP and TCP lengths and checksums computed.
pub fn build(headers: &Headers, payload: &[u8]) -> Result<Vec<u8>, BuildError> {
    let mut out = Vec::with_capacity((headers.header_len() + payload.len()).max(MIN_FRAME - FCS));
    let inner = l3_ether_type(&headers.l3);
    let outer = if headers.vlan.is_some() { EtherType::VLAN_TAGGED_FRAME } else { inner };
    out.extend_from_slice(&Ethernet2Header { source: headers.src_mac, destination: headers.dst_mac, ether_type: outer }.to_bytes());
    if let Some(id) = headers.vlan {
        let vlan_id = VlanId::try_new(id).map_err(|_| BuildError::Vlan(id))?;
        out.extend_from_slice(
            &SingleVlanHeader { pcp: Default::default(), drop_eligible_indicator: false, vlan_id, ether_type: inner }.to_bytes(),
        );
    }
    let mut tcp = None;
    match &headers.l3 {
        L3::Raw { .. } => {}
        L3::Ipv4 { src, dst, ttl, id, l4 } => {
            let l4_len = headers.header_len() - out.len() - 20 + payload.len();
            let len = u16::try_from(l4_len).map_err(|_| BuildError::TooLong(payload.len()))?;
            let mut ip = Ipv4Header::new(len, *ttl, ip_number(l4), *src, *dst).map_err(|_| BuildError::TooLong(payload.len()))?;
            ip.identification = *id;
            ip.dont_fragment = true;
            ip.header_checksum = ip.calc_header_checksum();
            out.extend_from_slice(&ip.to_bytes());
            tcp = write_l4(&mut out, Ip::V4(&ip), l4, payload)?;
        }
        L3::Ipv6 { src, dst, hop_limit, l4 } => {
            let l4_len = headers.header_len() - out.len() - 40 + payload.len();
            let payload_length = u16::try_from(l4_len).map_err(|_| BuildError::TooLong(payload.len()))?;
            let ip = Ipv6Header {
                traffic_class: 0,
                flow_label: Default::default(),
                payload_length,
                next_header: ip_number(l4),
                hop_limit: *hop_limit,
                source: *src,
                destination: *dst,
            };
            out.extend_from_slice(&ip.to_bytes());
            tcp = write_l4(&mut out, Ip::V6(&ip), l4, payload)?;
        }
    }
    out.extend_from_slice(payload);
    if let Some((at, pseudo)) = tcp {
        let c = !checksum::fold(checksum::accumulate(pseudo, &out[at..]));
        out[at + 16..at + 18].copy_from_slice(&c.to_be_bytes());
    }
    if out.len() < MIN_FRAME - FCS {
        out.resize(MIN_FRAME - FCS, 0);
    }
    Ok(out)
}
