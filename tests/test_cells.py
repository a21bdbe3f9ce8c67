"""The cells of a study's tables: format strings over one run's columns."""

import pytest

import nicsim
from nicsim.studies.cells import evaluate, fill
from nicsim.studies.tables import markdown, table_grid

import pandas

RUN = {"server.a": 3.0, "server.b": 0, "host[0].clock": "400MHz", "tester-rx.g": 10.0, "clients": 3}


def test_a_field_is_a_column_or_arithmetic_over_columns():
    assert fill("{server.a:.1f} at {host[0].clock}", RUN) == "3.0 at 400MHz"
    assert fill("{tester-rx.g / 2:.2f}", RUN) == "5.00", "a hyphen inside a name is part of it"
    assert fill("{tester-rx.g - server.a:.0f}", RUN) == "7", "a minus with spaces subtracts"
    assert fill("{(server.a + 1) * 25:.0f}%", RUN) == "100%"
    assert fill("{@clients} clients", RUN) == "3 clients"
    assert evaluate("server.a / 2", RUN) == 1.5


def test_a_field_the_run_lacks_reads_as_a_dash_and_a_bad_one_is_an_error():
    assert fill("{server.nothing:.1f} | {server.a / server.b}", RUN) == "— | —"
    with pytest.raises(nicsim.ScenarioError, match="cannot read"):
        evaluate("server.a % 2", RUN)
    # A name is only ever a lookup in the run, and nothing but numbers,
    # names and + - * / ( ) is read: no call can be written.
    with pytest.raises(nicsim.ScenarioError, match="cannot read"):
        evaluate("server.a('os')", RUN)


def test_rows_from_two_sweeps_with_different_keys_meet_by_value():
    frames = {
        "send": pandas.DataFrame([{"status": "ok", "tx.size": 64, "host.rate": 1.0}, {"status": "ok", "tx.size": 1518, "host.rate": 2.0}]),
        "receive": pandas.DataFrame([{"status": "ok", "rx.size": 1518.0, "host.rate": 3.0}, {"status": "error", "rx.size": 64, "host.rate": 9.0}]),
    }
    table = {
        "rows": ["frame"],
        "keys": ["tx.size"],
        "column": [
            {"label": "send", "sweep": "send", "cell": "{host.rate:.1f}"},
            {"label": "receive", "sweep": "receive", "keys": ["rx.size"], "cell": "{host.rate:.1f}"},
        ],
    }
    header, rows = table_grid(table, frames)
    assert header == ["frame", "send", "receive"]
    assert rows == [["64", "1.0", "—"], ["1518", "2.0", "3.0"]], "a failed run shows nothing; 1518.0 meets 1518"
    assert markdown(header, rows).splitlines()[1] == "|---|---|---|"
