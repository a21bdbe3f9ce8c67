//! The stack against itself over a perfect wire: set-up, transfer, loss,
//! window opening and many sockets.

use super::*;
use smoltcp::wire::Ipv4Address;

const S: Sock = Sock(0);

fn cfg(last: u8) -> StackConfig {
    StackConfig { mac: [2, 0, 0, 0, 0, last], ip: [10, 0, 0, last], mtu: 1500, neighbors: Default::default(), tso: false }
}

fn socket() -> SocketConfig {
    SocketConfig {
        rx_buffer: 65_535,
        tx_buffer: 65_535,
        nagle: true,
        ack_delay: Some(Duration::from_ms(10)),
        ack_policy: AckPolicy::EverySecondSegment,
        min_rto: Duration::from_ms(1000),
        cubic: false,
        byte_counting: false,
        tso_defer: true,
    }
}

/// Run two stacks against each other over a perfect wire, 10 µs a hop,
/// `drop` deciding which frames (by count) are lost. Returns what arrived,
/// the most data segments `a` sent in one poll, and when it had all arrived.
fn exchange(a: &mut Stack, b: &mut Stack, bytes: &[u8], drop: impl Fn(usize) -> bool) -> (Vec<u8>, usize, Time) {
    exchange_with(a, b, bytes.len(), |a, sent| a.send(S, &bytes[sent..]), drop)
}

/// As `exchange`, for `len` bytes that `send` queues from the count sent so far on.
fn exchange_with(
    a: &mut Stack,
    b: &mut Stack,
    len: usize,
    mut send: impl FnMut(&mut Stack, usize) -> usize,
    drop: impl Fn(usize) -> bool,
) -> (Vec<u8>, usize, Time) {
    let mut got = Vec::new();
    let mut sent = 0;
    let mut now = Time::ZERO;
    let mut n = 0;
    let mut burst = 0;
    for _ in 0..200_000 {
        sent += send(a, sent);
        if sent == len && a.send_queue(S) == 0 {
            a.close(S);
        }
        let before = a.tally.data_out;
        let (out_a, out_b) = (a.poll(now), b.poll(now));
        burst = burst.max((a.tally.data_out - before) as usize);
        let quiet = out_a.is_empty() && out_b.is_empty();
        for f in out_a {
            n += 1;
            if !drop(n) {
                b.input(f);
            }
        }
        for f in out_b {
            a.input(f);
        }
        got.extend(b.recv(S, 1 << 20));
        if b.peer_finished(S) {
            return (got, burst, now);
        }
        let step = now + Duration::from_us(10);
        // Nothing on the wire: skip ahead to the next timer.
        now = if quiet { [a.poll_at(now), b.poll_at(now)].into_iter().flatten().min().unwrap_or(step).max(step) } else { step };
    }
    panic!("transfer did not finish: {} of {} bytes, a {} b {}", got.len(), len, a.state(S), b.state(S));
}

fn pair() -> (Stack, Stack) {
    pair_with(&socket())
}

/// A pair whose delayed ACK waits 200 ms, as NT's and BSD's did.
fn slow_pair() -> (Stack, Stack) {
    pair_with(&SocketConfig { ack_delay: Some(Duration::from_ms(200)), ..socket() })
}

/// A pair whose sender `a` leaves segmentation and TCP checksums to its adapter.
fn tso_pair(socket: &SocketConfig) -> (Stack, Stack) {
    let (mut a, mut b) = (Stack::new(&StackConfig { tso: true, ..cfg(1) }, 1), Stack::new(&cfg(2), 2));
    a.open(socket);
    b.open(socket);
    b.listen(S, 5001).unwrap();
    a.connect(S, [10, 0, 0, 2], 5001, 40000).unwrap();
    (a, b)
}

fn pair_with(socket: &SocketConfig) -> (Stack, Stack) {
    let (mut a, mut b) = (Stack::new(&cfg(1), 1), Stack::new(&cfg(2), 2));
    a.open(socket);
    b.open(socket);
    b.listen(S, 5001).unwrap();
    a.connect(S, [10, 0, 0, 2], 5001, 40000).unwrap();
    (a, b)
}

#[test]
fn a_transfer_is_set_up_carried_in_order_and_torn_down() {
    let (mut a, mut b) = pair();
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let (got, _, _) = exchange(&mut a, &mut b, &data, |_| false);
    assert_eq!(got, data);
    assert_eq!(a.tally.syns, 1);
    assert!(a.tally.fins >= 1);
    assert_eq!(a.tally.retransmits, 0);
    assert!(a.tally.data_out >= 300_000 / 1460);
}

#[test]
fn bytes_made_as_segments_take_them_arrive_as_the_stream_across_wraps_and_losses() {
    use crate::wire::endpoint::{matches_pattern, pattern_into};
    // A send buffer of no whole number of segments wraps mid-segment; lost
    // frames are sent again from the stream's offsets, not from stored bytes.
    let (mut a, mut b) = pair_with(&SocketConfig { tx_buffer: 10_000, ..socket() });
    let len = 200_000;
    let (got, _, _) = exchange_with(&mut a, &mut b, len, |a, sent| a.send_made(S, len - sent, pattern_into, sent as u64), |n| n % 23 == 5);
    assert!(a.tally.retransmits > 0, "frames were lost and sent again");
    assert_eq!(got.len(), len);
    assert!(matches_pattern(0, &got), "the stream's bytes, in order");
}

#[test]
fn congestion_control_opens_the_window_on_a_loss_free_lan() {
    let (mut a, mut b) = pair();
    let data = vec![7u8; 1_000_000];
    let (got, burst, _) = exchange(&mut a, &mut b, &data, |_| false);
    assert_eq!(got.len(), data.len());
    // Slow start from two segments grows by one per ACK: by the end a whole
    // 64 KB window's worth (44 segments) less what the ACKs cover goes at once.
    assert!(burst >= 20, "at most {burst} segments in one go: the window stayed shut");
}

#[test]
fn a_new_connection_is_not_held_by_the_delayed_ack() {
    let (mut a, mut b) = slow_pair();
    // With smoltcp's own initial window of 2,048 bytes the first flight was one
    // full segment (Nagle held the rest) and the receiver waited 200 ms for a
    // second. Two full segments go now; fourteen arrive well within 20 ms.
    let data = [3u8; 14 * 1460];
    let (mut sent, mut got, mut now) = (0, 0, Time::ZERO);
    while now < Time::ZERO + Duration::from_ms(20) {
        sent += a.send(S, &data[sent..]);
        for f in a.poll(now) {
            b.input(f);
        }
        for f in b.poll(now) {
            a.input(f);
        }
        got += b.recv(S, 1 << 20).len();
        now += Duration::from_us(10);
    }
    assert_eq!(got, data.len(), "all of it within 20 ms");
}

#[test]
fn lost_segments_are_retransmitted_and_counted() {
    let (mut a, mut b) = pair();
    let data: Vec<u8> = (0..200_000u32).map(|i| (i ^ (i >> 8)) as u8).collect();
    let (got, _, _) = exchange(&mut a, &mut b, &data, |n| n % 37 == 5);
    assert_eq!(got, data);
    assert!(a.tally.retransmits > 0, "losses were repaired by retransmission");
}

#[test]
fn many_sockets_share_one_interface_each_with_its_own_connection() {
    let (mut a, mut b) = (Stack::new(&cfg(1), 1), Stack::new(&cfg(2), 2));
    for i in 0..5u16 {
        let (sa, sb) = (a.open(&socket()), b.open(&socket()));
        b.listen(sb, 80).unwrap();
        a.connect(sa, [10, 0, 0, 2], 80, 1024 + i).unwrap();
    }
    let mut now = Time::ZERO;
    let mut sent = [0usize; 5];
    let mut got = [0usize; 5];
    for _ in 0..10_000 {
        for (i, n) in sent.iter_mut().enumerate() {
            let want = 20_000 * (i + 1);
            if *n < want {
                *n += a.send(Sock(i), &vec![i as u8; want - *n]);
            }
        }
        for f in a.poll(now) {
            b.input(f);
        }
        for f in b.poll(now) {
            a.input(f);
        }
        for (i, g) in got.iter_mut().enumerate() {
            let bytes = b.recv(Sock(i), 1 << 20);
            // Each listening socket took exactly one connection, so it holds one stream.
            assert!(bytes.iter().all(|x| *x == bytes.first().copied().unwrap_or(0)));
            *g += bytes.len();
        }
        now += Duration::from_us(10);
    }
    let mut sizes = got.to_vec();
    sizes.sort();
    assert_eq!(sizes, vec![20_000, 40_000, 60_000, 80_000, 100_000]);
    assert_eq!(a.tally.retransmits, 0);
}

/// `a` sends two full segments to `b` (whose socket acknowledges by `policy`,
/// delayed ACKs up to 200 ms); `b` reads `read` bytes once both are in. Returns
/// the pure ACKs `b` sent in the first 100 ms after the handshake.
fn acks_for_two_segments(policy: AckPolicy, read: usize) -> u64 {
    let (mut a, mut b) = (Stack::new(&cfg(1), 1), Stack::new(&cfg(2), 2));
    a.open(&socket());
    b.open(&SocketConfig { ack_delay: Some(Duration::from_ms(200)), ack_policy: policy, ..socket() });
    b.listen(S, 5001).unwrap();
    a.connect(S, [10, 0, 0, 2], 5001, 40000).unwrap();
    let (mut now, mut sent, mut acks, mut done) = (Time::ZERO, 0, None, false);
    while now < Time::ZERO + Duration::from_ms(100) {
        if a.established(S) && sent == 0 {
            sent = a.send(S, &[5u8; 2 * 1460]);
            acks = Some(b.tally.acks_out);
        }
        for f in a.poll(now) {
            b.input(f);
        }
        for f in b.poll(now) {
            a.input(f);
        }
        if !done && b.readable(S) == 2 * 1460 {
            done = true;
            b.recv(S, read);
        }
        now += Duration::from_us(10);
    }
    assert!(done, "both segments arrived");
    b.tally.acks_out - acks.expect("the connection was set up")
}

#[test]
fn a_bsd_receiver_acknowledges_when_its_reads_open_the_window() {
    assert_eq!(acks_for_two_segments(AckPolicy::EverySecondSegment, 0), 1, "smoltcp's rule: the second segment is ACKed at once");
    assert_eq!(acks_for_two_segments(AckPolicy::WindowUpdate, 0), 0, "nothing read: only the delayed ACK, after 200 ms");
    assert_eq!(acks_for_two_segments(AckPolicy::WindowUpdate, 1000), 0, "a read of under two segments is no window update");
    assert_eq!(acks_for_two_segments(AckPolicy::WindowUpdate, 2 * 1460), 1, "a read of two segments sends the window update");
}

#[test]
fn a_listener_on_another_lane_resolves_a_new_station_without_a_retransmission() {
    // Neither knows the other; `b` listens on its second socket, whose interface
    // did not see `a`'s ARP request (the first socket's answered it): it asks
    // for `a`'s address itself, holds its SYN-ACK meanwhile, and sends it once
    // the reply (which every lane takes in) arrives.
    let (mut a, mut b) = (Stack::new(&cfg(1), 1), Stack::new(&cfg(2), 2));
    a.open(&socket());
    b.open(&socket());
    let listener = b.open(&socket());
    b.listen(listener, 5001).unwrap();
    a.connect(S, [10, 0, 0, 2], 5001, 40000).unwrap();
    let mut now = Time::ZERO;
    while !a.established(S) && now < Time::ZERO + Duration::from_ms(100) {
        for f in a.poll(now) {
            b.input(f);
        }
        for f in b.poll(now) {
            a.input(f);
        }
        now += Duration::from_us(10);
    }
    assert!(a.established(S), "the handshake completed within 100 ms, with no SYN sent again");
    assert_eq!(a.tally.syns, 1);
}

#[test]
fn with_segmentation_offload_the_stack_hands_over_large_sends_of_whole_segments() {
    // `a` leaves segmentation and TCP checksums to its adapter; cut as the
    // adapter cuts them, its sends reach `b` (which verifies every checksum)
    // exactly, in full segments but where the data queued ran out.
    let (mut a, mut b) = tso_pair(&socket());
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let (mut sent, mut got, mut now) = (0, Vec::new(), Time::ZERO);
    let (mut large, mut segments, mut full) = (0, 0, 0);
    while got.len() < data.len() && now < Time::ZERO + Duration::from_ms(500) {
        sent += a.send(S, &data[sent..]);
        for f in a.poll(now) {
            large += (f.meta.gso > 0) as u32;
            assert!(f.meta.gso == 0 || f.meta.gso == 1460, "the MSS");
            for seg in crate::nic::firmware::tso::cut(&f.bytes, f.meta.gso) {
                if let tally::Class::Data { len, .. } = tally::classify(&seg) {
                    segments += 1;
                    full += (len == 1460) as u32;
                }
                b.input(Box::new(Frame { bytes: seg, meta: Default::default() }));
            }
        }
        for f in b.poll(now) {
            a.input(f);
        }
        got.extend(b.recv(S, 1 << 20));
        now += Duration::from_us(10);
    }
    assert_eq!(got, data, "every byte, in order, through segments cut from large sends");
    assert!(large > 5 && segments > 200, "{large} large sends, {segments} segments");
    assert!(full * 100 >= segments * 95, "{full} of {segments} segments full");
    assert_eq!(a.tally.data_out, segments as u64, "the tally counts the segments a large send becomes");
}

proptest::proptest! {
    /// The vendored smoltcp writes an IPv4 header whole with its checksum summed
    /// from the fields (third_party/smoltcp/PATCHES.md): etherparse reads the
    /// same fields back and finds the checksum right.
    #[test]
    fn an_emitted_ipv4_header_has_its_fields_and_a_right_checksum(
        src: [u8; 4], dst: [u8; 4], payload_len in 0usize..65_516, hop_limit: u8, protocol: u8,
    ) {
        use smoltcp::phy::ChecksumCapabilities;
        use smoltcp::wire::{IpProtocol, Ipv4Packet, Ipv4Repr};
        let repr = Ipv4Repr {
            src_addr: Ipv4Address::from_octets(src),
            dst_addr: Ipv4Address::from_octets(dst),
            next_header: IpProtocol::from(protocol),
            payload_len,
            hop_limit,
        };
        let mut bytes = vec![0xaa; 20];
        repr.emit(&mut Ipv4Packet::new_unchecked(&mut bytes), &ChecksumCapabilities::default());
        let (h, _) = etherparse::Ipv4Header::from_slice(&bytes).expect("a header etherparse reads");
        proptest::prop_assert_eq!(h.header_checksum, h.calc_header_checksum());
        proptest::prop_assert_eq!((h.source, h.destination, h.time_to_live, h.protocol.0), (src, dst, hop_limit, protocol));
        proptest::prop_assert_eq!((h.total_len as usize, h.identification, h.dont_fragment, h.more_fragments), (payload_len + 20, 0, true, false));
        proptest::prop_assert_eq!((h.fragment_offset.value(), h.dscp.value(), h.ecn.value(), h.options.len()), (0, 0, 0, 0));
    }
}

#[test]
fn a_segment_carrying_two_mss_is_acknowledged_at_once() {
    use crate::nic::firmware::gro::Gro;
    let (mut a, mut b) = slow_pair();
    let mut now = Time::ZERO;
    // The handshake, then the initial window's two full segments.
    while a.state(S) != "ESTABLISHED" || b.state(S) != "ESTABLISHED" {
        for f in a.poll(now) {
            b.input(f);
        }
        for f in b.poll(now) {
            a.input(f);
        }
        now += Duration::from_us(10);
    }
    // Three segments' worth: the window takes two, neither the last (PSH) one.
    a.send(S, &[5u8; 3 * 1460]);
    let data = a.poll(now);
    assert_eq!(data.len(), 2);
    // Large receive offload merges them: the stack sees one 2,920-byte
    // segment. (smoltcp leaves every IPv4 ID 0; the merge wants them in turn.)
    let mut lro = Gro::new(Duration::from_us(20));
    for (id, f) in data.iter().enumerate() {
        let mut bytes = f.bytes.clone();
        bytes[18..20].copy_from_slice(&(id as u16).to_be_bytes());
        crate::nic::firmware::csum::insert(&mut bytes).unwrap();
        assert!(lro.push(&bytes, now).is_empty());
    }
    let merged = lro.expire(now + Duration::from_us(20));
    assert_eq!(merged.len(), 1);
    b.input(Box::new(Frame { bytes: merged[0].bytes.clone(), meta: Default::default() }));
    let acks = b.poll(now + Duration::from_us(30));
    assert_eq!(b.recv(S, 1 << 20).len(), 2 * 1460);
    // Over one MSS unacknowledged: the ACK goes now, not after the 200 ms delay.
    assert_eq!(acks.len(), 1, "no ACK for two segments' worth of data");
}

#[test]
fn a_lost_last_segment_waits_for_the_least_retransmission_timeout() {
    // The transfer's last data segment is lost: no later segment brings
    // duplicate ACKs, so only the retransmission timer recovers it, after
    // RFC 6298's second or Linux's 200 ms.
    let data = vec![9u8; 10 * 1460];
    let finish = |min_rto_ms| {
        let (mut a, mut b) = pair_with(&SocketConfig { min_rto: Duration::from_ms(min_rto_ms), ..socket() });
        let (got, _, lossless) = exchange(&mut a, &mut b, &data, |_| false);
        assert_eq!(got.len(), data.len());
        let frames = a.tally.data_out + a.tally.acks_out + a.tally.syns;
        let (mut a, mut b) = pair_with(&SocketConfig { min_rto: Duration::from_ms(min_rto_ms), ..socket() });
        let last = frames as usize - a.tally.fins.max(1) as usize;
        let (got, _, end) = exchange(&mut a, &mut b, &data, |n| n == last);
        assert_eq!((got.len(), a.tally.retransmits), (data.len(), 1), "{min_rto_ms} ms: frame {last} of {frames} lost");
        end.since(Time::ZERO + Duration::ZERO).as_secs_f64() - lossless.since(Time::ZERO).as_secs_f64()
    };
    let (rfc, linux) = (finish(1000), finish(200));
    assert!((0.9..1.1).contains(&rfc), "RFC 6298: {rfc:.3} s late");
    assert!((0.15..0.3).contains(&linux), "Linux: {linux:.3} s late");
}

#[test]
fn several_losses_in_one_window_are_repaired_without_the_timer() {
    // Three segments of one window lost: fast retransmit repairs the first, and
    // each partial ACK that follows the next (NewReno, RFC 6582) at once; Reno
    // alone left the later holes to the 1 s retransmission timer.
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let (mut a, mut b) = pair();
    let (_, _, lossless) = exchange(&mut a, &mut b, &data, |_| false);
    let (mut a, mut b) = pair();
    let (got, _, end) = exchange(&mut a, &mut b, &data, |n| [60, 63, 66].contains(&n));
    assert_eq!(got, data);
    let late = end.since(Time::ZERO).as_secs_f64() - lossless.since(Time::ZERO).as_secs_f64();
    assert!(late < 0.05, "{late:.3} s later than without loss, {} retransmissions", a.tally.retransmits);
    assert_eq!(a.tally.retransmits, 3, "each lost segment sent once more, nothing else");
    // Only segments that came while a gap was open arrived out of order: at
    // most a window's worth (45 segments) for each of the three.
    assert!(b.tally.out_of_order < 3 * 45, "{} segments counted out of order", b.tally.out_of_order);
}

/// Segments per large send over a transfer from a TSO sender to a receiver
/// that acknowledges every second segment, so the ACKs open the window a few
/// segments at a time.
fn segments_per_send(tso_defer: bool) -> f64 {
    let socket = SocketConfig { rx_buffer: 1 << 20, tx_buffer: 1 << 20, tso_defer, ..socket() };
    let (mut a, mut b) = tso_pair(&socket);
    let data: Vec<u8> = (0..4_000_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let (mut sent, mut got, mut now, mut sends) = (0, Vec::new(), Time::ZERO, 0u64);
    // The wire: two segments every 10 µs step (about 2.3 Gb/s).
    let mut wire = std::collections::VecDeque::new();
    while got.len() < data.len() && now < Time::ZERO + Duration::from_ms(2000) {
        sent += a.send(S, &data[sent..]);
        for f in a.poll(now) {
            sends += matches!(tally::classify(&f.bytes), tally::Class::Data { .. }) as u64;
            wire.extend(crate::nic::firmware::tso::cut(&f.bytes, f.meta.gso));
        }
        for seg in wire.drain(..wire.len().min(2)) {
            b.input(Box::new(Frame { bytes: seg, meta: Default::default() }));
        }
        for f in b.poll(now) {
            a.input(f);
        }
        got.extend(b.recv(S, 1 << 22));
        now += Duration::from_us(10);
    }
    assert_eq!(got, data, "every byte, in order");
    a.tally.data_out as f64 / sends as f64
}

#[test]
fn tso_deferral_waits_for_the_ack_near_and_sends_larger() {
    // Linux's tcp_tso_should_defer (third_party/smoltcp/PATCHES.md): a send the
    // window cuts short waits while an ACK is due, so the sends come larger.
    let (eager, deferring) = (segments_per_send(false), segments_per_send(true));
    assert!(deferring > 2.0 * eager, "{deferring:.1} segments a send deferring, {eager:.1} without");
}

/// A transmit buffer that is not a whole number of segments wraps inside one:
/// the segment taken across the wrap is whole (its two parts joined), not cut
/// into a runt there, and the bytes arrive intact, resent ones too.
#[test]
fn a_segment_across_the_transmit_buffer_wrap_is_whole() {
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 13 + i / 509) as u8).collect();
    let socket = SocketConfig { tx_buffer: 16_384, ..socket() };
    let (mut a, mut b) = pair_with(&socket);
    let (got, _, _) = exchange(&mut a, &mut b, &data, |_| false);
    assert_eq!(got, data);
    assert_eq!(a.tally.data_out, data.len().div_ceil(1460) as u64, "one runt a wrap would add 18");
    let (mut a, mut b) = pair_with(&socket);
    let (got, _, _) = exchange(&mut a, &mut b, &data, |n| n % 37 == 0);
    assert_eq!(got, data);
    assert!(a.tally.retransmits > 0);
}

/// When a transfer of `bytes` over an unlimited wire ends, with the sender's
/// window counted per ACK or by the bytes each ACK covers.
fn finished(byte_counting: bool, bytes: usize) -> Time {
    let socket =
        SocketConfig { rx_buffer: 4 << 20, tx_buffer: 4 << 20, ack_delay: Some(Duration::from_us(100)), byte_counting, ..socket() };
    let (mut a, mut b) = pair_with(&socket);
    let data = vec![5u8; bytes];
    let (got, _, end) = exchange(&mut a, &mut b, &data, |_| false);
    assert_eq!(got.len(), bytes);
    end
}

#[test]
fn byte_counting_opens_the_window_by_the_segments_each_ack_covers() {
    // The receiver acknowledges every second segment: counted per ACK, slow
    // start grows the window by half each round trip; counted by bytes
    // (RFC 3465, Linux), it doubles it, so the same transfer needs fewer
    // round trips.
    let (per_ack, by_bytes) = (finished(false, 2_000_000), finished(true, 2_000_000));
    assert!(by_bytes.ps() * 10 < per_ack.ps() * 8, "by bytes {by_bytes:?}, per ACK {per_ack:?}");
}
