"""DDIO (`[host.ddio]`): devices write received frames into a share of the
last-level cache; a frame that a share's worth of later DMA has pushed out by
the time the driver takes it costs the driver a load from memory. An overrun
core's full ring is that backlog, so a ring larger than the share makes it
slower (the "leaky DMA" of Tootoonchian et al., NSDI 2018)."""

from pathlib import Path

import pytest

import nicsim

DUT = Path(__file__).resolve().parent.parent / "scenarios" / "modern" / "100g-xdp" / "dut.toml"


def overrun(ring, **ddio):
    """One core's stack overrun by 100 GbE of 1,518-byte frames, its ring full."""
    sets = {"source[0].frame_size": 1518, "duration": "3ms", "host[0].warmup": "2ms", "host[0].adapter[0].rx_ring": ring}
    sets.update({f"host[0].ddio.{k}": v for k, v in ddio.items()})
    return nicsim.run(DUT, overrides=sets).component("dut").metrics


def test_frames_stay_in_the_cache_while_the_ring_fits_in_ddios_share():
    fits = overrun(1024)  # 1,024 buffers of 1,514 bytes: 1.55 MB, under 1.5 MiB
    spills = overrun(2048)
    assert fits["ddio_misses"] == 0 and spills["ddio_miss_share"] == 1.0
    # Each miss is 80 ns, 288 cycles at 3.6 GHz, on a frame of 750 (driver and stack).
    cycles = 3.6e9 / fits["rx_handled_per_s"]
    assert spills["rx_handled_per_s"] == pytest.approx(3.6e9 / (cycles + 288), rel=0.02)


def test_dma_to_memory_misses_on_every_frame_and_a_dearer_miss_costs_more():
    to_memory = overrun(256, bytes=0)
    assert to_memory["ddio_miss_share"] == 1.0
    slower = overrun(256, bytes=0, miss="160ns")
    assert slower["rx_handled_per_s"] < 0.8 * to_memory["rx_handled_per_s"]


def test_a_keeping_up_host_never_misses():
    # 64-byte frames, XDP dropping: the ring never holds a backlog.
    m = nicsim.run(DUT, overrides={"host[0].driver.xdp": {"program": "drop", "cycles": 48}, "host[0].adapter[0].queues": 6}).component("dut").metrics
    assert m["ddio_misses"] == 0 and m["rx_handled_per_s"] > 90e6


def test_an_impossible_ddio_share_is_refused(cli):
    r = cli("run", DUT, "--set", "host[0].ddio.bytes=-1")
    assert r.returncode == 2 and "host[0].ddio.bytes" in r.stderr, r.stderr
    r = cli("run", DUT, "--set", "host[0].ddio.miss=\"fast\"")
    assert r.returncode == 2 and "host[0].ddio" in r.stderr, r.stderr
