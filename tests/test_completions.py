"""Completion entries and what issue 56 asks of them: at 64-byte frames the
descriptor and completion traffic, not the payload, fills a PCIe link, so the
adapter options that shrink it (mlx5's compressed completions and multi-packet
receive buffers) are measured on the bus, per kind of transfer."""

from pathlib import Path

import nicsim

FLOOD = Path(__file__).resolve().parent.parent / "bench" / "10g-rx-napi.toml"
ADAPTER = "host[0].adapter[0]"


def bus(**keys):
    sets = {"duration": "2ms", **{f"{ADAPTER}.{k}": v for k, v in keys.items()}}
    m = nicsim.run(FLOOD, overrides=sets).component("server").metrics
    assert m["rx_fifo_overruns"] == 0 and m["rx_frames"] > 29_000, "every frame of 2 ms at line rate taken"
    return m


def status_share(m):
    """The share of the upstream link's time that completions took."""
    return m["bus_up_rx_status_share"] * m["bus_up_utilization"]


def test_a_64_byte_completion_entry_costs_the_bus_and_compression_takes_most_of_it_back():
    # Groups of 8 (rx_writeback = 8, held up to 1 us for the eighth).
    group = {"rx_writeback_delay": "1us"}
    small, whole = bus(**group), bus(rx_completion_bytes=64, **group)
    compressed = bus(rx_completion_bytes=64, cqe_compression=True, **group)
    assert whole["rx_frames"] / whole["bus_rx_status_transactions"] > 7.9, "written back eight at a time"
    assert status_share(whole) > 2.5 * status_share(small), "64 bytes a frame written back, not 16"
    # 64 + 64 bytes for eight frames, not 512.
    assert status_share(compressed) < 0.45 * status_share(whole)
    assert whole["bus_rx_status_transactions"] == compressed["bus_rx_status_transactions"], "the same writes, shorter"
    # Written back one at a time, there is nothing to compress.
    alone, alone_compressed = bus(rx_completion_bytes=64), bus(rx_completion_bytes=64, cqe_compression=True)
    assert status_share(alone_compressed) > 0.9 * status_share(alone)


def test_multi_packet_buffers_fetch_a_descriptor_for_many_frames():
    one, many = bus(), bus(rx_buffer_frames=64)
    assert many["bus_down_rx_desc_fetch_share"] * many["bus_down_utilization"] < 0.2 * (one["bus_down_rx_desc_fetch_share"] * one["bus_down_utilization"])


def test_impossible_completion_settings_are_refused(cli, tmp_path):
    for key, value, words in [("rx_completion_bytes", 12, "a multiple of 8"), ("rx_buffer_frames", 0, "at least 1"), ("rx_buffer_frames", 1000, "at most 512")]:
        r = cli("run", FLOOD, "--set", f"{ADAPTER}.{key}={value}")
        assert r.returncode == 2 and f"{ADAPTER}.{key}" in r.stderr and words in r.stderr, r.stderr
