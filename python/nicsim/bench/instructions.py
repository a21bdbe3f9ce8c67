"""`nicsim bench --case CASE --instructions`: the instructions one run of a case
executes, counted exactly by valgrind's callgrind, per host frame and split by the
part of the model that executed them. Wall time on a shared machine moves by
10% from run to run and more from day to day; the count does not, so a change
is measured by it to the instruction, and a speed target becomes a budget: the
instructions a frame may take at the rate this machine runs them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

from nicsim import _core

# Only the simulation is counted, not Python around it.
COLLECT = "nicsim::run::run"

# The parts of the model, by the module of the function that ran (inlined
# library code counts for the function it was inlined into).
PARTS = {
    "engine": "engine: event queue, dispatch",
    "source": "traffic sources",
    "switch": "switches",
    "link": "links, taps, sinks",
    "bus": "host bus: PCI, PCIe calendars",
    "nic": "adapters: FIFOs, DMA, rings, firmware",
    "toe": "TCP offload engines",
    "host": "host: driver, steps, applications",
    "processor": "processors: scheduling",
    "stack": "TCP/IP glue",
    "smoltcp": "TCP/IP: smoltcp",
    "wire": "frames: build, parse, checksum",
    "observe": "observation: pcap, trace, reports",
    "allocator": "memory allocator",
    "libc": "libc: copies, compares",
    "rust": "Rust library (not inlined)",
    "other": "other",
}

_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*")


def part(function: str) -> str:
    """The part of the model a function belongs to (a key of `PARTS`)."""
    m = _PATH.match(function.lstrip("<"))
    path = m.group(0).split("::") if m else []
    if path[:1] == ["nicsim"] and len(path) > 1:
        if path[1] == "link" and len(path) > 2 and path[2] in ("source", "switch"):
            return path[2]
        return path[1] if path[1] in PARTS else "other"
    if path[:1] == ["smoltcp"]:
        return "smoltcp"
    if function.startswith(("mi_", "_mi_", "__rust_alloc", "__rust_dealloc", "__rust_realloc", "malloc", "free", "realloc")):
        return "allocator"
    if function.startswith(("__mem", "mem", "__strlen", "strlen")):
        return "libc"
    if path[:1] and path[0] in ("core", "alloc", "std", "hashbrown"):
        return "rust"
    return "other"


def exclusive(lines) -> Counter:
    """Each function's own instructions (the first event) from callgrind's output
    format: cost lines under `fn=`, less the inclusive cost line after each
    `calls=`. Names are given once, then referred to by number."""
    names: dict[str, str] = {}
    own: Counter = Counter()
    current, after_call = None, False
    for line in lines:
        key, _, rest = line.partition("=")
        if key in ("fn", "cfn"):
            m = re.match(r"\((\d+)\)(?: (.*))?", rest.rstrip("\n"))
            if m is None:
                name = rest.rstrip("\n")
            else:
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                name = names.get(m.group(1), "?")
            if key == "fn":
                current = name
            continue
        if key == "calls":
            after_call = True
            continue
        if line[:1].isdigit() or line[:1] in "+-*":
            fields = line.split()
            if after_call:
                after_call = False
            elif len(fields) > 1 and current is not None:
                own[current] += int(fields[1])
    return own


def by_part(own: Counter) -> Counter:
    parts: Counter = Counter()
    for function, n in own.items():
        parts[part(function)] += n
    return parts


def needed() -> str:
    """valgrind's path, or the error that says it is missing."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise _core.ScenarioError("--instructions: needs valgrind (its callgrind tool) on PATH; on Debian or Ubuntu: apt-get install valgrind")
    return valgrind


def count(case: str) -> tuple[int, dict, Counter]:
    """Run `case` once under callgrind: its instructions, its figures (as
    `nicsim bench --case CASE --json` prints them) and the count by part."""
    valgrind = needed()
    with tempfile.TemporaryDirectory(prefix="nicsim-instructions-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        child = [sys.executable, "-c", "import sys; from nicsim.cli import main; sys.exit(main())", "bench", "--case", case, "--repeat", "1", "--json"]
        cmd = [valgrind, "--tool=callgrind", f"--toggle-collect={COLLECT}", f"--callgrind-out-file={out}", *child]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(out):
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise _core.SimulationError(f"--instructions: the counted run failed (exit {done.returncode}):\n{tail}")
        with open(out) as f:
            own = exclusive(f)
    return sum(own.values()), json.loads(done.stdout), by_part(own)


def figures(case: str, timed: dict) -> dict:
    """The counted run beside the timed one (`timed`: `benchcases.measure`'s
    figures): instructions per host frame, by part, and the rate at which
    this machine ran them."""
    total, counted, parts = count(case)
    frames = counted["host_frames"]
    return {
        **timed,
        "instructions": total,
        "instructions_per_frame": total / frames if frames else 0.0,
        # The timed runs' frames are the counted run's: the model is deterministic.
        "instructions_per_second": total / timed["wall_seconds"],
        # Parts under half an instruction a frame are left out.
        "parts_per_frame": {PARTS[k]: n / frames for k, n in parts.most_common() if frames and n / frames >= 0.5},
    }


def lines(f: dict) -> list[str]:
    """The counted figures as text, the largest part first."""
    out = [
        f"  {f['instructions'] / 1e6:,.1f} M instructions (callgrind), {f['instructions_per_frame']:,.0f} a host frame; "
        f"run at {f['instructions_per_second'] / 1e9:.2f} G a wall second",
    ]
    per = f["instructions_per_frame"] or 1.0
    for name, n in f["parts_per_frame"].items():
        out.append(f"    {name:<40} {n:8,.0f}  {100 * n / per:5.1f}%")
    return out
