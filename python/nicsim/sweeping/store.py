"""Results in an embedded DuckDB database: one row per run, one column per input
key and per metric, written one transaction per run so a row is whole or absent.

Columns: the run's facts (`run_key`, `sweep`, `point`, `seed`, `nicsim_version`,
...), every key of the scenario as it ran (`host[0].clock`), every label of the
sweep (`clients`), and every metric as `component.metric`.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import signal
import threading
from pathlib import Path
from typing import Optional

import duckdb

from nicsim import _core

FACTS = {
    "run_key": "VARCHAR PRIMARY KEY",
    "sweep": "VARCHAR",
    "point": "INTEGER",
    "scenario_file": "VARCHAR",
    "scenario_sha": "VARCHAR",
    "nicsim_version": "VARCHAR",
    "seed": "UBIGINT",
    "status": "VARCHAR",
    "error": "VARCHAR",
    "wall_seconds": "DOUBLE",
    "simulated_seconds": "DOUBLE",
    "events": "BIGINT",
    "finished_at": "TIMESTAMP",
}
# A column's type widens as values demand: a number after booleans, text after numbers.
_ORDER = ["BOOLEAN", "BIGINT", "DOUBLE", "VARCHAR"]


def _type_of(v: object) -> str:
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT" if -(2**63) <= v < 2**63 else "DOUBLE"
    if isinstance(v, float):
        return "DOUBLE"
    return "VARCHAR"


def _cell(v: object) -> object:
    if v is None or isinstance(v, (bool, int, float, str, datetime.datetime)):
        return v
    return json.dumps(v)


def flatten(table: dict, prefix: str = "") -> dict:
    """Scenario keys as `--set` paths: `host[0].bus.clock`. Lists of plain
    values stay one column (JSON text); the `[sweep]` table is left out."""
    out = {}
    for k, v in table.items():
        if not prefix and k in ("sweep", "seed"):
            continue  # the sweep itself; the seed is a run fact
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, path + "."))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for i, item in enumerate(v):
                out.update(flatten(item, f"{path}[{i}]."))
        else:
            out[path] = v
    return out


def metric_columns(result: dict) -> dict:
    return {f"{c['name']}.{k}": v for c in result["components"] for k, v in c["metrics"].items()}


@contextlib.contextmanager
def held_interrupts():
    """Ctrl-C waits until the block is done, then interrupts: a row is written
    whole (DuckDB would otherwise abandon the query with a RuntimeError, not a
    KeyboardInterrupt). Only the main thread receives signals, so only it holds them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got = []
    before = signal.signal(signal.SIGINT, lambda *_: got.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
    if got:
        raise KeyboardInterrupt


class Store:
    """One study's results file. Only the process that runs the sweep writes it."""

    def __init__(self, path: "str | os.PathLike[str]", read_only: bool = False):
        self.path = Path(path)
        if read_only and not self.path.exists():
            raise _core.ScenarioError(f"{self.path}: no such results file")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with held_interrupts():
            try:
                self.con = duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.Error as e:
                raise _core.ScenarioError(f"{self.path}: cannot open as a results database ({e})") from None
            if not read_only:
                cols = ", ".join(f'"{k}" {t}' for k, t in FACTS.items())
                self.con.execute(f"CREATE TABLE IF NOT EXISTS runs ({cols})")
                self.con.execute("CREATE TABLE IF NOT EXISTS sweeps (name VARCHAR PRIMARY KEY, definition VARCHAR)")
                self.con.execute("CREATE TABLE IF NOT EXISTS study (spec VARCHAR)")
            self._types = self._columns()

    def _columns(self) -> dict:
        try:
            rows = self.con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'runs'").fetchall()
        except duckdb.Error:
            rows = []
        return dict(rows)

    def close(self) -> None:
        self.con.close()

    # Sweeps -------------------------------------------------------------

    def define(self, name: str, definition: dict) -> None:
        # In the sweep's own key order: the first varied key is the plots' x.
        text = json.dumps(definition)
        with self._transaction():
            self.con.execute("INSERT OR REPLACE INTO sweeps VALUES (?, ?)", [name, text])

    def definitions(self) -> dict:
        if "sweeps" not in self._tables():
            return {}
        return {n: json.loads(d) for n, d in self.con.execute("SELECT name, definition FROM sweeps ORDER BY name").fetchall()}

    def set_study(self, spec: dict) -> None:
        """The study these sweeps belong to (its plots and published figures)."""
        with self._transaction():
            self.con.execute("DELETE FROM study")
            self.con.execute("INSERT INTO study VALUES (?)", [json.dumps(spec)])

    def study(self) -> Optional[dict]:
        if "study" not in self._tables():
            return None
        row = self.con.execute("SELECT spec FROM study").fetchone()
        return json.loads(row[0]) if row else None

    def _tables(self) -> set:
        return {r[0] for r in self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}

    def done(self, sweep: str) -> dict:
        """run_key -> scenario_sha for the runs of a sweep already stored."""
        if not self._types:
            return {}
        rows = self.con.execute("SELECT run_key, scenario_sha FROM runs WHERE sweep = ?", [sweep]).fetchall()
        return dict(rows)

    def forget(self, sweep: str) -> int:
        with self._transaction():
            n = self.con.execute("SELECT count(*) FROM runs WHERE sweep = ?", [sweep]).fetchone()[0]
            self.con.execute("DELETE FROM runs WHERE sweep = ?", [sweep])
        return n

    # Rows ---------------------------------------------------------------

    def add(self, facts: dict, inputs: dict, labels: dict, metrics: dict) -> None:
        """Store one run's row, all of it or none of it."""
        row = dict(inputs)
        for group in (labels, metrics):
            for k, v in group.items():
                if k in row or k in FACTS:
                    raise _core.ScenarioError(f"results column {k!r} would be written twice (rename the label or component)")
                row[k] = v
        row.update(facts)
        row["finished_at"] = datetime.datetime.now()
        with self._transaction():
            for k, v in row.items():
                if k not in FACTS:
                    self._fit(k, v)
            names = ", ".join(f'"{k}"' for k in row)
            marks = ", ".join("?" for _ in row)
            self.con.execute(f"INSERT INTO runs ({names}) VALUES ({marks})", [_cell(v) for v in row.values()])

    def _fit(self, column: str, value: object) -> None:
        if value is None:
            want = "VARCHAR"
        else:
            want = _type_of(value)
        have = self._types.get(column)
        quoted = column.replace('"', '""')
        if have is None:
            self.con.execute(f'ALTER TABLE runs ADD COLUMN "{quoted}" {want}')
            self._types[column] = want
        elif have in _ORDER and want in _ORDER and _ORDER.index(want) > _ORDER.index(have) and value is not None:
            self.con.execute(f'ALTER TABLE runs ALTER "{quoted}" TYPE {want}')
            self._types[column] = want

    @contextlib.contextmanager
    def _transaction(self):
        with held_interrupts():
            self.con.execute("BEGIN TRANSACTION")
            try:
                yield
            except BaseException:
                self.con.execute("ROLLBACK")
                self._types = self._columns()  # columns added in the transaction are gone
                raise
            self.con.execute("COMMIT")

    # Reading ------------------------------------------------------------

    def frame(self, sweep: Optional[str] = None):
        """The runs as a pandas DataFrame, in sweep and point order."""
        if not self._types:
            import pandas

            return pandas.DataFrame()
        where, args = ("WHERE sweep = ?", [sweep]) if sweep else ("", [])
        return self.con.execute(f"SELECT * FROM runs {where} ORDER BY sweep, point", args).df()

    def export(self, out: "str | os.PathLike[str]") -> Path:
        """Write the runs to Parquet or CSV, chosen by the file's extension."""
        out = Path(out)
        kinds = {".parquet": "PARQUET", ".csv": "CSV"}
        kind = kinds.get(out.suffix.lower())
        if kind is None:
            raise _core.ScenarioError(f"{out}: export writes .parquet or .csv files")
        tmp = out.with_name(out.name + ".partial")
        target = str(tmp).replace("'", "''")
        options = "FORMAT PARQUET" if kind == "PARQUET" else "FORMAT CSV, HEADER"
        self.con.execute(f"COPY (SELECT * FROM runs ORDER BY sweep, point) TO '{target}' ({options})")
        os.replace(tmp, out)  # nothing half-written under the real name
        return out

