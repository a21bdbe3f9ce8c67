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


DUT = Path(__file__).resolve().parent.parent / "scenarios" / "modern" / "100g-xdp" / "dut.toml"


def link_limit(generation, rate="400Gbps"):
    """Frames a second a PCIe x16 link of `generation` takes from a 64-byte flood
    when nothing else limits: processors that cost nothing, six queues."""
    sets = {
        "host[0].driver.xdp": {"program": "drop", "cycles": 1},
        "host[0].costs.rx_frame": 1,
        "host[0].costs.poll": 1,
        f"{ADAPTER}.queues": 6,
        f"{ADAPTER}.cqe_compression": True,
        "link[0].rate": rate,
        "host[0].bus.generation": generation,
    }
    m = nicsim.run(DUT, overrides=sets).component("dut").metrics
    return m["rx_handled_per_s"], m["bus_up_utilization"]


def test_each_pcie_generation_doubles_what_the_link_carries_until_the_wire_limits():
    """Gen3, Gen4 and Gen5 run their lanes at 8, 16 and 32 GT/s, all 128b/130b, and
    a frame's TLPs are the same at each: the link's ceiling doubles."""
    (gen3, up3), (gen4, up4), (gen5, up5) = (link_limit(g) for g in (3, 4, 5))
    assert up3 > 0.98 and up4 > 0.98, "the link is what limits"
    assert 1.9 < gen4 / gen3 < 2.1 and 1.9 < gen5 / gen4 < 2.1, (gen3, gen4, gen5)
    assert up5 > 0.98 and gen5 < 595.2e6, "Gen5 x16 near 400 GbE's 595 Mpps, the link still full"
    # 100 GbE on Gen4 x16: the wire (148.8 Mpps of 64-byte frames), not the link.
    wire, up = link_limit(4, "100Gbps")
    assert wire > 0.98 * 148.8e6 and up < 0.9
