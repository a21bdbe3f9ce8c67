"""Issue 6 benchmarks: simulation speed of the offloaded bulk transfer and the HP study.

    .venv/bin/python bench/offload.py

1. 8 KB-message TTCP with full offload (the i960 design), 40 MB: simulated frames
   (both directions on the wire) per wall second.
2. The whole hp2001 set: `nicsim reproduce hp2001` end to end (checks, runs on a local
   Dask pool, DuckDB, report).
"""

import time
from pathlib import Path

import nicsim
from reproduce_timing import time_reproduce

ROOT = Path(__file__).resolve().parent.parent
SEND = ROOT / "scenarios" / "papers" / "hp2001" / "send.toml"


def offload() -> None:
    start = time.perf_counter()
    r = nicsim.run(SEND, overrides={"host[0].ttcp.bytes": 40_000_000})
    wall = time.perf_counter() - start
    w = r.component("wire").metrics
    frames = w["a_to_b_frames"] + w["b_to_a_frames"]
    print(f"full offload, 8 KB messages, 40 MB: {frames:,} frames in {wall:.2f} s = {frames / wall / 1e3:.0f} k simulated frames per wall second")


def study() -> None:
    print(f"nicsim reproduce hp2001 (45 runs; Dask, DuckDB, report): {time_reproduce('hp2001'):.2f} s")


if __name__ == "__main__":
    offload()
    study()
