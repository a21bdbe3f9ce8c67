"""The points of a sweep: which values each run gets.

A sweep varies scenario keys (the `--set` paths, e.g. `host[0].clock`) over lists
of values, as a grid (every combination) or zipped (the lists side by side). In a zip, a
list of one value goes with every point. A key written `@name` is a label: recorded with each run, applied to nothing (the number
of clients when the key itself is a list of client names, say). A label's value may also
be a group, `{ label = "full offload", set = { "host[0].adapter[0].kind" = "toe" } }`:
the label is recorded and the group's keys are set together, so one sweep dimension
can stand for a design that takes several keys.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from nicsim import _core

MODES = ("grid", "zip")
_RANGE = re.compile(r"^\s*(-?[\d.]+)\s*:\s*(-?[\d.]+)\s*:\s*([\d.]+)\s*$")


@dataclass(frozen=True)
class Point:
    """One run of a sweep: its position and the values it sets."""

    index: int
    values: tuple  # ((key, value), ...) in the sweep's key order, labels included
    extra: tuple = ()  # more `--set` strings, set last (a sensitivity run's moved parameter)

    @property
    def sets(self) -> list:
        """The `--set KEY=VALUE` strings for the scenario (labels left out, the
        keys of a label's group in)."""
        out = []
        for k, v in self.values:
            pairs = v["set"].items() if _group(v) else [] if k.startswith("@") else [(k, v)]
            out.extend(f"{key}={toml_value(x)}" for key, x in pairs)
        return out + list(self.extra)

    @property
    def labels(self) -> dict:
        return {k[1:]: v["label"] if _group(v) else v for k, v in self.values if k.startswith("@")}

    def key(self, sweep: str) -> str:
        """A stable identity: the same sweep name and values give the same key."""
        text = json.dumps([sweep, [[k, v] for k, v in self.values]], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def _group(v: object) -> bool:
    return isinstance(v, dict)


def _check_group(key: str, v: object) -> None:
    if not _group(v):
        return
    if not key.startswith("@"):
        raise _core.ScenarioError(f"sweep: {key}: only a label (@name) takes a group of settings as a value")
    if set(v) != {"label", "set"} or not isinstance(v["set"], dict) or isinstance(v["label"], (dict, list)):
        raise _core.ScenarioError(f"sweep: {key}: a group is {{ label = VALUE, set = {{ KEY = VALUE, ... }} }}, got {v!r}")


def group_sets(study: str, sweep: str, label: str) -> dict:
    """The groups a study's sweep gives `label`, as label -> {key: value} (for
    running one design of a study by hand, or in a test)."""
    with open(study, "rb") as f:
        spec = tomllib.load(f)
    found = next((s for s in spec.get("sweep", []) if s.get("name") == sweep), None)
    if found is None or label not in found.get("vary", {}):
        raise _core.ScenarioError(f"{study}: no sweep {sweep!r} varying {label}")
    values = found["vary"][label]
    for v in values:
        _check_group(label, v)
    return {v["label"]: dict(v["set"]) for v in values if _group(v)}


def toml_value(v: object) -> str:
    """A Python value written as TOML, for `--set`."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))


def parse_value(text: str) -> object:
    """A TOML value, or the text itself as a string (as `--set` reads it)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def _split_top(text: str) -> list:
    """Split at commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def _range(m: re.Match) -> list:
    start, stop, step = (float(g) for g in m.groups())
    if step <= 0:
        raise _core.ScenarioError(f"range {m.group(0).strip()}: the step must be positive")
    whole = all(float(g).is_integer() for g in m.groups())
    n = int((stop - start) / step + 1e-9) + 1
    if n < 1 or n > 1_000_000:
        raise _core.ScenarioError(f"range {m.group(0).strip()}: gives {max(n, 0)} values")
    values = [start + i * step for i in range(n)]
    return [int(v) for v in values] if whole else values


def parse_vary(spec: str) -> tuple:
    """`KEY=V1,V2,...` or `KEY=START:STOP:STEP` (inclusive) into (key, [values])."""
    key, sep, rest = spec.partition("=")
    key = key.strip()
    if not sep or not key or not rest.strip():
        raise _core.ScenarioError(f"--vary {spec}: write KEY=V1,V2,... or KEY=START:STOP:STEP")
    m = _RANGE.match(rest)
    values = _range(m) if m else [parse_value(p) for p in _split_top(rest)]
    if any(isinstance(v, str) and not v for v in values):
        raise _core.ScenarioError(f"--vary {spec}: an empty value (two commas together?)")
    return key, values


def points(vary: Mapping[str, Sequence], mode: str = "grid") -> list:
    """Every point of the sweep, in order (the last key varies fastest in a grid)."""
    if mode not in MODES:
        raise _core.ScenarioError(f"sweep mode: must be grid or zip, got {mode!r}")
    if not vary:
        raise _core.ScenarioError("sweep: nothing to vary (give --vary KEY=VALUES or a [sweep] table)")
    keys = list(vary)
    for k in keys:
        if not isinstance(vary[k], (list, tuple)):
            raise _core.ScenarioError(f"sweep: {k}: must be a list of values, got {vary[k]!r}")
    lists = [list(vary[k]) for k in keys]
    for k, vs in zip(keys, lists):
        if not vs:
            raise _core.ScenarioError(f"sweep: {k} has no values")
        for v in vs:
            _check_group(k, v)
    if mode == "zip":
        # A one-value list goes with every point; the others must be one length.
        lengths = {len(vs) for vs in lists if len(vs) > 1}
        if len(lengths) > 1:
            told = ", ".join(f"{k} has {len(vs)}" for k, vs in zip(keys, lists))
            raise _core.ScenarioError(f"sweep: zip needs lists of one length ({told})")
        n = lengths.pop() if lengths else 1
        combos = zip(*[vs * n if len(vs) == 1 else vs for vs in lists])
    else:
        combos = itertools.product(*lists)
    return [Point(i, tuple(zip(keys, combo))) for i, combo in enumerate(combos)]
