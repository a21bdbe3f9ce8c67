//! One run of a scenario, from a checked plan to its results.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::engine::{PaceStats, Pacing, SimError};
use crate::observe::{CaptureFile, Report, Trace};
use crate::scenario::{assemble, PartPlan, Plan};
use crate::time::Time;

/// Asked about every tenth of a second of wall time during a run (Ctrl-C); true
/// stops it. A run paced to the wall clock then ends and keeps its results; any
/// other fails with `RunError::Interrupted`, since its results would be partial.
#[derive(Clone)]
pub struct StopCheck(pub Arc<dyn Fn() -> bool + Send + Sync>);

/// How far a run has got.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub simulated: Time,
    /// Where it ends, if the scenario has a duration.
    pub until: Option<Time>,
    pub events: u64,
    pub wall_seconds: f64,
}

/// Told a run's progress at most once every `every` of wall time (and never for
/// a run paced to the wall clock, whose time is the wall's).
#[derive(Clone)]
pub struct ProgressReport {
    pub every: std::time::Duration,
    pub tell: Arc<dyn Fn(Progress) + Send + Sync>,
}

impl std::fmt::Debug for ProgressReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProgressReport every {:?}", self.every)
    }
}

impl std::fmt::Debug for StopCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopCheck")
    }
}

/// How often a run asks its `StopCheck`.
const STOP_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

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
    /// Most frames the capture keeps, the first ones (0: every frame).
    pub capture_limit: u64,
    /// Asked every tenth of a second (Ctrl-C).
    pub stop: Option<StopCheck>,
    /// Told how far the run has got (not a run paced to the wall clock).
    pub progress: Option<ProgressReport>,
}

/// Events a timeline keeps unless told otherwise: enough for tens of
/// milliseconds of a busy gigabit host, small enough for a viewer to open.
pub const TRACE_LIMIT: u64 = 1_000_000;

/// An event run more than this behind its wall time counts as late: a choice, well
/// above the jitter of a timed wait and well below a TCP retransmission timeout.
pub const LATE_AFTER: crate::time::Duration = crate::time::Duration::from_ms(1);

/// How long a bridged run waits with nothing to do before it ends: the longest of its taps'.
fn idle_of(plan: &Plan) -> Option<std::time::Duration> {
    plan.parts.iter().filter_map(|p| if let PartPlan::Tap(t) = &p.plan { Some(t.idle) } else { None }).max()
}

#[derive(Debug, Serialize)]
pub struct ComponentResult {
    pub name: String,
    pub kind: &'static str,
    pub metrics: Report,
    /// Facts that are words (a device name, a stream's digest).
    pub text: BTreeMap<&'static str, String>,
}

#[derive(Debug, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub nicsim_version: &'static str,
    pub simulated_ps: u64,
    pub events: u64,
    pub frames_captured: u64,
    /// Frames past the capture's limit, delivered but not written.
    pub frames_not_captured: u64,
    pub trace_events: u64,
    pub trace_events_dropped: u64,
    /// How a run bridged to the real world kept up with the wall clock.
    pub pacing: Option<PaceStats>,
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
    /// Its `StopCheck` stopped it (at this simulated time); nothing was written.
    #[error("interrupted at {0} of simulated time")]
    Interrupted(Time),
    /// Writing an output file failed (the disk is full, say): the run stopped at
    /// once and removed the file; its results up to then are here.
    #[error("cannot write {message}; the run stopped at {at} of simulated time and removed the file")]
    Output { message: String, at: Time, result: Box<RunResult> },
}

/// What a run's watcher does at each look: tell the progress and ask whether
/// to stop, each when its time has come.
fn watcher<'a>(opts: &'a RunOptions, until: Option<Time>, failed: &'a dyn Fn() -> bool) -> impl FnMut(Time, u64) -> bool + 'a {
    let started = Instant::now();
    let (mut told, mut asked) = (started, started);
    move |now, events| {
        if failed() {
            return true;
        }
        let wall = Instant::now();
        if let Some(p) = opts.progress.as_ref().filter(|p| wall - told >= p.every) {
            told = wall;
            (p.tell)(Progress { simulated: now, until, events, wall_seconds: (wall - started).as_secs_f64() });
        }
        match &opts.stop {
            Some(stop) if wall - asked >= STOP_EVERY => {
                asked = wall;
                (stop.0)()
            }
            _ => false,
        }
    }
}

pub fn run(plan: &Plan, opts: &RunOptions) -> Result<RunResult, RunError> {
    for name in &opts.capture {
        if !plan.parts.iter().any(|p| &p.name == name && matches!(p.plan, PartPlan::Link(..))) {
            return Err(RunError::Input(format!("--capture: no link is named {name:?}")));
        }
    }
    let seed = opts.seed.unwrap_or(plan.seed);
    let file = opts.pcap.as_deref().map(|p| CaptureFile::create(p, opts.capture_limit)).transpose().map_err(RunError::Input)?;
    let limit = if opts.trace_limit == 0 { TRACE_LIMIT } else { opts.trace_limit };
    let trace = opts.trace.as_deref().map(|p| Trace::create(p, limit)).transpose().map_err(RunError::Input)?;
    let mut sim = assemble(plan, seed, file.as_ref().map(|f| (f, opts.capture.as_slice())), trace.as_ref()).map_err(RunError::Input)?;
    let until = plan.duration.map(|d| Time::ZERO + d);
    let failed = || file.as_ref().is_some_and(|f| f.borrow().failed()) || trace.as_ref().is_some_and(|t| t.borrow().failed());
    let (stats, pacing) = if sim.has_outside_input() {
        let stop = opts.stop.as_ref().map(|s| &*s.0 as &(dyn Fn() -> bool + Sync));
        let pacing = Pacing { idle: idle_of(plan), late_after: LATE_AFTER, stop, say: true };
        for part in &plan.parts {
            if let PartPlan::Tap(t) = &part.plan {
                eprintln!(
                    "nicsim: tap {:?} is bridged to {}; give the Linux side {} (paced to the wall clock; Ctrl-C ends the run)",
                    part.name, t.cfg.device, t.cfg.linux_address
                );
            }
        }
        let (stats, paced) = sim.run_paced(until, &pacing)?;
        (stats, Some(paced))
    } else {
        match sim.run_watched(until, &mut watcher(opts, until, &failed))? {
            Some(stats) => (stats, None),
            // An output failed: the run stops there, with its results so far.
            None if failed() => (sim.finish(sim.now())?, None),
            None => return Err(RunError::Interrupted(sim.now())),
        }
    };
    // A write that failed during the run leaves no output at all; one that fails
    // while a file is completed removes that file.
    let mut output_error = None;
    if failed() {
        file.as_ref().inspect(|f| f.borrow_mut().discard());
        trace.as_ref().inspect(|t| t.borrow_mut().discard());
    }
    let (mut trace_events, mut trace_events_dropped) = (0, 0);
    if let Some(t) = &trace {
        let mut t = t.borrow_mut();
        if let Err(e) = t.commit() {
            output_error.get_or_insert(e);
        }
        (trace_events, trace_events_dropped) = (t.events(), t.dropped());
    }
    let (mut frames_captured, mut frames_not_captured) = (0, 0);
    if let Some(f) = &file {
        let mut f = f.borrow_mut();
        if let Err(e) = f.commit(stats.end) {
            output_error.get_or_insert(e);
        }
        (frames_captured, frames_not_captured) = (f.frames_written(), f.frames_over_limit());
    }
    let mut texts: BTreeMap<String, Vec<(&'static str, String)>> = sim.texts().into_iter().collect();
    let components = sim
        .reports()
        .into_iter()
        .map(|(name, kind, metrics)| {
            let text = texts.remove(&name).unwrap_or_default().into_iter().collect();
            ComponentResult { name, kind, metrics, text }
        })
        .collect();
    let result = RunResult {
        scenario: plan.name.clone(),
        seed,
        nicsim_version: env!("CARGO_PKG_VERSION"),
        simulated_ps: stats.end.ps(),
        events: stats.events,
        frames_captured,
        frames_not_captured,
        trace_events,
        trace_events_dropped,
        pacing,
        components,
    };
    match output_error {
        Some(message) => Err(RunError::Output { message, at: stats.end, result: Box::new(result) }),
        None => Ok(result),
    }
}
