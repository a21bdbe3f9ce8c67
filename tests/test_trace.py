"""`--trace` draws every host kind: the processors' runs (host and adapter) and
the buses of a host with a TCP offload engine and of a host with a programmable
adapter, as well as a plain host's (tests/test_hosts.py)."""

import json
import re
from collections import defaultdict

import pytest

import nicsim

HP = "papers/hp2001/send.toml"
TSO = "papers/patent-direct-tso/tso.toml"
NOVELL = "papers/novell1995/server.toml"


def spans_by_track(path):
    """(process, thread) -> its complete spans, from a Chrome trace file."""
    events = json.loads(path.read_text())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    out = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            out[(procs[e["pid"]], threads[(e["pid"], e["tid"])])].append(e)
    return out


def assert_one_run_at_a_time(spans):
    spans = sorted(spans, key=lambda e: e["ts"])
    for a, b in zip(spans, spans[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-6, f"{a} overlaps {b}"


def test_a_host_with_a_tcp_offload_engine_draws_its_processors_and_both_buses(scenarios, tmp_path):
    path = tmp_path / "hp.json"
    r = nicsim.run(scenarios / HP, trace=path, overrides={"host[0].ttcp.bytes": 200_000})
    tracks = spans_by_track(path)
    for track in [("sut", "cpu0"), ("sut", "adapter cpu0"), ("sut", "PCI bus"), ("sut adapter", "PCI bus"), ("normal", "cpu0")]:
        assert tracks[track], f"no spans on {track}"
    firmware = tracks[("sut", "adapter cpu0")]
    assert_one_run_at_a_time(firmware)
    assert_one_run_at_a_time(tracks[("sut", "cpu0")])
    # Each firmware run carries its cycles; together they are the adapter's.
    assert sum(e["args"]["cycles"] for e in firmware) == r.metric("sut", "adapter_cpu0_cycles")


def test_a_host_with_a_programmable_adapter_draws_its_firmware_and_bus(scenarios, tmp_path):
    path = tmp_path / "tso.json"
    r = nicsim.run(scenarios / TSO, trace=path, overrides={"host[0].ttcp.bytes": 1 << 20})
    tracks = spans_by_track(path)
    firmware = [e for (proc, thread), spans in tracks.items() if proc == "server" and thread.startswith("adapter cpu") for e in spans]
    assert firmware and tracks[("server", "cpu0")], "the host processor's send calls and event polls"
    assert tracks[("server", "PCIe upstream (device to host)")] and tracks[("server", "PCIe downstream (host to device)")]
    for (proc, thread), spans in tracks.items():
        if thread.startswith("adapter cpu"):
            assert_one_run_at_a_time(spans)
    frames = r.metric("server", "tx_frames") + r.metric("server", "rx_frames")  # segments sent, ACKs received
    assert sum(e["args"]["cycles"] for e in firmware) / frames == r.metric("server", "adapter_cycles_per_frame")


def test_a_host_with_mixed_adapters_draws_each_adapter_on_its_own_tracks(scenarios, tmp_path):
    path = tmp_path / "mixed.json"
    nicsim.run(scenarios / "combinations" / "ring-and-programmable.toml", trace=path, overrides={"host[0].ttcp.bytes": 1 << 20, "duration": "5ms"})
    tracks = spans_by_track(path)
    assert tracks[("server", "adapter0 cpu0")], "the programmable adapter's firmware runs"
    assert tracks[("server", "cpu0")] and tracks[("server", "cpu1")], "both host processors"
    assert_one_run_at_a_time(tracks[("server", "adapter0 cpu0")])


@pytest.mark.parametrize(
    "scenario,host,overrides",
    [
        (NOVELL, "server", {"host[0].adapter[0].intelligent": True, "duration": "20ms", "host[0].warmup": "0ms"}),
        (HP, "sut", {"host[0].ttcp.bytes": 200_000}),
        (TSO, "server", {"host[0].ttcp.bytes": 1 << 20}),
    ],
    ids=["intelligent-bus-master", "offload-engine", "programmable"],
)
def test_every_processor_is_one_model_drawn_and_counted_alike(scenarios, tmp_path, scenario, host, overrides):
    """Host processors and an adapter's, of each kind, report the same figures,
    and each one's track adds up to them: its spans' cycles are its cycles and
    their time (idle polls aside) its busy time."""
    path = tmp_path / "t.json"
    r = nicsim.run(scenarios / scenario, trace=path, overrides=overrides)
    assert r.data["trace_events_dropped"] == 0
    tracks = spans_by_track(path)
    m = r.component(host).metrics
    names = [k.removesuffix("_utilization") for k in m if re.fullmatch(r"(adapter_)?cpu\d+_utilization", k)]
    assert all(m[f"{name}_cycles"] > 0 and m[f"{name}_runs"] > 0 for name in ["cpu0", "adapter_cpu0"])
    for name in names:
        spans = [e for e in tracks[(host, name.replace("adapter_cpu", "adapter cpu"))] if e["name"] != "idle_poll"]
        assert sum(e["args"]["cycles"] for e in spans) == m[f"{name}_cycles"], name
        busy = sum(e["dur"] for e in spans) / 1e6
        assert busy == pytest.approx(m[f"{name}_utilization"] * r.simulated_seconds, rel=1e-6), name


@pytest.mark.parametrize(
    "scenario, overrides",
    [
        # The adapters book each block's transmit DMA ahead of the present.
        (NOVELL, {"duration": "50ms", "host[0].warmup": "0ms"}),
        # Both directions at 40 GbE: transfers over MPS go as TLP pieces in gaps.
        ("modern/40g-dpdk.toml", {"source[0].frame_size": 1518, "host[0].blast.frame_size": 1518, "duration": "100us", "host[0].warmup": "0us"}),
    ],
)
def test_a_bus_carries_one_transaction_at_a_time_in_each_direction(scenarios, tmp_path, scenario, overrides):
    path = tmp_path / "bus.json"
    nicsim.run(scenarios / scenario, trace=path, overrides=overrides)
    buses = {track: spans for track, spans in spans_by_track(path).items() if "PCI" in track[1]}
    assert buses
    for spans in buses.values():
        assert_one_run_at_a_time(spans)
