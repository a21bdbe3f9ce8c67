//! Python bindings: thin wrappers that hand JSON back to the `nicsim` package.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use nicsim::{RunError, RunOptions, StopCheck};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(_core, ScenarioError, PyException, "The scenario or a run option is wrong (exit code 2).");
create_exception!(_core, SimulationError, PyException, "The model failed during a run (exit code 1).");
create_exception!(
    _core,
    OutputError,
    PyException,
    "Writing an output file failed; the run stopped and removed it (exit code 74). Its arguments: the message, and the run's results so far as JSON text."
);

fn plan_for(path: &str, sets: &[String]) -> PyResult<nicsim::scenario::Plan> {
    nicsim::scenario::load_with(Path::new(path), sets).map_err(|e| ScenarioError::new_err(format!("{path}: {e}")))
}

/// Check a scenario file (with `KEY=VALUE` overrides) without running it.
#[pyfunction]
#[pyo3(signature = (path, sets=Vec::new()))]
fn check_file(path: &str, sets: Vec<String>) -> PyResult<()> {
    plan_for(path, &sets).map(|_| ())
}

/// The scenario file after overrides, as JSON text (every key a run used).
#[pyfunction]
#[pyo3(signature = (path, sets=Vec::new()))]
fn resolve_file(path: &str, sets: Vec<String>) -> PyResult<String> {
    let table = nicsim::scenario::resolve(Path::new(path), &sets).map_err(|e| ScenarioError::new_err(format!("{path}: {e}")))?;
    serde_json::to_string(&table).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// Run a scenario file; returns the results as JSON text. `progress`, if given,
/// is called with (simulated seconds, the scenario's duration in seconds or
/// None, events, wall seconds) at most every `progress_every` seconds.
#[pyfunction]
#[pyo3(signature = (path, seed=None, pcap=None, capture=Vec::new(), trace=None, trace_limit=0, sets=Vec::new(), progress=None, progress_every=0.5, capture_limit=0))]
#[allow(clippy::too_many_arguments)]
fn run_file(
    py: Python<'_>,
    path: &str,
    seed: Option<u64>,
    pcap: Option<PathBuf>,
    capture: Vec<String>,
    trace: Option<PathBuf>,
    trace_limit: u64,
    sets: Vec<String>,
    progress: Option<Py<PyAny>>,
    progress_every: f64,
    capture_limit: u64,
) -> PyResult<String> {
    let plan = plan_for(path, &sets)?;
    // Ctrl-C: a run bridged to the real world ends early and keeps its results (the
    // interrupt is taken here, not raised); any other run stops and raises it.
    // A Ctrl-C that lands while the progress callback runs is raised inside it;
    // the callback's error is kept here, so the run still stops.
    let interrupted = Arc::new(AtomicBool::new(false));
    let seen = interrupted.clone();
    let stop = StopCheck(Arc::new(move || seen.load(Ordering::Relaxed) || Python::attach(|py| py.check_signals().is_err())));
    let every = std::time::Duration::try_from_secs_f64(progress_every)
        .map_err(|_| ScenarioError::new_err(format!("progress_every: must be a number of seconds, got {progress_every}")))?;
    let progress = progress.map(|tell| nicsim::ProgressReport {
        every,
        tell: Arc::new(move |p: nicsim::Progress| {
            let until = p.until.map(|t| t.as_secs_f64());
            // A failing callback must not end the run: what it raised is shown and
            // dropped, unless it is the user's Ctrl-C.
            Python::attach(|py| {
                if let Err(e) = tell.call1(py, (p.simulated.as_secs_f64(), until, p.events, p.wall_seconds)) {
                    if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                        interrupted.store(true, Ordering::Relaxed);
                    } else {
                        e.print(py);
                    }
                }
            });
        }),
    });
    let opts = RunOptions { seed, pcap, capture, trace, trace_limit, capture_limit, stop: Some(stop), progress };
    let result = py.detach(|| nicsim::run(&plan, &opts));
    match result {
        Ok(r) => serde_json::to_string(&r).map_err(|e| SimulationError::new_err(e.to_string())),
        Err(RunError::Input(msg)) => Err(ScenarioError::new_err(msg)),
        Err(e @ RunError::Interrupted(_)) => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(e.to_string())),
        Err(e @ RunError::Sim(_)) => Err(SimulationError::new_err(e.to_string())),
        Err(e @ RunError::Output { .. }) => {
            let RunError::Output { result, .. } = &e else { unreachable!("matched") };
            let json = serde_json::to_string(result).map_err(|e| SimulationError::new_err(e.to_string()))?;
            Err(OutputError::new_err((e.to_string(), json)))
        }
    }
}

/// The scenario format as a JSON Schema.
#[pyfunction]
fn scenario_schema() -> String {
    nicsim::scenario::json_schema()
}

/// The link-only flood benchmark: (frames, events, wall seconds).
#[pyfunction]
#[pyo3(signature = (frames, frame_size=64, rate="10Gbps"))]
fn bench_flood(py: Python<'_>, frames: u64, frame_size: u32, rate: &str) -> PyResult<(u64, u64, f64)> {
    let s = py.detach(|| nicsim::bench::flood(frames, frame_size, rate)).map_err(ScenarioError::new_err)?;
    Ok((s.frames, s.events, s.wall_seconds))
}

/// Size, write Gb/s, read Gb/s, mix Gb/s, read latency ns.
type ProfileRow = (u64, f64, f64, f64, f64);

/// DMA bandwidth and read latency on a PCIe link, per transfer size:
/// (size, write Gb/s, read Gb/s, mix Gb/s, read latency ns) each.
#[pyfunction]
#[pyo3(signature = (generation, lanes, mps, mrrs, rcb, rcb_split, sizes, offset, read_share, read_latency_ns))]
#[allow(clippy::too_many_arguments)]
fn pcie_profile(
    generation: u8,
    lanes: u8,
    mps: u64,
    mrrs: u64,
    rcb: u64,
    rcb_split: bool,
    sizes: Vec<u64>,
    offset: u64,
    read_share: f64,
    read_latency_ns: u64,
) -> PyResult<Vec<ProfileRow>> {
    use nicsim::bus::pcie::{CompletionSplit, PcieConfig};
    let split = if rcb_split { CompletionSplit::Rcb } else { CompletionSplit::Mps };
    let cfg = PcieConfig { generation, lanes, mps, mrrs, rcb, completion_split: split };
    cfg.check().map_err(ScenarioError::new_err)?;
    let latency = nicsim::time::Duration::from_ns(read_latency_ns);
    let rows = sizes.into_iter().map(|n| nicsim::bus::pcie_profile::profile(&cfg, n, offset, read_share, latency));
    Ok(rows.map(|p| (p.size, p.write_gbps, p.read_gbps, p.mix_gbps, p.read_latency_ns)).collect())
}

/// How this extension was built: "debug", "release", or what `tools/build-pgo`
/// names its builds (set at compile time in `NICSIM_BUILD`), so benchmark
/// figures say which build made them.
#[pyfunction]
fn build_kind() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        option_env!("NICSIM_BUILD").unwrap_or("release")
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("OutputError", m.py().get_type::<OutputError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(check_file, m)?)?;
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_file, m)?)?;
    m.add_function(wrap_pyfunction!(bench_flood, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(pcie_profile, m)?)?;
    m.add_function(wrap_pyfunction!(build_kind, m)?)?;
    Ok(())
}
