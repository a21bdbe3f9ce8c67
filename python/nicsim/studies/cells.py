"""Figures read from one run's results row: a cell of a study's table is a
format string over the row's columns, `{server.app_goodput_mbps:.0f} Mb/s`,
and a field may be arithmetic over columns and numbers,
`{server.mean_handler_run_us / server.frames_per_handler_run:.1f}`.

Column names hold dots, brackets and hyphens (`host[0].clock`,
`tester-rx.goodput_mbps`), so a minus between two names needs spaces around it.
"""

from __future__ import annotations

import math
import re

from nicsim import _core

FIELD = re.compile(r"\{([^{}:]+)(?::([^{}]*))?\}")
TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)|(@?[A-Za-z_][\w.\[\]@-]*)|([-+*/()]))")


class Missing(Exception):
    """A field names a column the run does not have, or that has no value."""


def _lookup(row: dict, name: str):
    key = name[1:] if name.startswith("@") else name
    if key not in row:
        raise Missing(name)
    v = row[key]
    if v is None or (isinstance(v, float) and math.isnan(v)):
        raise Missing(name)
    return v


def evaluate(expr: str, row: dict):
    """The value of a field: one column, or arithmetic over columns and numbers."""
    pos, code, values = 0, [], []
    expr = expr.strip()
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise _core.ScenarioError(f"{expr!r}: cannot read from {expr[pos:]!r}")
        number, name, op = m.groups()
        if name is not None:
            values.append(_lookup(row, name))
            code.append(f"_v[{len(values) - 1}]")
        else:
            code.append(number if number is not None else op)
        pos = m.end()
    if len(values) == 1 and len(code) == 1:
        return values[0]
    try:
        return eval(" ".join(code), {"__builtins__": {}}, {"_v": values})  # only numbers, _v[i] and + - * / ( )
    except ZeroDivisionError:
        raise Missing(expr) from None
    except (SyntaxError, TypeError) as e:
        raise _core.ScenarioError(f"{expr!r}: not arithmetic over columns ({e})") from None


def fill(fmt: str, row: dict, missing: str = "—") -> str:
    """`fmt` with each field replaced by its value in `row`; a field the run
    lacks gives `missing`."""

    def one(m: re.Match) -> str:
        try:
            v = evaluate(m.group(1), row)
        except Missing:
            return missing
        spec = m.group(2) or ""
        try:
            return format(v, spec)
        except (ValueError, TypeError):
            return str(v)

    return FIELD.sub(one, fmt)


def check(fmt: str, where: str) -> None:
    """A clear error for a format string that cannot be read, before any run."""
    for m in FIELD.finditer(fmt):
        try:
            evaluate(m.group(1), _Anything())
        except Missing:
            pass
        except _core.ScenarioError as e:
            raise _core.ScenarioError(f"{where}: {e}") from None


class _Anything(dict):
    """Every column is 1: enough to check that a field parses."""

    def __contains__(self, key) -> bool:
        return True

    def __getitem__(self, key):
        return 1
