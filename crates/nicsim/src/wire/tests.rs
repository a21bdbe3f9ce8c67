//! Property tests: every header type survives build -> parse, every checksum we
//! emit verifies, and hostile bytes never panic the parser.

use etherparse::{NetHeaders, PacketHeaders, TransportHeader};
use proptest::prelude::*;

use crate::wire::{build, verify_checksums, Headers, TcpFields, View, L3, L4};

fn l4() -> impl Strategy<Value = L4> {
    prop_oneof![
        (any::<u16>(), any::<u16>()).prop_map(|(s, d)| L4::Udp { src_port: s, dst_port: d }),
        (any::<u16>(), any::<u16>(), any::<u32>(), proptest::option::of(any::<u32>()), any::<u16>(), any::<bool>(), any::<bool>())
            .prop_map(|(s, d, seq, ack, window, psh, fin)| L4::Tcp(TcpFields { src_port: s, dst_port: d, seq, ack, window, psh, fin })),
    ]
}

fn l3() -> impl Strategy<Value = L3> {
    prop_oneof![
        // Raw EtherTypes: any value above the 802.3 length range, except the ones
        // that name a header etherparse would then try to parse.
        (0x0600u16..=0xffff)
            .prop_filter("not IP, VLAN or ARP", |t| ![0x0800, 0x86dd, 0x8100, 0x88a8, 0x9100, 0x0806, 0x8847, 0x8848, 0x88e5].contains(t))
            .prop_map(|ether_type| L3::Raw { ether_type }),
        (any::<[u8; 4]>(), any::<[u8; 4]>(), 1u8.., any::<u16>(), l4()).prop_map(|(src, dst, ttl, id, l4)| L3::Ipv4 {
            src,
            dst,
            ttl,
            id,
            l4
        }),
        (any::<[u8; 16]>(), any::<[u8; 16]>(), any::<u8>(), l4()).prop_map(|(src, dst, hop_limit, l4)| L3::Ipv6 {
            src,
            dst,
            hop_limit,
            l4
        }),
    ]
}

fn headers() -> impl Strategy<Value = Headers> {
    (any::<[u8; 6]>(), any::<[u8; 6]>(), proptest::option::of(0u16..4096), l3()).prop_map(|(dst_mac, src_mac, vlan, l3)| Headers {
        dst_mac,
        src_mac,
        vlan,
        l3,
    })
}

fn same_l4(built: &L4, parsed: &Option<TransportHeader>) -> bool {
    match (built, parsed) {
        (L4::Udp { src_port, dst_port }, Some(TransportHeader::Udp(u))) => u.source_port == *src_port && u.destination_port == *dst_port,
        (L4::Tcp(t), Some(TransportHeader::Tcp(h))) => {
            h.source_port == t.src_port
                && h.destination_port == t.dst_port
                && h.sequence_number == t.seq
                && h.ack == t.ack.is_some()
                && (t.ack.is_none() || Some(h.acknowledgment_number) == t.ack)
                && h.window_size == t.window
                && h.psh == t.psh
                && h.fin == t.fin
        }
        _ => false,
    }
}

/// EtherType, VLAN, network, transport and payload offsets of a parsed frame.
type Offsets = Option<(u16, Option<u16>, usize, Option<usize>, std::ops::Range<usize>)>;

/// The offsets etherparse's whole-packet slicing gives: what `View::parse`
/// computed before it sliced layer by layer.
fn reference_view(bytes: &[u8]) -> Offsets {
    use etherparse::{LinkExtSlice, LinkSlice, NetSlice, SlicedPacket, TransportSlice};
    let at = |part: &[u8]| part.as_ptr() as usize - bytes.as_ptr() as usize;
    let p = SlicedPacket::from_ethernet(bytes).ok()?;
    let Some(LinkSlice::Ethernet2(eth)) = &p.link else { return None };
    let (mut ether_type, mut vlan, mut l3) = (eth.ether_type().0, None, 14);
    for ext in &p.link_exts {
        if let LinkExtSlice::Vlan(v) = ext {
            vlan.get_or_insert(v.vlan_identifier().value());
            ether_type = v.ether_type().0;
            l3 = at(v.payload_slice());
        }
    }
    let (mut l4, mut payload) = (None, l3..bytes.len());
    let ip = match &p.net {
        Some(NetSlice::Ipv4(v4)) => Some(v4.payload().payload),
        Some(NetSlice::Ipv6(v6)) => Some(v6.payload().payload),
        _ => None,
    };
    if let Some(data) = ip {
        l4 = Some(at(data));
        payload = at(data)..at(data) + data.len();
    }
    match &p.transport {
        Some(TransportSlice::Udp(u)) => payload = at(u.slice()) + 8..at(u.slice()) + u.slice().len(),
        Some(TransportSlice::Tcp(t)) => payload = at(t.slice()) + t.header_len()..at(t.slice()) + t.slice().len(),
        _ => {}
    }
    Some((ether_type, vlan, l3, l4, payload))
}

fn view_offsets(bytes: &[u8]) -> Offsets {
    View::parse(bytes).ok().map(|v| (v.ether_type.0, v.vlan, v.l3_offset, v.l4.map(|(at, _)| at), v.payload))
}

proptest! {
    #[test]
    fn layer_by_layer_parsing_agrees_with_whole_packet_slicing(
        h in headers(),
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
    ) {
        let bytes = build(&h, &payload).unwrap();
        prop_assert_eq!(view_offsets(&bytes), reference_view(&bytes));
        // Truncated and corrupted frames are taken or refused alike.
        let short = &bytes[..cut.index(bytes.len() + 1)];
        prop_assert_eq!(view_offsets(short), reference_view(short));
        let mut bent = bytes.clone();
        let i = flip.index(bent.len());
        bent[i] = !bent[i];
        prop_assert_eq!(view_offsets(&bent), reference_view(&bent));
    }

    #[test]
    fn layer_by_layer_parsing_agrees_on_hostile_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        prop_assert_eq!(view_offsets(&bytes), reference_view(&bytes));
    }

    #[test]
    fn build_then_parse_round_trips(h in headers(), payload in proptest::collection::vec(any::<u8>(), 0..1600)) {
        let bytes = build(&h, &payload).unwrap();
        prop_assert!(bytes.len() >= 60);
        let p = PacketHeaders::from_ethernet_slice(&bytes).unwrap();
        let eth = p.link.clone().and_then(|l| l.ethernet2()).unwrap();
        prop_assert_eq!(eth.source, h.src_mac);
        prop_assert_eq!(eth.destination, h.dst_mac);
        let view = verify_checksums(&bytes).unwrap();
        prop_assert_eq!(view.vlan, h.vlan);
        match &h.l3 {
            L3::Raw { ether_type } => {
                prop_assert_eq!(view.ether_type.0, *ether_type);
                prop_assert_eq!(&bytes[view.payload.start..view.payload.start + payload.len()], &payload[..]);
            }
            L3::Ipv4 { src, dst, ttl, id, l4 } => {
                let Some(NetHeaders::Ipv4(ip, _)) = &p.net else { panic!("no IPv4") };
                prop_assert_eq!((ip.source, ip.destination, ip.time_to_live, ip.identification), (*src, *dst, *ttl, *id));
                prop_assert!(same_l4(l4, &p.transport));
                prop_assert_eq!(&bytes[view.payload.clone()], &payload[..]);
            }
            L3::Ipv6 { src, dst, hop_limit, l4 } => {
                let Some(NetHeaders::Ipv6(ip, _)) = &p.net else { panic!("no IPv6") };
                prop_assert_eq!((ip.source, ip.destination, ip.hop_limit), (*src, *dst, *hop_limit));
                prop_assert!(same_l4(l4, &p.transport));
                prop_assert_eq!(&bytes[view.payload.clone()], &payload[..]);
            }
        }
    }

    #[test]
    fn a_flipped_bit_in_an_ip_frame_fails_verification(h in headers(), payload in proptest::collection::vec(any::<u8>(), 1..200), bit in any::<prop::sample::Index>()) {
        prop_assume!(!matches!(h.l3, L3::Raw { .. }));
        let mut bytes = build(&h, &payload).unwrap();
        let view = View::parse(&bytes).unwrap();
        // Flip one bit of the UDP/TCP payload: the transport checksum must catch it.
        let at = view.payload.start + bit.index(view.payload.len());
        bytes[at] ^= 0x10;
        prop_assert!(verify_checksums(&bytes).is_err());
    }

    #[test]
    fn hostile_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = View::parse(&bytes);
        let _ = verify_checksums(&bytes);
    }
}

#[test]
fn a_macsec_header_too_short_is_refused_as_etherparse_refuses_it() {
    let mut bytes = vec![0u8; 12];
    bytes.extend([0x88, 0xe5, 0]);
    assert!(View::parse(&bytes).is_err());
    assert_eq!(reference_view(&bytes), None);
}
