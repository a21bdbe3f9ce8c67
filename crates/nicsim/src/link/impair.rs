//! Loss and reordering as a wrapper around a link (smoltcp's `FaultInjector`):
//! each frame the link delivers is dropped with probability `loss`, or else held
//! back by `reorder_delay` with probability `reorder`, so frames behind it
//! overtake it. Draws come from the link's own seeded stream. Frames named by
//! number (`drop_a_to_b`) are dropped whatever the draw.

use crate::engine::{Component, Ctx, Inline, Msg, PortId};
use crate::observe::Report;
use crate::time::{Duration, Time};
use rand::Rng;

#[derive(Clone, Debug, PartialEq)]
pub struct Impairment {
    pub loss: f64,
    pub reorder: f64,
    pub reorder_delay: Duration,
    /// The numbers (from 1, ascending) of the frames from `a` to `b` to drop.
    pub drop_a_to_b: Vec<u64>,
}

pub struct Impaired {
    inner: Box<dyn Component>,
    cfg: Impairment,
    dropped: u64,
    reordered: u64,
    /// Frames delivered from `a` to `b` so far.
    a_to_b: u64,
}

impl Impaired {
    pub fn new(inner: Box<dyn Component>, cfg: Impairment) -> Self {
        Impaired { inner, cfg, dropped: 0, reordered: 0, a_to_b: 0 }
    }
}

impl Component for Impaired {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn inline(&self) -> Inline {
        self.inner.inline()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        self.inner.start(ctx)
    }
    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx) {
        let mark = ctx.sent().len();
        self.inner.handle(port, msg, ctx);
        for mut out in ctx.take_sent(mark) {
            if matches!(out.msg, Msg::Frame(_)) && out.port.is_some() {
                // Out of port 1 is towards `b`.
                if out.port == Some(1) {
                    self.a_to_b += 1;
                    if self.cfg.drop_a_to_b.binary_search(&self.a_to_b).is_ok() {
                        self.dropped += 1;
                        continue;
                    }
                }
                let draw: f64 = ctx.rng().random();
                if draw < self.cfg.loss {
                    self.dropped += 1;
                    continue;
                }
                if draw < self.cfg.loss + self.cfg.reorder {
                    self.reordered += 1;
                    out.at += self.cfg.reorder_delay;
                }
            }
            ctx.resend(out);
        }
    }
    fn finish(&mut self, end: Time) -> Result<(), String> {
        self.inner.finish(end)
    }
    fn report(&self, end: Time) -> Report {
        let mut r = self.inner.report(end);
        r.count("impaired_dropped", self.dropped).count("impaired_reordered", self.reordered);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::component_rng;
    use crate::link::{EthernetLink, LinkConfig};
    use crate::wire::{Frame, FrameMeta};

    #[test]
    fn about_the_given_fractions_are_dropped_and_held_back() {
        let link = EthernetLink::new(LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::ZERO, tx_queue: 100_000 });
        let mut w = Impaired::new(
            Box::new(link),
            Impairment { loss: 0.1, reorder: 0.2, reorder_delay: Duration::from_us(50), drop_a_to_b: Vec::new() },
        );
        let (mut out, mut rng) = (Vec::new(), component_rng(3, "l"));
        for _ in 0..10_000 {
            let mut ctx = Ctx::new(Time::ZERO, &mut out, &mut rng);
            w.handle(0, Msg::frame(Frame { bytes: vec![0; 60], meta: FrameMeta::default() }), &mut ctx);
        }
        let r = w.report(Time(1));
        let (d, h) = (r.get("impaired_dropped").unwrap(), r.get("impaired_reordered").unwrap());
        assert!((900.0..1100.0).contains(&d), "dropped {d}");
        assert!((1800.0..2200.0).contains(&h), "held {h}");
        assert_eq!(out.len() as f64, 10_000.0 - d);
        let late = out.windows(2).filter(|p| p[1].at < p[0].at).count();
        assert!(late > 1000, "held-back frames are overtaken: {late}");
    }

    #[test]
    fn the_frames_named_are_dropped_one_way_only() {
        let link = EthernetLink::new(LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::ZERO, tx_queue: 100_000 });
        let cfg = Impairment { loss: 0.0, reorder: 0.0, reorder_delay: Duration::ZERO, drop_a_to_b: vec![2, 5] };
        let mut w = Impaired::new(Box::new(link), cfg);
        let (mut out, mut rng) = (Vec::new(), component_rng(3, "l"));
        for i in 0..6u8 {
            for port in [0, 1] {
                let mut ctx = Ctx::new(Time::ZERO, &mut out, &mut rng);
                w.handle(port, Msg::frame(Frame { bytes: vec![i; 60], meta: FrameMeta::default() }), &mut ctx);
            }
        }
        let to_b: Vec<u8> = out
            .iter()
            .filter(|o| o.port == Some(1))
            .map(|o| match &o.msg {
                Msg::Frame(f) => f.bytes[0],
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(to_b, [0, 2, 3, 5], "the second and fifth frame towards b are gone");
        assert_eq!(out.iter().filter(|o| o.port == Some(0)).count(), 6, "nothing towards a");
        assert_eq!(w.report(Time(1)).get("impaired_dropped"), Some(2.0));
    }
}
