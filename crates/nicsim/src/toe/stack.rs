//! A real TCP/IP stack, smoltcp, driven by the simulation's clock: frames go in
//! and come out as bytes, and the stack only ever sees simulated time. The same
//! stack runs as the host's own stack or as the adapter's firmware; where it runs
//! decides only who pays for it and when (`toe::node`).
//!
//! smoltcp was chosen over writing a TCP: it is maintained, has no `unsafe`
//! surface we touch, and does handshake and teardown, a sliding window with
//! window scaling, retransmission with RTT estimation, fast retransmit, delayed
//! ACKs and Nagle. Its Reno congestion control is left off: in our runs it held
//! the window at two segments on a loss-free LAN, and the receiver's window
//! bounds these transfers, as it did in the studies. Its ACK rule sends an ACK
//! as soon as more than one MSS is unacknowledged at the end of a poll, so a
//! stack that takes frames in batches stretches its ACKs by itself.

use std::collections::VecDeque;

use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr, Ipv4Address};

use crate::time::{Duration, Time};
use crate::toe::segments::Tally;

#[derive(Clone, Debug, PartialEq)]
pub struct StackConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    /// Largest IP packet; the MSS is this less 40 bytes.
    pub mtu: usize,
    /// Socket buffers, bytes; a receive buffer over 64 KB turns on window scaling.
    pub rx_buffer: usize,
    pub tx_buffer: usize,
    pub nagle: bool,
    /// `None` acknowledges at once; otherwise at most this late.
    pub ack_delay: Option<Duration>,
}

/// Frames between the simulation and smoltcp.
#[derive(Default)]
struct Queues {
    rx: VecDeque<Vec<u8>>,
    tx: Vec<Vec<u8>>,
    mtu: usize,
}

struct Rx(Vec<u8>);
struct Tx<'a>(&'a mut Vec<Vec<u8>>);

impl phy::RxToken for Rx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut frame = vec![0; len];
        let r = f(&mut frame);
        self.0.push(frame);
        r
    }
}

impl Device for Queues {
    type RxToken<'a> = Rx;
    type TxToken<'a> = Tx<'a>;
    fn receive(&mut self, _: smoltcp::time::Instant) -> Option<(Rx, Tx<'_>)> {
        let frame = self.rx.pop_front()?;
        Some((Rx(frame), Tx(&mut self.tx)))
    }
    fn transmit(&mut self, _: smoltcp::time::Instant) -> Option<Tx<'_>> {
        Some(Tx(&mut self.tx))
    }
    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = self.mtu + 14;
        caps
    }
}

fn instant(t: Time) -> smoltcp::time::Instant {
    smoltcp::time::Instant::from_micros((t.ps() / 1_000_000) as i64)
}

pub struct Stack {
    iface: Interface,
    sockets: SocketSet<'static>,
    socket: SocketHandle,
    queues: Queues,
    /// Every frame in and out, classified.
    pub tally: Tally,
}

impl Stack {
    pub fn new(cfg: &StackConfig, seed: u64) -> Stack {
        let mut queues = Queues { mtu: cfg.mtu, ..Default::default() };
        let mut config = Config::new(HardwareAddress::Ethernet(EthernetAddress(cfg.mac)));
        config.random_seed = seed;
        let mut iface = Interface::new(config, &mut queues, instant(Time::ZERO));
        iface.update_ip_addrs(|addrs| {
            addrs.push(IpCidr::new(IpAddress::Ipv4(Ipv4Address::from_octets(cfg.ip)), 24)).expect("one address");
        });
        let mut socket = tcp::Socket::new(tcp::SocketBuffer::new(vec![0; cfg.rx_buffer]), tcp::SocketBuffer::new(vec![0; cfg.tx_buffer]));
        socket.set_nagle_enabled(cfg.nagle);
        socket.set_ack_delay(cfg.ack_delay.map(|d| smoltcp::time::Duration::from_micros(d.ps() / 1_000_000)));
        socket.set_congestion_control(tcp::CongestionControl::None);
        let mut sockets = SocketSet::new(vec![]);
        let socket = sockets.add(socket);
        Stack { iface, sockets, socket, queues, tally: Tally::default() }
    }

    fn tcp(&mut self) -> &mut tcp::Socket<'static> {
        self.sockets.get_mut::<tcp::Socket>(self.socket)
    }
    fn tcp_ref(&self) -> &tcp::Socket<'static> {
        self.sockets.get::<tcp::Socket>(self.socket)
    }

    pub fn listen(&mut self, port: u16) -> Result<(), String> {
        self.tcp().listen(port).map_err(|e| format!("cannot listen on {port}: {e}"))
    }

    pub fn connect(&mut self, ip: [u8; 4], port: u16, local_port: u16) -> Result<(), String> {
        let remote = (IpAddress::Ipv4(Ipv4Address::from_octets(ip)), port);
        let cx = self.iface.context();
        self.sockets.get_mut::<tcp::Socket>(self.socket).connect(cx, remote, local_port).map_err(|e| format!("cannot connect: {e}"))
    }

    /// A frame from the wire, taken in at the next poll.
    pub fn input(&mut self, frame: Vec<u8>) {
        self.tally.inbound(&frame);
        self.queues.rx.push_back(frame);
    }

    /// Frames waiting to be taken in.
    pub fn pending_input(&self) -> usize {
        self.queues.rx.len()
    }

    /// Run the stack at `now`: take in every waiting frame, then send what is due.
    pub fn poll(&mut self, now: Time) -> Vec<Vec<u8>> {
        self.iface.poll(instant(now), &mut self.queues, &mut self.sockets);
        let out = std::mem::take(&mut self.queues.tx);
        for f in &out {
            self.tally.outbound(f);
        }
        out
    }

    /// When the stack next needs a poll (a retransmission or delayed-ACK timer).
    pub fn poll_at(&mut self, now: Time) -> Option<Time> {
        let at = self.iface.poll_at(instant(now), &self.sockets)?;
        // smoltcp counts whole microseconds: a time not after `now` means "at once".
        let t = Time(at.total_micros().max(0) as u64 * 1_000_000);
        Some(if t > now { t } else { now + Duration::from_us(1) })
    }

    /// Queue bytes to send; returns how many fitted.
    pub fn send(&mut self, data: &[u8]) -> usize {
        self.tcp().send_slice(data).unwrap_or(0)
    }
    /// Free room in the send buffer.
    pub fn send_room(&self) -> usize {
        let s = self.tcp_ref();
        if s.may_send() {
            s.send_capacity() - s.send_queue()
        } else {
            0
        }
    }
    /// Bytes sent and not yet acknowledged, or not yet sent.
    pub fn send_queue(&self) -> usize {
        self.tcp_ref().send_queue()
    }
    /// Take up to `max` received bytes.
    pub fn recv(&mut self, max: usize) -> Vec<u8> {
        let mut buf = vec![0; max.min(self.readable())];
        let n = self.tcp().recv_slice(&mut buf).unwrap_or(0);
        buf.truncate(n);
        buf
    }
    pub fn readable(&self) -> usize {
        self.tcp_ref().recv_queue()
    }
    pub fn close(&mut self) {
        self.tcp().close();
    }
    pub fn established(&self) -> bool {
        self.tcp_ref().may_send() || self.tcp_ref().may_recv()
    }
    /// The peer has closed its side and everything it sent has been read.
    pub fn peer_finished(&self) -> bool {
        let s = self.tcp_ref();
        !s.may_recv() && s.recv_queue() == 0 && !matches!(s.state(), tcp::State::Listen | tcp::State::SynSent | tcp::State::SynReceived)
    }
    pub fn closed(&self) -> bool {
        matches!(self.tcp_ref().state(), tcp::State::Closed | tcp::State::TimeWait)
    }
    pub fn state(&self) -> String {
        self.tcp_ref().state().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn cfg(last: u8) -> StackConfig {
        StackConfig {
            mac: [2, 0, 0, 0, 0, last],
            ip: [10, 0, 0, last],
            mtu: 1500,
            rx_buffer: 65_535,
            tx_buffer: 65_535,
            nagle: true,
            ack_delay: Some(Duration::from_ms(10)),
        }
    }

    /// Run two stacks against each other over a perfect wire, 10 µs a hop,
    /// `drop` deciding which frames (by count) are lost.
    fn exchange(a: &mut Stack, b: &mut Stack, bytes: &[u8], drop: impl Fn(usize) -> bool) -> Vec<u8> {
        let mut got = Vec::new();
        let mut sent = 0;
        let mut now = Time::ZERO;
        let mut n = 0;
        for _ in 0..200_000 {
            sent += a.send(&bytes[sent..]);
            if sent == bytes.len() && a.send_queue() == 0 {
                a.close();
            }
            let (out_a, out_b) = (a.poll(now), b.poll(now));
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
            got.extend(b.recv(1 << 20));
            if b.peer_finished() {
                return got;
            }
            let step = now + Duration::from_us(10);
            // Nothing on the wire: skip ahead to the next timer.
            now = if quiet { [a.poll_at(now), b.poll_at(now)].into_iter().flatten().min().unwrap_or(step).max(step) } else { step };
        }
        panic!("transfer did not finish: {} of {} bytes, a {} b {}", got.len(), bytes.len(), a.state(), b.state());
    }

    fn pair() -> (Stack, Stack) {
        let (mut a, mut b) = (Stack::new(&cfg(1), 1), Stack::new(&cfg(2), 2));
        b.listen(5001).unwrap();
        a.connect([10, 0, 0, 2], 5001, 40000).unwrap();
        (a, b)
    }

    #[test]
    fn a_transfer_is_set_up_carried_in_order_and_torn_down() {
        let (mut a, mut b) = pair();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let got = exchange(&mut a, &mut b, &data, |_| false);
        assert_eq!(got, data);
        assert_eq!(a.tally.syns, 1);
        assert!(a.tally.fins >= 1);
        assert_eq!(a.tally.retransmits, 0);
        assert!(a.tally.data_out >= 300_000 / 1460);
    }

    #[test]
    fn lost_segments_are_retransmitted_and_counted() {
        let (mut a, mut b) = pair();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i ^ (i >> 8)) as u8).collect();
        let got = exchange(&mut a, &mut b, &data, |n| n % 37 == 5);
        assert_eq!(got, data);
        assert!(a.tally.retransmits > 0, "losses were repaired by retransmission");
    }
}
