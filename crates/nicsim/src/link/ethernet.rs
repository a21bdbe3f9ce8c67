//! A full-duplex Ethernet link. Each direction sends one frame at a time at the
//! line rate, charging preamble + SFD, the frame padded to 64 bytes with its FCS,
//! and the inter-frame gap; the far end gets the frame when its last bit arrives,
//! after the propagation delay. Frames that find the transmitter busy wait in a
//! bounded queue (the sending MAC's), and are dropped, counted, when it is full.

use std::collections::VecDeque;

use crate::engine::{Component, Ctx, Inline, Msg, PortId};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::ethernet::{bytes_until_received, wire_time};

/// A link's ends, `a` and `b` as the scenario names them: a frame that comes in
/// at one leaves at the other.
pub const END_A: PortId = 0;
pub const END_B: PortId = 1;

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
    /// The last frame length seen, its wire occupancy and its time until received:
    /// frames of one size follow each other, and each time costs two divisions.
    last_len: (usize, Duration, Duration),
}

impl EthernetLink {
    pub fn new(cfg: LinkConfig) -> Self {
        assert!(cfg.rate_bps > 0, "link rate must be positive");
        EthernetLink { cfg, dirs: Default::default(), last_len: (usize::MAX, Duration::ZERO, Duration::ZERO) }
    }

    /// Time a frame of `len` stored bytes holds the wire, gap included.
    pub fn occupancy(&self, len: usize) -> Duration {
        wire_time(len, self.cfg.rate_bps)
    }
}

impl Component for EthernetLink {
    fn kind(&self) -> &'static str {
        "link"
    }

    fn inline(&self) -> Inline {
        Inline::Ahead
    }

    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx) {
        let Msg::Frame(frame) = msg else { return };
        let (side, far) = if port == END_A { (0, END_B) } else { (1, END_A) };
        let now = ctx.now();
        if self.last_len.0 != frame.len() {
            let until_received = Duration::for_bits(bytes_until_received(frame.len()) as u64 * 8, self.cfg.rate_bps);
            self.last_len = (frame.len(), self.occupancy(frame.len()), until_received);
        }
        let (_, occupancy, until_received) = self.last_len;
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
        ctx.send_at(far, start + until_received + self.cfg.propagation, Msg::Frame(frame));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::component_rng;
    use crate::wire::{Frame, FrameMeta};

    fn frame(len: usize) -> Msg {
        Msg::frame(Frame { bytes: vec![0; len], meta: FrameMeta::default() })
    }

    /// Offer frames at `now` and return what the link sent: (time, port, is_frame).
    fn offer(link: &mut EthernetLink, now: Time, frames: usize) -> Vec<(Time, Option<PortId>, bool)> {
        let (mut out, mut rng) = (Vec::new(), component_rng(1, "l"));
        for _ in 0..frames {
            let mut ctx = Ctx::new(now, &mut out, &mut rng);
            link.handle(0, frame(1514), &mut ctx);
        }
        out.into_iter().map(|o| (o.at, o.port, matches!(o.msg, Msg::Frame(_)))).collect()
    }

    #[test]
    fn back_to_back_frames_are_spaced_by_their_wire_time_and_arrive_after_propagation() {
        let mut link = EthernetLink::new(LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::from_ns(500), tx_queue: 10 });
        let sent = offer(&mut link, Time::ZERO, 2);
        // 1538 bytes on the wire at 1 Gb/s = 12.304 us; last bit (without the gap) at 12.208 us.
        assert_eq!(sent[0], (Time(12_208_000 + 500_000), Some(1), true));
        assert_eq!(sent[1], (Time(12_304_000 + 12_208_000 + 500_000), Some(1), true));
        assert_eq!(sent.len(), 2, "the sender is not told when the wire is free");
    }

    #[test]
    fn a_full_transmit_queue_drops_and_counts() {
        let mut link = EthernetLink::new(LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::ZERO, tx_queue: 3 });
        let sent = offer(&mut link, Time::ZERO, 10);
        assert_eq!(sent.iter().filter(|s| s.2).count(), 4, "one on the wire and three waiting");
        let r = link.report(Time(1_000_000_000));
        assert_eq!(r.get("a_to_b_drops"), Some(6.0));
        assert_eq!(r.get("a_to_b_frames"), Some(4.0));
        // Once the queue has drained, frames are accepted again.
        let later = offer(&mut link, Time(4 * 12_304_000), 1);
        assert_eq!(later.len(), 1);
    }
}
