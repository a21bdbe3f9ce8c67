"""The Python API: run a scenario, get its results."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from nicsim import _core
from nicsim.sweeping.execute import WAIT_WORKERS
from nicsim.sweeping.points import toml_value


@dataclass(frozen=True)
class Component:
    name: str
    kind: str
    metrics: dict
    text: dict


class Result:
    """What one run measured: per-component metrics plus run facts."""

    def __init__(self, data: dict):
        self.data = data
        self.components = [Component(c["name"], c["kind"], c["metrics"], c.get("text", {})) for c in data["components"]]

    @property
    def scenario(self) -> str:
        return self.data["scenario"]

    @property
    def seed(self) -> int:
        return self.data["seed"]

    @property
    def simulated_seconds(self) -> float:
        return self.data["simulated_ps"] / 1e12

    @property
    def events(self) -> int:
        return self.data["events"]

    @property
    def pacing(self) -> Optional[dict]:
        """For a run bridged to real Linux: how it kept up with the wall clock."""
        return self.data.get("pacing")

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(f"no component named {name!r}")

    def metric(self, component: str, key: str) -> float:
        metrics = self.component(component).metrics
        if key not in metrics:
            raise KeyError(f"{component} has no metric {key!r}; it has {', '.join(metrics)}")
        return metrics[key]

    def to_json(self) -> str:
        return json.dumps(self.data, indent=2)


def _path(scenario: "str | os.PathLike[str]") -> str:
    return os.fspath(scenario)


def _sets(overrides: "Mapping[str, object] | Iterable[str]") -> list:
    """KEY=VALUE strings from a mapping (values written as TOML) or strings."""
    if isinstance(overrides, Mapping):
        return [f"{k}={toml_value(v)}" for k, v in overrides.items()]
    return list(overrides)


def check(scenario: "str | os.PathLike[str]", *, overrides: "Mapping[str, object] | Iterable[str]" = ()) -> None:
    """Check a scenario file; raises ScenarioError naming the key that is wrong."""
    _core.check_file(_path(scenario), sets=_sets(overrides))


def check_run_options(seed: Optional[int], trace_limit: int, names: tuple = ("seed", "trace_limit")) -> None:
    """Refuse a seed or trace limit out of range, under the names the caller used."""
    if seed is not None and not 0 <= seed < 1 << 64:
        raise _core.ScenarioError(f"{names[0]}: must be 0 to 2^64-1, got {seed}")
    if trace_limit < 0:
        raise _core.ScenarioError(f"{names[1]}: must not be negative, got {trace_limit}")


def run(
    scenario: "str | os.PathLike[str]",
    *,
    seed: Optional[int] = None,
    pcap: "Optional[str | os.PathLike[str]]" = None,
    capture: Iterable[str] = (),
    trace: "Optional[str | os.PathLike[str]]" = None,
    trace_limit: int = 0,
    overrides: "Mapping[str, object] | Iterable[str]" = (),
    progress: bool = False,
    capture_limit: int = 0,
) -> Result:
    """Run a scenario file and return its results.

    seed overrides the scenario's seed; pcap names a capture file to write (all
    links, or those named in capture; pcapng, an interface per link, when its
    name ends in .pcapng), of at most capture_limit frames, the first ones
    (0: every frame; the rest are counted as frames_not_captured); trace names a Chrome/Perfetto timeline to
    write (at most trace_limit events; 0 means a million); overrides change
    scenario values first, e.g. {"host[0].cpus": 2} or ["host[0].cpus=2"].
    progress shows a bar of simulated time on stderr once the run has taken a
    second. Ctrl-C stops a run (KeyboardInterrupt) and writes nothing; a run
    bridged to real Linux ends instead and keeps its results. A capture or trace
    that cannot be written stops the run too (OutputError, with the results so far).
    """
    from nicsim.runs.progress import run_bar

    check_run_options(seed, trace_limit)
    if capture_limit < 0:
        raise _core.ScenarioError(f"capture_limit: must not be negative, got {capture_limit}")
    tell, close = run_bar() if progress else (None, lambda: None)
    try:
        text = _core.run_file(
            _path(scenario),
            seed=seed,
            pcap=None if pcap is None else os.fspath(pcap),
            capture=list(capture),
            trace=None if trace is None else os.fspath(trace),
            trace_limit=trace_limit,
            sets=_sets(overrides),
            progress=tell,
            capture_limit=capture_limit,
        )
    except _core.OutputError as e:
        message, partial = e.args
        raise OutputError(message, Result(json.loads(partial))) from None
    finally:
        close()
    return Result(json.loads(text))


class OutputError(Exception):
    """Writing an output file (a capture, a trace) failed, the disk full say: the
    run stopped at once and removed the file. `result` holds its results so far
    (`nicsim run` prints them and exits 74)."""

    def __init__(self, message: str, result: "Result"):
        super().__init__(message)
        self.result = result


def sweep(
    scenario: "str | os.PathLike[str]",
    vary: "Optional[Mapping[str, Iterable]]" = None,
    *,
    mode: Optional[str] = None,
    db: "Optional[str | os.PathLike[str]]" = None,
    name: Optional[str] = None,
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    restart: bool = False,
    progress: bool = False,
    wait_workers: float = WAIT_WORKERS,
):
    """Run a scenario at every point of a sweep; returns the runs as a DataFrame.

    vary maps scenario keys to lists of values, e.g. {"host[0].clock":
    ["400MHz", "700MHz"]} (a single value is one point; a key "@name" is a label
    recorded with each run);
    without it the scenario's [sweep] table is used. mode is "grid" (every
    combination, the default) or "zip". Rows go to db (default
    results/NAME.duckdb), where points already run are skipped. jobs runs at once on
    local threads (default: one per CPU), or scheduler, the address of a Dask cluster
    (which gets wait_workers seconds to have a worker, if it has none).
    It works the same from a script, a notebook or a shell: nothing is re-imported.
    progress shows a progress bar on stderr.
    """
    from nicsim.sweeping.sweeps import progress_bar, run_sweep

    vary = None if vary is None else {k: _values(v) for k, v in vary.items()}
    outcome = run_sweep(
        scenario,
        vary,
        mode=mode,
        db=db,
        name=name,
        jobs=jobs,
        scheduler=scheduler,
        restart=restart,
        progress=progress_bar() if progress else None,
        wait_workers=wait_workers,
    )
    return load(outcome.db, sweep=outcome.name)


def _values(v) -> list:
    """A key's values to sweep: a string or a number alone is one value, not the
    characters or digits of one."""
    return [v] if isinstance(v, (str, bytes)) or not isinstance(v, Iterable) else list(v)


def load(results: "str | os.PathLike[str]", *, sweep: Optional[str] = None):
    """The runs in a results file as a DataFrame (one sweep's, or all)."""
    from nicsim.sweeping.store import Store

    store = Store(results, read_only=True)
    try:
        return store.frame(sweep)
    finally:
        store.close()
