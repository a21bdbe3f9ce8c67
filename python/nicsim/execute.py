"""Where a sweep's runs happen: in this process, in local worker processes, or on
an existing Dask cluster. Each runs `run_point` and hands back what it returned,
in the order the runs finish.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator, Optional, Sequence

from . import _core


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


class DaskPool:
    """Runs on Dask: a local cluster of worker processes, or the scheduler at
    `address`. A worker that dies costs only the runs it held; the scheduler
    hands them to another worker."""

    def __init__(self, jobs: int, address: Optional[str] = None):
        from dask.distributed import Client, LocalCluster

        self.cluster = None
        if address:
            try:
                self.client = Client(address, timeout="10s")
            except (OSError, TimeoutError) as e:
                raise _core.ScenarioError(f"--scheduler {address}: cannot reach a Dask scheduler ({e})") from None
            self.name = f"dask at {address}"
        else:
            self.cluster = LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            self.client = Client(self.cluster)
            self.name = f"dask, {jobs} local worker processes"
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
        if self.cluster is not None:
            self.cluster.close()


def executor(jobs: int, scheduler: Optional[str], points: int):
    """Serial for one job or one point (no start-up cost); Dask otherwise."""
    if scheduler:
        return DaskPool(jobs, scheduler)
    if jobs <= 1 or points <= 1:
        return Serial()
    return DaskPool(min(jobs, points))
