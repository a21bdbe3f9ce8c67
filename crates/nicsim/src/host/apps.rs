//! The host's applications and the protocol work done for them: TCP sessions
//! that request files (`FileRequest`) or serve them (`host::serve`), a sink that
//! counts whatever else arrives, and a sender that builds frames as fast as it
//! may. Each call returns the processor cycles it cost; the caller charges them
//! to a step. Frames to send are paired with the adapter they leave by.

use std::collections::HashMap;

use crate::engine::SimRng;
use crate::host::config::{BlastConfig, Costs, FileRequestConfig};
use crate::host::segment::{Addr, Segment};
use crate::host::tcp::Conn;
use crate::link::Source;
use crate::observe::Report;
use crate::time::Time;
use crate::wire::{Frame, FrameMeta};

/// An application on TCP sessions, as the host drives it.
pub trait TcpApp {
    fn sessions(&self) -> usize;
    /// The first requests, at time zero.
    fn start(&mut self, now: Time, costs: &Costs, out: &mut Vec<(usize, Frame)>) -> u64;
    /// A segment that came in by adapter `port`: its cycles and session, or
    /// `None` if no session claims it.
    fn receive(
        &mut self,
        port: usize,
        frame: &Frame,
        now: Time,
        measuring: bool,
        costs: &Costs,
        out: &mut Vec<(usize, Frame)>,
    ) -> Option<(u64, usize)>;
    /// Session `i`'s timer fell due.
    fn timer(&mut self, i: usize, now: Time, costs: &Costs, out: &mut Vec<(usize, Frame)>) -> u64;
    fn next_timer(&self, i: usize) -> Option<Time>;
    fn report(&self, r: &mut Report, seconds: f64);
}

/// Send what session `conn` may send now by adapter `port`; the cycles it costs.
pub fn send(conn: &mut Conn, port: usize, now: Time, costs: &Costs, out: &mut Vec<(usize, Frame)>) -> u64 {
    let mut frames = Vec::new();
    conn.output(now, &mut frames);
    let n = frames.len() as u64;
    out.extend(frames.into_iter().map(|f| (port, f)));
    costs.tx_frame * n
}

pub struct FileRequest {
    cfg: FileRequestConfig,
    pub conns: Vec<Conn>,
    by_port: HashMap<u16, usize>,
    in_file: Vec<u32>,
    files: u64,
    measured_bytes: u64,
}

impl FileRequest {
    pub fn new(cfg: FileRequestConfig, mac: [u8; 6], ip: [u8; 4]) -> Self {
        let conns: Vec<Conn> = cfg.sessions.iter().map(|(port, peer)| Conn::new(cfg.tcp, Addr { mac, ip, port: *port }, *peer)).collect();
        let by_port = cfg.sessions.iter().enumerate().map(|(i, (p, _))| (*p, i)).collect();
        let n = conns.len();
        FileRequest { cfg, conns, by_port, in_file: vec![0; n], files: 0, measured_bytes: 0 }
    }
}

/// The file requester talks through the host's first adapter.
const PORT: usize = 0;

impl TcpApp for FileRequest {
    fn sessions(&self) -> usize {
        self.conns.len()
    }

    /// Every session asks for its first file.
    fn start(&mut self, now: Time, costs: &Costs, out: &mut Vec<(usize, Frame)>) -> u64 {
        let mut cycles = 0;
        for c in &mut self.conns {
            c.queue(self.cfg.request_bytes);
            cycles += costs.app_request + send(c, PORT, now, costs, out);
        }
        cycles
    }

    fn receive(
        &mut self,
        _port: usize,
        frame: &Frame,
        now: Time,
        measuring: bool,
        costs: &Costs,
        out: &mut Vec<(usize, Frame)>,
    ) -> Option<(u64, usize)> {
        let seg = Segment::parse(&frame.bytes)?;
        let i = *self.by_port.get(&seg.dst_port)?;
        let got = self.conns[i].input(&seg, &frame.bytes[seg.payload.clone()], now);
        if measuring {
            self.measured_bytes += got as u64;
        }
        let mut cycles = costs.protocol_segment;
        self.in_file[i] += got;
        while self.in_file[i] >= self.cfg.file_bytes {
            self.in_file[i] -= self.cfg.file_bytes;
            self.files += 1;
            self.conns[i].queue(self.cfg.request_bytes);
            cycles += costs.app_request;
        }
        Some((cycles + send(&mut self.conns[i], PORT, now, costs, out), i))
    }

    fn timer(&mut self, i: usize, now: Time, costs: &Costs, out: &mut Vec<(usize, Frame)>) -> u64 {
        self.conns[i].on_timer(now);
        costs.protocol_segment + send(&mut self.conns[i], PORT, now, costs, out)
    }

    fn next_timer(&self, i: usize) -> Option<Time> {
        self.conns[i].next_timer()
    }

    fn report(&self, r: &mut Report, seconds: f64) {
        r.count("files_received", self.files);
        r.count("app_bytes", self.measured_bytes);
        r.real("app_goodput_mbps", if seconds > 0.0 { self.measured_bytes as f64 * 8.0 / seconds / 1e6 } else { 0.0 });
        tcp_report(r, &self.conns);
    }
}

/// The sessions' TCP counters, summed.
pub fn tcp_report(r: &mut Report, conns: &[Conn]) {
    let sum = |f: fn(&Conn) -> u64| conns.iter().map(f).sum();
    r.count("tcp_retransmits", sum(|c| c.retransmits));
    r.count("tcp_out_of_order", sum(|c| c.out_of_order));
    r.count("tcp_bad_payload", sum(|c| c.bad_payload));
}

/// Counts received frames no session claims, as a raw receiver would.
#[derive(Default)]
pub struct SinkCount {
    pub frames: u64,
    pub bytes: u64,
}

impl SinkCount {
    pub fn report(&self, r: &mut Report, seconds: f64) {
        r.count("sink_frames", self.frames);
        r.real("sink_frame_rate_pps", if seconds > 0.0 { self.frames as f64 / seconds } else { 0.0 });
        // Throughput as the wire sees it: frame, FCS, preamble and gap.
        let wire = self.bytes + self.frames * 24;
        r.real("sink_wire_mbps", if seconds > 0.0 { wire as f64 * 8.0 / seconds / 1e6 } else { 0.0 });
    }
}

/// A sender that builds numbered frames from a template.
pub struct Blast {
    pub cfg: BlastConfig,
    maker: Source,
    pub sent: u64,
    pub measured_frames: u64,
    pub measured_bytes: u64,
}

impl Blast {
    pub fn new(cfg: BlastConfig) -> Result<Self, String> {
        let maker = Source::new(cfg.frames.clone())?;
        Ok(Blast { cfg, maker, sent: 0, measured_frames: 0, measured_bytes: 0 })
    }

    pub fn next(&mut self, now: Time, measuring: bool, rng: &mut SimRng) -> Frame {
        let bytes = self.maker.make_frame(self.sent, rng);
        let meta = FrameMeta { created: now, flow: self.cfg.frames.flow, seq: self.sent };
        self.sent += 1;
        if measuring {
            self.measured_frames += 1;
            self.measured_bytes += bytes.len() as u64;
        }
        Frame { bytes, meta }
    }

    pub fn report(&self, r: &mut Report, seconds: f64) {
        r.count("blast_frames", self.sent);
        r.real("blast_frame_rate_pps", if seconds > 0.0 { self.measured_frames as f64 / seconds } else { 0.0 });
        let wire = self.measured_bytes + self.measured_frames * 24;
        r.real("blast_wire_mbps", if seconds > 0.0 { wire as f64 * 8.0 / seconds / 1e6 } else { 0.0 });
    }
}
