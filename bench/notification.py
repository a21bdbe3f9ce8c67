"""Issue 5 benchmarks: simulation speed of the CERN flood and the Novell study.

    .venv/bin/python bench/notification.py

1. The CERN flood at 46-byte payloads (1.488 M frames/s at 1 Gb/s), 200 ms simulated,
   reallocating buffers (80% lost at the FIFO) and recycling them (all taken): simulated
   frames (arrived at the adapter) per wall second.
2. The whole novell1995 set: `nicsim reproduce novell1995` end to end (checks, runs on a
   local Dask pool, DuckDB, report) and its 34 runs one after another in this process.
"""

import time
from pathlib import Path

import nicsim
from reproduce_timing import time_reproduce

ROOT = Path(__file__).resolve().parent.parent
CERN = ROOT / "scenarios" / "papers" / "cern2007" / "receive.toml"


def cern() -> None:
    for buffers in ("reallocate", "recycle"):
        start = time.perf_counter()
        r = nicsim.run(CERN, overrides={"duration": "200ms", "host[0].driver.buffers": buffers})
        wall = time.perf_counter() - start
        m = r.component("server").metrics
        frames = m["rx_frames"] + m["rx_fifo_overruns"] + m["rx_in_fifo_at_end"]
        print(f"CERN 46 B flood, {buffers}: {frames:,} frames in {wall:.2f} s = {frames / wall / 1e6:.2f} M simulated frames per wall second")


def novell() -> None:
    print(f"nicsim reproduce novell1995 (Dask, DuckDB, report): {time_reproduce('novell1995'):.2f} s")
    from nicsim.sweeping.points import points
    from nicsim.studies.study import find_studies

    (study,) = find_studies(ROOT / "scenarios" / "papers", ["novell1995"])
    start, runs = time.perf_counter(), 0
    for sweep in study.sweeps:
        for p in points(sweep["vary"], sweep.get("mode", "grid")):
            nicsim.run(study.scenario(sweep), overrides=p.sets)
            runs += 1
    print(f"novell1995, {runs} runs in this process: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    cern()
    novell()
