"""Where a sweep's runs happen: in this process, one after another or on several
threads, or on an existing Dask cluster. Each runs `run_point` and hands back what
it returned, in the order the runs finish.

Local runs use threads, not worker processes: a run lets go of the interpreter
while it simulates, so N threads keep N cores busy, start at once, and never
re-import the caller's script (worker processes started by `spawn` do, which
broke `nicsim.sweep` called from a plain script).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Iterator, Optional, Sequence

from nicsim import _core

# Seconds a sweep waits for a Dask scheduler with no workers to get one.
WAIT_WORKERS = 60.0


def run_point(text: str, filename: str, sets: Sequence[str]) -> dict:
    """Run one point of a sweep. The scenario travels as text, so a worker on
    another machine needs nicsim installed but not the file."""
    with tempfile.TemporaryDirectory(prefix="nicsim-") as d:
        path = str(Path(d) / filename)
        Path(path).write_text(text)
        start = time.perf_counter()
        try:
            result = json.loads(_core.run_file(path, sets=list(sets)))
            error = None
        except _core.SimulationError as e:
            result, error = None, str(e)
        wall = time.perf_counter() - start
        inputs = json.loads(_core.resolve_file(path, list(sets)))
    return {"result": result, "error": error, "inputs": inputs, "wall_seconds": wall}


class Serial:
    """Every run in this process, one after another."""

    name = "serial"

    def map(self, tasks: Sequence[tuple]) -> Iterator[tuple]:
        for tag, args in tasks:
            yield tag, run_point(*args)

    def close(self) -> None:
        pass


class Threads:
    """Runs on `jobs` threads of this process."""

    def __init__(self, jobs: int):
        self.pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="nicsim-run")
        self.name = f"{jobs} threads"

    def map(self, tasks: Sequence[tuple]) -> Iterator[tuple]:
        futures = {self.pool.submit(run_point, *args): tag for tag, args in tasks}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()

    def close(self) -> None:
        # Runs not started are dropped; one under way finishes (at most one per thread).
        self.pool.shutdown(wait=False, cancel_futures=True)


class DaskPool:
    """Runs on the Dask cluster whose scheduler is at `address`. A worker that
    dies costs only the runs it held; the scheduler hands them to another worker."""

    def __init__(self, address: str, wait_workers: float = WAIT_WORKERS):
        from dask.distributed import Client

        try:
            self.client = Client(address, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise _core.ScenarioError(f"--scheduler {address}: cannot reach a Dask scheduler ({e})") from None
        except ValueError as e:  # not an address Dask can read (no port, unknown protocol)
            raise _core.ScenarioError(f"--scheduler {address}: not a scheduler address ({e}); write e.g. tcp://10.0.0.5:8786") from None
        # A scheduler without workers would hold every run for ever.
        if not self.client.scheduler_info().get("workers"):
            print(f"nicsim: the Dask scheduler at {address} has no workers; waiting up to {wait_workers:g} s for one", file=sys.stderr)
            try:
                self.client.wait_for_workers(1, timeout=wait_workers)
            except (OSError, TimeoutError):
                self.client.close()
                raise _core.ScenarioError(
                    f"--scheduler {address}: no worker joined within {wait_workers:g} s "
                    "(start one with `dask worker ADDRESS`, or wait longer with --wait-workers)"
                ) from None
        self.name = f"dask at {address}"
        self.futures = []

    def map(self, tasks: Sequence[tuple]) -> Iterator[tuple]:
        from dask.distributed import as_completed

        batch = uuid.uuid4().hex[:8]
        tag_of = {}
        self.futures = []
        for tag, args in tasks:
            fut = self.client.submit(run_point, *args, key=f"nicsim-{batch}-{tag}", pure=False)
            tag_of[fut.key] = tag
            self.futures.append(fut)
        for fut in as_completed(self.futures):
            yield tag_of[fut.key], fut.result()

    def close(self) -> None:
        for fut in self.futures:
            fut.cancel()
        self.client.close()


def executor(jobs: int, scheduler: Optional[str], points: int, wait_workers: float = WAIT_WORKERS):
    """A Dask cluster when one is named (waiting up to `wait_workers` seconds
    for a worker); else serial for one job or one point, threads for more."""
    if scheduler:
        return DaskPool(scheduler, wait_workers)
    if jobs <= 1 or points <= 1:
        return Serial()
    return Threads(min(jobs, points))
