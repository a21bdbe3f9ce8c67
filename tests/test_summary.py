"""A run's results open with what a person asks first: how much moved, and what
limited it."""

import nicsim
from nicsim.runs.summary import lines

from conftest import SCENARIOS


def summary(path, **sets):
    return lines(nicsim.run(SCENARIOS / path, overrides=sets))


def test_a_processor_bound_server_names_its_processor():
    told = summary("papers/ibm2001/server.toml", duration="300ms", **{"host[0].warmup": "100ms"})
    assert told[0].startswith("throughput: server ") and "app_goodput_mbps" in told[0]
    assert told[1].startswith("limited by: processor 0 of server (100% busy)")


def test_a_flood_names_its_wire_and_what_it_lost():
    told = summary("modern/40g-kernel.toml")
    limit = next(t for t in told if t.startswith("limited by: "))
    assert "link tester-tx-switch a→b (100% busy)" in limit and "processor 0 of server" in limit
    assert any(t.startswith("lost: server: ") and "frames lost at the receive FIFO" in t for t in told)


def test_a_run_that_nothing_saturates_says_so():
    # Over TCP, the window and the ACKs leave the wire idle at times.
    told = summary("papers/novell1995/server.toml", duration="300ms", **{"host[0].file_serve.transport": "tcp"})
    assert any(t.startswith("limited by: nothing saturated (the busiest, ") for t in told), told


def test_a_transfer_held_back_by_its_congestion_window_says_so():
    """The issue's 25 GbE transfer with 4 MB windows: its receiver's processor
    is saturated and loses frames, and the sender's congestion window, halved
    after each loss, holds back data waiting to be sent most of the time. This
    needs the sender without TSO deferral: with it (the default) its larger
    sends let the receiver keep up, and the summary names the wire instead; and
    the sender counting what each of the receiver's GRO-merge ACKs covers, as
    Linux does (`byte_counting`), or its window never grows enough to load the
    receiver."""
    sets = {"link[0].rate": "25Gbps", "host[0].ttcp.bytes": 2_000_000_000, "duration": "100ms", "host[0].tcp.tso_defer": False}
    sets["host[0].tcp.byte_counting"] = True
    for i in (0, 1):
        sets.update({f"host[{i}].clock": "3GHz", f"host[{i}].bus.generation": 3, f"host[{i}].bus.lanes": 8})
        sets.update({f"host[{i}].tcp.rx_buffer": 4194304, f"host[{i}].tcp.tx_buffer": 4194304})
    limit = next(t for t in summary("combinations/napi-gro-tso.toml", **sets) if t.startswith("limited by: "))
    assert "processor 0 of receiver" in limit and "the TCP congestion window of sender (" in limit, limit
    sets.pop("host[0].tcp.tso_defer")
    limit = next(t for t in summary("combinations/napi-gro-tso.toml", **sets) if t.startswith("limited by: "))
    assert limit.startswith("limited by: link wire a→b ("), limit


def test_a_transfer_held_back_by_the_window_offered_says_so():
    """The shipped pair at 1 Gb/s with 256 KB buffers: nothing is busy, and
    the window the receiver offers holds the sender back."""
    limit = next(t for t in summary("combinations/napi-gro-tso.toml") if t.startswith("limited by: "))
    assert limit.startswith("limited by: the receive window offered to sender ("), limit


def test_many_hosts_held_back_alike_are_named_together():
    told = summary("papers/ibm2001/server.toml", duration="300ms", **{"host[0].warmup": "100ms"})
    assert told[1].startswith("limited by: processor 0 of server (100% busy); the receive window offered to 10 hosts (")
