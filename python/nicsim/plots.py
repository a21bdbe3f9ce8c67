"""Plots of a sweep's runs (matplotlib, drawn off-screen to PNG): metrics against
one varied key, a line per value of another, with the theoretical limit drawn
where one applies.
"""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)")
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kMGT]?)b(?:ps|/s)\s*$")
_SCALE = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
# Metric families for plots drawn without a study's plan: what the metric's
# name contains, axis label.
FAMILIES = [
    (("_mbps",), "throughput (Mb/s)"),
    (("_per_s", "_pps"), "rate (per second)"),
    (("utilization",), "busy (%)"),
    (("overruns", "dropped", "loss", "lost"), "frames lost"),
]


def number(v) -> float:
    """A plot coordinate from a value: 400, "400MHz", "1.5 GHz" and true (1) all work."""
    if isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)):
        return float(v)
    m = _NUMBER.match(str(v))
    return float(m.group(1)) if m else float("nan")


def coordinates(values) -> tuple:
    """Plot positions for a column's values, and tick labels when the values are
    categories (booleans, or words such as "direct") rather than quantities."""
    values = list(values)
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return [float(v) for v in values], {0.0: "false", 1.0: "true"}
    xs = [number(v) for v in values]
    if not any(np.isnan(xs)):
        return xs, None
    order = list(dict.fromkeys(str(v) for v in values))
    return [float(order.index(str(v))) for v in values], {float(i): name for i, name in enumerate(order)}


def bit_rate(text: str) -> float:
    m = _RATE.match(str(text))
    if not m:
        raise ValueError(f"limit_rate: write a rate such as 1Gbps, got {text!r}")
    return float(m.group(1)) * _SCALE[m.group(2)]


def limit_curve(spec: dict, xs: np.ndarray):
    """The theoretical line for the plot, from the wire's rate and frame size x."""
    kind = spec.get("limit")
    if not kind:
        return None
    if kind == "value":
        return np.full_like(xs, float(spec["limit_value"]))
    if kind == "slope":
        return xs * float(spec["limit_value"])
    rate = bit_rate(spec.get("limit_rate", "1Gbps"))
    if kind == "wire-frames":
        return rate / ((xs + 20) * 8)  # frame + preamble 8 + gap 12
    overhead = 18 if kind == "wire-l2" else 46  # header and FCS (+ IPv4 and UDP)
    return rate / 1e6 * (xs - overhead) / (xs + 20)


def column(x: str) -> str:
    """A plot key as a results column: labels drop their @."""
    return x[1:] if x.startswith("@") else x


def draw(frame, spec: dict) -> bytes:
    """One figure as PNG bytes."""
    x = column(spec["x"])
    ys = [column(y) for y in spec["y"]]
    series = column(spec["series"]) if spec.get("series") else None
    scale = 100.0 if spec.get("percent") else 1.0
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    groups = [(None, frame)] if series is None else list(frame.groupby(series, sort=False))
    markers = "os^vD<>p*h"
    coords, ticks = coordinates(frame[x])
    place = dict(zip(frame.index, coords))
    for gi, (value, rows) in enumerate(groups):
        rows = rows.assign(_x=[place[i] for i in rows.index]).sort_values("_x")
        for yi, y in enumerate(ys):
            if y not in rows:
                continue
            label = y if series is None else (f"{series} = {value}" if len(ys) == 1 else f"{y}, {series} = {value}")
            ax.plot(rows["_x"], rows[y] * scale, marker=markers[(gi * len(ys) + yi) % len(markers)], label=label)
    xs_all = np.array(sorted(set(coords)))
    if ticks:
        ax.set_xticks(list(ticks), list(ticks.values()))
        ax.set_xmargin(0.15)
    if spec.get("limit") and len(xs_all):
        dense = np.linspace(xs_all.min(), xs_all.max(), 200)
        ax.plot(dense, limit_curve(spec, dense) * scale, "k--", linewidth=1, label=spec.get("limit_label", "theoretical limit"))
    ax.set_xlabel(spec.get("x_label", x))
    ax.set_ylabel(spec.get("y_label", ys[0] if len(ys) == 1 else "value"))
    if spec.get("title"):
        ax.set_title(spec["title"])
    for axis, key in ((ax.set_xscale, "x_scale"), (ax.set_yscale, "y_scale")):
        if spec.get(key):
            axis(spec[key])
    if not spec.get("y_scale"):
        top = ax.get_ylim()[1]
        ax.set_ylim(0, top * 1.06)  # from zero, with room above the highest point
    if ticks is None and all(float(c).is_integer() for c in coords) and not spec.get("x_scale"):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def automatic(frame, vary: dict) -> list:
    """Plot plans for a sweep without a study: each family of metrics that
    changes across runs, against the first varied key that takes several values."""
    varied = [k for k in vary if column(k) in frame and frame[column(k)].nunique() > 1]
    if not varied or frame.empty:
        return []
    x = varied[0]
    series = varied[1] if len(varied) > 1 else None
    metrics = [c for c in frame.columns if "." in c and c.split(".", 1)[0] and "[" not in c and frame[c].dtype.kind in "if"]
    plans = []
    for words, label in FAMILIES:
        moving = [c for c in metrics if any(w in c.rsplit(".", 1)[-1] for w in words) and frame[c].nunique() > 1]
        if not moving:
            continue
        moving = sorted(moving, key=lambda c: -float(np.nanmax(np.abs(frame[c]))))[:4 if series is None else 1]
        plans.append({"x": x, "y": moving, "series": series, "y_label": label, "percent": label.startswith("busy")})
    return plans
