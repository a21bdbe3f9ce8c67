//! A store-and-forward Ethernet switch: it forwards a frame only once it has all of
//! it (the link delivers frames whole), learns source addresses, floods unknown and
//! group destinations, and keeps a bounded output queue per port (tail drop).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

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
    queue: VecDeque<(Time, Box<Frame>)>,
    forwarded: u64,
    drops: u64,
    max_depth: usize,
}

pub struct Switch {
    cfg: SwitchConfig,
    table: FxHashMap<[u8; 6], PortId>,
    outputs: Vec<Output>,
    received: u64,
    flooded: u64,
    filtered: u64,
    runts: u64,
}

impl Switch {
    pub fn new(cfg: SwitchConfig) -> Self {
        let outputs = (0..cfg.ports).map(|_| Output::default()).collect();
        Switch { cfg, table: FxHashMap::default(), outputs, received: 0, flooded: 0, filtered: 0, runts: 0 }
    }

    /// Whether output `port` takes another frame now: idle, or room in its queue.
    fn takes(&self, port: PortId) -> bool {
        let out = &self.outputs[port as usize];
        !out.sending || out.queue.len() < self.cfg.queue_frames
    }

    fn enqueue(&mut self, port: PortId, ready: Time, frame: Box<Frame>, ctx: &mut Ctx) {
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

    fn forward(&mut self, port: PortId, frame: Box<Frame>, ctx: &mut Ctx) {
        self.received += 1;
        let (Some(dst), Some(src)) = (frame.destination(), frame.source()) else {
            self.runts += 1;
            return;
        };
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
                // A copy only for each port that takes it (a full one drops the
                // frame anyway); the last taker gets the frame itself.
                let mut takers = Vec::new();
                for out in (0..self.cfg.ports).filter(|&p| p != port) {
                    if self.takes(out) {
                        takers.push(out);
                    } else {
                        self.outputs[out as usize].drops += 1;
                    }
                }
                if let Some((&last, rest)) = takers.split_last() {
                    for &out in rest {
                        self.enqueue(out, ready, frame.clone(), ctx);
                    }
                    self.enqueue(last, ready, frame, ctx);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::component_rng;
    use crate::wire::FrameMeta;

    fn frame(dst: u8, src: u8) -> Msg {
        let mut bytes = vec![0u8; 60];
        bytes[..6].copy_from_slice(&[2, 0, 0, 0, 0, dst]);
        bytes[6..12].copy_from_slice(&[2, 0, 0, 0, 0, src]);
        Msg::frame(Frame { bytes, meta: FrameMeta::default() })
    }

    fn step(sw: &mut Switch, port: PortId, msg: Msg) -> Vec<PortId> {
        let (mut out, mut rng) = (Vec::new(), component_rng(1, "sw"));
        let mut ctx = Ctx::new(Time::ZERO, &mut out, &mut rng);
        sw.handle(port, msg, &mut ctx);
        out.iter().filter(|o| matches!(o.msg, Msg::Frame(_))).filter_map(|o| o.port).collect()
    }

    #[test]
    fn floods_unknown_then_forwards_learned_destinations() {
        let mut sw = Switch::new(SwitchConfig { ports: 4, queue_frames: 8, latency: Duration::ZERO });
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![1, 2, 3], "unknown destination floods");
        for p in 1..4 {
            step(&mut sw, p, Msg::TxReady);
        }
        assert_eq!(step(&mut sw, 2, frame(1, 9)), vec![0], "learned from the first frame");
        step(&mut sw, 0, Msg::TxReady);
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![2]);
    }

    #[test]
    fn a_flood_skips_full_ports_and_counts_their_drops() {
        let mut sw = Switch::new(SwitchConfig { ports: 3, queue_frames: 1, latency: Duration::ZERO });
        // Two floods from port 0: both outputs send the first and queue the second.
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![1, 2]);
        assert!(step(&mut sw, 0, frame(9, 1)).is_empty());
        assert!(step(&mut sw, 0, frame(9, 1)).is_empty(), "both queues full");
        let r = sw.report(Time::ZERO);
        assert_eq!((r.get("port1_drops"), r.get("port2_drops"), r.get("flooded")), (Some(1.0), Some(1.0), Some(3.0)));
        assert_eq!(step(&mut sw, 2, Msg::TxReady), vec![2], "the queued copy goes when the link is free");
    }

    #[test]
    fn output_queue_tail_drops_while_the_link_is_busy() {
        let mut sw = Switch::new(SwitchConfig { ports: 2, queue_frames: 2, latency: Duration::ZERO });
        step(&mut sw, 1, frame(1, 2)); // learn station 2 on port 1
        step(&mut sw, 0, Msg::TxReady);
        let mut sent = 0;
        for _ in 0..5 {
            sent += step(&mut sw, 0, frame(2, 1)).len();
        }
        assert_eq!(sent, 1, "one goes to the link, two wait, two are dropped");
        assert_eq!(sw.report(Time::ZERO).get("port1_drops"), Some(2.0));
        assert_eq!(step(&mut sw, 1, Msg::TxReady), vec![1], "the link's TxReady releases the next");
    }
}
