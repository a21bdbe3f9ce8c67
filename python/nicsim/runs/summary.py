"""The few lines a person reads first: a run's main throughput figures and what
limited them, from its metrics. A resource 95% busy or more is named as the
limit, and so is a TCP window (congestion, or the one the receiver offers) that
held its sender back for half the time it had data to send or more; frames lost on
the way are named beside it; where nothing is that busy, the summary says so (the
exchange's own pace, such as requests or think times, then sets the rate)."""

from __future__ import annotations

import re

from nicsim.api import Result
from nicsim.runs.stalls import stalls

SATURATED = 0.95
# A window that held its sender back for this share of the time it had data to
# send is named as a limit.
WINDOW_BOUND = 0.5
# Figures of what a component moved, in the order they are looked for.
THROUGHPUT = ("app_goodput_mbps", "tcp_goodput_mbps", "goodput_mbps", "tx_goodput_mbps", "dma_mbps")
LOSSES = {
    "rx_fifo_overruns": "frames lost at the receive FIFO",
    "a_to_b_drops": "frames dropped a→b",
    "b_to_a_drops": "frames dropped b→a",
    "dropped": "frames dropped",
}


def _resource(component: str, kind: str, key: str) -> str:
    """A utilization metric's resource, in words."""
    name = key[: -len("_utilization")]
    if kind == "link":
        return f"link {component} {'a→b' if name == 'a_to_b' else 'b→a'}"
    m = re.fullmatch(r"cpu(\d+)", name)
    if m:
        return f"processor {m.group(1)} of {component}"
    m = re.fullmatch(r"adapter(\d+)_adapter_cpu(\d+)", name)
    if m:
        return f"adapter {m.group(1)}'s processor {m.group(2)} on {component}"
    words = {"bus": "bus", "bus_up": "bus towards the host", "bus_down": "bus towards the adapter"}
    return f"{words.get(name, name.replace('_', ' '))} of {component}"


def busiest(result: Result) -> list:
    """(utilization, resource) for every busy resource, busiest first."""
    found = []
    for c in result.components:
        for key, value in c.metrics.items():
            if key.endswith("_utilization") and key != "cpu_utilization" and isinstance(value, (int, float)) and value > 0:
                found.append((float(value), _resource(c.name, c.kind, key)))
    return sorted(found, key=lambda x: -x[0])


def windows(result: Result) -> list:
    """(share, words) for each kind of TCP window that held senders back with
    data waiting, the longest first; several hosts held back alike are named
    together."""
    words = {"tcp_cwnd_limited_share": "the TCP congestion window of", "tcp_rwnd_limited_share": "the receive window offered to"}
    held = {kind: [] for kind in words}
    for c in result.components:
        for key, value in c.metrics.items():
            kind = next((k for k in words if key == k or key.endswith("_" + k)), None)
            if kind and isinstance(value, (int, float)) and value > 0:
                held[kind].append((float(value), c.name))
    found = []
    for kind, hosts in held.items():
        hosts.sort(key=lambda h: -h[0])
        bound = [h for h in hosts if h[0] >= WINDOW_BOUND]
        if len(bound) > 2:
            names = f"{len(bound)} hosts ({bound[0][1]}, {bound[1][1]}, ...)"
            found.append((bound[0][0], f"{words[kind]} {names}, up to {bound[0][0]:.0%} of the time they had data to send"))
        else:
            found += [(share, f"{words[kind]} {name} ({share:.0%} of the time it had data to send)") for share, name in hosts]
    return sorted(found, key=lambda x: -x[0])


def lines(result: Result) -> list:
    """The summary, a line each: throughput, what limited it, losses."""
    out = []
    moved = []
    for c in result.components:
        key = next((k for k in THROUGHPUT if c.metrics.get(k)), None)
        if key:
            moved.append((c.metrics[key], f"{c.name} {c.metrics[key]:,.1f} Mb/s ({key})"))
    moved = [text for _, text in sorted(moved, key=lambda m: -m[0])]
    if moved:
        out.append("throughput: " + "; ".join(moved[:4]) + (f"; {len(moved) - 4} more below" if len(moved) > 4 else ""))
    busy = busiest(result)
    limits = [f"{r} ({u:.0%} busy)" for u, r in busy if u >= SATURATED]
    limits += [w for share, w in windows(result) if share >= WINDOW_BOUND]
    if limits:
        out.append("limited by: " + "; ".join(limits[:4]))
    elif busy:
        u, r = busy[0]
        out.append(f"limited by: nothing saturated (the busiest, {r}, is {u:.0%} busy): the exchange's own pace (requests, think times, TCP's windows part of the time) sets the rate")
    lost = []
    for c in result.components:
        for key, words in LOSSES.items():
            n = c.metrics.get(key)
            if n:
                lost.append(f"{c.name}: {n:,.0f} {words}")
    if lost:
        out.append("lost: " + "; ".join(lost[:4]))
    stalled = stalls(result)
    if stalled:
        out.append("stalled: " + "; ".join(stalled[:4]))
    return out
