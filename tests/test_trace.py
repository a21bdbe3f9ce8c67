"""`--trace` draws every host kind: the processors' runs (host and adapter) and
the buses of a host with a TCP offload engine and of a host with a programmable
adapter, as well as a plain host's (tests/test_hosts.py)."""

import json
from collections import defaultdict

import nicsim

HP = "papers/hp2001/send.toml"
TSO = "papers/patent-direct-tso/tso.toml"


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
    for track in [("sut", "cpu0"), ("sut", "adapter cpu"), ("sut", "PCI bus"), ("sut adapter", "PCI bus"), ("normal", "cpu0")]:
        assert tracks[track], f"no spans on {track}"
    firmware = tracks[("sut", "adapter cpu")]
    assert_one_run_at_a_time(firmware)
    assert_one_run_at_a_time(tracks[("sut", "cpu0")])
    # Each firmware run carries its cycles; together they are the adapter's.
    assert sum(e["args"]["cycles"] for e in firmware) == r.metric("sut", "adapter_cycles")


def test_a_host_with_a_programmable_adapter_draws_its_firmware_and_bus(scenarios, tmp_path):
    path = tmp_path / "tso.json"
    r = nicsim.run(scenarios / TSO, trace=path, overrides={"host[0].send.bytes": 1 << 20})
    tracks = spans_by_track(path)
    firmware = [e for (proc, thread), spans in tracks.items() if proc == "server" and thread.startswith("adapter cpu") for e in spans]
    assert firmware and tracks[("server", "cpu0")], "the host processor's send calls and event polls"
    assert tracks[("server", "PCIe upstream (device to host)")] and tracks[("server", "PCIe downstream (host to device)")]
    for (proc, thread), spans in tracks.items():
        if thread.startswith("adapter cpu"):
            assert_one_run_at_a_time(spans)
    frames = r.metric("server", "tx_frames")
    assert sum(e["args"]["cycles"] for e in firmware) / frames == r.metric("server", "adapter_cycles_per_frame")


def test_a_host_with_mixed_adapters_draws_each_adapter_on_its_own_tracks(scenarios, tmp_path):
    path = tmp_path / "mixed.json"
    nicsim.run(scenarios / "combinations" / "ring-and-programmable.toml", trace=path, overrides={"host[0].send.bytes": 1 << 20, "duration": "5ms"})
    tracks = spans_by_track(path)
    assert tracks[("server", "adapter0 cpu0")], "the programmable adapter's firmware runs"
    assert tracks[("server", "cpu0")] and tracks[("server", "cpu1")], "both host processors"
    assert_one_run_at_a_time(tracks[("server", "adapter0 cpu0")])
