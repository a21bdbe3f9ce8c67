"""`nicsim bench --case goals`: the speed goals (docs/benchmarks.md) measured in one
run, each figure beside its target with their ratio (1 or more: met). The link flood
and a 10 Gb/s TCP transfer against ns-3 (each skipped, saying why, where ns-3 is not
installed), the IBM 2001 full path, the 10 GbE NAPI flood against real time, the
instructions a host frame of those two (counted with `--instructions`, else skipped
saying so), and the growth of wall time per frame from the smallest generated
network to the largest, with memory per host."""

from __future__ import annotations

import sys

from nicsim import _core
from nicsim.bench import cases as benchcases
from nicsim.bench import instructions as benchinstr
from nicsim.bench import peers as benchpeers
from nicsim.bench import scale as benchscale
from nicsim.bench.machine import machine

LINE_RATE_64B = 10e9 / ((64 + 20) * 8)  # 64-byte frames at 10 Gb/s, preamble and gap included
# Instructions a host frame each case may take (issue 57: half of those at its filing).
INSTRUCTION_BUDGETS = {"full-path": 7000, "10g-napi": 1300}
SIZES = "10,1000"
DURATION = "100ms"


def measure(args, sizes: tuple, duration: str) -> dict:
    """Every goal's figure, target and ratio; `args` as `nicsim bench` parsed them,
    the networks of `sizes` (smallest, largest) run for `duration` each."""
    rows = [_link(args), _tcp(args)]
    say = _progress(args)
    say("IBM full path")
    ibm = benchcases.measure("full-path", args.repeat)
    rows.append(_row("IBM 2001, 700 MHz, 8 clients: host frames per wall second", ibm["frames_per_second"], 2e6))
    say("10 GbE NAPI flood")
    napi = benchcases.measure("10g-napi", args.repeat)
    rows.append(_row("10 GbE 64 B NAPI flood: host frames per wall second (real time)", napi["frames_per_second"], LINE_RATE_64B))
    for case, timed, what in (("full-path", ibm, "IBM 2001, 700 MHz, 8 clients"), ("10g-napi", napi, "10 GbE 64 B NAPI flood")):
        rows.append(_instructions(args, case, timed, f"{what}: instructions a host frame (at most)", say))
    small, large = sizes
    say(f"networks of {small} and {large} hosts")
    scale = benchscale.measure([small, large], duration, repeat=args.repeat)
    growth = scale[1]["wall_ns_per_frame"] / scale[0]["wall_ns_per_frame"]
    row = _row(f"wall time per frame, {large} hosts against {small} (at most)", growth, 2.0)
    row["ratio"] = 2.0 / growth
    rows.append(row)
    per_host = scale[1]["peak_memory_mb_per_host"] * 1024
    rows.append({"goal": f"memory per host at {large} hosts, KB (reported)", "figure": per_host, "target": None, "ratio": None})
    return {"goals": rows, "cases": {"full-path": ibm, "10g-napi": napi, "scale": scale}, "build": _core.build_kind(), "machine": machine()}


def _row(goal: str, figure: float, target: float) -> dict:
    return {"goal": goal, "figure": figure, "target": target, "ratio": figure / target}


def _instructions(args, case: str, timed: dict, goal: str, say) -> dict:
    """`case`'s instructions a host frame against its budget, counted under
    callgrind with `--instructions`; without it the row says how to count."""
    budget = INSTRUCTION_BUDGETS[case]
    if not args.instructions:
        return {"goal": goal, "figure": None, "target": budget, "ratio": None, "skipped": "counted with --instructions (valgrind's callgrind, about 50 times slower)"}
    say(f"{case}'s instructions under callgrind")
    counted = benchinstr.figures(case, timed)
    per_frame = counted["instructions_per_frame"]
    return {"goal": goal, "figure": per_frame, "target": budget, "ratio": budget / per_frame if per_frame else None, "parts_per_frame": counted["parts_per_frame"]}


def _progress(args):
    return (lambda what: None) if args.json else (lambda what: print(f"  measuring {what}", file=sys.stderr, flush=True))


def _link(args) -> dict:
    """nicsim's link flood against ns-3's."""
    _progress(args)("link flood and ns-3")

    def flood():
        return args.frames / _core.bench_flood(args.frames, 64, "10Gbps")[2]

    return _against_ns3(args, "link flood, nicsim against ns-3 (times)", 100.0, flood, "ns-3", "frames")


def _tcp(args) -> dict:
    """One TCP bulk transfer, nicsim's data packets a wall second against ns-3's
    BulkSend on the same work."""
    _progress(args)("TCP transfer and ns-3's")

    def transfer():
        return benchcases.measure("tcp-10g", 1)["frames_per_second"]

    return _against_ns3(args, "TCP transfer at 10 Gb/s, nicsim against ns-3 (times)", 20.0, transfer, "ns-3 TCP", "packets")


def _against_ns3(args, goal: str, target: float, ours, peer_name: str, unit: str) -> dict:
    """`ours()` (nicsim's rate in one run) against peer `peer_name`'s, each the
    best of `--repeat` runs, taken in turn so that both see the machine alike;
    the ratio is the goal's figure, or the row says why the peer was skipped."""
    try:
        folder, skipped = benchpeers.folder(args.peers), None
    except _core.ScenarioError as e:
        folder, skipped = None, str(e)
    best, peer = 0.0, []
    for _ in range(args.repeat):
        best = max(best, ours())
        if skipped is None:
            run = benchpeers.one(peer_name, folder, args.peers_python)
            skipped = run.get("skipped")
            peer.append(run.get("frames_per_second", 0.0))
    if skipped is not None:
        return {"goal": goal, "figure": None, "target": target, "ratio": None, f"nicsim_{unit}_per_second": best, "skipped": skipped}
    row = _row(goal, best / max(peer), target)
    row.update({f"nicsim_{unit}_per_second": best, f"ns3_{unit}_per_second": max(peer)})
    return row


def lines(g: dict) -> list:
    """The goals as a table of text, one line each."""
    out = [f"{'goal':<72} {'figure':>12} {'target':>12} {'ratio':>7}"]
    for r in g["goals"]:
        if r.get("skipped"):
            out.append(f"{r['goal']:<72} {'skipped':>12} {r['target']:>12,.0f}   ({r['skipped']})")
            continue
        target = "" if r["target"] is None else f"{r['target']:,.2f}" if r["target"] < 10 else f"{r['target']:,.0f}"
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}" + (" met" if r["ratio"] >= 1 else "")
        figure = f"{r['figure']:,.2f}" if r["figure"] < 10 else f"{r['figure']:,.0f}"
        out.append(f"{r['goal']:<72} {figure:>12} {target:>12} {ratio:>7}")
    out.append(f"{g['build']} build on {g['machine']}")
    return out
