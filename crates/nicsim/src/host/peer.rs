//! A peer host whose processors, bus and adapter are not modelled. It answers
//! the TCP sessions opened to it at once (a file server holding its files in
//! memory, as the clients of the IBM study did), and it may itself read blocks
//! from a host's file server, asking for the next one `think` after the last
//! byte of the previous (a NetWare client of the Novell study). Its only costs
//! are its link's and its think time.

use std::collections::HashMap;

use crate::engine::{Component, Ctx, Msg, PortId};
use crate::host::segment::{Addr, Segment};
use crate::host::tcp::{Conn, TcpConfig};
use crate::observe::Report;
use crate::time::{Duration, Time};

#[derive(Clone, Debug, PartialEq)]
pub struct PeerConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub tcp: TcpConfig,
    /// A request is this many bytes; each one is answered with `file_bytes`.
    pub request_bytes: u32,
    pub file_bytes: u32,
    /// The sessions it serves: this end's port and the far end.
    pub sessions: Vec<(u16, Addr)>,
    pub reads: Option<ReadsConfig>,
}

/// Block reads from a host's file server.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadsConfig {
    pub tcp: TcpConfig,
    pub request_bytes: u32,
    pub read_bytes: u32,
    pub think: Duration,
    /// This end's port and the server, per session.
    pub sessions: Vec<(u16, Addr)>,
}

/// Timer tags above this are think timers.
const THINK: u64 = 1 << 40;

pub struct Peer {
    cfg: PeerConfig,
    /// Served sessions first, then reading ones.
    conns: Vec<Conn>,
    served: usize,
    /// Session by (far port, near port).
    by_ports: HashMap<(u16, u16), usize>,
    bytes_in: Vec<u32>,
    armed: Vec<Option<Time>>,
    files: u64,
    blocks_read: u64,
    foreign: u64,
}

impl Peer {
    pub fn new(cfg: PeerConfig) -> Self {
        let me = |port: u16| Addr { mac: cfg.mac, ip: cfg.ip, port };
        let mut conns: Vec<Conn> = cfg.sessions.iter().map(|(port, remote)| Conn::new(cfg.tcp, me(*port), *remote)).collect();
        let served = conns.len();
        if let Some(r) = &cfg.reads {
            conns.extend(r.sessions.iter().map(|(port, server)| Conn::new(r.tcp, me(*port), *server)));
        }
        let by_ports = conns.iter().enumerate().map(|(i, c)| ((c.remote.port, c.local.port), i)).collect();
        let n = conns.len();
        Peer { cfg, conns, served, by_ports, bytes_in: vec![0; n], armed: vec![None; n], files: 0, blocks_read: 0, foreign: 0 }
    }

    fn flush(&mut self, i: usize, ctx: &mut Ctx) {
        let mut out = Vec::new();
        self.conns[i].output(ctx.now(), &mut out);
        for f in out {
            ctx.send_after(0, Duration::ZERO, Msg::frame(f));
        }
        if let Some(t) = self.conns[i].next_timer() {
            if self.armed[i].is_none_or(|a| t < a || a < ctx.now()) {
                self.armed[i] = Some(t);
                ctx.wake_after(t.since(ctx.now()), i as u64);
            }
        }
    }

    /// Whole requests served, or whole blocks read (then the next request
    /// after the think time).
    fn delivered(&mut self, i: usize, got: u32, ctx: &mut Ctx) {
        self.bytes_in[i] += got;
        if i < self.served {
            while self.bytes_in[i] >= self.cfg.request_bytes {
                self.bytes_in[i] -= self.cfg.request_bytes;
                self.conns[i].queue(self.cfg.file_bytes);
                self.files += 1;
            }
            return;
        }
        let r = self.cfg.reads.as_ref().expect("reading sessions have a config");
        let think = r.think;
        while self.bytes_in[i] >= r.read_bytes {
            self.bytes_in[i] -= r.read_bytes;
            self.blocks_read += 1;
            ctx.wake_after(think, THINK | i as u64);
        }
    }
}

impl Component for Peer {
    fn kind(&self) -> &'static str {
        "peer"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        for i in self.served..self.conns.len() {
            ctx.wake_after(Duration::ZERO, THINK | i as u64);
        }
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        let i = match msg {
            Msg::Frame(f) => {
                let seg = Segment::parse(&f.bytes);
                let Some((seg, i)) = seg.and_then(|s| self.by_ports.get(&(s.src_port, s.dst_port)).map(|i| (s, *i))) else {
                    self.foreign += 1;
                    return;
                };
                if f.destination() != Some(self.cfg.mac) {
                    self.foreign += 1;
                    return;
                }
                let got = self.conns[i].input(&seg, &f.bytes[seg.payload.clone()], ctx.now());
                self.delivered(i, got, ctx);
                i
            }
            Msg::Timer(tag) if tag & THINK != 0 => {
                let i = (tag & !THINK) as usize;
                let r = self.cfg.reads.as_ref().expect("think timers only for reads");
                self.conns[i].queue(r.request_bytes);
                i
            }
            Msg::Timer(i) => {
                let i = i as usize;
                if self.armed[i].is_some_and(|a| a <= ctx.now()) {
                    self.armed[i] = None;
                }
                self.conns[i].on_timer(ctx.now());
                i
            }
            Msg::TxReady => return,
        };
        self.flush(i, ctx);
    }

    fn report(&self, _end: Time) -> Report {
        let mut r = Report::default();
        r.count("files_requested", self.files);
        if self.cfg.reads.is_some() {
            r.count("blocks_read", self.blocks_read);
        }
        r.count("retransmits", self.conns.iter().map(|c| c.retransmits).sum());
        r.count("frames_not_for_us", self.foreign);
        r
    }
}
