"""A dumb adapter's driver that transmits from its interrupt handler: it hands
the adapter one frame at a time (`tx_in_flight = 1`), builds each frame's media
header and transmit command (`media_frame`) when it hands it over, and the
adapter completes a command once its frame is on the wire (`tx_done = "sent"`).
The Novell server's dumb PRO/100 is written so (docs/model.md)."""

import statistics

import pytest

import nicsim

from frames import check_frame, read_pcap

SERVER = "scenarios/papers/novell1995/server.toml"
SHORT = {"duration": "400ms", "host[0].warmup": "100ms"}
# 100 MHz: 100 cycles a microsecond.
MEDIA_US = 6520 / 100
DEEP = {"host[0].adapter[0].tx_in_flight": 255}


def wire_us(n: int) -> float:
    """A frame of n bytes (FCS excluded) at 100 Mb/s, preamble and gap included."""
    return (n + 4 + 8 + 12) * 8 / 100


def burst_gaps(pcap):
    """Start-to-start gaps (µs) between the server's full-size frames within bursts."""
    frames = [(ts, buf) for ts, buf in read_pcap(pcap) if len(buf) > 1400]
    for _, buf in frames[:50]:
        check_frame(buf)
    gaps = [float(b[0] - a[0]) * 1e6 for a, b in zip(frames, frames[1:])]
    return [g for g in gaps if g < 1000], len(frames[0][1])


def test_one_frame_at_a_time_leaves_the_wire_idle_while_the_handler_builds_the_next(tmp_path):
    pcap = tmp_path / "one.pcap"
    nicsim.run(SERVER, overrides=SHORT, pcap=pcap, capture=["server-seg0-uplink"], capture_limit=400)
    gaps, size = burst_gaps(pcap)
    one = statistics.median(gaps)
    # The status is written after the last bit, then the interrupt's entry and
    # the handler's media work come before the next frame is handed over.
    assert one > wire_us(size) + MEDIA_US, (one, wire_us(size))
    deep = tmp_path / "deep.pcap"
    nicsim.run(SERVER, overrides={**SHORT, **DEEP}, pcap=deep, capture=["server-seg0-uplink"], capture_limit=400)
    gaps, size = burst_gaps(deep)
    assert statistics.median(gaps) == pytest.approx(wire_us(size), abs=0.5), "back to back with a queue"


def test_the_media_work_is_done_once_a_frame_whoever_does_it():
    """Built in the send call (a queue) or in the handler (one at a time), each
    frame sent costs the host the same work: none is lost or done twice."""
    cycles = {}
    for name, extra in [("one", {}), ("deep", DEEP)]:
        m = nicsim.run(SERVER, overrides={**SHORT, **extra}).component("server").metrics
        cycles[name] = m["cpu0_cycles"] / m["tx_frames"]
        if name == "one":
            assert m["tx_waited_for_descriptor"] > 0.9 * m["tx_frames"], "almost every frame waits for the one before"
    assert cycles["one"] == pytest.approx(cycles["deep"], rel=0.03), cycles


def test_one_frame_at_a_time_paces_the_server_below_the_wire():
    one = nicsim.run(SERVER, overrides=SHORT).component("server").metrics
    deep = nicsim.run(SERVER, overrides={**SHORT, **DEEP}).component("server").metrics
    assert deep["app_sent_mbytes_per_s"] > 11, "three readers fill the segment"
    assert one["app_sent_mbytes_per_s"] < 0.7 * deep["app_sent_mbytes_per_s"]
    assert one["cpu_utilization"] < deep["cpu_utilization"], "and the processor waits with the wire"


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("tx_in_flight", "0", "must be 1 to 65535"),
        ("tx_in_flight", "256", "below the transmit ring"),
        ("tx_done", '"later"', "unknown variant"),
    ],
)
def test_bad_values_name_the_key(cli, tmp_path, key, value, words):
    r = cli("check", SERVER, "--set", f"host[0].adapter[0].{key}={value}")
    assert r.returncode == 2, r.stderr
    assert f"host[0].adapter[0].{key}" in r.stderr and words in r.stderr, r.stderr
