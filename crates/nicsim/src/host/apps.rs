//! The host's applications on raw frames: a sink that counts whatever arrives
//! that no TCP session claims, and a sender that builds frames as fast as it
//! may. (Applications on TCP are `host::sessions`.)

use crate::engine::SimRng;
use crate::host::config::BlastConfig;
use crate::link::Source;
use crate::observe::Report;
use crate::time::Time;
use crate::wire::{Frame, FrameMeta};

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
