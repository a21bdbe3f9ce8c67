//! One TCP/IP stack, smoltcp, driven by the simulation's clock, with any number
//! of sockets: frames go in and come out as bytes, and the stack only ever sees
//! simulated time. Each socket has an interface of its own with the stack's
//! addresses (`lane`), and a frame goes to the lane of its connection, so the
//! cost of a frame does not grow with the number of sessions. The same stack runs as a host's own stack, as an ideal peer's,
//! or as a TCP offload adapter's firmware; where it runs decides only who pays
//! for it and when.
//!
//! smoltcp was chosen over writing a TCP: it is maintained, has no `unsafe`
//! surface we touch, and does handshake and teardown, a sliding window with
//! window scaling, retransmission with RTT estimation (RTO at least 1 s, as RFC
//! 6298 asks), fast retransmit, Reno congestion control, delayed ACKs and Nagle.
//! It is vendored with one fix (`third_party/smoltcp/PATCHES.md`): Reno's
//! initial window is two segments of the negotiated MSS, not 2,048 bytes.
//! Its ACK rule sends an ACK as soon as more than one MSS is unacknowledged at
//! the end of a poll, so a stack polled per frame ACKs every second full
//! segment, and one that takes frames in batches stretches its ACKs by itself.

mod device;
mod lane;
pub mod tally;

use std::collections::HashMap;

use smoltcp::socket::tcp;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpProtocol, Ipv4Address, Ipv4Packet,
    TcpPacket,
};

use crate::time::{Duration, Time};
use lane::Lane;
use tally::Tally;

/// The interface: its addresses and largest IP packet.
#[derive(Clone, Debug, PartialEq)]
pub struct StackConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    /// Largest IP packet; the MSS is this less 40 bytes.
    pub mtu: usize,
    /// Static ARP entries (address, MAC): the stations of a scenario know each
    /// other from the start, as a benchmark set-up configures them. smoltcp
    /// sends one ARP request a second for the whole interface, so a host that
    /// opens sessions to ten peers at once would otherwise wait ten seconds.
    /// Others are still learned by ARP (a tap's Linux side).
    pub neighbors: Vec<([u8; 4], [u8; 6])>,
}

/// One socket's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketConfig {
    /// Socket buffers, bytes; a receive buffer over 64 KB turns on window
    /// scaling, and the receive buffer is the window this end offers.
    pub rx_buffer: usize,
    pub tx_buffer: usize,
    pub nagle: bool,
    /// `None` acknowledges at once; otherwise at most this late.
    pub ack_delay: Option<Duration>,
}

/// A socket of a stack, by its order of opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sock(pub usize);

/// An ARP reply from `ip` at `mac` to the interface of `cfg`.
fn arp_reply(cfg: &StackConfig, ip: [u8; 4], mac: [u8; 6]) -> Vec<u8> {
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
    bytes
}

fn instant(t: Time) -> smoltcp::time::Instant {
    smoltcp::time::Instant::from_micros((t.ps() / 1_000_000) as i64)
}

pub struct Stack {
    cfg: StackConfig,
    seed: u64,
    /// The static ARP entries as replies, for each new lane's cache.
    arp: Vec<Vec<u8>>,
    lanes: Vec<Lane>,
    /// Lanes with input or socket work since their last poll.
    dirty: Vec<bool>,
    /// The sockets the last poll ran (input, socket work or a timer due).
    polled: Vec<Sock>,
    /// Lane by connection: (local port, remote address, remote port).
    routes: HashMap<(u16, [u8; 4], u16), usize>,
    /// Every frame in and out, classified.
    pub tally: Tally,
}

impl Stack {
    /// A stack with no sockets yet; the first socket's lane also answers ARP
    /// requests and pings.
    pub fn new(cfg: &StackConfig, seed: u64) -> Stack {
        let arp = cfg.neighbors.iter().map(|(ip, mac)| arp_reply(cfg, *ip, *mac)).collect();
        Stack {
            cfg: cfg.clone(),
            seed,
            arp,
            lanes: Vec::new(),
            dirty: Vec::new(),
            polled: Vec::new(),
            routes: HashMap::new(),
            tally: Tally::default(),
        }
    }

    /// A new socket, closed until it listens or connects.
    pub fn open(&mut self, cfg: &SocketConfig) -> Sock {
        let mut socket = tcp::Socket::new(tcp::SocketBuffer::new(vec![0; cfg.rx_buffer]), tcp::SocketBuffer::new(vec![0; cfg.tx_buffer]));
        socket.set_nagle_enabled(cfg.nagle);
        socket.set_ack_delay(cfg.ack_delay.map(|d| smoltcp::time::Duration::from_micros(d.ps() / 1_000_000)));
        socket.set_congestion_control(tcp::CongestionControl::Reno);
        let seed = self.seed ^ (self.lanes.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.lanes.push(Lane::new(&self.cfg, seed, socket, &self.arp));
        self.dirty.push(true);
        Sock(self.lanes.len() - 1)
    }

    fn tcp(&mut self, s: Sock) -> &mut tcp::Socket<'static> {
        self.dirty[s.0] = true;
        self.lanes[s.0].tcp()
    }
    fn tcp_ref(&self, s: Sock) -> &tcp::Socket<'static> {
        self.lanes[s.0].tcp_ref()
    }

    pub fn listen(&mut self, s: Sock, port: u16) -> Result<(), String> {
        self.tcp(s).listen(port).map_err(|e| format!("cannot listen on {port}: {e}"))
    }

    pub fn connect(&mut self, s: Sock, ip: [u8; 4], port: u16, local_port: u16) -> Result<(), String> {
        self.dirty[s.0] = true;
        self.routes.insert((local_port, ip, port), s.0);
        self.lanes[s.0].connect(ip, port, local_port)
    }

    /// A frame from the wire, taken in at the next poll by the lanes it concerns.
    pub fn input(&mut self, frame: Vec<u8>) {
        self.tally.inbound(&frame);
        if self.lanes.is_empty() {
            return;
        }
        match self.route(&frame) {
            Some(i) => {
                self.lanes[i].queues.rx.push_back(frame);
                self.dirty[i] = true;
            }
            None => {
                for (lane, dirty) in self.lanes.iter_mut().zip(&mut self.dirty) {
                    lane.queues.rx.push_back(frame.clone());
                    *dirty = true;
                }
            }
        }
    }

    /// The lane a frame is for; `None` for every lane (an ARP reply, which each
    /// lane's cache should learn). Anything else no lane owns goes to the first,
    /// which answers it as smoltcp does (ARP, ping, a reset).
    fn route(&mut self, frame: &[u8]) -> Option<usize> {
        let eth = EthernetFrame::new_checked(frame).ok()?;
        match eth.ethertype() {
            EthernetProtocol::Arp => {
                let reply = ArpPacket::new_checked(eth.payload()).ok().map(|a| a.operation()) == Some(ArpOperation::Reply);
                return if reply { None } else { Some(0) };
            }
            EthernetProtocol::Ipv4 => {}
            _ => return Some(0),
        }
        let Some((port, remote, syn)) = tcp_ends(eth.payload()) else { return Some(0) };
        let key = (port, remote.0, remote.1);
        if let Some(&i) = self.routes.get(&key) {
            // Its lane, or the listening lane its SYN was given before that lane took it in.
            if self.lanes[i].owns(port, remote) || self.lanes[i].listens(port) {
                return Some(i);
            }
            self.routes.remove(&key);
        }
        let owner = self.lanes.iter().position(|l| l.owns(port, remote));
        let owner = owner.or_else(|| {
            let given = |i: usize| self.routes.values().any(|v| *v == i);
            syn.then(|| (0..self.lanes.len()).find(|i| self.lanes[*i].listens(port) && !given(*i))).flatten()
        });
        if let Some(i) = owner {
            self.routes.insert(key, i);
        }
        Some(owner.unwrap_or(0))
    }

    /// Run the stack at `now`: each lane with input, socket work or a timer due
    /// takes in what waits and sends what is due.
    pub fn poll(&mut self, now: Time) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        self.polled.clear();
        for (i, (lane, dirty)) in self.lanes.iter_mut().zip(&mut self.dirty).enumerate() {
            if *dirty || lane.next.is_some_and(|t| t <= now) {
                *dirty = false;
                lane.poll(now, &mut out);
                self.polled.push(Sock(i));
            }
        }
        for f in &out {
            self.tally.outbound(f);
        }
        out
    }

    /// The sockets the last poll ran: only these can have new data, room or state.
    pub fn polled(&self) -> &[Sock] {
        &self.polled
    }

    /// When the stack next needs a poll (a retransmission or delayed-ACK timer,
    /// or socket work since the last poll).
    pub fn poll_at(&mut self, now: Time) -> Option<Time> {
        let soon = now + Duration::from_us(1);
        let work = self.dirty.iter().any(|d| *d).then_some(soon);
        self.lanes.iter().filter_map(|l| l.next).map(|t| t.max(soon)).chain(work).min()
    }

    /// Queue bytes to send; returns how many fitted.
    pub fn send(&mut self, s: Sock, data: &[u8]) -> usize {
        if data.is_empty() || self.send_room(s) == 0 {
            return 0;
        }
        self.tcp(s).send_slice(data).unwrap_or(0)
    }
    /// Free room in the send buffer.
    pub fn send_room(&self, s: Sock) -> usize {
        let t = self.tcp_ref(s);
        if t.may_send() {
            t.send_capacity() - t.send_queue()
        } else {
            0
        }
    }
    /// Bytes sent and not yet acknowledged, or not yet sent.
    pub fn send_queue(&self, s: Sock) -> usize {
        self.tcp_ref(s).send_queue()
    }
    /// Take up to `max` received bytes.
    pub fn recv(&mut self, s: Sock, max: usize) -> Vec<u8> {
        let n = max.min(self.readable(s));
        if n == 0 {
            return Vec::new();
        }
        let mut buf = vec![0; n];
        let n = self.tcp(s).recv_slice(&mut buf).unwrap_or(0);
        buf.truncate(n);
        buf
    }
    pub fn readable(&self, s: Sock) -> usize {
        self.tcp_ref(s).recv_queue()
    }
    pub fn close(&mut self, s: Sock) {
        self.tcp(s).close();
    }
    pub fn established(&self, s: Sock) -> bool {
        self.tcp_ref(s).may_send() || self.tcp_ref(s).may_recv()
    }
    /// The peer has closed its side and everything it sent has been read.
    pub fn peer_finished(&self, s: Sock) -> bool {
        let t = self.tcp_ref(s);
        !t.may_recv() && t.recv_queue() == 0 && !matches!(t.state(), tcp::State::Listen | tcp::State::SynSent | tcp::State::SynReceived)
    }
    pub fn closed(&self, s: Sock) -> bool {
        matches!(self.tcp_ref(s).state(), tcp::State::Closed | tcp::State::TimeWait)
    }
    pub fn state(&self, s: Sock) -> String {
        self.tcp_ref(s).state().to_string()
    }
}

/// A TCP segment's local port, remote (address, port) and SYN flag, from its IPv4 packet.
fn tcp_ends(ip: &[u8]) -> Option<(u16, ([u8; 4], u16), bool)> {
    let ip = Ipv4Packet::new_checked(ip).ok()?;
    if ip.next_header() != IpProtocol::Tcp {
        return None;
    }
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    Some((tcp.dst_port(), (ip.src_addr().octets(), tcp.src_port()), tcp.syn() && !tcp.ack()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Sock = Sock(0);

    fn cfg(last: u8) -> StackConfig {
        StackConfig { mac: [2, 0, 0, 0, 0, last], ip: [10, 0, 0, last], mtu: 1500, neighbors: vec![] }
    }

    fn socket() -> SocketConfig {
        SocketConfig { rx_buffer: 65_535, tx_buffer: 65_535, nagle: true, ack_delay: Some(Duration::from_ms(10)) }
    }

    /// Run two stacks against each other over a perfect wire, 10 µs a hop,
    /// `drop` deciding which frames (by count) are lost. Returns what arrived,
    /// the most data segments `a` sent in one poll, and when it had all arrived.
    fn exchange(a: &mut Stack, b: &mut Stack, bytes: &[u8], drop: impl Fn(usize) -> bool) -> (Vec<u8>, usize, Time) {
        let mut got = Vec::new();
        let mut sent = 0;
        let mut now = Time::ZERO;
        let mut n = 0;
        let mut burst = 0;
        for _ in 0..200_000 {
            sent += a.send(S, &bytes[sent..]);
            if sent == bytes.len() && a.send_queue(S) == 0 {
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
        panic!("transfer did not finish: {} of {} bytes, a {} b {}", got.len(), bytes.len(), a.state(S), b.state(S));
    }

    fn pair() -> (Stack, Stack) {
        let (mut a, mut b) = (Stack::new(&cfg(1), 1), Stack::new(&cfg(2), 2));
        a.open(&socket());
        b.open(&socket());
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
        let (mut a, mut b) = (Stack::new(&cfg(1), 1), Stack::new(&cfg(2), 2));
        let slow = SocketConfig { ack_delay: Some(Duration::from_ms(200)), ..socket() };
        a.open(&slow);
        b.open(&slow);
        b.listen(S, 5001).unwrap();
        a.connect(S, [10, 0, 0, 2], 5001, 40000).unwrap();
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
}
