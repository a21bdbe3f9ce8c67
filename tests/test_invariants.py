"""Any mechanism combines with any other: random combinations of driver
policies, processors, buses and adapter settings (tests/combos.py) on the
shipped scenarios, each run checked for what holds whatever the combination:
figures within their ranges, processors' activities adding up, a timeline that
agrees with them, one transaction at a time on a bus, real frames, and no
retransmission where nothing was lost, and applications that keep making
progress. Seeds are fixed: a failure names its case, which
`draw(random.Random(case))` rebuilds."""

import math
import random
import re

import dpkt
import pytest

import nicsim

from combos import draw, endless
from nicsim.runs.stalls import stalls
from frames import check_frame
from test_trace import assert_one_run_at_a_time, spans_by_track

CASES = 64
ACTIVITIES = ("interrupt", "deferred", "app", "poll", "background")
LOSS = ("drop", "overrun", "unclaimed", "lost", "no_buffer", "refused")


def accepted(case: int):
    """The case's first combination that nicsim accepts (most are)."""
    rng = random.Random(case)
    while True:
        path, sets = draw(rng)
        try:
            nicsim.check(path, overrides=sets)
            return path, sets
        except nicsim.ScenarioError:
            continue


def check_figures(r):
    lost = any(v > 0 for c in r.components for k, v in c.metrics.items() if any(w in k for w in LOSS))
    for c in r.components:
        m = c.metrics
        for k, v in m.items():
            assert math.isfinite(v) and v >= 0, f"{c.name}.{k} = {v}"
            if k.endswith(("utilization", "_share")):
                assert v <= 1 + 1e-9, f"{c.name}.{k} = {v}"
            if k.startswith("mean_") and f"max_{k[5:]}" in m:
                assert v <= m[f"max_{k[5:]}"] + 1e-9, f"{c.name}.{k}"
        cpus = [k[: -len("_utilization")] for k in m if re.fullmatch(r"cpu\d+_utilization", k)]
        for cpu in cpus:
            work = sum(m[f"{cpu}_{a}"] for a in ACTIVITIES)
            assert work == pytest.approx(m[f"{cpu}_utilization"], abs=1e-6), f"{c.name}.{cpu}"
            assert work + m[f"{cpu}_idle_poll"] <= 1 + 1e-6, f"{c.name}.{cpu}"
        for d in ("up", "down"):
            shares = [v for k, v in m.items() if k.startswith(f"bus_{d}_") and k.endswith("_share")]
            assert sum(shares) == pytest.approx(m.get(f"bus_{d}_utilization", 0), abs=1e-6), f"{c.name} bus {d}"
        if not lost:
            assert m.get("tcp_retransmits", 0) == 0, f"{c.name} retransmitted on a network that lost nothing"


def send_ahead_on_pci(path, sets) -> bool:
    """A programmable adapter's send workload on a conventional PCI bus: its
    firmware books a whole send on the bus ahead of time, starving the bus's other
    masters when the bus cannot carry it (a known limit, docs/model.md)."""
    pci = any(k.endswith(".bus") and isinstance(v, dict) and v.get("kind") == "pci" for k, v in sets.items())
    return pci and "[host.send]" in path.read_text()


def check_timeline(r, path):
    if r.data["trace_events_dropped"]:
        return
    for (proc, thread), spans in spans_by_track(path).items():
        if "cpu" in thread or "PCI" in thread:
            assert_one_run_at_a_time(spans)
        name = thread.replace(" cpu", "_cpu")
        if re.fullmatch(r"(adapter\d* )?cpu\d+", thread) and f"{name}_cycles" in r.component(proc).metrics:
            m = r.component(proc).metrics
            assert sum(e["args"]["cycles"] for e in spans) == m[f"{name}_cycles"], f"{proc} {thread}"
            busy = sum(e["dur"] for e in spans if e["name"] != "idle_poll") / 1e6
            assert busy == pytest.approx(m[f"{name}_utilization"] * r.simulated_seconds, rel=1e-6, abs=1e-9), f"{proc} {thread}"


@pytest.mark.parametrize("case", range(CASES))
def test_a_random_combination_keeps_every_invariant(case, tmp_path):
    path, sets = accepted(case)
    pcap, trace = tmp_path / "run.pcap", tmp_path / "run.json"
    r = nicsim.run(path, overrides=sets, pcap=pcap, trace=trace, trace_limit=100_000, capture_limit=5000)
    check_figures(r)
    if not any(k.endswith(".background") for k in sets) and not send_ahead_on_pci(path, sets):
        # Only processes that hold the processor may keep a driver from its ring.
        assert not stalls(r), stalls(r)
    check_timeline(r, trace)
    with open(pcap, "rb") as f:
        frames = list(dpkt.pcap.Reader(f))
    assert len(frames) == r.data["frames_captured"] <= 5000
    for _, frame in frames:
        check_frame(frame)


PROGRESS = ("app_sent_bytes", "app_received_bytes", "requests_answered", "blast_frames", "sink_frames")


@pytest.mark.parametrize("case", range(24))
def test_a_random_combination_keeps_making_progress(case):
    """Run for 20 ms and for 60 ms: a host whose applications still have work
    (a transfer not complete, sessions, a sink) must have done more of it by
    60 ms, unless the network lost frames (a lost segment waits for the
    retransmission timer, at least 1 s). A processor, adapter or TCP that is
    never woken again stops them for good (a probe like this found smoltcp
    waiting 200 ms to ACK a segment merged by LRO). A host that waits its turn
    behind many others at a saturated server (eighteen clients of a 386 that
    moves every frame by system DMA get a block each about every 60 ms) is
    given until 300 ms."""
    path, sets = accepted(case)
    short = nicsim.run(path, overrides={**sets, "duration": "20ms"})
    waited = []
    for until in ("60ms", "300ms"):
        long = nicsim.run(path, overrides={**sets, "duration": until})
        if any(v > 0 for c in long.components for k, v in c.metrics.items() if any(w in k for w in LOSS)):
            pytest.skip("frames were lost: TCP waits for its retransmission timer")
        waited = []
        for c in short.components:
            m, later = c.metrics, long.component(c.name).metrics
            if c.kind != "host" or later.get("transfer_complete"):
                continue
            moving = [k for k in PROGRESS if m.get(k, 0) > 0]
            if moving and not any(later[k] > m[k] for k in moving):
                waited.append(f"{c.name} made no progress after 20 ms, by {until}: {moving}")
        if not waited:
            break
    assert not waited, waited


@pytest.mark.parametrize("case", range(16))
def test_a_random_scenario_that_cannot_end_is_refused(case, cli, tmp_path):
    """No `duration` and a forwarding loop or a count past the simulator's
    clock: `check` and `run` refuse it (exit 2) naming the cause, and write nothing."""
    base, text, cause = endless(random.Random(1000 + case))
    (tmp_path / "base.toml").write_text(base)
    # Without its duration the scenario may run for ever already (a source with
    # no count): then it is refused for that, or for what was added.
    ends = cli("check", tmp_path / "base.toml").returncode == 0
    path = tmp_path / "endless.toml"
    path.write_text(text)
    for command in ("check", "run"):
        r = cli(command, path, "--pcap", tmp_path / "x.pcap") if command == "run" else cli(command, path)
        assert r.returncode == 2, f"{command}: {r.returncode} {r.stderr}"
        assert "duration" in r.stderr and (cause in r.stderr or not ends), r.stderr
    assert not (tmp_path / "x.pcap").exists()
