"""A study's tables, built from its results: the published figures beside the
model's, and the `[[table]]`s of study.toml (rows named by the keys of the
runs, a column per sweep or figure). The HTML report and docs/validation.md
render the same grids, so they cannot disagree.
"""

from __future__ import annotations

import math
import weakref

from nicsim.studies.cells import fill
from nicsim.studies.comparisons import compare, signed
from nicsim.studies.plots import column

PUBLISHED_HEAD = ["quantity", "kind", "published (where in the publication)", "nicsim", "error", "note"]


def _norm(v) -> str:
    """A key's value as text, so that 64 and 64.0 from two sweeps match."""
    if isinstance(v, float) and not math.isnan(v) and v.is_integer():
        v = int(v)
    return str(v)


def matches(row: dict, where: dict) -> bool:
    """Whether a run has every key of `where` at its value."""
    return all(_norm(row.get(column(k))) == _norm(want) for k, want in where.items())


# Each frame's finished runs as dicts, made once: a study's tables and figures
# look its sweeps up hundreds of times, and the frames are hundreds of columns
# wide. Keyed by the frame's identity, dropped when the frame is.
_records: dict = {}


def records(frames: dict, sweep: str) -> list:
    """The runs of a sweep that finished, in point order (not to be changed)."""
    frame = frames.get(sweep)
    if frame is None or frame.empty:
        return []
    held = _records.get(id(frame))
    if held is None:
        ok = frame[frame["status"] == "ok"] if "status" in frame else frame
        held = _records[id(frame)] = ok.to_dict("records")
        weakref.finalize(frame, _records.pop, id(frame), None)
    return held


def published_grid(spec: dict, frames: dict) -> list:
    """One row per published figure, calibration points first: quantity, kind,
    published, nicsim, signed error, note."""
    return [
        [r["quantity"], r["kind"], f'{r["published"]} ({r["at"]})', r["shown"], signed(r["error_pct"]), r["note"]]
        for r in compare(spec, frames)
    ]


def lines_grid(table: dict, frames: dict) -> tuple:
    """A table of figures by line: each `line` a quantity, each column one run."""
    runs = []
    for c in table["column"]:
        hits = [r for r in records(frames, c["sweep"]) if matches(r, c.get("where", {}))]
        runs.append(hits[0] if hits else None)
    header = list(table.get("rows", ["quantity"])) + [c["label"] for c in table["column"]]
    body = [[ln["label"]] + [fill(ln["cell"], r) if r is not None else "—" for r in runs] for ln in table["line"]]
    return header, body


def table_grid(table: dict, frames: dict) -> tuple:
    """The header and rows of one `[[table]]`: a row per distinct value of its
    keys among the runs, or a row per `line` (a quantity) when it has lines."""
    if "line" in table:
        return lines_grid(table, frames)
    keys = table.get("keys", [])
    found: dict = {}  # row identity -> the first run with it, and its keys
    columns = []
    for c in table["column"]:
        mine = c.get("keys", keys)
        index = {}
        for r in records(frames, c["sweep"]):
            if not matches(r, c.get("where", {})):
                continue
            ident = tuple(_norm(r.get(column(k))) for k in mine)
            index.setdefault(ident, r)
            found.setdefault(ident, (r, mine))
        columns.append(index)
    header = list(table.get("rows", [])) + [c["label"] for c in table["column"]]
    body = []
    for ident, (first, mine) in found.items():
        labels = [fill(f, first) for f in table.get("row_cells", ["{" + k + "}" for k in mine])]
        cells = [fill(c["cell"], index[ident]) if ident in index else "—" for c, index in zip(table["column"], columns)]
        body.append(labels + cells)
    return header, body


def markdown(header: list, rows: list) -> str:
    """A grid as a Markdown table."""

    def line(cells) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in rows)])
