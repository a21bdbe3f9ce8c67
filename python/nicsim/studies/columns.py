"""How a column of runs reads in a report: its header in words, the key or
component beneath, and each value with its unit at a sensible precision
(`server.app_goodput_mbps` is "app goodput (Mb/s)" of server; 0.7859 of a
utilization is 78.6%; 1492330.0 frames a second is 1,492,330)."""

from __future__ import annotations

import math

# Metric name endings and the unit each stands for.
UNITS = {
    "_mbps": "Mb/s", "_gbps": "Gb/s", "_pps": "frames/s", "_per_s": "/s", "_us": "µs", "_ns": "ns",
    "_ms": "ms", "_bytes": "bytes", "_mbytes_per_s": "MB/s", "_clocks": "clocks", "_cycles": "cycles",
}
# Metrics that are fractions of a whole, shown as per cent.
FRACTIONS = ("utilization", "_share", "_loss", "_idle", "_fraction", "cpu0_", "cpu1_", "cpu2_", "cpu3_")


def header(col: str) -> tuple:
    """(words, where): a metric `component.name` or a key `a[0].b.name`."""
    where, _, name = col.rpartition(".")
    unit = "%" if percent(col) else None
    for end in sorted(UNITS, key=len, reverse=True):
        if name.endswith(end):
            name, unit = name[: -len(end)], unit or UNITS[end]
            break
    words = name.replace("_", " ")
    return (f"{words} ({unit})" if unit else words), where


def percent(col: str) -> bool:
    name = col.rpartition(".")[2]
    return any(f in name for f in FRACTIONS) and not any(name.endswith(e) for e in UNITS if e not in ("_per_s",))


def shown(col: str, v) -> str:
    """A value as the table shows it."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, (list, tuple)):
        items = [str(x) for x in v]
        return ", ".join(items) if len(items) <= 3 else f"{items[0]} … {items[-1]} ({len(items)})"
    if isinstance(v, str) and v.startswith("[") and v.endswith("]"):
        import json

        try:
            return shown(col, json.loads(v))
        except ValueError:
            return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if percent(col) and 0 <= v <= 1:
        return f"{v * 100:.1f}%"
    if isinstance(v, int) or float(v).is_integer():
        return f"{int(v):,}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}"
