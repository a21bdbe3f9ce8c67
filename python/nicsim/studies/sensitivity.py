"""`nicsim validate --sensitivity`: how much each figure of a study rests on each
of its calibrated parameters.

A study names its calibrated parameters in `[[calibrated]]` entries (the
scenario key and the parameter in words). For each, the study's compared sweeps
run again with the parameter 20% lower and 20% higher, each in a results file
of its own under `OUT/sensitivity/STUDY/` (so a stopped run resumes), and every
figure the study compares is set beside its value in the study's own runs. A
point whose design has no such parameter (an offload engine's cost where the
host runs its own stack) runs as it is.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path
from typing import Callable, Optional

from nicsim import _core
from nicsim.studies.comparisons import compare, signed
from nicsim.sweeping.points import Point, toml_value
from nicsim.sweeping.store import Store
from nicsim.studies.study import Study
from nicsim.sweeping.sweeps import run_sweep

FACTORS = (0.8, 1.2)
_PART = re.compile(r"^([A-Za-z_][\w-]*)(?:\[(\d+)\])?$")


def _parts(key: str) -> list:
    """`host[0].costs.rx_frame` as ["host", 0, "costs", "rx_frame"]."""
    out = []
    for part in key.split("."):
        m = _PART.match(part)
        if not m:
            raise _core.ScenarioError(f"{key}: not a scenario key (e.g. host[0].costs.rx_frame)")
        out.append(m.group(1))
        if m.group(2) is not None:
            out.append(int(m.group(2)))
    return out


@functools.lru_cache(maxsize=1)
def _defaults() -> dict:
    """Every key's default from the scenario format's schema, by its table path
    without indices (`host.adapter.toe.packet_cycles`)."""
    from nicsim.keydoc import tables

    out = {}
    for title, _, rows in tables(json.loads(_core.scenario_schema())):
        for key, _, default, _ in rows:
            if default.startswith("`"):
                out[f"{title.strip('[]')}.{key}" if title else key] = json.loads(default.strip("`"))
    return out


def base_value(scenario: str, sets: list, key: str):
    """The value a run of `scenario` with `sets` gives `key`: written, or the default."""
    node = json.loads(_core.resolve_file(scenario, list(sets)))
    for part in _parts(key):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
            break
    if node is None:
        node = _defaults().get(".".join(p for p in _parts(key) if isinstance(p, str)))
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise _core.ScenarioError(f"{scenario}: {key}: a calibrated parameter must be a number, got {node!r}")
    return node


def scaled(value, factor: float):
    """A parameter moved by `factor`: whole numbers stay whole."""
    return round(value * factor) if isinstance(value, int) else value * factor


def slug(key: str, factor: float) -> str:
    return f"{re.sub(r'[^A-Za-z0-9]+', '-', key).strip('-')}-x{factor:g}"


def _mover(scenario: str, key: str, factor: float, moved: list) -> Callable[[Point], Point]:
    """Adds the moved parameter to each point that has it (counted in `moved`)."""

    def adjust(p: Point) -> Point:
        value = scaled(base_value(scenario, p.sets, key), factor)
        candidate = dataclasses.replace(p, extra=p.extra + (f"{key}={toml_value(value)}",))
        try:
            _core.check_file(scenario, sets=candidate.sets)
        except _core.ScenarioError:
            return p
        moved.append(p.index)
        return candidate

    return adjust


def compared_sweeps(study: Study) -> list:
    """The sweeps that a published figure is compared with, in the study's order."""
    used = {p["sweep"] for p in study.published if "sweep" in p}
    used |= {p["divide_by"]["sweep"] for p in study.published if "divide_by" in p}
    return [sw for sw in study.sweeps if sw["name"] in used]


def run(study: Study, base: list, out: Path, pool, progress: Optional[Callable] = None) -> list:
    """Every calibrated parameter of `study` moved by each factor: one record per
    compared figure with a model value, parameter and factor (study, quantity,
    kind, key, parameter, factor, base, moved, change_pct)."""
    found = []
    for entry in study.spec.get("calibrated", []):
        key = entry["key"]
        moved_points: list = []
        for factor in FACTORS:
            db = out / "sensitivity" / study.name / f"{slug(key, factor)}.duckdb"
            db.parent.mkdir(parents=True, exist_ok=True)
            for sw in compared_sweeps(study):
                scenario = str(study.scenario(sw))
                run_sweep(
                    scenario,
                    sw["vary"],
                    mode=sw.get("mode", "grid"),
                    db=db,
                    name=sw["name"],
                    restart="stale",
                    progress=progress(f"{study.name}/{sw['name']} {key} x{factor:g}") if progress else None,
                    pool=pool,
                    adjust=_mover(scenario, key, factor, moved_points),
                )
            store = Store(db, read_only=True)
            try:
                frames = {sw["name"]: store.frame(sw["name"]) for sw in compared_sweeps(study)}
            finally:
                store.close()
            for was, now in zip(base, compare(study.spec, frames, study=study.name)):
                if was["predicted"] is None:
                    continue
                change = None
                if now["predicted"] is not None and was["predicted"]:
                    change = (now["predicted"] - was["predicted"]) / abs(was["predicted"]) * 100
                found.append(
                    {
                        "study": study.name,
                        "quantity": was["quantity"],
                        "kind": was["kind"],
                        "key": key,
                        "parameter": entry["parameter"],
                        "factor": factor,
                        "base": was["predicted"],
                        "moved": now["predicted"],
                        "change_pct": change,
                    }
                )
        if not moved_points:
            raise _core.ScenarioError(f"{study.dir / 'study.toml'}: calibrated key {key}: no run of the study has this parameter")
    return found


def grid(moves: list) -> tuple:
    """A study's moves as (header, rows): a row per figure, a column per
    parameter, each cell the figure's change at −20% and +20%."""
    params = list(dict.fromkeys((m["key"], m["parameter"]) for m in moves))
    figures = list(dict.fromkeys((m["quantity"], m["kind"]) for m in moves))
    cell = {(m["quantity"], m["key"], m["factor"]): m["change_pct"] for m in moves}
    header = ["figure", "kind"] + [f"{words} (`{key.rsplit('.', 1)[-1]}`)" for key, words in params]
    rows = []
    for quantity, kind in figures:
        row = [quantity, kind]
        for key, _ in params:
            low, high = (cell.get((quantity, key, f)) for f in FACTORS)
            row.append(f"{signed(low)} / {signed(high)}")
        rows.append(row)
    return header, rows


INTRO = (
    "How each figure moves, in per cent of its value, when one calibrated parameter is "
    "20% lower / 20% higher and the others stay (`nicsim validate --sensitivity`): a "
    "prediction that moves with a parameter rests on it."
)


def text(moves: list, titles: dict) -> str:
    """The moves as aligned plain text, a block per study."""
    lines = []
    for study in dict.fromkeys(m["study"] for m in moves):
        header, rows = grid([m for m in moves if m["study"] == study])
        lines += ["", f"{titles.get(study, study)}: sensitivity (change at -20% / +20%)"]
        for j, (key_words) in enumerate(header[2:]):
            lines.append(f"  [{j + 1}] {key_words}")
        width = max(len(r[0]) for r in rows)
        for r in rows:
            cells = "  ".join(f"[{j + 1}] {c:>15}" for j, c in enumerate(r[2:]))
            lines.append(f"  {r[1]:<12}  {r[0]:<{width}}  {cells}")
    return "\n".join(lines[1:])


def attach(records: list, moves: list) -> list:
    """Each comparison with its moves: `sensitivity` maps a parameter's key to
    its change (%) by factor."""
    by = {}
    for m in moves:
        by.setdefault((m["study"], m["quantity"]), {}).setdefault(m["key"], {})[f"{m['factor']:g}"] = m["change_pct"]
    return [{**r, "sensitivity": by.get((r["study"], r["quantity"]), {})} for r in records]
