"""Writing output files whole: a file appears under its name complete or not at
all (a run cut short leaves no half-written report), and a folder that cannot
be written to is a clear input error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from nicsim import _core


def write_whole(out: "str | os.PathLike[str]", text: str) -> Path:
    """Write `text` to `out` through a temporary name, making its folder."""
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".partial")
        tmp.write_text(text)
        os.replace(tmp, out)
    except OSError as e:
        raise _core.ScenarioError(f"{out}: cannot write ({e.strerror})") from None
    return out


def results_files(results: Sequence["str | os.PathLike[str]"]) -> list:
    """The results files given, each of which must exist."""
    paths = [Path(r) for r in results]
    for p in paths:
        if not p.is_file():
            raise _core.ScenarioError(f"{p}: no such results file")
    return paths
