//! The static ARP table the stations of a scenario share, and the replies a
//! stack makes from it: a lane that asks for a station it knows gets the
//! answer at once, without a frame on the wire.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use smoltcp::wire::{ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, Ipv4Address};

use super::StackConfig;
use crate::wire::Frame;

/// A scenario's static ARP table, one shared by all its stacks (a table per
/// host grew with the square of the number of hosts).
pub type Neighbors = Arc<FxHashMap<[u8; 4], [u8; 6]>>;

impl StackConfig {
    /// The MAC of another station of the static table.
    pub(crate) fn neighbor(&self, ip: [u8; 4]) -> Option<[u8; 6]> {
        self.neighbors.get(&ip).copied().filter(|_| ip != self.ip)
    }
}

/// An ARP reply from `ip` at `mac` to the interface of `cfg`.
pub(super) fn arp_reply(cfg: &StackConfig, ip: [u8; 4], mac: [u8; 6]) -> Box<Frame> {
    let arp = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Reply,
        source_hardware_addr: EthernetAddress(mac),
        source_protocol_addr: Ipv4Address::from_octets(ip),
        target_hardware_addr: EthernetAddress(cfg.mac),
        target_protocol_addr: Ipv4Address::from_octets(cfg.ip),
    };
    let eth = EthernetRepr { src_addr: EthernetAddress(mac), dst_addr: EthernetAddress(cfg.mac), ethertype: EthernetProtocol::Arp };
    let mut bytes = vec![0; eth.buffer_len() + arp.buffer_len()];
    let mut frame = EthernetFrame::new_unchecked(&mut bytes);
    eth.emit(&mut frame);
    arp.emit(&mut ArpPacket::new_unchecked(frame.payload_mut()));
    Box::new(Frame { bytes, meta: Default::default() })
}

/// The reply to `frame` if it is an ARP request for another station of the
/// static table.
pub(super) fn answer_arp(cfg: &StackConfig, frame: &[u8]) -> Option<Box<Frame>> {
    // Nearly every frame is IPv4: look at the EtherType before parsing.
    if !crate::wire::arp::is_arp(frame) {
        return None;
    }
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Arp {
        return None;
    }
    let arp = ArpPacket::new_checked(eth.payload()).ok()?;
    if arp.operation() != ArpOperation::Request {
        return None;
    }
    let ip: [u8; 4] = arp.target_protocol_addr().try_into().ok()?;
    cfg.neighbor(ip).map(|mac| arp_reply(cfg, ip, mac))
}
