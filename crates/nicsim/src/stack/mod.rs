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
mod tests;
