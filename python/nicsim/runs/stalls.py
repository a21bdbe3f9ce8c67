"""Whether every TCP connection and receive ring of a run made progress to its
end. A connection with bytes waiting that moved nothing (acknowledged or
received) for longer than its retransmission timeout, or a ring that took no
frame in the run's last tenth (at least 1 ms) while frames kept arriving, is
named: `nicsim run` prints a warning line on stderr for each host that has one,
and exits 3 with `--strict`."""

from __future__ import annotations

from nicsim.api import Result

# A run whose results name a stall exits with this under --strict.
EXIT_STALLED = 3


def _count(metrics: dict, name: str) -> int:
    """The metric `name`, summed over its per-adapter copies (`adapter1_NAME`)."""
    return int(sum(v for k, v in metrics.items() if (k == name or k.endswith("_" + name)) and isinstance(v, (int, float))))


def stalls(result: Result) -> list:
    """One line per component with a stalled connection or ring."""
    out = []
    for c in result.components:
        tcp = _count(c.metrics, "tcp_stalled")
        if tcp:
            named = c.text.get("tcp_stalled_connections", "")
            out.append(f"{c.kind} {c.name}: {tcp} TCP connection{'s' * (tcp > 1)} stalled" + (f": {named}" if named else ""))
        rings = c.metrics.get("rx_ring_stalled", 0)
        if rings:
            out.append(f"{c.kind} {c.name}: {rings:.0f} receive ring{'s' * (rings > 1)} stopped taking frames while frames kept arriving")
    return out
