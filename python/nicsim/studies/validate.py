"""`nicsim validate`: run the studies (points already in their results files
are not run again), then print each published figure beside the model's,
calibration points first, with the signed error, and each study's median
absolute error over its predictions. A tool that reports: it exits 0 whatever
the errors are. `--markdown` writes docs/validation.md from the same runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

from nicsim.studies.comparisons import compare, median_error, signed
from nicsim.studies.document import load


def records(results: Sequence["str | os.PathLike[str]"]) -> list:
    """Every comparison of every study whose results file is given, in order."""
    out = []
    for path in map(Path, results):
        spec, _, frames = load(path)
        out += compare(spec, frames, study=path.stem)
    return out


def text(records: list, titles: dict) -> str:
    """The comparisons as aligned plain text, one block per study of `titles`
    (a study with no published figure says so)."""
    lines = []
    for study in dict.fromkeys([*titles, *(r["study"] for r in records)]):
        rows = [r for r in records if r["study"] == study]
        lines += ["", titles.get(study, study)]
        if not rows:
            lines.append("  no published figure to compare: its runs and tables are in the report")
            continue
        width = max(len(r["quantity"]) for r in rows)
        for r in rows:
            lines.append(f"  {r['kind']:<12}  {r['quantity']:<{width}}  {r['shown']:>12}  {signed(r['error_pct']):>8}   published: {r['published']}")
        median = median_error(rows)
        counted = sum(1 for r in rows if r["kind"] == "prediction" and r["error_pct"] is not None)
        lines.append(f"  median absolute error of its {counted} predictions with a number: {median:.1f}%" if counted else "  no prediction with a published number")
    return "\n".join(lines[1:])


def as_json(records: list) -> str:
    """One JSON object per comparison, a list."""
    return json.dumps(records, indent=2, ensure_ascii=False)
