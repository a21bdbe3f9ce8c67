//! A peer host whose processors, bus and adapter are not modelled: it answers
//! the TCP sessions opened to it at once (a file server holding its files in
//! memory, as the clients of the IBM study did). Its only costs are its link's.

use std::collections::HashMap;

use crate::engine::{Component, Ctx, Msg, PortId};
use crate::host::segment::{Addr, Segment};
use crate::host::tcp::{Conn, TcpConfig};
use crate::observe::Report;
use crate::time::Time;

#[derive(Clone, Debug, PartialEq)]
pub struct PeerConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub tcp: TcpConfig,
    /// A request is this many bytes; each one is answered with `file_bytes`.
    pub request_bytes: u32,
    pub file_bytes: u32,
    /// The sessions: this end's port and the far end.
    pub sessions: Vec<(u16, Addr)>,
}

pub struct Peer {
    cfg: PeerConfig,
    conns: Vec<Conn>,
    /// Session by the far end's port.
    by_port: HashMap<u16, usize>,
    request_bytes_in: Vec<u32>,
    armed: Vec<Option<Time>>,
    files: u64,
    foreign: u64,
}

impl Peer {
    pub fn new(cfg: PeerConfig) -> Self {
        let conns: Vec<Conn> =
            cfg.sessions.iter().map(|(port, remote)| Conn::new(cfg.tcp, Addr { mac: cfg.mac, ip: cfg.ip, port: *port }, *remote)).collect();
        let by_port = cfg.sessions.iter().enumerate().map(|(i, (_, r))| (r.port, i)).collect();
        let n = conns.len();
        Peer { cfg, conns, by_port, request_bytes_in: vec![0; n], armed: vec![None; n], files: 0, foreign: 0 }
    }

    fn flush(&mut self, i: usize, ctx: &mut Ctx) {
        let mut out = Vec::new();
        self.conns[i].output(ctx.now(), &mut out);
        for f in out {
            ctx.send_after(0, crate::time::Duration::ZERO, Msg::frame(f));
        }
        if let Some(t) = self.conns[i].next_timer() {
            if self.armed[i].is_none_or(|a| t < a || a < ctx.now()) {
                self.armed[i] = Some(t);
                ctx.wake_after(t.since(ctx.now()), i as u64);
            }
        }
    }
}

impl Component for Peer {
    fn kind(&self) -> &'static str {
        "peer"
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        let i = match msg {
            Msg::Frame(f) => {
                let seg = Segment::parse(&f.bytes);
                let Some((seg, i)) = seg.and_then(|s| self.by_port.get(&s.src_port).map(|i| (s, *i))) else {
                    self.foreign += 1;
                    return;
                };
                if f.destination() != Some(self.cfg.mac) {
                    self.foreign += 1;
                    return;
                }
                let got = self.conns[i].input(&seg, &f.bytes[seg.payload.clone()], ctx.now());
                self.request_bytes_in[i] += got;
                while self.request_bytes_in[i] >= self.cfg.request_bytes {
                    self.request_bytes_in[i] -= self.cfg.request_bytes;
                    self.conns[i].queue(self.cfg.file_bytes);
                    self.files += 1;
                }
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
        r.count("retransmits", self.conns.iter().map(|c| c.retransmits).sum());
        r.count("frames_not_for_us", self.foreign);
        r
    }
}
