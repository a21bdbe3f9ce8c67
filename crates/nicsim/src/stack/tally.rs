//! What each frame is, for the cost model and the counters: a TCP segment with
//! data, a pure ACK, or anything else (SYN, FIN, RST, ARP). Parsed from the bytes,
//! never taken on trust from the sender.

use std::collections::hash_map::Entry;

use rustc_hash::{FxHashMap, FxHashSet};

use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A segment carrying `len` bytes from sequence number `seq`, only ACK/PSH set.
    Data {
        seq: u32,
        len: u32,
    },
    PureAck,
    Other,
}

pub fn classify(frame: &[u8]) -> Class {
    Segment::parse(frame).map_or(Class::Other, |s| s.class)
}

/// As `classify`, with a segment of another connection than those on this
/// host's `port` (its source port going out, its destination coming in) as Other.
pub fn classify_on(frame: &[u8], port: Option<u16>, outbound: bool) -> Class {
    match Segment::parse(frame) {
        Some(s) if port.is_none_or(|p| p == s.local(outbound)) => s.class,
        _ => Class::Other,
    }
}

/// Whether `next` carries on `prev`'s data: both TCP data segments of one
/// connection, `next` starting where `prev` ends (what a write-back group of
/// in-order data holds, `rx_writeback_data_only`).
pub fn continues(prev: &[u8], next: &[u8]) -> bool {
    let (Some(a), Some(b)) = (Segment::parse(prev), Segment::parse(next)) else { return false };
    match (a.class, b.class) {
        (Class::Data { seq, len }, Class::Data { seq: next_seq, .. }) => {
            a.src == b.src && a.dst == b.dst && seq.wrapping_add(len) == next_seq
        }
        _ => false,
    }
}

/// What the counters and the stack's routing need of a TCP/IPv4 frame, from
/// one parse.
pub(super) struct Segment {
    class: Class,
    syn: bool,
    fin: bool,
    /// A SYN without ACK: a connection being opened.
    pub opening: bool,
    /// Source (port, address) and destination (address, port).
    pub src: (u16, [u8; 4]),
    pub dst: ([u8; 4], u16),
}

impl Segment {
    /// This host's port: the source going out, the destination coming in.
    fn local(&self, outbound: bool) -> u16 {
        if outbound {
            self.src.0
        } else {
            self.dst.1
        }
    }

    /// `None` for anything but an unfragmented TCP segment in IPv4 in Ethernet II.
    /// Read through smoltcp's wire views, which check the lengths and read the
    /// fields in place: every frame is classified once or twice, and building
    /// etherparse's slices (extension headers and all) cost more than the rest.
    pub fn parse(frame: &[u8]) -> Option<Segment> {
        let eth = EthernetFrame::new_checked(frame).ok()?;
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            return None;
        }
        let ip = Ipv4Packet::new_checked(eth.payload()).ok()?;
        if ip.version() != 4 || ip.next_header() != IpProtocol::Tcp || ip.more_frags() || ip.frag_offset() != 0 {
            return None;
        }
        let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
        let len = tcp.payload().len() as u32;
        let class = if tcp.syn() || tcp.fin() || tcp.rst() || !tcp.ack() {
            Class::Other
        } else if len == 0 {
            Class::PureAck
        } else {
            Class::Data { seq: tcp.seq_number().0 as u32, len }
        };
        Some(Segment {
            class,
            syn: tcp.syn(),
            fin: tcp.fin(),
            opening: tcp.syn() && !tcp.ack(),
            src: (tcp.src_port(), ip.src_addr().octets()),
            dst: (ip.dst_addr().octets(), tcp.dst_port()),
        })
    }
}

/// Counts of one stack's frames each way, or of the connections on one of its
/// ports alone (`of_port`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    only: Option<u16>,
    pub data_out: u64,
    pub payload_out: u64,
    pub acks_out: u64,
    pub other_out: u64,
    pub data_in: u64,
    pub payload_in: u64,
    pub acks_in: u64,
    pub other_in: u64,
    pub syns: u64,
    pub fins: u64,
    /// Connections this end opened or answered: its first SYN on each (a SYN
    /// sent again is not a new one).
    pub connections: u64,
    opened: FxHashSet<Conn>,
    /// Data segments sent again: they end at or before data already sent on
    /// their connection.
    pub retransmits: u64,
    /// Per connection (source port, destination address and port), the end of
    /// the data sent so far.
    sent_end: FxHashMap<Conn, u32>,
    /// Data segments that arrived beyond a gap in their connection's data.
    pub out_of_order: u64,
    /// Per connection, the end of the data received in order so far (a
    /// connection's first data segment starts it), and the ranges received
    /// beyond it, which join it once the gap before them is filled.
    received_end: FxHashMap<Conn, (u32, Vec<(u32, u32)>)>,
}

/// A connection as this end sees it: its local port, the far address and port.
type Conn = (u16, [u8; 4], u16);

fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl Tally {
    /// A tally of the segments of the connections on local port `port` alone.
    pub fn of_port(port: u16) -> Tally {
        Tally { only: Some(port), ..Tally::default() }
    }

    /// A segment this tally does not count (`None`: not a TCP segment).
    fn skips(&self, seg: Option<&Segment>, outbound: bool) -> bool {
        self.only.is_some_and(|p| seg.is_none_or(|s| s.local(outbound) != p))
    }

    /// A frame the stack sent; with `gso`, a large send that leaves as
    /// segments of that size, each counted as a data segment.
    pub fn outbound(&mut self, frame: &[u8], gso: u16) {
        self.outbound_parsed(Segment::parse(frame).as_ref(), gso);
    }

    /// A frame sent, already parsed (`None`: not a TCP segment).
    pub(super) fn outbound_parsed(&mut self, seg: Option<&Segment>, gso: u16) {
        if self.skips(seg, true) {
            return;
        }
        let Some(seg) = seg else {
            self.other_out += 1;
            return;
        };
        self.syns += seg.syn as u64;
        self.fins += seg.fin as u64;
        if seg.syn && self.opened.insert((seg.src.0, seg.dst.0, seg.dst.1)) {
            self.connections += 1;
        }
        match seg.class {
            Class::Data { seq, len } => {
                // A large send leaves as segments of `gso` bytes: count those.
                let segments = |bytes: u32| if gso == 0 { 1 } else { bytes.div_ceil(gso as u32) as u64 };
                self.data_out += segments(len);
                self.payload_out += len as u64;
                let end = seq.wrapping_add(len);
                match self.sent_end.entry((seg.src.0, seg.dst.0, seg.dst.1)) {
                    Entry::Vacant(v) => {
                        v.insert(end);
                    }
                    Entry::Occupied(mut o) => {
                        let sent = *o.get();
                        // What it carries from before the end of what was sent goes
                        // again, each of its segments (a resend from a hole may run on
                        // into new data).
                        if after(sent, seq) {
                            self.retransmits += segments(if after(end, sent) { sent.wrapping_sub(seq) } else { len });
                        }
                        if after(end, sent) {
                            *o.get_mut() = end;
                        }
                    }
                }
            }
            Class::PureAck => self.acks_out += 1,
            Class::Other => self.other_out += 1,
        }
    }

    /// A frame received; with `gso`, one GRO merged from segments of that
    /// size, each counted as a data segment.
    pub fn inbound(&mut self, frame: &[u8], gso: u16) {
        self.inbound_parsed(Segment::parse(frame).as_ref(), gso);
    }

    /// An incoming frame already parsed (`None`: not a TCP segment); `gso`,
    /// for a frame GRO merged, the size of the segments it was merged from.
    pub(super) fn inbound_parsed(&mut self, seg: Option<&Segment>, gso: u16) {
        if self.skips(seg, false) {
            return;
        }
        let Some(seg) = seg else {
            self.other_in += 1;
            return;
        };
        match seg.class {
            Class::Data { seq, len } => {
                // A merged segment stands for the segments on the wire it was merged from.
                self.data_in += if gso == 0 { 1 } else { len.div_ceil(gso as u32) as u64 };
                self.payload_in += len as u64;
                let (end, beyond) = self.received_end.entry((seg.dst.1, seg.src.1, seg.src.0)).or_insert((seq, Vec::new()));
                if after(seq, *end) {
                    self.out_of_order += 1;
                    // Kept to fill the gap later: a segment that continues a range
                    // extends it, so a stream behind one gap is one range; a few
                    // ranges suffice to follow a stream.
                    let seg_end = seq.wrapping_add(len);
                    if let Some(r) = beyond.iter_mut().find(|r| r.1 == seq) {
                        r.1 = seg_end;
                    } else if beyond.len() < 64 {
                        beyond.push((seq, seg_end));
                    }
                } else if after(seq.wrapping_add(len), *end) {
                    *end = seq.wrapping_add(len);
                    // The ranges the filled gap now reaches join the in-order data.
                    while let Some(i) = beyond.iter().position(|&(s, _)| !after(s, *end)) {
                        let (_, e) = beyond.swap_remove(i);
                        if after(e, *end) {
                            *end = e;
                        }
                    }
                }
            }
            Class::PureAck => self.acks_in += 1,
            Class::Other => self.other_in += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::endpoint::{tcp_frame, Addr};

    fn seg(seq: u32, len: usize) -> Vec<u8> {
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 1 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 2 };
        tcp_frame(a, b, 1, seq, 1, 1000, false, &vec![7; len]).bytes
    }

    #[test]
    fn data_acks_and_garbage_are_told_apart() {
        assert_eq!(classify(&seg(100, 10)), Class::Data { seq: 100, len: 10 });
        assert_eq!(classify(&seg(100, 0)), Class::PureAck);
        assert_eq!(classify(&[0u8; 20]), Class::Other);
    }

    #[test]
    fn a_segment_that_ends_inside_what_was_sent_is_a_retransmission() {
        let mut t = Tally::default();
        t.outbound(&seg(0, 100), 0);
        t.outbound(&seg(100, 100), 0);
        t.outbound(&seg(0, 100), 0);
        t.outbound(&seg(200, 100), 0);
        assert_eq!((t.data_out, t.retransmits, t.payload_out), (4, 1, 400));
    }

    #[test]
    fn a_syn_sent_again_is_not_another_connection() {
        let mut t = Tally::default();
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 1 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 2 };
        let syn = |to: Addr| {
            let mut f = tcp_frame(a, to, 1, 0, 0, 1000, false, &[]).bytes;
            f[14 + 20 + 13] = 0x02; // SYN alone (the tally does not check checksums)
            f
        };
        t.outbound(&syn(b), 0);
        t.outbound(&syn(b), 0);
        t.outbound(&syn(Addr { port: 3, ..b }), 0);
        assert_eq!((t.syns, t.connections), (3, 2));
    }

    #[test]
    fn a_port_tally_counts_the_connections_on_that_port_alone() {
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 1 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 2 };
        let other = Addr { port: 3, ..a };
        let mut t = Tally::of_port(1);
        t.outbound(&seg(0, 100), 0);
        t.outbound(&tcp_frame(other, b, 1, 0, 1, 1000, false, &[7; 100]).bytes, 0);
        t.inbound(&tcp_frame(b, a, 1, 0, 1, 1000, false, &[]).bytes, 0);
        t.inbound(&tcp_frame(b, other, 1, 0, 1, 1000, false, &[]).bytes, 0);
        t.inbound(&[0u8; 20], 0);
        assert_eq!((t.data_out, t.payload_out, t.acks_in, t.other_in), (1, 100, 1, 0));
        assert_eq!(classify_on(&seg(0, 100), Some(2), true), Class::Other);
        assert_eq!(classify_on(&seg(0, 100), Some(2), false), Class::Data { seq: 0, len: 100 }, "port 2 is the receiver's");
    }

    #[test]
    fn connections_are_told_apart() {
        let mut t = Tally::default();
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 1 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 2 };
        let other = Addr { port: 3, ..b };
        t.outbound(&seg(0, 100), 0);
        t.outbound(&tcp_frame(a, other, 1, 0, 1, 1000, false, &[7; 100]).bytes, 0);
        assert_eq!(t.retransmits, 0, "the same sequence numbers on another connection are new data");
    }

    #[test]
    fn after_one_gap_is_filled_only_the_segments_that_came_behind_it_were_out_of_order() {
        let mut t = Tally::default();
        t.inbound(&seg(1000, 100), 0);
        // 1100..1200 is lost; 200 segments come behind the gap, more than ranges are kept.
        for k in 0..200 {
            t.inbound(&seg(1200 + 100 * k, 100), 0);
        }
        t.inbound(&seg(1100, 100), 0);
        for k in 200..300 {
            t.inbound(&seg(1200 + 100 * k, 100), 0);
        }
        assert_eq!(t.out_of_order, 200);
    }

    #[test]
    fn a_large_send_sent_again_counts_each_of_its_segments() {
        let mut t = Tally::default();
        t.outbound(&seg(1000, 4000), 1000);
        t.outbound(&seg(1000, 1000), 0);
        t.outbound(&seg(2000, 3000), 1000);
        assert_eq!((t.data_out, t.retransmits), (8, 4));
        // From a hole on into new data: the 3,000 bytes sent before go again.
        t.outbound(&seg(2000, 5000), 1000);
        assert_eq!((t.data_out, t.retransmits), (13, 7));
    }
}
