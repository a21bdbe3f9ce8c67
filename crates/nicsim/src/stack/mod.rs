//! One TCP/IP stack, smoltcp, driven by the simulation's clock, with any number
//! of sockets: frames go in and come out as bytes, and the stack only ever sees
//! simulated time. Each socket has an interface of its own with the stack's
//! addresses (`lane`), and a frame goes to the lane of its connection, so the
//! cost of a frame does not grow with the number of sessions. The same stack runs as a host's own stack, as an ideal host's,
//! or as a TCP offload adapter's firmware; where it runs decides only who pays
//! for it and when.
//!
//! smoltcp was chosen over writing a TCP: it is maintained, has no `unsafe`
//! surface we touch, and does handshake and teardown, a sliding window with
//! window scaling, retransmission with RTT estimation (RTO at least 1 s, as RFC
//! 6298 asks), fast retransmit, Reno congestion control, delayed ACKs and Nagle.
//! It is vendored with a few changes (`third_party/smoltcp/PATCHES.md`): Reno's
//! initial window is two segments of the negotiated MSS, not 2,048 bytes, and a
//! segment carrying over one MSS (merged by LRO) is acknowledged at once.
//! Its ACK rule sends an ACK as soon as more than one MSS is unacknowledged at
//! the end of a poll, so a stack polled per frame ACKs every second full
//! segment, and one that takes frames in batches stretches its ACKs by itself.

mod arp;
mod device;
mod lane;
mod progress;
pub mod settings;
pub mod tally;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

pub use smoltcp::socket::tcp::AckPolicy;
use smoltcp::socket::tcp::{self, TxMaker};
use smoltcp::wire::{ArpOperation, ArpPacket, EthernetFrame, EthernetProtocol};

use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::Frame;
pub use arp::Neighbors;
use arp::{answer_arp, arp_reply};
use lane::Lane;
use tally::{Segment, Tally};

/// The interface: its addresses and largest IP packet.
#[derive(Clone, Debug, PartialEq)]
pub struct StackConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    /// Largest IP packet; the MSS is this less 40 bytes.
    pub mtu: usize,
    /// Static ARP entries (address to MAC): the stations of a scenario know
    /// each other from the start, as a benchmark set-up configures them. smoltcp
    /// sends one ARP request a second for the whole interface, so a host that
    /// opens sessions to ten peers at once would otherwise wait ten seconds.
    /// Others are still learned by ARP (a tap's Linux side).
    pub neighbors: Neighbors,
    /// Its adapters segment large sends (TSO): smoltcp hands them TCP sends of
    /// up to 64 KB, each frame's `gso` naming the segment size, and leaves the
    /// TCP checksums to them.
    pub tso: bool,
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
    /// When, besides that, this end acknowledges.
    pub ack_policy: AckPolicy,
    /// The least retransmission timeout (RFC 6298: 1 s; Linux: 200 ms).
    pub min_rto: Duration,
    /// CUBIC congestion control (RFC 9438) instead of Reno (RFC 5681).
    pub cubic: bool,
    /// The congestion window grows by the bytes an ACK covers (RFC 3465),
    /// not one segment an ACK.
    pub byte_counting: bool,
    /// With segmentation offload, Linux's deferral of sends the window cuts short.
    pub tso_defer: bool,
}

/// A socket of a stack, by its order of opening.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sock(pub usize);

fn instant(t: Time) -> smoltcp::time::Instant {
    smoltcp::time::Instant::from_micros((t.ps() / 1_000_000) as i64)
}

pub struct Stack {
    cfg: StackConfig,
    seed: u64,
    lanes: Vec<Lane>,
    /// Lanes with input or socket work since their last poll: a flag per lane,
    /// and the flagged ones.
    dirty: Vec<bool>,
    pending: Vec<usize>,
    /// Each lane's next timer, earliest first, so a poll visits only the lanes
    /// it concerns: a heap of (time, lane) in which entries that no longer
    /// match their lane's timer are skipped (cheaper than removing each as it
    /// moves).
    timers: BinaryHeap<Reverse<(Time, usize)>>,
    /// The sockets the last poll ran (input, socket work or a timer due).
    polled: Vec<Sock>,
    /// Lane by connection: (local port, remote address, remote port).
    routes: FxHashMap<(u16, [u8; 4], u16), usize>,
    /// Every frame in and out, classified.
    pub tally: Tally,
    /// The frames of one port's connections alone (a TTCP transfer's, beside
    /// other sessions), where one is watched.
    pub watched: Option<Tally>,
}

impl Stack {
    /// A stack with no sockets yet; the first socket's lane also answers ARP
    /// requests and pings.
    pub fn new(cfg: &StackConfig, seed: u64) -> Stack {
        Stack {
            cfg: cfg.clone(),
            seed,
            lanes: Vec::new(),
            dirty: Vec::new(),
            pending: Vec::new(),
            timers: BinaryHeap::new(),
            polled: Vec::new(),
            routes: FxHashMap::default(),
            tally: Tally::default(),
            watched: None,
        }
    }

    /// A new socket, closed until it listens or connects.
    pub fn open(&mut self, cfg: &SocketConfig) -> Sock {
        let mut socket = tcp::Socket::new(tcp::SocketBuffer::new(vec![0; cfg.rx_buffer]), tcp::SocketBuffer::new(vec![0; cfg.tx_buffer]));
        socket.set_nagle_enabled(cfg.nagle);
        socket.set_ack_delay(cfg.ack_delay.map(|d| smoltcp::time::Duration::from_micros(d.ps() / 1_000_000)));
        socket.set_ack_policy(cfg.ack_policy);
        socket.set_min_rto(smoltcp::time::Duration::from_micros(cfg.min_rto.ps() / 1_000_000));
        socket.set_congestion_control(if cfg.cubic { tcp::CongestionControl::Cubic } else { tcp::CongestionControl::Reno });
        socket.set_byte_counting(cfg.byte_counting);
        // Only a stack whose adapters segment has sends to defer.
        socket.set_tso_defer(cfg.tso_defer && self.cfg.tso);
        let seed = self.seed ^ (self.lanes.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut lane = Lane::new(&self.cfg, seed, socket);
        lane.progress.min_rto = cfg.min_rto;
        self.lanes.push(lane);
        self.dirty.push(false);
        let i = self.lanes.len() - 1;
        self.mark(i);
        Sock(i)
    }

    /// Lane `i` has work for the next poll.
    fn mark(&mut self, i: usize) {
        if !self.dirty[i] {
            self.dirty[i] = true;
            self.pending.push(i);
        }
    }

    /// The socket, to change: what its last dispatch said of the next poll no
    /// longer holds.
    fn tcp(&mut self, s: Sock) -> &mut tcp::Socket<'static> {
        let t = self.tcp_read(s);
        t.forget_idle_poll_at();
        t
    }
    /// The socket, to read from (smoltcp keeps its next poll right across a read).
    fn tcp_read(&mut self, s: Sock) -> &mut tcp::Socket<'static> {
        self.mark(s.0);
        self.lanes[s.0].tcp()
    }
    fn tcp_ref(&self, s: Sock) -> &tcp::Socket<'static> {
        self.lanes[s.0].tcp_ref()
    }

    pub fn listen(&mut self, s: Sock, port: u16) -> Result<(), String> {
        self.tcp(s).listen(port).map_err(|e| format!("cannot listen on {port}: {e}"))
    }

    pub fn connect(&mut self, s: Sock, ip: [u8; 4], port: u16, local_port: u16) -> Result<(), String> {
        self.mark(s.0);
        self.routes.insert((local_port, ip, port), s.0);
        // A station it knows needs no ARP request: the lane learns it first, so
        // a request for another station just before (a reset to a stray
        // segment) cannot hold the connection in smoltcp's one-a-second limit.
        if let Some(mac) = self.cfg.neighbor(ip) {
            self.lanes[s.0].queues.rx.push_back(arp_reply(&self.cfg, ip, mac));
        }
        self.lanes[s.0].connect(ip, port, local_port)
    }

    /// A frame from the wire, taken in at the next poll by the lanes it concerns.
    pub fn input(&mut self, frame: Box<Frame>) {
        let seg = Segment::parse(&frame.bytes);
        self.tally.inbound_parsed(seg.as_ref(), frame.meta.gso);
        if let Some(w) = &mut self.watched {
            w.inbound_parsed(seg.as_ref(), frame.meta.gso);
        }
        if self.lanes.is_empty() {
            return;
        }
        match self.route(&frame.bytes, seg.as_ref()) {
            Some(i) => {
                self.lanes[i].queues.rx.push_back(frame);
                self.mark(i);
            }
            None => {
                for i in 0..self.lanes.len() {
                    self.lanes[i].queues.rx.push_back(frame.clone());
                    self.mark(i);
                }
            }
        }
    }

    /// The lane a frame is for; `None` for every lane (an ARP reply, which each
    /// lane's cache should learn). Anything else no lane owns goes to the first,
    /// which answers it as smoltcp does (ARP, ping, a reset).
    fn route(&mut self, frame: &[u8], seg: Option<&Segment>) -> Option<usize> {
        let Some(seg) = seg else {
            let eth = EthernetFrame::new_checked(frame).ok()?;
            let arp = (eth.ethertype() == EthernetProtocol::Arp).then(|| ArpPacket::new_checked(eth.payload()).ok().map(|a| a.operation()));
            return if arp.flatten() == Some(ArpOperation::Reply) { None } else { Some(0) };
        };
        let (port, remote, syn) = (seg.dst.1, (seg.src.1, seg.src.0), seg.opening);
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
    #[allow(clippy::vec_box, reason = "frames travel boxed, and the boxes are reused")]
    pub fn poll(&mut self, now: Time) -> Vec<Box<Frame>> {
        let mut out = Vec::new();
        self.poll_into(now, &mut out);
        out
    }

    /// As `poll`, adding what it sends to `out` (a caller's vector, reused).
    #[allow(clippy::vec_box, reason = "frames travel boxed, and the boxes are reused")]
    pub fn poll_into(&mut self, now: Time, out: &mut Vec<Box<Frame>>) {
        let first = out.len();
        let mut due = std::mem::take(&mut self.pending);
        while let Some(&Reverse((t, i))) = self.timers.peek().filter(|e| e.0 .0 <= now) {
            self.timers.pop();
            if self.lanes[i].next == Some(t) {
                due.push(i);
            }
        }
        // In lane order, as one interface walking its sockets would.
        due.sort_unstable();
        due.dedup();
        self.polled.clear();
        for &i in &due {
            self.dirty[i] = false;
            let lane = &mut self.lanes[i];
            let before = lane.next;
            let cfg = &self.cfg;
            lane.poll(now, out, |f| answer_arp(cfg, f));
            // A timer that moved is filed anew; one still due was taken off above.
            if let Some(t) = lane.next.filter(|t| lane.next != before || *t <= now) {
                self.timers.push(Reverse((t, i)));
            }
            self.polled.push(Sock(i));
        }
        due.clear();
        self.pending = due;
        for f in &out[first..] {
            let seg = Segment::parse(&f.bytes);
            self.tally.outbound_parsed(seg.as_ref(), f.meta.gso);
            if let Some(w) = &mut self.watched {
                w.outbound_parsed(seg.as_ref(), f.meta.gso);
            }
        }
    }

    /// Whether it leaves segmentation and TCP checksums to its adapters.
    pub fn tso(&self) -> bool {
        self.cfg.tso
    }

    /// The sockets the last poll ran: only these can have new data, room or state.
    pub fn polled(&self) -> &[Sock] {
        &self.polled
    }

    /// When the stack next needs a poll (a retransmission or delayed-ACK timer,
    /// or socket work since the last poll).
    pub fn poll_at(&mut self, now: Time) -> Option<Time> {
        let soon = now + Duration::from_us(1);
        if !self.pending.is_empty() {
            return Some(soon);
        }
        while let Some(&Reverse((t, i))) = self.timers.peek() {
            if self.lanes[i].next == Some(t) {
                return Some(t.max(soon));
            }
            self.timers.pop();
        }
        None
    }

    /// Queue bytes to send; returns how many fitted.
    pub fn send(&mut self, s: Sock, data: &[u8]) -> usize {
        let mut at = 0;
        self.send_with(s, data.len(), |buf| {
            buf.copy_from_slice(&data[at..at + buf.len()]);
            at += buf.len();
        })
    }

    /// Queue up to `want` bytes that `fill` writes straight into the send
    /// buffer, in order, in two pieces where the buffer wraps (an application
    /// that makes its bytes needs no copy of its own); returns how many.
    pub fn send_with(&mut self, s: Sock, want: usize, mut fill: impl FnMut(&mut [u8])) -> usize {
        if want == 0 || self.send_room(s) == 0 {
            return 0;
        }
        let mut total = 0;
        while total < want {
            let n = self
                .tcp(s)
                .send(|buf| {
                    let k = buf.len().min(want - total);
                    fill(&mut buf[..k]);
                    (k, k)
                })
                .unwrap_or(0);
            if n == 0 {
                break;
            }
            total += n;
        }
        self.lanes[s.0].progress.written += total as u64;
        total
    }
    /// Queue up to `want` bytes of a stream that `maker` makes from their
    /// offset, the first being `offset`: the bytes are made as segments take
    /// them, not copied into the send buffer first (smoltcp's `send_made`).
    /// Every byte of a connection is sent this way or none; returns how many.
    pub fn send_made(&mut self, s: Sock, want: usize, maker: TxMaker, offset: u64) -> usize {
        if want == 0 || self.send_room(s) == 0 {
            return 0;
        }
        let n = self.tcp(s).send_made(want, maker, offset).unwrap_or(0);
        self.lanes[s.0].progress.written += n as u64;
        n
    }

    /// Whether the socket holds small segments back (Nagle's algorithm).
    pub fn nagle(&self, s: Sock) -> bool {
        self.tcp_ref(s).nagle_enabled()
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
        let t = self.tcp_read(s);
        let n = t.recv_slice(&mut buf).unwrap_or(0);
        t.after_read();
        self.lanes[s.0].progress.read += n as u64;
        buf.truncate(n);
        buf
    }
    /// Take up to `most` received bytes, handing them to `f` in place (no copy
    /// out), in one or two pieces; returns how many.
    pub fn drain(&mut self, s: Sock, most: usize, mut f: impl FnMut(&[u8])) -> usize {
        let mut total = 0;
        while self.readable(s) > 0 && total < most {
            let n = self.tcp_read(s).recv(|buf| {
                let buf = &buf[..buf.len().min(most - total)];
                f(buf);
                (buf.len(), buf.len())
            });
            match n {
                Ok(n) if n > 0 => total += n,
                _ => break,
            }
        }
        if total > 0 {
            self.lanes[s.0].tcp().after_read();
        }
        self.lanes[s.0].progress.read += total as u64;
        total
    }
    /// Free room in the receive buffer (the window this end can offer).
    pub fn recv_room(&self, s: Sock) -> usize {
        let t = self.tcp_ref(s);
        t.recv_capacity() - t.recv_queue()
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
    /// The peer has closed its side: nothing more will arrive.
    pub fn peer_closed(&self, s: Sock) -> bool {
        matches!(self.tcp_ref(s).state(), tcp::State::CloseWait | tcp::State::LastAck | tcp::State::Closing | tcp::State::TimeWait)
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

    /// The connections stalled at `end` (bytes waiting, nothing acknowledged or
    /// received for longer than the retransmission timeout), the longest any
    /// connection waited so (`tcp_stalled`, `tcp_longest_stall_ms`), and the
    /// share of the time data was queued that the congestion window or the peer's window
    /// held data back (`tcp_cwnd_limited_share`, `tcp_rwnd_limited_share`), and the
    /// mean smoothed round trip of the connections that measured one (`tcp_srtt_us`).
    pub fn report_progress(&self, r: &mut Report, end: Time) {
        let stalled = self.lanes.iter().filter(|l| l.progress.stalled(end).is_some()).count();
        let longest = self.lanes.iter().map(|l| l.progress.longest(end)).max().unwrap_or(Duration::ZERO);
        r.count("tcp_stalled", stalled as u64);
        r.real("tcp_longest_stall_ms", longest.as_secs_f64() * 1e3);
        // Over the time each connection had data queued.
        let (mut cwnd, mut rwnd, mut active) = (0.0, 0.0, 0.0);
        for l in &self.lanes {
            let (c, w, a) = l.progress.limited(end);
            (cwnd, rwnd, active) = (cwnd + c.as_secs_f64(), rwnd + w.as_secs_f64(), active + a.as_secs_f64());
        }
        let share = |x: f64| if active > 0.0 { x / active } else { 0.0 };
        r.real("tcp_cwnd_limited_share", share(cwnd));
        r.real("tcp_rwnd_limited_share", share(rwnd));
        // The connections that measured one: a sender's view of its path.
        let rtts: Vec<f64> = self.lanes.iter().filter_map(|l| l.tcp_ref().smoothed_rtt_micros()).map(f64::from).collect();
        if !rtts.is_empty() {
            r.real("tcp_srtt_us", rtts.iter().sum::<f64>() / rtts.len() as f64);
        }
    }

    /// The connections stalled at `end` in words, for the results' text, over
    /// several stacks (a host's own and its offload engines').
    pub fn stall_text<'a>(stacks: impl IntoIterator<Item = &'a Stack>, end: Time) -> Option<(&'static str, String)> {
        let named: Vec<String> = stacks
            .into_iter()
            .flat_map(|s| &s.lanes)
            .filter_map(|l| {
                let waited = l.progress.stalled(end)?;
                let unacked = l.tcp_ref().send_queue();
                Some(format!("{}: {unacked} bytes waiting, nothing moved for {:.1} ms", l.describe(), waited.as_secs_f64() * 1e3))
            })
            .collect();
        (!named.is_empty()).then(|| ("tcp_stalled_connections", named.join("; ")))
    }
}

#[cfg(test)]
mod tests;
