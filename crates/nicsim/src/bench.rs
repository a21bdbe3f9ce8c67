//! The link-only flood used by `nicsim bench` and the criterion benchmark: a source
//! sends minimum frames back to back over one link into a sink. It is built from a
//! scenario text, so it measures exactly the path a user's scenario takes.

use std::time::Instant;

use crate::run::{run, RunOptions};
use crate::scenario::{parse, validate};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloodStats {
    pub frames: u64,
    pub events: u64,
    pub wall_seconds: f64,
}

impl FloodStats {
    pub fn frames_per_second(&self) -> f64 {
        self.frames as f64 / self.wall_seconds
    }
    pub fn events_per_second(&self) -> f64 {
        self.events as f64 / self.wall_seconds
    }
}

/// The flood scenario: `frames` raw frames of `frame_size` bytes at line rate.
pub fn flood_scenario(frames: u64, frame_size: u32, rate: &str) -> String {
    format!(
        "name = \"flood\"\n\
         [[source]]\nname = \"gen\"\nto = \"rx\"\nprotocol = \"raw\"\nframe_size = {frame_size}\ncount = {frames}\n\
         [[sink]]\nname = \"rx\"\n\
         [[link]]\nname = \"wire\"\na = \"gen\"\nb = \"rx\"\nrate = \"{rate}\"\n"
    )
}

/// Run the flood and time it on the wall clock (assembly included).
pub fn flood(frames: u64, frame_size: u32, rate: &str) -> Result<FloodStats, String> {
    let plan = validate(&parse(&flood_scenario(frames, frame_size, rate)).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let result = run(&plan, &RunOptions::default()).map_err(|e| e.to_string())?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let received = result.component("rx").and_then(|c| c.metrics.get("frames")).unwrap_or(0.0) as u64;
    if received != frames {
        return Err(format!("flood lost frames: sent {frames}, received {received}"));
    }
    Ok(FloodStats { frames, events: result.events, wall_seconds })
}
