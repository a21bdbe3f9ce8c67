"""The host-path benchmark scenarios under bench/ are what docs/benchmarks.md says
they are: the NAPI and poll-mode floods take every frame, the kernel-cost flood
drops most at the adapter's FIFO."""

from pathlib import Path

import pytest

import nicsim

BENCH = Path(__file__).resolve().parent.parent / "bench"


# Frames that may wait at the end: for NAPI, those of one 50 us moderation interval.
@pytest.mark.parametrize("name, waiting", [("10g-rx-napi.toml", 800), ("10g-rx-poll.toml", 50)])
def test_a_host_that_keeps_up_takes_every_frame(name, waiting):
    r = nicsim.run(BENCH / name, overrides={"duration": "2ms"})
    sent = r.metric("tester", "sent")
    assert sent > 29_000, "2 ms of 64-byte frames at 10 Gb/s"
    assert r.metric("server", "rx_fifo_overruns") == 0
    assert sent - r.metric("server", "rx_frames") <= 2, "every frame but one on the wire is moved to host memory"
    assert sent - r.metric("server", "sink_frames") < waiting


def test_napi_takes_frames_in_batches_under_moderation():
    r = nicsim.run(BENCH / "10g-rx-napi.toml", overrides={"duration": "2ms"})
    interrupts, polls, frames = (r.metric("server", k) for k in ("interrupts", "polls", "rx_frames"))
    assert interrupts <= 2e-3 / 50e-6 + 1, "no more than one interrupt per 50 us"
    assert frames / polls > 8, "each poll takes many frames"


def test_kernel_costs_drop_most_frames_at_the_fifo():
    r = nicsim.run(BENCH / "10g-rx-flood.toml", overrides={"duration": "2ms"})
    taken, dropped = r.metric("server", "rx_frames"), r.metric("server", "rx_fifo_overruns")
    assert dropped > 2 * taken


def test_the_tcp_case_is_ns3s_work_and_counts_its_data_packets():
    """The same work as ns-3's BulkSend at 10 Gb/s with 1 MiB buffers: the link
    nearly full in 20 ms, the receiver given every byte, and the case counting the
    sender's data packets (an ideal host has no adapter to count frames at)."""
    from nicsim.bench.cases import host_frames

    r = nicsim.run(BENCH / "tcp-10g.toml", overrides={"duration": "20ms"})
    sent, got = r.component("server").metrics, r.component("receiver").metrics
    assert sent["tcp_retransmits"] == 0 and got["ttcp_bytes"] > 0.8 * 10e9 / 8 * 0.019, "near line rate after the 1 ms start"
    assert host_frames(r) == sent["tcp_data_out"] > 10_000
