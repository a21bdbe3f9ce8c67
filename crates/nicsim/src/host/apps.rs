//! The host's applications on raw frames: a sink that counts whatever arrives
//! that no TCP session claims, and senders that build frames as fast as the
//! host and adapter take them. (Applications on TCP are `host::sessions`.)

use crate::engine::timers::Earliest;
use crate::engine::SimRng;
use crate::host::config::FrameSenderConfig;
use crate::host::sessions::Sessions;
use crate::link::Source;
use crate::observe::Report;
use crate::time::Time;
use crate::wire::{Frame, FrameMeta};

/// The host's applications: its TCP sessions, a sink and two frame senders
/// (`[host.blast]`, and `[host.send]`'s frames through its programmable
/// adapter), each where the scenario has one, with what the scheduler keeps
/// of them.
pub struct Apps {
    pub sessions: Option<Sessions>,
    pub sink: Option<SinkCount>,
    pub blast: Option<FrameSender>,
    pub send: Option<FrameSender>,
    /// The sender waits for transmit descriptors to be reclaimed.
    pub blast_waiting: bool,
    /// The adapter the blast leaves by (through a ring, its sender process
    /// waits for room there).
    pub blast_port: usize,
    /// An `Item::AppCall` waits in a queue.
    pub call_queued: bool,
    /// The sessions' timer in flight.
    pub sessions_timer: Earliest,
}

impl Apps {
    pub fn new(
        sessions: Option<Sessions>,
        sink: bool,
        blast: Option<FrameSenderConfig>,
        send: Option<FrameSenderConfig>,
    ) -> Result<Self, String> {
        let blast_port = blast.as_ref().map_or(0, |b| b.port);
        Ok(Apps {
            sessions,
            sink: sink.then(SinkCount::default),
            blast: blast.map(FrameSender::new).transpose()?,
            send: send.map(FrameSender::new).transpose()?,
            blast_waiting: false,
            blast_port,
            call_queued: false,
            sessions_timer: Earliest::default(),
        })
    }
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
pub struct FrameSender {
    pub cfg: FrameSenderConfig,
    maker: Source,
    pub sent: u64,
    pub measured_frames: u64,
    pub measured_bytes: u64,
}

impl FrameSender {
    pub fn new(cfg: FrameSenderConfig) -> Result<Self, String> {
        let maker = Source::new(cfg.frames.clone())?;
        Ok(FrameSender { cfg, maker, sent: 0, measured_frames: 0, measured_bytes: 0 })
    }

    pub fn next(&mut self, now: Time, measuring: bool, rng: &mut SimRng) -> Frame {
        let bytes = self.maker.make_frame(self.sent, rng);
        let meta = FrameMeta { created: now, flow: self.cfg.frames.flow, seq: self.sent, ..FrameMeta::default() };
        self.sent += 1;
        if measuring {
            self.measured_frames += 1;
            self.measured_bytes += bytes.len() as u64;
        }
        Frame { bytes, meta }
    }

    /// Its figures, named after its table (`key`: "blast" or "send").
    pub fn report(&self, r: &mut Report, key: &str, seconds: f64) {
        r.count(&format!("{key}_frames"), self.sent);
        r.real(&format!("{key}_frame_rate_pps"), if seconds > 0.0 { self.measured_frames as f64 / seconds } else { 0.0 });
        let wire = self.measured_bytes + self.measured_frames * 24;
        r.real(&format!("{key}_wire_mbps"), if seconds > 0.0 { wire as f64 * 8.0 / seconds / 1e6 } else { 0.0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_is_kept_only_where_asked_and_counts_the_wire_around_each_frame() {
        let apps = Apps::new(None, false, None, None).unwrap();
        assert!(apps.sink.is_none() && apps.blast.is_none() && apps.send.is_none() && apps.sessions.is_none());
        let mut apps = Apps::new(None, true, None, None).unwrap();
        let sink = apps.sink.as_mut().expect("asked for");
        (sink.frames, sink.bytes) = (1000, 60_000);
        let mut r = Report::default();
        sink.report(&mut r, 0.001);
        assert_eq!(r.get("sink_frame_rate_pps"), Some(1e6));
        // 60 bytes of frame, then its FCS, preamble and gap: 84 bytes a frame on the wire.
        assert!((r.get("sink_wire_mbps").unwrap() - 672.0).abs() < 1e-9);
    }

    #[test]
    fn a_sender_numbers_its_frames_and_names_its_figures_after_its_table() {
        use crate::wire::{Headers, L3, L4};
        let l3 = L3::Ipv4 { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], ttl: 64, id: 0, l4: L4::Udp { src_port: 5001, dst_port: 80 } };
        let headers = Headers { dst_mac: [2, 0, 0, 0, 0, 2], src_mac: [2, 0, 0, 0, 0, 1], vlan: None, l3 };
        let frames = crate::link::SourceConfig::numbered(headers, 1518, 3);
        let cfg = FrameSenderConfig { frames, cpu: 0, burst: 4, count: Some(8), port: 0, outstanding: 2 };
        let mut s = FrameSender::new(cfg).unwrap();
        let mut rng = crate::engine::component_rng(1, "sender");
        let warm = Time::ZERO + crate::time::Duration::from_us(1);
        let made: Vec<Frame> = (0..3).map(|n| s.next(warm, n > 0, &mut rng)).collect();
        for (n, f) in made.iter().enumerate() {
            assert_eq!((f.bytes.len(), f.meta.seq, f.meta.flow), (1514, n as u64, 3), "1,518 bytes with FCS, in turn");
            let v = crate::wire::verify_checksums(&f.bytes).expect("valid checksums");
            assert_eq!(v.payload.len(), 1514 - 42);
        }
        let mut r = Report::default();
        s.report(&mut r, "send", 0.001);
        assert_eq!((r.get("send_frames"), r.get("send_frame_rate_pps")), (Some(3.0), Some(2000.0)), "all made, two measured");
        assert_eq!(r.get("blast_frames"), None);
    }
}
