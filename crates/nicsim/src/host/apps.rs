//! The host's applications on raw frames: a sink that counts whatever arrives
//! that no TCP session claims, and a sender that builds frames as fast as it
//! may. (Applications on TCP are `host::sessions`.)

use crate::engine::timers::Earliest;
use crate::engine::SimRng;
use crate::host::config::BlastConfig;
use crate::host::sessions::Sessions;
use crate::link::Source;
use crate::observe::Report;
use crate::time::Time;
use crate::wire::{Frame, FrameMeta};

/// The host's applications: its TCP sessions, a sink and a sender, each
/// where the scenario has one, with what the scheduler keeps of them.
pub struct Apps {
    pub sessions: Option<Sessions>,
    pub sink: Option<SinkCount>,
    pub blast: Option<Blast>,
    /// The sender waits for transmit descriptors to be reclaimed.
    pub blast_waiting: bool,
    /// The ring adapter the blast leaves by: the one that reaches its sink.
    pub blast_port: usize,
    /// An `Item::AppCall` waits in a queue.
    pub call_queued: bool,
    /// The sessions' timer in flight.
    pub sessions_timer: Earliest,
}

impl Apps {
    pub fn new(sessions: Option<Sessions>, sink: bool, blast: Option<BlastConfig>) -> Result<Self, String> {
        let blast_port = blast.as_ref().map_or(0, |b| b.port);
        Ok(Apps {
            sessions,
            sink: sink.then(SinkCount::default),
            blast: blast.map(Blast::new).transpose()?,
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
pub struct Blast {
    pub cfg: BlastConfig,
    maker: Source,
    pub sent: u64,
    pub measured_frames: u64,
    pub measured_bytes: u64,
}

impl Blast {
    pub fn new(cfg: BlastConfig) -> Result<Self, String> {
        let maker = Source::new(cfg.frames.clone())?;
        Ok(Blast { cfg, maker, sent: 0, measured_frames: 0, measured_bytes: 0 })
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

    pub fn report(&self, r: &mut Report, seconds: f64) {
        r.count("blast_frames", self.sent);
        r.real("blast_frame_rate_pps", if seconds > 0.0 { self.measured_frames as f64 / seconds } else { 0.0 });
        let wire = self.measured_bytes + self.measured_frames * 24;
        r.real("blast_wire_mbps", if seconds > 0.0 { wire as f64 * 8.0 / seconds / 1e6 } else { 0.0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_is_kept_only_where_asked_and_counts_the_wire_around_each_frame() {
        let apps = Apps::new(None, false, None).unwrap();
        assert!(apps.sink.is_none() && apps.blast.is_none() && apps.sessions.is_none());
        let mut apps = Apps::new(None, true, None).unwrap();
        let sink = apps.sink.as_mut().expect("asked for");
        (sink.frames, sink.bytes) = (1000, 60_000);
        let mut r = Report::default();
        sink.report(&mut r, 0.001);
        assert_eq!(r.get("sink_frame_rate_pps"), Some(1e6));
        // 60 bytes of frame, then its FCS, preamble and gap: 84 bytes a frame on the wire.
        assert!((r.get("sink_wire_mbps").unwrap() - 672.0).abs() < 1e-9);
    }
}
