//! One connection's own smoltcp interface: every socket of a stack gets an
//! interface of its own (the same addresses), so taking in a frame or sending
//! what is due touches one socket, not all of them. smoltcp's interface walks
//! every socket on each poll, which made a host with seventy sessions pay
//! seventy times for every frame.

use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::socket::tcp;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr, Ipv4Address};

use super::device::Queues;
use super::progress::Progress;
use super::{instant, StackConfig};
use crate::time::{Duration, Time};
use crate::wire::Frame;

pub(super) struct Lane {
    iface: Interface,
    sockets: SocketSet<'static>,
    pub handle: SocketHandle,
    pub queues: Queues,
    /// When this lane next needs a poll (`None`: not until something happens).
    pub next: Option<Time>,
    pub progress: Progress,
}

impl Lane {
    /// An interface with `socket`.
    pub fn new(cfg: &StackConfig, seed: u64, socket: tcp::Socket<'static>) -> Lane {
        let mut queues = Queues { mtu: cfg.mtu, tso: cfg.tso, ..Default::default() };
        let mut config = Config::new(HardwareAddress::Ethernet(EthernetAddress(cfg.mac)));
        config.random_seed = seed;
        let mut iface = Interface::new(config, &mut queues, instant(Time::ZERO));
        // Stations are numbered 198.18.hi.lo: one /16 holds every one of them,
        // so hosts past the 255th are on-link too.
        iface.update_ip_addrs(|addrs| {
            addrs.push(IpCidr::new(IpAddress::Ipv4(Ipv4Address::from_octets(cfg.ip)), 16)).expect("one address");
        });
        let mut sockets = SocketSet::new(vec![]);
        let handle = sockets.add(socket);
        Lane { iface, sockets, handle, queues, next: Some(Time::ZERO), progress: Progress::default() }
    }

    pub fn tcp(&mut self) -> &mut tcp::Socket<'static> {
        self.sockets.get_mut::<tcp::Socket>(self.handle)
    }
    pub fn tcp_ref(&self) -> &tcp::Socket<'static> {
        self.sockets.get::<tcp::Socket>(self.handle)
    }

    pub fn connect(&mut self, ip: [u8; 4], port: u16, local_port: u16) -> Result<(), String> {
        let remote = (IpAddress::Ipv4(Ipv4Address::from_octets(ip)), port);
        let cx = self.iface.context();
        let t = self.sockets.get_mut::<tcp::Socket>(self.handle);
        t.forget_idle_poll_at();
        t.connect(cx, remote, local_port).map_err(|e| format!("cannot connect: {e}"))
    }

    /// Take in what waits, send what is due, into `out`; then note the next poll.
    /// An ARP request that `answer` knows the reply to never reaches the wire:
    /// the reply comes back at once (the station's static ARP entry), and the
    /// interface runs again to send what waited for it.
    #[allow(clippy::vec_box, reason = "frames travel boxed, and the boxes are reused")]
    pub fn poll(&mut self, now: Time, out: &mut Vec<Box<Frame>>, answer: impl Fn(&[u8]) -> Option<Box<Frame>>) {
        // Nothing to take in and nothing due (the application wrote what the
        // window cannot take yet): a poll would send nothing, so it is spared.
        if self.queues.rx.is_empty() {
            let at = self.next_poll_at(now);
            if at.is_none_or(|at| at > instant(now)) {
                self.next = next_poll(now, at);
                self.watch(now);
                return;
            }
        }
        self.tcp().forget_idle_poll_at();
        self.iface.poll(instant(now), &mut self.queues, &mut self.sockets);
        let mut replies = Vec::new();
        // Only an ARP request can be answered: most polls send none.
        if self.queues.tx.iter().any(|f| crate::wire::arp::is_arp(&f.bytes)) {
            self.queues.tx.retain(|f| match answer(&f.bytes) {
                Some(reply) => {
                    replies.push(reply);
                    false
                }
                None => true,
            });
        }
        if !replies.is_empty() {
            self.queues.rx.extend(replies);
            self.tcp().forget_idle_poll_at();
            self.iface.poll(instant(now), &mut self.queues, &mut self.sockets);
        }
        out.append(&mut self.queues.tx);
        let at = self.next_poll_at(now);
        self.next = next_poll(now, at);
        self.watch(now);
    }

    /// When the interface next needs a poll. The last dispatch that sent
    /// nothing said it, if nothing but reads touched the socket since: asking
    /// the interface would repeat its look at the socket.
    fn next_poll_at(&mut self, now: Time) -> Option<smoltcp::time::Instant> {
        match self.tcp_ref().idle_poll_at(instant(now)) {
            Some(at) => {
                debug_assert_eq!(at, self.iface.poll_at(instant(now), &self.sockets), "the dispatch's next poll is the interface's");
                at
            }
            None => self.iface.poll_at(instant(now), &self.sockets),
        }
    }

    fn watch(&mut self, now: Time) {
        let t = self.sockets.get::<tcp::Socket>(self.handle);
        let opening = t.state() == tcp::State::SynSent;
        let (unacked, unread) = (t.send_queue(), t.recv_queue());
        let limits = if unacked > 0 { t.window_limits() } else { (false, false) };
        self.progress.observe(now, unacked, unread, opening, limits);
    }

    /// The connection in words: its two ends and its state.
    pub fn describe(&self) -> String {
        let t = self.tcp_ref();
        let end = |e: Option<smoltcp::wire::IpEndpoint>| e.map_or("?".to_string(), |e| e.to_string());
        format!("{} -> {} ({})", end(t.local_endpoint()), end(t.remote_endpoint()), t.state())
    }

    /// Whether a segment from `remote` to local `port` is this lane's.
    pub fn owns(&self, port: u16, remote: ([u8; 4], u16)) -> bool {
        let t = self.tcp_ref();
        let local = t.local_endpoint().is_some_and(|e| e.port == port);
        local && t.remote_endpoint().is_some_and(|e| e.port == remote.1 && e.addr == IpAddress::Ipv4(Ipv4Address::from_octets(remote.0)))
    }

    /// Whether this lane listens on `port` for a new connection.
    pub fn listens(&self, port: u16) -> bool {
        let t = self.tcp_ref();
        t.state() == tcp::State::Listen && t.listen_endpoint().port == port
    }
}

/// When a lane next needs a poll, from smoltcp's answer at `now`.
fn next_poll(now: Time, at: Option<smoltcp::time::Instant>) -> Option<Time> {
    at.map(|at| {
        // smoltcp counts whole microseconds: a time not after `now` means "at once".
        let t = Time(at.total_micros().max(0) as u64 * 1_000_000);
        if t > now {
            t
        } else {
            now + Duration::from_us(1)
        }
    })
}
