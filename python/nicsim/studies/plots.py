"""Plots of a sweep's runs (matplotlib, drawn off-screen to PNG): metrics against
one varied key, a line per value of another, with the theoretical limit drawn
where one applies.
"""

from __future__ import annotations

import io
import re
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator, NullLocator  # noqa: E402

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)")
_QUANTITY = re.compile(r"^\s*(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)\s*([a-zA-Zµ/]+)\s*$")
_PREFIXES = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9, "p": 1e-12}
_BASES = ("b/s", "bps", "Hz", "s", "B")
# A published figure in words: its first number, and a word that scales it.
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


def magnitude(v):
    """A quantity written with its unit ("100Mb/s", "2GHz", "10us") in the base
    unit, or None."""
    m = _QUANTITY.match(str(v))
    if not m:
        return None
    unit = m.group(2)
    for base in _BASES:
        prefix = unit[: -len(base)] if unit.endswith(base) else None
        if prefix is not None and prefix in _PREFIXES:
            return float(m.group(1)) * _PREFIXES[prefix]
    return None


def coordinates(values) -> tuple:
    """Plot positions for a column's values, and tick labels when the values are
    categories (booleans, words such as "direct", or quantities written in
    different units, such as "100Mb/s" and "1Gb/s", placed in order of size)."""
    values = list(values)
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return [float(v) for v in values], {0.0: "false", 1.0: "true"}
    xs = [number(v) for v in values]
    units = {_QUANTITY.match(str(v)).group(2) for v in values if _QUANTITY.match(str(v))}
    if not any(np.isnan(xs)) and len(units) <= 1:
        return xs, None
    sizes = {str(v): magnitude(v) for v in values}
    if all(s is not None for s in sizes.values()):
        order = sorted(dict.fromkeys(str(v) for v in values), key=lambda t: sizes[t])
    else:
        order = list(dict.fromkeys(str(v) for v in values))
    return [float(order.index(str(v))) for v in values], {float(i): name for i, name in enumerate(order)}


def spans_decades(coords) -> bool:
    """Positive values over two decades or more: drawn on a log axis."""
    xs = [c for c in coords if not np.isnan(c)]
    return bool(xs) and min(xs) > 0 and max(xs) / min(xs) >= 100


def published_marks(frame, spec: dict, published: list) -> list:
    """The published figures a plot shows a run of: (x, y, text) for each whose
    metric is one of the plot's lines, at its run's x, with its signed error."""
    from nicsim.studies.comparisons import figure
    from nicsim.studies.tables import matches

    x, ys = column(spec["x"]), [column(y) for y in spec["y"]]
    coords, _ = coordinates(frame[x])
    place = dict(zip(frame.index, coords))
    marks = []
    for p in published:
        value = figure(p)
        if p["metric"] not in ys or value is None or "divide_by" in p:
            continue
        hits = [i for i, r in zip(frame.index, frame.to_dict("records")) if matches(r, p.get("where", {}))]
        if not hits:
            continue
        want = value / p.get("scale", 1)
        got = float(frame.loc[hits[0], p["metric"]])
        share = (got - want) / want if want else 0.0
        error = f"{share:+.{2 if abs(share) < 0.01 else 1 if abs(share) < 0.1 else 0}%}"
        marks.append((place[hits[0]], want, f"published {p['published']}; model {error}"))
    return marks


def bit_rate(text: str) -> float:
    m = _RATE.match(str(text))
    if not m:
        raise ValueError(f"limit_rate: write a rate such as 1Gbps, got {text!r}")
    return float(m.group(1)) * _SCALE[m.group(2)]


def levels(spec: dict, frames: dict) -> list:
    """The plot's `limits` as (y, label): a number as written, or the metric of
    the first run of its sweep that matches its `where` (left out when that
    sweep has no such run)."""
    from nicsim.studies.cells import evaluate
    from nicsim.studies.tables import matches

    out = []
    for line in spec.get("limits", []):
        if "value" in line:
            out.append((float(line["value"]), line["label"]))
            continue
        frame = frames.get(line["sweep"])
        rows = [] if frame is None else [r for r in frame.to_dict("records") if matches(r, line.get("where", {}))]
        if rows:
            out.append((float(evaluate(line["metric"], rows[0])), line["label"]))
    return out


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


def legend(spec: dict, y: str, lines: int, value) -> str:
    """A line's name as a reader would say it: the plot's `legend` words for the
    series value (or for the metric, when a plot draws several), else the key's
    last part ("buffers = reallocate", not the override path); a lone line
    without a series is the model's."""
    named = spec.get("legend", {})
    if not spec.get("series"):
        return "nicsim" if lines == 1 else named.get(y, y)
    text = str(value).lower() if isinstance(value, (bool, np.bool_)) else str(value)
    words = named.get(text)
    if words is None:
        words = f"{short_key(spec['series'])} = {text}"
    return words if lines == 1 else f"{named.get(y, y)}, {words}"


def short_key(key: str) -> str:
    """A key's last part, as a reader names it: `buffers` for host[0].driver.buffers."""
    return re.sub(r"\[\d+\]", "", column(key)).rsplit(".", 1)[-1]


def column(x: str) -> str:
    """A plot key as a results column: labels drop their @."""
    return x[1:] if x.startswith("@") else x


def draw(frame, spec: dict, published: list = (), levels: list = ()) -> bytes:
    """One figure as PNG bytes, with the published figures of its runs marked
    and `levels`, (y, label) each, drawn across it."""
    x = column(spec["x"])
    ys = [column(y) for y in spec["y"]]
    series = column(spec["series"]) if spec.get("series") else None
    scale = 100.0 if spec.get("percent") else float(spec.get("scale", 1.0))
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
            label = legend(spec, y, len(ys), value)
            ax.plot(rows["_x"], rows[y] * scale, marker=markers[(gi * len(ys) + yi) % len(markers)], label=label)
    for mx, my, text in published_marks(frame, spec, list(published)):
        ax.plot([mx], [my * scale], marker="*", markersize=14, color="crimson", linestyle="none", label=text)
    xs_all = np.array(sorted(set(coords)))
    if ticks:
        # Words on a category axis wrap, so long names do not run together.
        ax.set_xticks(list(ticks), [textwrap.fill(str(t), 14) for t in ticks.values()])
        ax.set_xmargin(0.15)
    elif not spec.get("x_scale") and spans_decades(coords):
        ax.set_xscale("log")
        ax.set_xticks(list(xs_all), [f"{v:g}" for v in xs_all])
        ax.xaxis.set_minor_locator(NullLocator())
    if spec.get("limit") and len(xs_all):
        dense = np.linspace(xs_all.min(), xs_all.max(), 200)
        ax.plot(dense, limit_curve(spec, dense) * scale, "k--", linewidth=1, label=spec.get("limit_label", "theoretical limit"))
    for j, (level, text) in enumerate(levels):
        ax.axhline(level, color="k", linestyle=("--", ":", "-.")[j % 3], linewidth=1, label=text)
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
    if ticks is None and all(float(c).is_integer() for c in coords) and ax.get_xscale() == "linear":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def _unit_of(values) -> str:
    """" (MHz)" when every value is a number written with that one unit ("400MHz")."""
    units = {m.group(1) if m else None for m in (re.match(r"^\s*-?[\d.]+\s*([^\d\s.]+)\s*$", str(v)) for v in values)}
    unit = units.pop() if len(units) == 1 else None
    return f" ({unit})" if unit else ""


def automatic(frame, vary: dict) -> list:
    """Plot plans for a sweep without a study: each family of metrics that
    changes across runs, against the first varied key that takes several values."""
    varied = [k for k in vary if column(k) in frame and frame[column(k)].nunique() > 1]
    if not varied or frame.empty:
        return []
    x = varied[0]
    series = varied[1] if len(varied) > 1 else None
    metrics = [c for c in frame.columns if "." in c and c.split(".", 1)[0] and "[" not in c and frame[c].dtype.kind in "if"]
    # What a source offered is an input of the run, not an output.
    metrics = [c for c in metrics if not c.rsplit(".", 1)[-1].startswith("offered")]
    plans = []
    for words, label in FAMILIES:
        moving = [c for c in metrics if any(w in c.rsplit(".", 1)[-1] for w in words) and frame[c].nunique() > 1]
        if not moving:
            continue
        moving = sorted(moving, key=lambda c: -float(np.nanmax(np.abs(frame[c]))))[:4 if series is None else 1]
        what = label.split(" (")[0]
        words = short_key(x).replace("_", " ") + _unit_of(frame[column(x)])
        plans.append({"x": x, "y": moving, "series": series, "y_label": label, "x_label": words, "percent": label.startswith("busy"), "title": f"{what[0].upper() + what[1:]} against {words}"})
    return plans
