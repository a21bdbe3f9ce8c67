//! A full-duplex Ethernet link. Each direction sends one frame at a time at the
//! line rate, charging preamble + SFD, the frame padded to 64 bytes with its FCS,
//! and the inter-frame gap; the far end gets the frame when its last bit arrives,
//! after the propagation delay. Frames that find the transmitter busy wait in a
//! bounded queue (the sending MAC's), and are dropped, counted, when it is full.

use std::collections::VecDeque;

use crate::engine::{Component, Ctx, Msg, PortId};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::ethernet::{bytes_until_received, wire_bytes};

#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    pub rate_bps: u64,
    pub propagation: Duration,
    /// Frames that may wait behind the one being sent.
    pub tx_queue: usize,
}

#[derive(Debug, Default)]
struct Direction {
    busy_until: Time,
    /// End times of frames accepted and not yet fully sent, oldest first.
    in_progress: VecDeque<Time>,
    frames: u64,
    bytes: u64,
    drops: u64,
    busy: Duration,
}

pub struct EthernetLink {
    cfg: LinkConfig,
    dirs: [Direction; 2],
}

impl EthernetLink {
    pub fn new(cfg: LinkConfig) -> Self {
        assert!(cfg.rate_bps > 0, "link rate must be positive");
        EthernetLink { cfg, dirs: Default::default() }
    }

    /// Time a frame of `len` stored bytes holds the wire, gap included.
    pub fn occupancy(&self, len: usize) -> Duration {
        Duration::for_bits(wire_bytes(len) as u64 * 8, self.cfg.rate_bps)
    }
}

impl Component for EthernetLink {
    fn kind(&self) -> &'static str {
        "link"
    }

    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx) {
        let Msg::Frame(frame) = msg else { return };
        let side = port as usize & 1;
        let now = ctx.now();
        let occupancy = self.occupancy(frame.len());
        let until_received = Duration::for_bits(bytes_until_received(frame.len()) as u64 * 8, self.cfg.rate_bps);
        let dir = &mut self.dirs[side];
        while dir.in_progress.front().is_some_and(|end| *end <= now) {
            dir.in_progress.pop_front();
        }
        if dir.in_progress.len() > self.cfg.tx_queue {
            dir.drops += 1;
            return;
        }
        let start = now.max(dir.busy_until);
        let end = start + occupancy;
        dir.busy_until = end;
        dir.in_progress.push_back(end);
        dir.frames += 1;
        dir.bytes += frame.len() as u64;
        dir.busy = dir.busy + occupancy;
        ctx.send_at(1 - side as PortId, start + until_received + self.cfg.propagation, Msg::Frame(frame));
        ctx.send_at(port, end, Msg::TxReady);
    }

    fn report(&self, end: Time) -> Report {
        let mut r = Report::default();
        for (name, d) in ["a_to_b", "b_to_a"].iter().zip(&self.dirs) {
            r.count(&format!("{name}_frames"), d.frames);
            r.count(&format!("{name}_bytes"), d.bytes);
            r.count(&format!("{name}_drops"), d.drops);
            let busy = d.busy.ps().min(end.ps()) as f64;
            r.real(&format!("{name}_utilization"), if end.ps() == 0 { 0.0 } else { busy / end.ps() as f64 });
        }
        r
    }
}
