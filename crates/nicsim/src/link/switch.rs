//! A store-and-forward Ethernet switch: it forwards a frame only once it has all of
//! it (the link delivers frames whole), learns source addresses, floods unknown and
//! group destinations, and keeps a bounded output queue per port (tail drop).

use std::collections::{HashMap, VecDeque};

use crate::engine::{Component, Ctx, Msg, PortId};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::Frame;

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchConfig {
    pub ports: u16,
    /// Frames each output port may hold waiting for its link.
    pub queue_frames: usize,
    /// Forwarding decision time from the last bit in to the frame being ready to go.
    pub latency: Duration,
}

#[derive(Default)]
struct Output {
    /// Waiting for the link's TxReady.
    sending: bool,
    /// Frames with the time they are ready to leave.
    queue: VecDeque<(Time, Frame)>,
    forwarded: u64,
    drops: u64,
    max_depth: usize,
}

pub struct Switch {
    cfg: SwitchConfig,
    table: HashMap<[u8; 6], PortId>,
    outputs: Vec<Output>,
    received: u64,
    flooded: u64,
    filtered: u64,
    runts: u64,
}

impl Switch {
    pub fn new(cfg: SwitchConfig) -> Self {
        let outputs = (0..cfg.ports).map(|_| Output::default()).collect();
        Switch { cfg, table: HashMap::new(), outputs, received: 0, flooded: 0, filtered: 0, runts: 0 }
    }

    fn enqueue(&mut self, port: PortId, ready: Time, frame: Frame, ctx: &mut Ctx) {
        let out = &mut self.outputs[port as usize];
        if !out.sending {
            out.sending = true;
            out.forwarded += 1;
            ctx.send_at(port, ready, Msg::Frame(frame));
        } else if out.queue.len() < self.cfg.queue_frames {
            out.queue.push_back((ready, frame));
            out.max_depth = out.max_depth.max(out.queue.len());
        } else {
            out.drops += 1;
        }
    }

    fn forward(&mut self, port: PortId, frame: Frame, ctx: &mut Ctx) {
        self.received += 1;
        let (Some(dst), Some(src)) = (frame.bytes.get(..6), frame.bytes.get(6..12)) else {
            self.runts += 1;
            return;
        };
        let dst: [u8; 6] = dst.try_into().expect("6 bytes");
        let src: [u8; 6] = src.try_into().expect("6 bytes");
        if src[0] & 1 == 0 {
            self.table.insert(src, port);
        }
        let ready = ctx.now() + self.cfg.latency;
        let known = if dst[0] & 1 == 0 { self.table.get(&dst).copied() } else { None };
        match known {
            Some(out) if out == port => self.filtered += 1,
            Some(out) => self.enqueue(out, ready, frame, ctx),
            None => {
                self.flooded += 1;
                for out in (0..self.cfg.ports).filter(|p| *p != port) {
                    self.enqueue(out, ready, frame.clone(), ctx);
                }
            }
        }
    }
}

impl Component for Switch {
    fn kind(&self) -> &'static str {
        "switch"
    }

    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx) {
        match msg {
            Msg::Frame(frame) => self.forward(port, frame, ctx),
            Msg::TxReady => {
                let out = &mut self.outputs[port as usize];
                match out.queue.pop_front() {
                    Some((ready, frame)) => {
                        out.forwarded += 1;
                        ctx.send_at(port, ready.max(ctx.now()), Msg::Frame(frame));
                    }
                    None => out.sending = false,
                }
            }
            Msg::Timer(_) => {}
        }
    }

    fn report(&self, _end: Time) -> Report {
        let mut r = Report::default();
        r.count("received", self.received).count("flooded", self.flooded).count("filtered", self.filtered).count("runts", self.runts);
        r.count("drops", self.outputs.iter().map(|o| o.drops).sum());
        for (i, o) in self.outputs.iter().enumerate() {
            r.count(&format!("port{i}_forwarded"), o.forwarded);
            r.count(&format!("port{i}_drops"), o.drops);
            r.count(&format!("port{i}_max_queue"), o.max_depth as u64);
        }
        r
    }
}
