//! A traffic sink: counts what arrives and measures it. Rates are taken over the
//! steady state, from the first arrival to the last, counting every frame after
//! the first, so back-to-back frames give exactly the line's capacity.

use rustc_hash::FxHashMap;

use rand::Rng;

use crate::engine::{Component, Ctx, Inline, Msg, PortId, WIRE};
use crate::link::stamp::Stamp;
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::ethernet::{payload_bytes, FCS};
use crate::wire::{arp, verify_checksums, Frame, FrameMeta, View};

/// A sink that announces itself does so within this long of the start.
pub const ANNOUNCE_WITHIN: Duration = Duration::from_ms(1);

#[derive(Default)]
pub struct Sink {
    frames: u64,
    bytes: u64,
    l2_payload: u64,
    app_payload: u64,
    /// Sizes of the first frame, excluded from rates (it opens the interval).
    first_sizes: (u64, u64, u64),
    first: Option<Time>,
    last: Time,
    latency_sum: Duration,
    latency_max: Duration,
    bad_checksums: u64,
    unparsed: u64,
    /// Next expected sequence number per stamped flow.
    expected: FxHashMap<u16, u64>,
    lost: u64,
    reordered: u64,
    /// ARP frames: not traffic, counted apart.
    arp: u64,
    /// Frames for another station (flooded to it by a switch): a NIC drops them.
    foreign: u64,
    /// Its station (MAC, IPv4), if it has one: it takes only frames addressed
    /// to it or to a group; without one it takes everything.
    station: Option<([u8; 6], [u8; 4])>,
    /// Announce the station with a gratuitous ARP at start.
    announce: bool,
}

impl Sink {
    /// A sink that takes every frame (a capture port).
    pub fn new() -> Self {
        Sink::default()
    }

    /// The sink of station `mac`/`ip`; announcing, it sends a gratuitous ARP at
    /// start so that switches learn its port.
    pub fn station(mac: [u8; 6], ip: [u8; 4], announce: bool) -> Self {
        Sink { station: Some((mac, ip)), announce, ..Sink::default() }
    }

    /// Whether `frame` is this station's to take: addressed to it or to a group.
    fn takes(&self, frame: &Frame) -> bool {
        match (self.station, frame.destination()) {
            (Some((mac, _)), Some(dst)) => dst == mac || dst[0] & 1 == 1,
            _ => true,
        }
    }

    fn count(&mut self, frame: &Frame, now: Time) {
        let (app, view) = match verify_checksums(&frame.bytes) {
            Ok(v) => (v.payload.len() as u64, Some(v)),
            Err(e) => {
                if e.contains("checksum") {
                    self.bad_checksums += 1;
                } else {
                    self.unparsed += 1;
                }
                (0, View::parse(&frame.bytes).ok())
            }
        };
        let size = (frame.len() + FCS).max(64) as u64;
        let l2 = payload_bytes(frame.len().max(60)) as u64;
        if self.first.is_none() {
            self.first = Some(now);
            self.first_sizes = (size, l2, app);
        }
        self.last = now;
        self.frames += 1;
        self.bytes += size;
        self.l2_payload += l2;
        self.app_payload += app;
        let latency = now.since(frame.meta.created);
        self.latency_sum = self.latency_sum + latency;
        self.latency_max = self.latency_max.max(latency);
        if let Some(stamp) = view.and_then(|v| Stamp::parse(&frame.bytes[v.payload])) {
            let next = self.expected.entry(stamp.flow).or_insert(0);
            if stamp.seq >= *next {
                self.lost += stamp.seq - *next;
                *next = stamp.seq + 1;
            } else {
                // A late frame fills a gap counted as lost before.
                self.reordered += 1;
                self.lost = self.lost.saturating_sub(1);
            }
        }
    }
}

impl Component for Sink {
    fn kind(&self) -> &'static str {
        "sink"
    }

    /// Announce at a time drawn from the first millisecond: stations come up at
    /// different moments, and a thousand broadcasts at one instant would overflow
    /// every switch queue (dropping announcements too).
    fn start(&mut self, ctx: &mut Ctx) {
        if let Some((mac, ip)) = self.station.filter(|_| self.announce) {
            let at = ctx.now() + Duration(ctx.rng().random_range(0..ANNOUNCE_WITHIN.ps()));
            let meta = FrameMeta { created: at, ..Default::default() };
            ctx.send_at(WIRE, at, Msg::frame(Frame { bytes: arp::announcement(mac, ip), meta }));
        }
    }

    /// It sends nothing in answer to a frame and is read only at the end.
    fn inline(&self) -> Inline {
        Inline::Last
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        match msg {
            Msg::Frame(frame) if !self.takes(&frame) => self.foreign += 1,
            Msg::Frame(frame) if arp::is_arp(&frame.bytes) => self.arp += 1,
            Msg::Frame(frame) => {
                self.count(&frame, ctx.now());
                ctx.give_frame(frame);
            }
            _ => {}
        }
    }

    fn report(&self, _end: Time) -> Report {
        let mut r = Report::default();
        r.count("frames", self.frames).count("bytes", self.bytes);
        let span = self.last.since(self.first.unwrap_or(self.last)).as_secs_f64();
        let per_s = |total: u64, first: u64| {
            if span > 0.0 {
                (total - first) as f64 / span
            } else {
                0.0
            }
        };
        r.real("frame_rate_pps", per_s(self.frames, 1));
        r.real("goodput_mbps", per_s(self.l2_payload, self.first_sizes.1) * 8e-6);
        r.real("app_goodput_mbps", per_s(self.app_payload, self.first_sizes.2) * 8e-6);
        r.count("lost", self.lost).count("reordered", self.reordered);
        r.count("bad_checksums", self.bad_checksums).count("unparsed", self.unparsed).count("arp_frames", self.arp);
        r.count("foreign_frames", self.foreign);
        let mean = if self.frames > 0 { self.latency_sum.ps() as f64 / self.frames as f64 / 1e3 } else { 0.0 };
        r.real("latency_mean_ns", mean).real("latency_max_ns", self.latency_max.ps() as f64 / 1e3);
        r
    }
}
