//! A traffic source: real frames of one size, raw Ethernet or UDP (TCP segments
//! come only from a TCP stack: a host's), at the line rate or at a given rate, constant or Poisson. At the line
//! rate it books its link's wire itself (assembly gives it the link's rate) and
//! hands the link the frames that start within the next few microseconds at
//! once, each at its own start: one wake-up for a run of frames, not one each.
//! Each payload starts with a stamp (flow, sequence) when it fits; per-frame
//! header changes update checksums incrementally (RFC 1624).

use rand::{Rng, RngCore};

use crate::engine::{Component, Ctx, Msg, PortId, SimRng, WIRE};
use crate::link::stamp::{Stamp, STAMP_LEN};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::ethernet::{wire_time, FCS};
use crate::wire::{build, checksum, FrameMeta, Headers, View, L3, L4};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// As fast as the link takes frames.
    Line,
    /// Bits per second counted on the wire (preamble, FCS and gap included), so
    /// that a link's own rate means back to back.
    BitsPerSecond(u64),
    FramesPerSecond(f64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Constant,
    Poisson,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Bytes counting up from the stamp: cheap, and visible in a capture.
    Counter,
    /// Fresh random bytes per frame from the source's own RNG.
    Random,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SourceConfig {
    pub headers: Headers,
    /// Bytes after the last header (UDP/TCP payload, or Ethernet payload when raw).
    pub payload_len: usize,
    pub rate: Rate,
    pub pattern: Pattern,
    pub fill: Fill,
    pub count: Option<u64>,
    pub start: Duration,
    pub flow: u32,
    /// UDP or TCP source ports its frames take in turn, from the template's:
    /// frame n leaves port + n mod `ports` (a receiver's RSS spreads them).
    pub ports: u16,
    /// The rate of the link the source sends on, bits per second.
    pub link_bps: u64,
    /// The end of the run, if it has one: no frame starts after it.
    pub until: Option<Time>,
}

impl SourceConfig {
    /// A sender's frames, built from `headers` at `frame_size` bytes with FCS
    /// and numbered in turn, for a host's frame sender (`host::apps::FrameSender`).
    pub fn numbered(headers: Headers, frame_size: usize, flow: u32) -> SourceConfig {
        let payload_len = frame_size - crate::wire::ethernet::FCS - headers.header_len();
        SourceConfig {
            headers,
            payload_len,
            rate: Rate::Line,
            pattern: Pattern::Constant,
            fill: Fill::Counter,
            count: None,
            start: Duration::ZERO,
            flow,
            ports: 1,
            link_bps: 0,
            until: None,
        }
    }
}

/// At the line rate, frames handed to the link per wake-up: at most this many,
/// starting within `LINE_BATCH_WITHIN` of the first.
const LINE_BATCH: usize = 32;
const LINE_BATCH_WITHIN: Duration = Duration::from_us(10);

/// Where the fields the source changes per frame sit in its template.
struct Layout {
    payload_at: usize,
    ip_id_at: Option<usize>,
    ip_csum_at: Option<usize>,
    l4_csum: Option<usize>,
    l4_at: usize,
    l4_end: usize,
}

pub struct Source {
    cfg: SourceConfig,
    template: Vec<u8>,
    layout: Layout,
    /// RFC 1624's terms for the stamp written over the template's bytes, with
    /// sequence number 0 (a frame's own number adds its words).
    stamp_terms: u64,
    sent: u64,
    bytes: u64,
    first: Option<Time>,
    last: Time,
}

const TAG_NEXT: u64 = 0;

impl Source {
    pub fn new(cfg: SourceConfig) -> Result<Self, String> {
        let mut payload = vec![0u8; cfg.payload_len];
        for (i, b) in payload.iter_mut().enumerate().skip(STAMP_LEN) {
            *b = i as u8;
        }
        let template = build(&cfg.headers, &payload).map_err(|e| e.to_string())?;
        let view = View::parse(&template)?;
        let l3 = view.l3_offset;
        let (l4_at, l4_end) = (view.l4.map(|(at, _)| at).unwrap_or(view.payload.start), view.payload.end);
        let layout = match &cfg.headers.l3 {
            L3::Raw { .. } => Layout { payload_at: l3, ip_id_at: None, ip_csum_at: None, l4_csum: None, l4_at, l4_end },
            L3::Ipv4 { l4, .. } | L3::Ipv6 { l4, .. } => {
                let v4 = matches!(cfg.headers.l3, L3::Ipv4 { .. });
                if !matches!(l4, L4::Udp { .. }) {
                    return Err("a source sends raw Ethernet or UDP: TCP segments come from a host's TCP".into());
                }
                Layout {
                    payload_at: view.payload.start,
                    ip_id_at: v4.then_some(l3 + 4),
                    ip_csum_at: v4.then_some(l3 + 10),
                    l4_csum: Some(l4_at + 6),
                    l4_at,
                    l4_end,
                }
            }
        };
        // The stamp's terms but its sequence number's, which each frame adds.
        let at = layout.payload_at;
        let stamp_terms = match template.get(at..at + STAMP_LEN) {
            Some(old) if cfg.payload_len >= STAMP_LEN => checksum::changes(old, &Stamp { flow: cfg.flow as u16, seq: 0 }.to_bytes()),
            _ => 0,
        };
        Ok(Source { cfg, template, layout, stamp_terms, sent: 0, bytes: 0, first: None, last: Time::ZERO })
    }

    /// The interval to the next frame at a given (non-line) rate.
    fn gap(&self, ctx: &mut Ctx) -> Duration {
        let mean_ps = match self.cfg.rate {
            Rate::Line => return Duration::ZERO,
            Rate::BitsPerSecond(bps) => wire_time(self.template.len(), bps).ps() as f64,
            Rate::FramesPerSecond(fps) => 1e12 / fps,
        };
        let ps = match self.cfg.pattern {
            Pattern::Constant => mean_ps,
            Pattern::Poisson => -mean_ps * (1.0 - ctx.rng().random::<f64>()).ln(),
        };
        Duration(ps.round().max(1.0) as u64)
    }

    fn done(&self) -> bool {
        self.cfg.count.is_some_and(|n| self.sent >= n)
    }

    /// Frame number `n`: the template with its stamp and IPv4 ID set.
    pub fn make_frame(&self, n: u64, rng: &mut SimRng) -> Vec<u8> {
        let mut b = Vec::new();
        self.write_frame(&mut b, n, rng);
        b
    }

    /// Write frame number `n` into the empty buffer `b`.
    fn write_frame(&self, b: &mut Vec<u8>, n: u64, rng: &mut SimRng) {
        b.extend_from_slice(&self.template);
        // Old words are read from the template, not from the bytes just copied
        // out of it: a narrow read of a fresh wide write stalls store forwarding.
        let t = &self.template;
        let l = &self.layout;
        let payload_end = l.payload_at + self.cfg.payload_len;
        let random = self.cfg.fill == Fill::Random;
        // The words changed under the L4 checksum, summed as RFC 1624 updates
        // them (the old word's complement plus the new), folded in once.
        let mut l4_delta = 0u64;
        if self.cfg.payload_len >= STAMP_LEN {
            let stamp = Stamp { flow: self.cfg.flow as u16, seq: n }.to_bytes();
            let at = l.payload_at;
            if !random && l.l4_csum.is_some() {
                l4_delta += self.stamp_terms + checksum::words64(n);
            }
            b[at..at + STAMP_LEN].copy_from_slice(&stamp);
        }
        if random {
            let from = l.payload_at + STAMP_LEN.min(self.cfg.payload_len);
            rng.fill_bytes(&mut b[from..payload_end]);
        }
        if self.cfg.ports > 1 && l.l4_csum.is_some() {
            let at = l.l4_at;
            let port = u16::from_be_bytes([t[at], t[at + 1]]).wrapping_add((n % self.cfg.ports as u64) as u16);
            l4_delta += checksum::changes(&t[at..at + 2], &port.to_be_bytes());
            b[at..at + 2].copy_from_slice(&port.to_be_bytes());
        }
        if let Some(at) = l.l4_csum {
            let c = if random { self.full_l4_checksum(b, at) } else { checksum::apply(u16::from_be_bytes([t[at], t[at + 1]]), l4_delta) };
            // UDP sends a computed zero as all ones (zero means none).
            let c = if c == 0 { 0xffff } else { c };
            b[at..at + 2].copy_from_slice(&c.to_be_bytes());
        }
        if let (Some(id_at), Some(csum_at)) = (l.ip_id_at, l.ip_csum_at) {
            let old = u16::from_be_bytes([t[id_at], t[id_at + 1]]);
            let new = n as u16;
            b[id_at..id_at + 2].copy_from_slice(&new.to_be_bytes());
            let c = checksum::update(u16::from_be_bytes([t[csum_at], t[csum_at + 1]]), old, new);
            b[csum_at..csum_at + 2].copy_from_slice(&c.to_be_bytes());
        }
    }

    /// Recompute the UDP checksum over the pseudo-header and datagram.
    fn full_l4_checksum(&self, b: &mut [u8], at: usize) -> u16 {
        let l = &self.layout;
        b[at..at + 2].copy_from_slice(&[0, 0]);
        let pseudo = match &self.cfg.headers.l3 {
            L3::Ipv4 { src, dst, .. } => checksum::accumulate(checksum::accumulate(0, src), dst),
            L3::Ipv6 { src, dst, .. } => checksum::accumulate(checksum::accumulate(0, src), dst),
            L3::Raw { .. } => return 0,
        };
        let seg = &b[l.l4_at..l.l4_end];
        !checksum::fold(checksum::accumulate(pseudo + 17 + seg.len() as u64, seg))
    }

    /// Make the next frame and hand it to the link to start at `at`.
    fn send_at(&mut self, at: Time, ctx: &mut Ctx) {
        let n = self.sent;
        let meta = FrameMeta { created: at, flow: self.cfg.flow, seq: n, ..FrameMeta::default() };
        let frame = ctx.take_frame(meta, |b, rng| self.write_frame(b, n, rng));
        self.sent += 1;
        self.bytes += frame.len() as u64;
        self.first.get_or_insert(at);
        self.last = at;
        ctx.send_at(WIRE, at, Msg::Frame(frame));
    }

    /// Send what is due now; then wake when the next frame is.
    fn send_next(&mut self, ctx: &mut Ctx) {
        if self.cfg.rate != Rate::Line {
            self.send_at(ctx.now(), ctx);
            if !self.done() {
                let gap = self.gap(ctx);
                ctx.wake_after(gap, TAG_NEXT);
            }
            return;
        }
        // Back to back: each frame starts as the one before it leaves the wire.
        let wire = wire_time(self.template.len(), self.cfg.link_bps.max(1));
        let (first, mut at) = (ctx.now(), ctx.now());
        for _ in 0..LINE_BATCH {
            if self.done() || self.cfg.until.is_some_and(|end| at > end) {
                return;
            }
            if at.since(first) >= LINE_BATCH_WITHIN {
                break;
            }
            self.send_at(at, ctx);
            at += wire;
        }
        if !self.done() {
            ctx.wake_at(at, TAG_NEXT);
        }
    }
}

impl Component for Source {
    fn kind(&self) -> &'static str {
        "source"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        if !self.done() {
            ctx.wake_after(self.cfg.start, TAG_NEXT);
        }
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        if let Msg::Timer(TAG_NEXT) = msg {
            self.send_next(ctx);
        }
    }

    fn report(&self, _end: Time) -> Report {
        let mut r = Report::default();
        r.count("sent", self.sent).count("bytes", self.bytes);
        r.count("frame_size", (self.template.len() + FCS) as u64);
        let span = self.last.since(self.first.unwrap_or(self.last));
        let rate = if self.sent > 1 { (self.sent - 1) as f64 / span.as_secs_f64() } else { 0.0 };
        r.real("offered_pps", rate);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::component_rng;
    use crate::scenario::Station;
    use crate::wire::{verify_checksums, TcpFields};
    use proptest::prelude::*;

    fn config(l3: u8, vlan: Option<u16>, payload_len: usize, fill: Fill) -> SourceConfig {
        let (a, b) = (Station::numbered(1), Station::numbered(2));
        let t = L4::Udp { src_port: 1, dst_port: 2 };
        let l3 = match l3 {
            0 => L3::Raw { ether_type: 0x88b5 },
            4 => L3::Ipv4 { src: a.ipv4, dst: b.ipv4, ttl: 64, id: 0, l4: t },
            _ => L3::Ipv6 { src: a.ipv6, dst: b.ipv6, hop_limit: 64, l4: t },
        };
        SourceConfig {
            headers: Headers { dst_mac: b.mac, src_mac: a.mac, vlan, l3 },
            payload_len,
            rate: Rate::Line,
            pattern: Pattern::Constant,
            fill,
            count: None,
            start: Duration::ZERO,
            ports: 1,
            flow: 3,
            link_bps: 1_000_000_000,
            until: None,
        }
    }

    proptest! {
        #[test]
        fn every_generated_frame_has_valid_checksums_and_its_stamp(
            l3 in prop::sample::select(vec![0u8, 4, 6]), vlan in proptest::option::of(0u16..4096),
            payload_len in 0usize..1400, random in any::<bool>(), n in prop::sample::select(vec![0u64, 1, 2, 65_535, 65_536, 3_000_000, u32::MAX as u64 + 7]),
            ports in prop::sample::select(vec![1u16, 7, 1000]),
        ) {
            let fill = if random { Fill::Random } else { Fill::Counter };
            let src = Source::new(SourceConfig { ports, ..config(l3, vlan, payload_len, fill) }).unwrap();
            let (mut out, mut rng) = (Vec::new(), component_rng(1, "s"));
            let mut ctx = Ctx::new(Time::ZERO, &mut out, &mut rng);
            let bytes = src.make_frame(n, ctx.rng());
            let view = verify_checksums(&bytes).unwrap();
            if payload_len >= STAMP_LEN {
                prop_assert_eq!(Stamp::parse(&bytes[view.payload.clone()]), Some(Stamp { flow: 3, seq: n }));
            }
            if l3 == 4 {
                prop_assert_eq!(u16::from_be_bytes([bytes[view.l3_offset + 4], bytes[view.l3_offset + 5]]), n as u16);
            }
            if l3 != 0 {
                let at = view.l4.unwrap().0;
                prop_assert_eq!(u16::from_be_bytes([bytes[at], bytes[at + 1]]) as u64, 1 + n % ports as u64, "the source port of frame n");
            }
        }
    }

    /// Run a source's start and wake-ups, as the simulator would, until it
    /// stops; returns the frames' send times and how many wake-ups it took.
    fn run_source(cfg: SourceConfig) -> (Vec<Time>, usize) {
        let mut src = Source::new(cfg).unwrap();
        let mut rng = component_rng(1, "s");
        let (mut frames, mut wakes, mut now) = (Vec::new(), 0, Time::ZERO);
        let mut out = Vec::new();
        src.start(&mut Ctx::new(now, &mut out, &mut rng));
        while let Some(w) = out.iter().position(|o| o.port.is_none()) {
            let wake = out.remove(w);
            frames.extend(out.drain(..).map(|o| o.at));
            now = wake.at;
            wakes += 1;
            src.handle(0, wake.msg, &mut Ctx::new(now, &mut out, &mut rng));
        }
        frames.extend(out.drain(..).map(|o| o.at));
        (frames, wakes)
    }

    #[test]
    fn a_line_rate_source_sends_back_to_back_a_run_of_frames_per_wake_up() {
        // 1,000-byte payload in raw Ethernet: 1,018 bytes with the FCS, 1,038 on the
        // wire with preamble and gap: 8.304 us at 1 Gb/s.
        let cfg = SourceConfig { count: Some(5), ..config(0, None, 1000, Fill::Counter) };
        let (frames, wakes) = run_source(cfg);
        let wire = Duration::from_ns(8_304);
        assert_eq!(frames, (0..5).map(|k| Time::ZERO + Duration(wire.ps() * k)).collect::<Vec<_>>());
        assert_eq!(wakes, 3, "a wake-up for the frames of each 10 us");
        // At 10 Gb/s, 64-byte frames: 32 a wake-up, and none starts after the end.
        let small = SourceConfig {
            link_bps: 10_000_000_000,
            until: Some(Time::ZERO + Duration::from_us(100)),
            ..config(0, None, 46, Fill::Counter)
        };
        let (frames, wakes) = run_source(small);
        assert_eq!(frames.len(), 1_489, "67.2 ns apart from 0 to 100 us");
        assert!(frames.windows(2).all(|w| w[1].since(w[0]) == Duration::from_ps(67_200)));
        assert_eq!(wakes, 1_489usize.div_ceil(LINE_BATCH), "a wake-up for each run of 32");
    }

    #[test]
    fn a_source_refuses_to_make_tcp_segments() {
        let mut cfg = config(4, None, 1000, Fill::Counter);
        let tcp = L4::Tcp(TcpFields { src_port: 1, dst_port: 2, seq: 1, ack: Some(1), window: 100, psh: false, fin: false });
        if let L3::Ipv4 { l4, .. } = &mut cfg.headers.l3 {
            *l4 = tcp;
        }
        assert!(Source::new(cfg).err().unwrap().contains("TCP segments come from a host's TCP"));
    }
}
