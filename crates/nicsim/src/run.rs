//! One run of a scenario, from a checked plan to its results.

use std::path::PathBuf;

use serde::Serialize;

use crate::engine::SimError;
use crate::observe::{CaptureFile, Report, Trace};
use crate::scenario::{assemble, PartPlan, Plan};

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Override the scenario's seed.
    pub seed: Option<u64>,
    /// Write a pcap of the captured links here.
    pub pcap: Option<PathBuf>,
    /// Links to capture; all of them when empty.
    pub capture: Vec<String>,
    /// Write a timeline of the hosts (bus, processors, arrivals) here.
    pub trace: Option<PathBuf>,
    /// Most events the timeline keeps (0: the default of a million).
    pub trace_limit: u64,
}

/// Events a timeline keeps unless told otherwise: enough for tens of
/// milliseconds of a busy gigabit host, small enough for a viewer to open.
pub const TRACE_LIMIT: u64 = 1_000_000;

#[derive(Debug, Serialize)]
pub struct ComponentResult {
    pub name: String,
    pub kind: &'static str,
    pub metrics: Report,
}

#[derive(Debug, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub nicsim_version: &'static str,
    pub simulated_ps: u64,
    pub events: u64,
    pub frames_captured: u64,
    pub trace_events: u64,
    pub trace_events_dropped: u64,
    pub components: Vec<ComponentResult>,
}

impl RunResult {
    pub fn component(&self, name: &str) -> Option<&ComponentResult> {
        self.components.iter().find(|c| c.name == name)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The request itself is wrong (an unknown link to capture, an unwritable path).
    #[error("{0}")]
    Input(String),
    #[error("simulation failed: {0}")]
    Sim(#[from] SimError),
}

pub fn run(plan: &Plan, opts: &RunOptions) -> Result<RunResult, RunError> {
    for name in &opts.capture {
        if !plan.parts.iter().any(|p| &p.name == name && matches!(p.plan, PartPlan::Link(..))) {
            return Err(RunError::Input(format!("--capture: no link is named {name:?}")));
        }
    }
    let seed = opts.seed.unwrap_or(plan.seed);
    let file = opts.pcap.as_deref().map(CaptureFile::create).transpose().map_err(RunError::Input)?;
    let limit = if opts.trace_limit == 0 { TRACE_LIMIT } else { opts.trace_limit };
    let trace = opts.trace.as_deref().map(|p| Trace::create(p, limit)).transpose().map_err(RunError::Input)?;
    let mut sim = assemble(plan, seed, file.as_ref().map(|f| (f, opts.capture.as_slice())), trace.as_ref()).map_err(RunError::Input)?;
    let stats = sim.run(plan.duration.map(|d| crate::time::Time::ZERO + d))?;
    let (mut trace_events, mut trace_events_dropped) = (0, 0);
    if let Some(t) = &trace {
        let mut t = t.borrow_mut();
        t.commit().map_err(RunError::Input)?;
        (trace_events, trace_events_dropped) = (t.events(), t.dropped());
    }
    let mut frames_captured = 0;
    if let Some(f) = &file {
        let mut f = f.borrow_mut();
        f.commit(stats.end).map_err(RunError::Input)?;
        frames_captured = f.frames_written();
    }
    let components = sim.reports().into_iter().map(|(name, kind, metrics)| ComponentResult { name, kind, metrics }).collect();
    Ok(RunResult {
        scenario: plan.name.clone(),
        seed,
        nicsim_version: env!("CARGO_PKG_VERSION"),
        simulated_ps: stats.end.ps(),
        events: stats.events,
        frames_captured,
        trace_events,
        trace_events_dropped,
        components,
    })
}
