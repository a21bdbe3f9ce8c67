"""Plain-text results tables for the terminal."""

from __future__ import annotations

from nicsim.api import Result


# Metrics that are identifiers, not quantities: written without separators.
IDENTIFIERS = ("ttcp_digest48",)


def _fmt(value, key: str = "") -> str:
    if key in IDENTIFIERS:
        return str(int(value))
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 1e6:
            return f"{value:,.0f}"
        return f"{value:,.4f}"
    return f"{value:,}"


def render(result: Result) -> str:
    """One block per component: its non-zero metrics, name and value aligned, and
    how many are zero (a zero can be the point: no payload in adapter memory)."""
    lines = [
        f"scenario {result.scenario}  seed {result.seed}  "
        f"simulated {result.simulated_seconds * 1e3:.6f} ms  events {result.events:,}"
    ]
    from nicsim.runs.summary import lines as summary

    told = summary(result)
    if told:
        lines += ["", "summary"] + [f"  {line}" for line in told]
    if result.data.get("frames_captured"):
        past = result.data.get("frames_not_captured", 0)
        note = f" ({past:,} more past --capture-limit)" if past else ""
        lines.append(f"captured {result.data['frames_captured']:,} frames{note}")
    if result.data.get("trace_events"):
        dropped = result.data.get("trace_events_dropped", 0)
        note = f" ({dropped:,} more not written: raise --trace-limit)" if dropped else ""
        lines.append(f"timeline {result.data['trace_events']:,} events{note}")
    pacing = result.pacing
    if pacing:
        lines.append(
            f"paced to the wall clock for {pacing['wall_seconds']:.3f} s, ended by {pacing['ended_by']}; "
            f"{pacing['late_events']:,} events over 1 ms late, at most {pacing['max_lag_us'] / 1e3:.3f} ms behind"
        )
    for c in result.components:
        shown = [(k, v) for k, v in c.metrics.items() if v != 0]
        lines.append("")
        lines.append(f"{c.kind} {c.name}")
        for key, value in c.text.items():
            lines.append(f"  {key}  {value}")
        if not shown:
            lines.append("  (nothing happened)")
        width = max((len(k) for k, _ in shown), default=0)
        for key, value in shown:
            lines.append(f"  {key:<{width}}  {_fmt(value, key):>18}")
        zeros = [k for k, v in c.metrics.items() if v == 0]
        if shown and zeros:
            lines.append(f"  zero: {', '.join(zeros)}")
    return "\n".join(lines)
