"""The machine a benchmark ran on, named beside its figures: wall times compare
only on one machine (docs/benchmarks.md)."""

from __future__ import annotations

import os
import platform


def machine() -> str:
    """The processor's model and how many processors this run may use."""
    model = _model() or platform.processor() or platform.machine() or "unknown processor"
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {count} processors"


def _model() -> str | None:
    """Linux names the model in /proc/cpuinfo; elsewhere `platform` is all there is."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
