"""`nicsim bench --case`: the whole host path timed on shipped scenarios, with the
settings docs/benchmarks.md reports. Figures: simulated frames per wall second at
the host (frames that reached its adapter, taken or dropped at the FIFO, plus
those it sent), events per frame, wall seconds per simulated second, and the
process's peak memory."""

from __future__ import annotations

import resource
import time

from nicsim import _core
from nicsim.api import run
from nicsim.bench.machine import machine
from nicsim.studies.study import papers_dir

CLIENTS = [f"client{i}" for i in range(1, 9)]
# name: (scenario under the checkout, overrides, what it is)
CASES = {
    "full-path": (
        "scenarios/papers/ibm2001/server.toml",
        {"duration": "2s", "host[0].clock": "700MHz", "host[0].file_request.peers": CLIENTS},
        "IBM 2001 at 700 MHz, 8 clients x 7 sessions, 2 s (wire, switch, adapter, PCI, handler, deferred TCP, application)",
    ),
    "10g-flood": (
        "bench/10g-rx-flood.toml",
        {},
        "10 GbE, PCIe Gen3 x8, 64-byte receive flood, NAPI and 50 us moderation, 20 ms",
    ),
    "10g-napi": (
        "bench/10g-rx-napi.toml",
        {},
        "10 GbE, PCIe Gen3 x8, 64-byte receive flood, NAPI and 50 us moderation with costs the host keeps up with, 20 ms",
    ),
    "10g-poll": (
        "bench/10g-rx-poll.toml",
        {},
        "10 GbE, PCIe Gen3 x8, 64-byte receive flood, poll-mode driver taking every frame, 20 ms",
    ),
    "direct-tso": (
        "scenarios/papers/patent-direct-tso/tso.toml",
        {"host[0].adapter[0].programmable.segmentation": "direct"},
        "direct segmentation: 64 MB by TTCP at 10 GbE, the stack's large sends cut by the adapter, its ACKs taken",
    ),
    "tcp-10g": (
        "bench/tcp-10g.toml",
        {},
        "one TCP transfer between ideal hosts, 10 Gb/s, 50 us, 1 MiB buffers, 1 s (frames: the data packets sent)",
    ),
    "store-and-forward-tso": (
        "scenarios/papers/patent-direct-tso/tso.toml",
        {"host[0].adapter[0].programmable.segmentation": "store-and-forward"},
        "store-and-forward segmentation: 64 MB by TTCP at 10 GbE, the stack's large sends cut by the adapter, its ACKs taken",
    ),
}


def host_frames(result) -> int:
    """The frames a case counts at its host: those at its adapter (taken, or
    dropped at the FIFO) and those it sent; for an ideal host, which has no
    adapter, its TCP data packets."""
    m = result.component("server").metrics
    if "rx_frames" not in m:
        return int(m["tcp_data_out"])
    return int(m.get("rx_frames", 0) + m.get("rx_fifo_overruns", 0) + m.get("tx_frames", 0))


def measure(case: str, repeat: int) -> dict:
    """The best of `repeat` runs of one case."""
    if case not in CASES:
        raise _core.ScenarioError(f"--case: one of {', '.join(['link', *CASES, 'scale', 'goals'])}, got {case!r}")
    path, sets, what = CASES[case]
    scenario = papers_dir().parent.parent / path
    if not scenario.is_file():
        raise _core.ScenarioError(f"--case {case}: needs {path} of the nicsim checkout")
    best, result = None, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run(scenario, overrides=sets)
        wall = time.perf_counter() - start
        best = wall if best is None else min(best, wall)
    frames = host_frames(result)
    return {
        "case": case,
        "what": what,
        "host_frames": frames,
        "events": result.events,
        "wall_seconds": best,
        "frames_per_second": frames / best,
        "events_per_frame": result.events / frames if frames else 0.0,
        "wall_seconds_per_simulated_second": best / result.simulated_seconds,
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "build": _core.build_kind(),
        "machine": machine(),
    }


def summary(f: dict) -> str:
    """One case's figures as a line of text."""
    return (
        f"{f['what']}: {f['host_frames']:,} host frames in {f['wall_seconds']:.3f} s, "
        f"{f['frames_per_second'] / 1e6:.2f} M per wall second, {f['events_per_frame']:.1f} events per frame, "
        f"{f['wall_seconds_per_simulated_second']:.2f} s wall per simulated s, peak memory {f['peak_memory_mb']:.0f} MB"
    )
