"""A study: the sweeps, plots and published figures of one experiment, read from
`scenarios/papers/NAME/study.toml`. See docs/sweeps.md for the format.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from nicsim import _core
from nicsim.studies.cells import check
from nicsim.studies.comparisons import KINDS, NOT_COMPARED
from nicsim.sweeping.points import MODES

LIMITS = ("wire-l2", "wire-udp", "wire-frames", "value", "slope")
_KEYS = {
    "study": {"title", "source", "summary", "text", "notes", "sweep", "plot", "published", "table", "calibrated"},
    "calibrated": {"key", "parameter"},
    "sweep": {"name", "scenario", "mode", "vary", "title"},
    "plot": {"sweep", "where", "x", "y", "x_label", "y_label", "title", "series", "limit", "limit_rate", "limit_value", "limit_label", "y_scale", "x_scale", "percent", "legend", "scale", "limits"},
    "limits": {"value", "sweep", "where", "metric", "label"},
    "published": {"quantity", "published", "at", "sweep", "where", "metric", "format", "note", "scale", "kind", "value", "divide_by", "crossing"},
    "divide_by": {"sweep", "where", "metric"},
    "crossing": {"x", "level"},
    "table": {"title", "text", "after", "rows", "keys", "row_cells", "column", "line"},
    "line": {"label", "cell"},
    "column": {"label", "sweep", "cell", "keys", "where"},
}


@dataclass
class Study:
    name: str
    dir: Path
    spec: dict

    @property
    def title(self) -> str:
        return self.spec["title"]

    @property
    def sweeps(self) -> list:
        return self.spec.get("sweep", [])

    @property
    def plots(self) -> list:
        return self.spec.get("plot", [])

    @property
    def published(self) -> list:
        return self.spec.get("published", [])

    def scenario(self, sweep: dict) -> Path:
        return self.dir / sweep["scenario"]


def _fail(where: str, message: str):
    raise _core.ScenarioError(f"{where}: {message}")


def _check_keys(where: str, table: dict, kind: str) -> None:
    unknown = sorted(set(table) - _KEYS[kind])
    if unknown:
        _fail(where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS[kind]))})")


def _need(where: str, table: dict, key: str, kind: type):
    v = table.get(key)
    if not isinstance(v, kind):
        _fail(f"{where}.{key}", f"is required and must be a {kind.__name__}" if v is None else f"must be a {kind.__name__}")
    return v


def load_study(path: "str | os.PathLike[str]") -> Study:
    """Read and check a study file; errors name the file and the key."""
    path = Path(path)
    try:
        spec = tomllib.loads(path.read_text())
    except OSError as e:
        _fail(str(path), str(e))
    except tomllib.TOMLDecodeError as e:
        _fail(str(path), f"not valid TOML ({e})")
    where = str(path)
    _check_keys(where, spec, "study")
    _need(where, spec, "title", str)
    names = set()
    for i, sw in enumerate(spec.get("sweep", [])):
        at = f"{where}: sweep[{i}]"
        _check_keys(at, sw, "sweep")
        name = _need(at, sw, "name", str)
        if name in names:
            _fail(f"{at}.name", f"{name!r} is used twice")
        names.add(name)
        scenario = path.parent / _need(at, sw, "scenario", str)
        if not scenario.is_file():
            _fail(f"{at}.scenario", f"no file {scenario}")
        for key, values in _need(at, sw, "vary", dict).items():
            if not isinstance(values, list):
                _fail(f"{at}.vary.{key}", f"must be a list of values, got {values!r}")
        if sw.get("mode", "grid") not in MODES:
            _fail(f"{at}.mode", f"must be grid or zip, got {sw['mode']!r}")
    for kind in ("plot", "published"):
        for i, item in enumerate(spec.get(kind, [])):
            at = f"{where}: {kind}[{i}]"
            _check_keys(at, item, kind)
            if kind == "published" and item.get("kind") in KINDS and ("sweep" not in item or item["kind"] == NOT_COMPARED):
                _check_runless(at, item)
                continue
            if _need(at, item, "sweep", str) not in names:
                _fail(f"{at}.sweep", f"no sweep named {item['sweep']!r}")
            if kind == "plot":
                _need(at, item, "x", str)
                _need(at, item, "y", list)
                if item.get("limit", "value") not in LIMITS:
                    _fail(f"{at}.limit", f"must be one of {', '.join(LIMITS)}")
                if item.get("limit") in ("value", "slope") and not isinstance(item.get("limit_value"), (int, float)):
                    _fail(f"{at}.limit_value", f"a number is required for limit = {item['limit']!r}")
                if "scale" in item and (isinstance(item["scale"], bool) or not isinstance(item["scale"], (int, float))):
                    _fail(f"{at}.scale", f"must be a number (each y is multiplied by it), got {item['scale']!r}")
                for j, line in enumerate(_need(at, item, "limits", list) if "limits" in item else []):
                    _check_limit(f"{at}.limits[{j}]", line, names)
            else:
                for key in ("quantity", "published", "at", "metric", "kind"):
                    _need(at, item, key, str)
                if item["kind"] not in KINDS:
                    _fail(f"{at}.kind", f"must be one of {', '.join(KINDS)}, got {item['kind']!r}")
                if "value" in item and not isinstance(item["value"], (int, float)):
                    _fail(f"{at}.value", f"must be a number (the published figure), got {item['value']!r}")
                if "divide_by" in item:
                    other = _need(at, item, "divide_by", dict)
                    _check_keys(f"{at}.divide_by", other, "divide_by")
                    if _need(f"{at}.divide_by", other, "sweep", str) not in names:
                        _fail(f"{at}.divide_by.sweep", f"no sweep named {other['sweep']!r}")
                    check("{" + _need(f"{at}.divide_by", other, "metric", str) + "}", f"{at}.divide_by.metric")
                if "crossing" in item:
                    c = _need(at, item, "crossing", dict)
                    _check_keys(f"{at}.crossing", c, "crossing")
                    _need(f"{at}.crossing", c, "x", str)
                    if not isinstance(c.get("level"), (int, float)):
                        _fail(f"{at}.crossing.level", "a number is required: the metric's level whose crossing is the figure")
                check("{" + item["metric"] + "}", f"{at}.metric")
    for i, t in enumerate(spec.get("table", [])):
        _check_table(f"{where}: table[{i}]", t, names)
    for i, c in enumerate(spec.get("calibrated", [])):
        at = f"{where}: calibrated[{i}]"
        _check_keys(at, c, "calibrated")
        _need(at, c, "key", str)
        _need(at, c, "parameter", str)
    return Study(path.parent.name, path.parent, spec)


def _check_runless(at: str, item: dict) -> None:
    """A figure set beside no run: one the model takes as given (a calibration
    point that is itself a parameter, a hardware fact) or cannot be compared
    with. Its note says which parameter it sets, or why there is no run."""
    for key in ("quantity", "published", "at", "note"):
        _need(at, item, key, str)
    if item["kind"] == "prediction":
        _fail(f"{at}.sweep", "is required: a prediction is compared with a run")
    for key in ("sweep", "metric", "where", "divide_by", "value"):
        if key in item and item["kind"] == NOT_COMPARED:
            _fail(f"{at}.{key}", f"a figure {NOT_COMPARED!r} is set beside no run")
        if key in item:
            _fail(f"{at}.sweep", f"is required with {key!r} (a figure set beside a run)")


def _check_table(at: str, t: dict, sweeps: set) -> None:
    _check_keys(at, t, "table")
    _need(at, t, "title", str)
    rows = t.get("rows", [])
    for key in ("rows", "keys", "row_cells", "line"):
        if key in t and not isinstance(t[key], list):
            _fail(f"{at}.{key}", "must be a list")
    for j, ln in enumerate(t.get("line", [])):
        _check_keys(f"{at}.line[{j}]", ln, "line")
        _need(f"{at}.line[{j}]", ln, "label", str)
        check(_need(f"{at}.line[{j}]", ln, "cell", str), f"{at}.line[{j}].cell")
    lines = "line" in t
    if not lines and (len(t.get("keys", [])) != len(rows) or len(t.get("row_cells", rows)) != len(rows)):
        _fail(f"{at}.keys", f"needs one key (and one row_cells entry, if given) per row label: {len(rows)}")
    for j, c in enumerate(_need(at, t, "column", list)):
        cat = f"{at}.column[{j}]"
        _check_keys(cat, c, "column")
        _need(cat, c, "label", str)
        if _need(cat, c, "sweep", str) not in sweeps:
            _fail(f"{cat}.sweep", f"no sweep named {c['sweep']!r}")
        if not lines:
            check(_need(cat, c, "cell", str), f"{cat}.cell")
        if not lines and len(c.get("keys", rows)) != len(rows):
            _fail(f"{cat}.keys", f"needs one key per row label: {len(rows)}")
    for j, f in enumerate(t.get("row_cells", [])):
        check(f, f"{at}.row_cells[{j}]")


def find_studies(roots: "str | os.PathLike[str] | Sequence", names: Optional[list] = None) -> list:
    """The studies under each root (each folder with a study.toml), or the ones named."""
    roots = [Path(r) for r in roots] if isinstance(roots, (list, tuple)) else [Path(roots)]
    found = {p.parent.name: p for root in roots for p in sorted(root.glob("*/study.toml"))}
    if not found:
        _fail(", ".join(map(str, roots)), "no study folders (NAME/study.toml) here")
    for n in names or []:
        if n not in found:
            _fail(n, f"no such study; there are {', '.join(found)}")
    return [load_study(found[n]) for n in (names or found)]


def _check_limit(at: str, line, names: set) -> None:
    """A level drawn across a plot: a number, or one run's metric in a sweep."""
    if not isinstance(line, dict):
        _fail(at, f"must be a table (value = N, or sweep, where and metric), with a label; got {line!r}")
    _check_keys(at, line, "limits")
    _need(at, line, "label", str)
    if ("value" in line) == ("sweep" in line):
        _fail(at, "give either value (a number) or sweep, where and metric (one run's figure)")
    if "value" in line:
        if isinstance(line["value"], bool) or not isinstance(line["value"], (int, float)):
            _fail(f"{at}.value", f"must be a number, got {line['value']!r}")
        return
    if _need(at, line, "sweep", str) not in names:
        _fail(f"{at}.sweep", f"no sweep named {line['sweep']!r}")
    check("{" + _need(at, line, "metric", str) + "}", f"{at}.metric")


def study_roots() -> list:
    """Where the shipped studies are: scenarios/papers (the publications) and
    scenarios/modern (today's hardware) of this checkout."""
    papers = papers_dir()
    return [papers] + [d for d in [papers.parent / "modern"] if d.is_dir()]


def papers_dir() -> Path:
    """scenarios/papers of this checkout, or of the current directory."""
    here = Path(__file__).resolve()
    for base in [Path.cwd(), *here.parents]:
        cand = base / "scenarios" / "papers"
        if cand.is_dir():
            return cand
    raise _core.ScenarioError("cannot find scenarios/papers; run from the nicsim checkout or pass --papers DIR")
