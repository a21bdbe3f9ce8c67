"""`nicsim bench --case scale`: generated two-tier networks of N hosts exchanging
TCP (`nicsim generate two-tier`), each size run in a fresh process so that its
peak memory is its own. Figures per size: frames the hosts sent, wall seconds,
wall nanoseconds per frame, events per frame, wall seconds per simulated second,
and peak memory in all and per host."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from nicsim import _core
from nicsim.generate import checked, text, two_tier

SIZES = "2,10,100,1000"
DURATION = "10ms"

# Run in the child: one scenario, its figures as JSON on standard output.
_CHILD = """
import json, resource, sys, time
from nicsim.api import run
start = time.perf_counter()
r = run(sys.argv[1])
wall = time.perf_counter() - start
frames = sum(c.metrics.get("tx_frames", 0) for c in r.components if c.kind == "host")
print(json.dumps({"frames": frames, "events": r.events, "wall": wall, "simulated": r.simulated_seconds,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def parse_hosts(text_: str) -> list:
    try:
        sizes = [int(s) for s in text_.split(",") if s.strip()]
    except ValueError:
        raise _core.ScenarioError(f"--hosts: even numbers of hosts, comma-separated, got {text_!r}") from None
    if not sizes:
        raise _core.ScenarioError("--hosts: at least one size")
    return sizes


def check(sizes: list, duration: str) -> None:
    """Refuse, before anything runs, a size or a duration the generated networks
    cannot have (the error names the option), or a duration of zero (no rate to
    measure)."""
    number = re.match(r"\s*([0-9]*\.?[0-9]*)", duration)[1]
    if number.strip(".") and float(number) == 0:
        raise _core.ScenarioError(f"--duration: a benchmark needs simulated time, got {duration!r}")
    for n in sizes:
        checked(two_tier(n, duration=duration))


def one(hosts: int, duration: str, folder: Path) -> dict:
    path = folder / f"two-tier-{hosts}.toml"
    path.write_text(text(two_tier(hosts, duration=duration)))
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise _core.SimulationError(f"--case scale, {hosts} hosts: {done.stderr.strip().splitlines()[-1:]}")
    f = json.loads(done.stdout)
    frames = max(f["frames"], 1)
    peak_mb = f["peak_kb"] / 1024
    return {
        "hosts": hosts,
        "frames": f["frames"],
        "events": f["events"],
        "wall_seconds": f["wall"],
        "wall_ns_per_frame": f["wall"] / frames * 1e9,
        "events_per_frame": f["events"] / frames,
        "wall_seconds_per_simulated_second": f["wall"] / f["simulated"],
        "peak_memory_mb": peak_mb,
        "peak_memory_mb_per_host": peak_mb / hosts,
    }


def measure(sizes: list, duration: str, progress=None, repeat: int = 1, each=None) -> list:
    """Each size's figures from its fastest of `repeat` runs, given to `progress`
    at the end; `each` is told every run as it ends. The sizes take turns (every
    size once, then again), so that a machine whose speed drifts slows them
    alike and the growth from one to another is not the drift's."""
    best: dict = {}
    with tempfile.TemporaryDirectory() as d:
        for i in range(repeat):
            for n in sizes:
                f = one(n, duration, Path(d))
                if each:
                    each(i + 1, f)
                if n not in best or f["wall_seconds"] < best[n]["wall_seconds"]:
                    best[n] = f
    out = [dict(best[n], runs=repeat) for n in sizes]
    if progress:
        for f in out:
            progress(f)
    return out


def line(f: dict) -> str:
    return (
        f"{f['hosts']:>6} hosts: {f['frames']:>11,} frames in {f['wall_seconds']:8.2f} s, "
        f"{f['wall_ns_per_frame']:7.0f} ns per frame, {f['events_per_frame']:.1f} events per frame, "
        f"{f['wall_seconds_per_simulated_second']:9.1f} s wall per simulated s, "
        f"peak {f['peak_memory_mb']:.0f} MB ({f['peak_memory_mb_per_host'] * 1024:.0f} KB per host)"
        + (f", best of {f['runs']}" if f.get("runs", 1) > 1 else "")
    )
