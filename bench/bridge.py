"""Issue 8 benchmark: TCP through the TAP bridge, each way, and how far behind the
wall clock the paced simulation fell. Needs root (it makes a network namespace).

    sudo .venv/bin/python bench/bridge.py [--bytes N] [--rate "1 Gb/s"] [--json]

For each direction and design it moves N bytes between a simulated host and a
real Linux socket in a namespace and prints: goodput as the real socket saw it
(bytes over the time from its connect or accept to the end), the simulated
host's own goodput on its wire, and the pacing figures (events over 1 ms late,
the most an event ran behind, the last event's lag).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from nicsim.bridge.netns import TestHost
from nicsim.sweeping.points import group_sets, toml_value

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios" / "bridge"
NICSIM = [sys.executable, "-m", "nicsim.cli"]
REALPEER = [sys.executable, "-m", "nicsim.bridge.realpeer"]
# The HP 2001 host's designs, as its study defines them.
GROUPS = group_sets(str(ROOT / "scenarios" / "papers" / "hp2001" / "study.toml"), "send", "@design")
DESIGNS = {label: [f"{k}={toml_value(v)}" for k, v in sets.items()] for label, sets in GROUPS.items()}


def bridged(host, scenario, sets):
    cmd = NICSIM + ["run", str(scenario), "--json"] + [a for s in sets for a in ("--set", s)]
    return host.start_bridged(*cmd)


def result_of(proc):
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"bridged run failed: {err}")
    return json.loads(out)


def one(direction, design, size, rate):
    sets = DESIGNS[design] + [f"link[0].rate='{rate}'", "tap[0].idle='0.5 s'"]
    with TestHost() as host:
        if direction == "sim to Linux":
            server = host.popen(*REALPEER, "server", "--bind", "198.18.0.2", stdout=subprocess.PIPE, text=True)
            server.stdout.readline()
            proc = bridged(host, SCENARIOS / "send.toml", sets + [f"host[0].ttcp.bytes={size}"])
            real = json.loads(server.communicate(timeout=600)[0])
        else:
            proc = bridged(host, SCENARIOS / "receive.toml", sets)
            real = json.loads(host.run(*REALPEER, "client", "--to", "198.18.0.1", "--bytes", str(size), timeout=600).stdout)
        result = result_of(proc)
    sim = next(c for c in result["components"] if c["name"] == "sim")
    assert sim["text"]["ttcp_xxh128"] == real["xxh128"], "digests differ"
    p = result["pacing"]
    return {
        "direction": direction,
        "design": design,
        "rate": rate,
        "bytes": real["bytes"],
        "real_goodput_mbps": real["bytes"] * 8 / real["seconds"] / 1e6,
        "sim_goodput_mbps": sim["metrics"]["tcp_goodput_mbps"],
        "late_events": p["late_events"],
        "events": result["events"],
        "max_lag_ms": p["max_lag_us"] / 1e3,
        "end_lag_ms": p["end_lag_us"] / 1e3,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bytes", type=int, default=10_000_000)
    ap.add_argument("--rate", action="append", help="link rates (default: 100 Mb/s and 1 Gb/s)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for rate in args.rate or ["100 Mb/s", "1 Gb/s"]:
        for direction in ("sim to Linux", "Linux to sim"):
            for design in ("host-stack", "full-offload", "partial-offload"):
                rows.append(one(direction, design, args.bytes, rate))
                r = rows[-1]
                if not args.json:
                    print(
                        f"{r['rate']:>8}  {r['direction']:<12}  {r['design']:<15}  "
                        f"real {r['real_goodput_mbps']:6.1f} Mb/s  sim {r['sim_goodput_mbps']:6.1f} Mb/s  "
                        f"late {r['late_events']:>6,} of {r['events']:>9,} events  "
                        f"max lag {r['max_lag_ms']:6.2f} ms  end lag {r['end_lag_ms']:6.2f} ms",
                        flush=True,
                    )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
