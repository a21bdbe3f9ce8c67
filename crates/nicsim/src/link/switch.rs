//! A store-and-forward Ethernet switch: it forwards a frame only once it has all of
//! it (the link delivers frames whole), learns source addresses, floods unknown and
//! group destinations, and keeps a bounded output queue per port (tail drop).
//! Each output books its link's wire as the link would (the port's rate is known
//! at assembly), so a frame is handed to the link when it starts to leave and the
//! link never has to say it is free again: no event per frame for that.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::engine::{Component, Ctx, Msg, PortId};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::ethernet::wire_time;
use crate::wire::Frame;

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchConfig {
    pub ports: u16,
    /// Frames each output port may hold waiting for its link.
    pub queue_frames: usize,
    /// Forwarding decision time from the last bit in to the frame being ready to go.
    pub latency: Duration,
    /// Each port's link rate in bits per second (0: no link).
    pub port_rates: Vec<u64>,
}

#[derive(Default)]
struct Output {
    rate_bps: u64,
    /// When the frames handed to the link and not yet sent whole leave the wire,
    /// oldest first: the one being sent, then those queued behind it.
    leaving: VecDeque<Time>,
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
        let rate = |p: usize| cfg.port_rates.get(p).copied().unwrap_or(0);
        let outputs = (0..cfg.ports as usize).map(|p| Output { rate_bps: rate(p), ..Output::default() }).collect();
        Switch { cfg, table: FxHashMap::default(), outputs, received: 0, flooded: 0, filtered: 0, runts: 0 }
    }

    /// Whether output `port` takes another frame at `now`: idle, or room in its queue.
    fn takes(&mut self, port: PortId, now: Time) -> bool {
        let out = &mut self.outputs[port as usize];
        while out.leaving.front().is_some_and(|end| *end <= now) {
            out.leaving.pop_front();
        }
        out.leaving.len() <= self.cfg.queue_frames
    }

    /// Send `frame` out of `port`, which takes it, once it is `ready` and the
    /// wire is free.
    fn enqueue(&mut self, port: PortId, ready: Time, frame: Box<Frame>, ctx: &mut Ctx) {
        let out = &mut self.outputs[port as usize];
        let start = out.leaving.back().map_or(ready, |free| ready.max(*free));
        let wire = wire_time(frame.len(), out.rate_bps);
        out.leaving.push_back(start + wire);
        out.max_depth = out.max_depth.max(out.leaving.len() - 1);
        out.forwarded += 1;
        ctx.send_at(port, start, Msg::Frame(frame));
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
            Some(out) if self.takes(out, ctx.now()) => self.enqueue(out, ready, frame, ctx),
            Some(out) => self.outputs[out as usize].drops += 1,
            None => {
                self.flooded += 1;
                // A copy only for each port that takes it (a full one drops the
                // frame anyway, one with no link has nowhere to send it); the
                // last taker gets the frame itself.
                let mut takers = Vec::new();
                for out in (0..self.cfg.ports).filter(|&p| p != port) {
                    if self.outputs[out as usize].rate_bps == 0 {
                        continue;
                    }
                    if self.takes(out, ctx.now()) {
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
        if let Msg::Frame(frame) = msg {
            self.forward(port, frame, ctx);
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

    /// Hand `msg` to the switch on `port` at `now`; the frames it sends: (port, when).
    fn step_at(sw: &mut Switch, now: Time, port: PortId, msg: Msg) -> Vec<(PortId, Time)> {
        let (mut out, mut rng) = (Vec::new(), component_rng(1, "sw"));
        let mut ctx = Ctx::new(now, &mut out, &mut rng);
        sw.handle(port, msg, &mut ctx);
        out.iter().filter(|o| matches!(o.msg, Msg::Frame(_))).map(|o| (o.port.expect("a port"), o.at)).collect()
    }

    fn step(sw: &mut Switch, port: PortId, msg: Msg) -> Vec<PortId> {
        step_at(sw, Time::ZERO, port, msg).into_iter().map(|(p, _)| p).collect()
    }

    /// A switch whose ports all have 1 Gb/s links: a 60-byte frame holds one
    /// 672 ns (84 bytes on the wire).
    fn switch(ports: u16, queue_frames: usize) -> Switch {
        Switch::new(SwitchConfig { ports, queue_frames, latency: Duration::ZERO, port_rates: vec![1_000_000_000; ports as usize] })
    }
    const WIRE: Duration = Duration::from_ns(672);

    #[test]
    fn floods_unknown_then_forwards_learned_destinations() {
        let mut sw = switch(4, 8);
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![1, 2, 3], "unknown destination floods");
        assert_eq!(step(&mut sw, 2, frame(1, 9)), vec![0], "learned from the first frame");
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![2]);
    }

    #[test]
    fn a_flood_skips_ports_with_no_link() {
        let mut sw = switch(4, 8);
        sw.outputs[2].rate_bps = 0;
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![1, 3]);
        assert_eq!(sw.report(Time::ZERO).get("port2_drops"), Some(0.0), "nothing was there to drop");
    }

    #[test]
    fn a_flood_skips_full_ports_and_counts_their_drops() {
        let mut sw = switch(3, 1);
        // Two floods from port 0: both outputs send the first and queue the second.
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![1, 2]);
        assert_eq!(step(&mut sw, 0, frame(9, 1)), vec![1, 2]);
        assert!(step(&mut sw, 0, frame(9, 1)).is_empty(), "both queues full");
        let r = sw.report(Time::ZERO);
        assert_eq!((r.get("port1_drops"), r.get("port2_drops"), r.get("flooded")), (Some(1.0), Some(1.0), Some(3.0)));
        assert_eq!(step_at(&mut sw, Time::ZERO + WIRE, 0, frame(9, 1)).len(), 2, "room again once the first has left");
    }

    #[test]
    fn output_queue_tail_drops_while_the_link_is_busy_and_sends_back_to_back() {
        let mut sw = switch(2, 2);
        step(&mut sw, 1, frame(1, 2)); // learn station 2 on port 1
        let mut sent = Vec::new();
        for _ in 0..5 {
            sent.extend(step(&mut sw, 0, frame(2, 1)));
        }
        let sent = step_at(&mut sw, Time::ZERO, 0, frame(2, 1)).len() + sent.len();
        assert_eq!(sent, 3, "one goes to the link, two wait, the rest are dropped");
        assert_eq!(sw.report(Time::ZERO).get("port1_drops"), Some(3.0));
        assert_eq!(sw.report(Time::ZERO).get("port1_max_queue"), Some(2.0));
        // Each waiting frame is handed to the link as the one before it leaves the wire.
        let mut sw = switch(2, 8);
        step(&mut sw, 1, frame(1, 2));
        let times: Vec<Time> = (0..3).flat_map(|_| step_at(&mut sw, Time::ZERO, 0, frame(2, 1))).map(|(_, t)| t).collect();
        assert_eq!(times, vec![Time::ZERO, Time::ZERO + WIRE, Time::ZERO + WIRE + WIRE]);
    }
}
