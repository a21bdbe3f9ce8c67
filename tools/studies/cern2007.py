"""BRIEF.md experiment 5: small-packet receive loss and receive descriptor recycling."""

import json
import statistics
import tempfile
from pathlib import Path

import nicsim

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "papers" / "cern2007" / "receive.toml"
PAYLOADS = [46, 64, 100, 150, 200, 250, 300, 350, 400, 500, 750, 1000, 1500]
TRACE_66MHZ = {"host[0].bus.clock": "66MHz", "duration": "3ms", "host[0].warmup": "0ms"}


def run(payload, buffers, **sets):
    sets = {"source[0].payload_size": payload, "host[0].driver.buffers": buffers, **sets}
    return nicsim.run(SCENARIO, overrides=sets).component("server").metrics


def bus_regime(buffers) -> dict:
    """Gaps between receive data bursts on the 66 MHz bus of the traces, in clocks."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "trace.json"
        nicsim.run(SCENARIO, trace=path, overrides={"source[0].payload_size": 46, "host[0].driver.buffers": buffers, **TRACE_66MHZ})
        events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    data = sorted(e["ts"] for e in events if e.get("ph") == "X" and e["name"] == "rx_data")
    clocks = [(b - a) * 66 for a, b in zip(data, data[1:])]
    stops = [c for c in clocks if c > 1000]
    return {"spacing": statistics.median(clocks), "stops": len(stops), "stop": statistics.median(stops) if stops else 0.0}


def threshold(rows) -> str:
    lossy = [p for p, m in rows if m["rx_loss"] > 0.001]
    return f"{max(lossy)}" if lossy else "none"


def section() -> str:
    table = []
    realloc = [(p, run(p, "reallocate")) for p in PAYLOADS]
    recycle = [(p, run(p, "recycle")) for p in PAYLOADS]
    for (p, a), (_, b) in zip(realloc, recycle):
        table.append(
            f"| {p} | {a['sink_wire_mbps']:.0f} | {a['sink_frame_rate_pps'] / 1e6:.3f} | {a['rx_loss']:.1%} "
            f"| {b['sink_wire_mbps']:.0f} | {b['sink_frame_rate_pps'] / 1e6:.3f} | {b['rx_loss']:.1%} |"
        )
    stumble, smooth = bus_regime("reallocate"), bus_regime("recycle")
    host_rate = realloc[0][1]["sink_frame_rate_pps"] / 1e6
    return f"""## CERN 2007: small-packet loss and descriptor recycling (scenario `papers/cern2007/receive.toml`)

A line-rate flood of raw frames into an 82546EB on 64-bit 133 MHz PCI-X; Linux 2.6
e1000 with NAPI on a 2.4 GHz Xeon (BRIEF.md experiment 5). Calibration point: while
stumbling, the host takes about 0.3 frames per µs; it sets the cost of freeing and
reallocating a buffer. The model's host takes **{host_rate:.3f} frames per µs** at
46-byte payloads. The rest are predictions.

| payload (B) | reallocate: wire Mb/s | Mframes/s | loss | recycle: wire Mb/s | Mframes/s | loss |
|---|---|---|---|---|---|---|
{chr(10).join(table)}

Loss threshold (largest payload that loses frames): **{threshold(realloc)} bytes**
reallocating buffers per frame, **{threshold(recycle)}** with a recycled pool. The
published study reports loss for small packets and the stumble regime, with no
threshold figure in BRIEF.md to compare.

The bus, traced at 66 MHz with 46-byte payloads (`nicsim run ... --trace`, open in
Perfetto): recycling, receive data bursts start a median {smooth['spacing']:.0f} clocks
apart (published: about 45), four frames then their four descriptors, with
{smooth['stops']} stops over 1000 clocks. Reallocating, the FIFO drains back to back
between {stumble['stops']} stops of a median {stumble['stop']:,.0f} clocks (published:
about 4,000) while the driver is late with the tail.
"""
