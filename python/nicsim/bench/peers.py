"""`nicsim bench --compare-peers`: the link flood beside the peer baselines (ns-3's
point-to-point UDP flood and SimPy's source -> link -> sink, the scripts of the
project's `shared/peers`), measured in the same run, with nicsim's figure as a
ratio to each. Each peer's figure is its best of as many runs as nicsim's (the same
`--repeat`), so that neither side gains by being measured more often. A peer whose
Python module is missing is skipped, saying why."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from nicsim import _core
from nicsim.studies.study import papers_dir

# name: (script, its arguments, the module it needs, the figure on its last line)
PEERS = {
    "ns-3": ("ns3_p2p.py", ["18", "10Gbps", "0.005"], "ns", r"pkts_per_wall_s=(\d+)"),
    "SimPy": ("simpy_link.py", ["200000"], "simpy", r"frames_per_wall_s=(\d+)"),
}
# ns-3's TCP bulk transfer, the same work as `nicsim bench --case tcp-10g`: data
# packets delivered a wall second (`--case goals` only).
TCP = {"ns-3 TCP": ("ns3_tcp.py", ["10Gbps", "50us", "1", "--buf", "1048576"], "ns", r"pkts_per_wall_s=(\d+)")}


def default_dir() -> Path:
    """`shared/peers` beside this checkout."""
    return papers_dir().parent.parent.parent / "shared" / "peers"


def folder(given: str | None) -> Path:
    path = Path(given) if given else default_dir()
    if not (path / "simpy_link.py").is_file() and not (path / "ns3_p2p.py").is_file():
        raise _core.ScenarioError(f"--peers: no peer scripts (ns3_p2p.py, simpy_link.py) in {path}")
    return path


def one(name: str, path: Path, python: str, repeat: int = 1) -> dict:
    """Peer `name`'s best of `repeat` runs, or why it was skipped."""
    script, args, module, pattern = {**PEERS, **TCP}[name]
    if not (path / script).is_file():
        return {"peer": name, "skipped": f"{path / script} is missing"}
    probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True, text=True)
    if probe.returncode != 0:
        return {"peer": name, "skipped": f"{python} has no module {module!r} (pip install {'ns3' if module == 'ns' else module})"}
    best = 0.0
    for _ in range(repeat):
        done = subprocess.run([python, str(path / script), *args], capture_output=True, text=True)
        found = re.search(pattern, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "")
        if done.returncode != 0 or not found:
            return {"peer": name, "skipped": f"{script} failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}"}
        best = max(best, float(found.group(1)))
    return {"peer": name, "frames_per_second": best, "runs": repeat}


def compare(nicsim_fps: float, path: Path, python: str, repeat: int = 1) -> list:
    rows = [one(name, path, python, repeat) for name in PEERS]
    for r in rows:
        if "frames_per_second" in r:
            r["nicsim_ratio"] = nicsim_fps / r["frames_per_second"]
    return rows


def lines(rows: list) -> list:
    out = []
    for r in rows:
        if "skipped" in r:
            out.append(f"{r['peer']}: skipped ({r['skipped']})")
        else:
            out.append(f"{r['peer']}: {r['frames_per_second'] / 1e6:.3f} M frames per wall second; nicsim is {r['nicsim_ratio']:.1f}x")
    return out
