"""A sweep: one scenario run at many points, every run a row in a results file.

Every point is checked before the first runs. Points already in the results
file are skipped, so a sweep that was stopped (Ctrl-C, a kill, a crash) picks up
where it left off when given the same command again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from nicsim import _core
from nicsim.sweeping.execute import WAIT_WORKERS, executor
from nicsim.sweeping.points import Point, points
from nicsim.sweeping.store import Store, flatten, metric_columns


@dataclass
class Outcome:
    """What a sweep did: points in all, run now, found done, failed."""

    name: str
    db: Path
    total: int
    ran: int = 0
    skipped: int = 0
    failed: list = field(default_factory=list)
    where: str = "serial"
    interrupted: bool = False


class Interrupted(Exception):
    def __init__(self, outcome: Outcome):
        super().__init__(f"stopped after {outcome.ran} runs")
        self.outcome = outcome


def definition(table: dict, scenario: str, vary: Optional[Mapping[str, Sequence]], mode: Optional[str]) -> tuple:
    """(vary, mode) from the arguments, else from the scenario's [sweep] table."""
    own = table.get("sweep") or {}
    if vary:
        return dict(vary), mode or "grid"
    if not own:
        raise _core.ScenarioError(f"{scenario}: nothing to vary (give --vary KEY=VALUES or add a [sweep] table)")
    return dict(own["vary"]), mode or own.get("mode", "grid")


@functools.lru_cache(maxsize=1)
def model_digest() -> str:
    """SHA-256 of the compiled model: a run made by another build of nicsim
    is not this build's result."""
    return hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()


def scenario_digest(table: dict) -> str:
    """SHA-256 of the scenario's values and the model that runs them, the
    [sweep] table left out: editing comments or adding points to the sweep does
    not make earlier runs stale; editing a value or rebuilding nicsim does."""
    values = {k: v for k, v in table.items() if k != "sweep"}
    return hashlib.sha256((json.dumps(values, sort_keys=True) + model_digest()).encode()).hexdigest()


def check_points(scenario: str, pts: Sequence[Point]) -> None:
    for p in pts:
        try:
            _core.check_file(scenario, sets=p.sets)
        except _core.ScenarioError as e:
            told = ", ".join(f"{k}={v}" for k, v in p.values)
            raise _core.ScenarioError(f"sweep point {p.index} ({told}): {e}") from None


def run_sweep(
    scenario: "str | os.PathLike[str]",
    vary: Optional[Mapping[str, Sequence]] = None,
    *,
    mode: Optional[str] = None,
    db: "Optional[str | os.PathLike[str]]" = None,
    name: Optional[str] = None,
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    restart: "bool | str" = False,
    extra: Optional[dict] = None,
    progress: Optional[Callable[[Outcome], None]] = None,
    pool=None,
    adjust: Optional[Callable[[Point], Point]] = None,
    wait_workers: float = WAIT_WORKERS,
) -> Outcome:
    """Run every point of a sweep not yet in `db`; see `nicsim.sweep`.

    restart: True drops the sweep's stored rows first; "stale" drops them only
    when they came from another version of the scenario file. pool: an
    executor to share between sweeps (left open). adjust: changes each point
    before it is checked and run (a sensitivity run's moved parameter).
    wait_workers: how long a Dask scheduler without workers may take to get one.
    Refused input (a bad point, an unusable scheduler) writes nothing."""
    scenario = os.fspath(scenario)
    table = json.loads(_core.resolve_file(scenario, []))
    vary, mode = definition(table, scenario, vary, mode)
    pts = points(vary, mode)
    if adjust:
        pts = [adjust(p) for p in pts]
    check_points(scenario, pts)
    text = Path(scenario).read_text()
    sha = scenario_digest(table)
    name = name or Path(scenario).stem
    db = Path(db) if db else Path("results") / f"{name}.duckdb"
    own = pool is None
    if own and scheduler:
        # Before the results file is touched: a refused scheduler changes nothing.
        pool = executor(jobs or 1, scheduler, len(pts), wait_workers)
    try:
        store = Store(db)
    except BaseException:
        if own and pool is not None:
            pool.close()
        raise
    try:
        done = store.done(name)
        stale = sum(1 for s in done.values() if s != sha)
        if restart == "stale":
            restart = stale > 0
        if stale and not restart:
            raise _core.ScenarioError(
                f"{db}: sweep {name!r} has {stale} runs of an earlier version of {scenario} or of nicsim; "
                "pass --restart to replace them, or write to another --db"
            )
        if restart and done:
            store.forget(name)
            done = {}
        store.define(name, {"scenario": scenario, "mode": mode, "vary": vary, **(extra or {})})
        todo = [p for p in pts if p.key(name) not in done]
        outcome = Outcome(name, db, len(pts), skipped=len(pts) - len(todo))
        if own and pool is None and todo:
            pool = executor(jobs or os.cpu_count() or 1, None, len(todo))
        _execute(store, scenario, text, sha, name, todo, outcome, pool, progress)
        return outcome
    finally:
        if own and pool is not None:
            pool.close()
        store.close()


def _execute(store, scenario, text, sha, name, todo, outcome, pool, progress) -> None:
    if progress:
        progress(outcome)
    if not todo:
        return
    outcome.where = pool.name
    by_key = {p.key(name): p for p in todo}
    tasks = [(k, (text, Path(scenario).name, p.sets)) for k, p in by_key.items()]
    try:
        for key, out in pool.map(tasks):
            _store(store, scenario, sha, name, by_key[key], key, out, outcome)
            if progress:
                progress(outcome)
    except KeyboardInterrupt:
        outcome.interrupted = True
        if progress:
            progress(outcome)
        raise Interrupted(outcome) from None


def _store(store, scenario, sha, name, point, key, out, outcome) -> None:
    result = out["result"]
    facts = {
        "run_key": key,
        "sweep": name,
        "point": point.index,
        "scenario_file": scenario,
        "scenario_sha": sha,
        "nicsim_version": _core.__version__,
        "status": "ok" if result else "error",
        "error": out["error"],
        "wall_seconds": out["wall_seconds"],
    }
    metrics = {}
    if result:
        facts.update(seed=result["seed"], simulated_seconds=result["simulated_ps"] / 1e12, events=result["events"])
        metrics = metric_columns(result)
    else:
        outcome.failed.append((point.index, out["error"]))
    store.add(facts, flatten(out["inputs"]), point.labels, metrics)
    outcome.ran += 1


def progress_bar(desc: Optional[str] = None, stream=sys.stderr) -> Callable[[Outcome], None]:
    """A tqdm bar with the time left, fed by sweep progress; nothing where
    `stream` is not a terminal (a log file would fill with redrawn bars)."""
    if not stream.isatty():
        return lambda _: None
    from tqdm import tqdm

    from nicsim.runs.progress import screen

    state = {}

    def update(o: Outcome) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(total=o.total, initial=o.skipped, desc=desc or o.name, unit="run", file=stream, **screen(stream))
        bar.update(o.skipped + o.ran - bar.n)
        # Closed when done or stopped, so what is said next starts a line of its own.
        if o.skipped + o.ran >= o.total or o.interrupted:
            bar.close()

    return update
