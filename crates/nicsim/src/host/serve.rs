//! A file server (the NetWare server of BRIEF.md experiment 4): clients open
//! sessions and ask for blocks; each whole request is answered with one block
//! read from the server's cache. A session answers by the adapter its requests
//! came in on, as a server with one segment per adapter does.

use std::collections::HashMap;

use crate::host::apps::{send, tcp_report, TcpApp};
use crate::host::config::{Costs, FileServeConfig};
use crate::host::segment::{Addr, Segment};
use crate::host::tcp::Conn;
use crate::observe::Report;
use crate::time::Time;
use crate::wire::Frame;

pub struct FileServe {
    cfg: FileServeConfig,
    conns: Vec<Conn>,
    /// Session by the client's address and port.
    by_client: HashMap<([u8; 4], u16), usize>,
    /// The adapter each session's requests arrive by (until then, the first).
    port: Vec<usize>,
    request_in: Vec<u32>,
    blocks: u64,
    measured_bytes: u64,
    /// Request bytes taken in (a write when requests are large).
    measured_in: u64,
}

impl FileServe {
    pub fn new(cfg: FileServeConfig, mac: [u8; 6], ip: [u8; 4]) -> Self {
        let conns: Vec<Conn> =
            cfg.clients.iter().map(|(port, client)| Conn::new(cfg.tcp, Addr { mac, ip, port: *port }, *client)).collect();
        let by_client = cfg.clients.iter().enumerate().map(|(i, (_, c))| ((c.ip, c.port), i)).collect();
        let n = conns.len();
        FileServe { cfg, conns, by_client, port: vec![0; n], request_in: vec![0; n], blocks: 0, measured_bytes: 0, measured_in: 0 }
    }
}

impl TcpApp for FileServe {
    fn sessions(&self) -> usize {
        self.conns.len()
    }

    /// Clients speak first.
    fn start(&mut self, _now: Time, _costs: &Costs, _out: &mut Vec<(usize, Frame)>) -> u64 {
        0
    }

    fn receive(
        &mut self,
        port: usize,
        frame: &Frame,
        now: Time,
        measuring: bool,
        costs: &Costs,
        out: &mut Vec<(usize, Frame)>,
    ) -> Option<(u64, usize)> {
        let seg = Segment::parse(&frame.bytes)?;
        let i = *self.by_client.get(&(seg.src_ip, seg.src_port))?;
        if seg.dst_port != self.conns[i].local.port {
            return None;
        }
        self.port[i] = port;
        let before = self.conns[i].unacknowledged();
        let got = self.conns[i].input(&seg, &frame.bytes[seg.payload.clone()], now);
        self.request_in[i] += got;
        // Bytes the client acknowledged with this segment.
        let acked = before.saturating_sub(self.conns[i].unacknowledged());
        if measuring {
            self.measured_bytes += acked as u64;
            self.measured_in += got as u64;
        }
        let mut cycles = costs.protocol_segment;
        while self.request_in[i] >= self.cfg.request_bytes {
            self.request_in[i] -= self.cfg.request_bytes;
            self.conns[i].queue(self.cfg.read_bytes);
            self.blocks += 1;
            cycles += costs.app_request;
        }
        Some((cycles + send(&mut self.conns[i], port, now, costs, out), i))
    }

    fn timer(&mut self, i: usize, now: Time, costs: &Costs, out: &mut Vec<(usize, Frame)>) -> u64 {
        self.conns[i].on_timer(now);
        costs.protocol_segment + send(&mut self.conns[i], self.port[i], now, costs, out)
    }

    fn next_timer(&self, i: usize) -> Option<Time> {
        self.conns[i].next_timer()
    }

    fn report(&self, r: &mut Report, seconds: f64) {
        r.count("blocks_served", self.blocks);
        r.count("served_bytes", self.measured_bytes);
        let rate = if seconds > 0.0 { self.measured_bytes as f64 / seconds } else { 0.0 };
        r.real("served_mbytes_per_s", rate / 1e6);
        let rate_in = if seconds > 0.0 { self.measured_in as f64 / seconds } else { 0.0 };
        r.real("received_mbytes_per_s", rate_in / 1e6);
        r.real("app_goodput_mbps", (rate + rate_in) * 8.0 / 1e6);
        tcp_report(r, &self.conns);
    }
}
