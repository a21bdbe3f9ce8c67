"""A run's results open with what a person asks first: how much moved, and what
limited it."""

import nicsim
from nicsim.summary import lines

from conftest import SCENARIOS


def summary(path, **sets):
    return lines(nicsim.run(SCENARIOS / path, overrides=sets))


def test_a_processor_bound_server_names_its_processor():
    told = summary("papers/ibm2001/server.toml", duration="300ms", **{"host[0].warmup": "100ms"})
    assert told[0].startswith("throughput: server ") and "app_goodput_mbps" in told[0]
    assert told[1] == "limited by: processor 0 of server (100% busy)"


def test_a_flood_names_its_wire_and_what_it_lost():
    told = summary("modern/40g-kernel.toml")
    limit = next(t for t in told if t.startswith("limited by: "))
    assert "link tester-tx-switch a→b (100% busy)" in limit and "processor 0 of server" in limit
    assert any(t.startswith("lost: server: ") and "frames lost at the receive FIFO" in t for t in told)


def test_a_run_that_nothing_saturates_says_so():
    told = summary("combinations/napi-gro-tso.toml")
    assert any(t.startswith("limited by: nothing saturated (the busiest, ") for t in told), told
