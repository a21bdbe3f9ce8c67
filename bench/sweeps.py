"""Sweep speed: the same points serially and on a two-worker local Dask cluster,
and what the results database and the scheduling add to each run.

    .venv/bin/python bench/sweeps.py [--points N] [--json]

Work: Malta `send.toml` with the frame count varied (runs of tens of
milliseconds). Overhead: a run of a few microseconds, so that the sweep's wall
time per run is almost all bookkeeping (DuckDB row, progress, scheduling).
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import nicsim

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "scenarios" / "papers" / "malta2001" / "send.toml"
TINY = ROOT / "scenarios" / "papers" / "malta2001" / "dma.toml"


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=60)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = {"host[0].send.count": [20000 + 1000 * i for i in range(args.points)]}
    tiny = {"host[0].send.count": list(range(1, args.points + 1))}
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        serial, rows = timed(lambda: nicsim.sweep(WORK, work, db=d / "serial.duckdb", jobs=1))
        dask, _ = timed(lambda: nicsim.sweep(WORK, work, db=d / "dask.duckdb", jobs=2))
        run_sum = float(rows["wall_seconds"].sum())
        direct, _ = timed(lambda: [nicsim.run(TINY, overrides={"host[0].send.count": n}) for n in tiny["host[0].send.count"]])
        tiny_serial, _ = timed(lambda: nicsim.sweep(TINY, tiny, db=d / "ts.duckdb", jobs=1))
        tiny_dask, _ = timed(lambda: nicsim.sweep(TINY, tiny, db=d / "td.duckdb", jobs=2))
    n = args.points
    figures = {
        "points": n,
        "serial_s": serial,
        "dask_2_workers_s": dask,
        "speedup": serial / dask,
        "mean_run_s": run_sum / n,
        "db_overhead_ms_per_run": (tiny_serial - direct) / n * 1e3,
        "dask_overhead_ms_per_run": (tiny_dask - direct) / n * 1e3,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{n} points of {figures['mean_run_s'] * 1e3:.0f} ms: serial {serial:.2f} s, Dask 2 workers {dask:.2f} s "
          f"(speed-up {figures['speedup']:.2f}x, cluster start-up included)")
    print(f"overhead per run: {figures['db_overhead_ms_per_run']:.1f} ms serial (database, checks, bookkeeping), "
          f"{figures['dask_overhead_ms_per_run']:.1f} ms on Dask (the same plus scheduling and start-up)")


if __name__ == "__main__":
    main()
