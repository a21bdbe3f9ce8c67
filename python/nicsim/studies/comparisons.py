"""Each published figure of a study beside the model's, with its signed error:
what `nicsim validate` prints, and the "published beside predicted" grids of
docs/validation.md and the HTML report.

A study's `[[published]]` entries say what kind of figure each is: a
`calibration` point (it set a parameter, docs/model.md names which), a
hardware `fact`, a `prediction`, or a figure `not compared` (the model has no
run to set beside it; its note says why). A calibration point or a fact with
no `sweep` is one the model takes as given: its note names the parameter it
sets. Calibration points come first.
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Optional

from nicsim.studies.cells import Missing, evaluate

NOT_COMPARED = "not compared"
KINDS = ("calibration", "fact", "prediction", NOT_COMPARED)
_NUMBER = re.compile(r"(-?\d[\d,]*(?:\.\d+)?)\s*(million|thousand)?")


def published_value(text: str):
    """The number in a published figure's words ("about 4.5 million" is 4.5e6),
    or None when it gives none ("described", "withheld for validation")."""
    m = _NUMBER.search(str(text))
    if not m:
        return None
    scale = {"million": 1e6, "thousand": 1e3}.get(m.group(2), 1.0)
    return float(m.group(1).replace(",", "")) * scale


def figure(p: dict) -> Optional[float]:
    """The published number: `value` when the entry gives one, else the number
    in its words; None for a description or a withheld figure."""
    if "value" in p:
        return float(p["value"])
    return published_value(p["published"])


def compare(spec: dict, frames: dict, study: str = "") -> list:
    """One record per published figure of a study, calibration points first (a
    figure with `divide_by` is the ratio of its metric to another run's; one with
    `crossing` is the value of the sweep key `x` at which the metric, falling as x
    grows over the runs that match, crosses `level`, interpolated between runs):
    study, quantity, kind, published (words), at, value, predicted, shown (as
    formatted), error_pct (signed, model against publication) and note."""
    from nicsim.studies.plots import column
    from nicsim.studies.tables import matches, records

    def value_of(part: dict) -> float:
        hits = [r for r in records(frames, part["sweep"]) if matches(r, part.get("where", {}))]
        if not hits:
            raise Missing(part["metric"])
        return float(evaluate(part["metric"], hits[0]))

    def crossing(p: dict) -> float:
        x, level = p["crossing"]["x"], p["crossing"]["level"]
        runs = [r for r in records(frames, p["sweep"]) if matches(r, p.get("where", {}))]
        points = sorted((float(r[column(x)]), float(evaluate(p["metric"], r))) for r in runs)
        return level_crossing(points, level)

    out = []
    for p in spec.get("published", []):
        runless = "sweep" not in p
        if runless:
            predicted, shown = None, "–" if p["kind"] == NOT_COMPARED else "as given"
        else:
            try:
                predicted = crossing(p) if "crossing" in p else value_of(p) * p.get("scale", 1)
                if "divide_by" in p:
                    predicted /= value_of(p["divide_by"])
                shown = format(predicted, p.get("format", ".4g"))
            except (Missing, ZeroDivisionError):
                predicted, shown = None, "not run"
        value = None if runless else figure(p)
        error = None
        if value and predicted is not None and not math.isnan(predicted):
            error = (predicted - value) / abs(value) * 100
        out.append(
            {
                "study": study,
                "quantity": p["quantity"],
                "kind": p["kind"],
                "published": p["published"],
                "at": p["at"],
                "value": value,
                "predicted": predicted,
                "shown": shown,
                "error_pct": error,
                "note": p.get("note", ""),
            }
        )
    return sorted(out, key=lambda r: KINDS.index(r["kind"]))


def level_crossing(points: list, level: float) -> float:
    """Where a curve of (x, y) points, sorted by x, last falls to `level` or
    below from above it, by linear interpolation; NaN when it never does."""
    for (x0, y0), (x1, y1) in reversed(list(zip(points, points[1:]))):
        if y0 > level >= y1:
            return x0 + (x1 - x0) * (y0 - level) / (y0 - y1)
    return math.nan


def median_error(records: list) -> Optional[float]:
    """The median absolute error (%) of the predictions that have a published number."""
    errors = [abs(r["error_pct"]) for r in records if r["kind"] == "prediction" and r["error_pct"] is not None]
    return statistics.median(errors) if errors else None


def signed(error: Optional[float]) -> str:
    """An error as text: "+3.2%", "−0.4%", or "–" when there is no number to compare."""
    if error is None:
        return "–"
    return f"{error:+.1f}%".replace("-", "−")


def summary(records: list) -> str:
    """One line: the calibration set and the predictions' median error."""
    calibration = [r["quantity"] for r in records if r["kind"] == "calibration"]
    predictions = [r for r in records if r["kind"] == "prediction"]
    compared = [r for r in predictions if r["error_pct"] is not None]
    median = median_error(records)
    parts = [f"Calibration set: {'; '.join(calibration)}." if calibration else "No calibration points."]
    if compared:
        parts.append(f"Median absolute error of the {len(compared)} predictions with a published number: {median:.1f}%")
        if len(compared) < len(predictions):
            more = len(predictions) - len(compared)
            parts[-1] += f" ({more} more {'is a description or withheld' if more == 1 else 'are descriptions or withheld'})"
        parts[-1] += "."
    elif predictions:
        parts.append(f"None of the {len(predictions)} predictions has a published number here (descriptions or withheld).")
    uncompared = sum(1 for r in records if r["kind"] == NOT_COMPARED)
    if uncompared:
        parts.append(f"{uncompared} published {'figure is' if uncompared == 1 else 'figures are'} not compared; the notes say why.")
    return " ".join(parts)
