"""`nicsim generate two-tier`: a scenario of N stations on a two-tier switched
network (edge switches under one core). With TCP traffic (the default) they are
whole hosts (`[[host]]`: processors, NAPI driver, ring adapter on PCIe, smoltcp) and
host i of the first half sends a TTCP stream to host i + N/2, so every stream
crosses the core. With UDP traffic the first half are traffic sources and the second
half sinks, which announce themselves with a gratuitous ARP (unless --no-announce)
so that the switches learn where they are. For the scale benchmark
(docs/benchmarks.md) and for users who want a large network to start from."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from nicsim import _core
from nicsim.files import write_whole

import tomli_w

# A Linux kernel path's costs, as in scenarios/combinations/ideal-host-ttcp.toml
# (assumed; docs/model.md).
HOST_COSTS = {"interrupt_entry": 1000, "interrupt_exit": 500, "rx_frame": 300, "protocol_segment": 700, "tx_frame": 1000, "poll": 200, "app_request": 2000}


def add_parser(sub) -> None:
    p = sub.add_parser("generate", help="write a generated scenario (a large switched network)", description=__doc__)
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    t = kinds.add_parser("two-tier", help="N hosts under edge switches and one core, exchanging TCP", description=__doc__)
    t.add_argument("--hosts", type=int, required=True, help="hosts, an even number from 2 to 65,534 (stations are numbered in 16 bits)")
    t.add_argument("--per-edge", type=int, default=40, help="hosts per edge switch (default 40)")
    t.add_argument("--rate", default="1Gb/s", help="host links (default 1Gb/s)")
    t.add_argument("--uplink", default="10Gb/s", help="edge-to-core links (default 10Gb/s)")
    t.add_argument("--duration", default="10ms", help="simulated time (default 10ms)")
    t.add_argument("--seed", type=int, default=1, help="the scenario's seed (default 1)")
    t.add_argument("--traffic", choices=["tcp", "udp"], default="tcp", help="TTCP between hosts (default), or UDP from sources to sinks")
    t.add_argument("--source-rate", default="200Mb/s", help="with --traffic udp: each source's rate (default 200Mb/s: 40 sources fill a 10 Gb/s uplink 80%%)")
    t.add_argument("--no-announce", action="store_true", help="with --traffic udp: sinks stay silent, so switches flood every frame")
    t.add_argument("-o", "--out", metavar="FILE", help="write here (default: standard output)")


def two_tier(
    hosts: int,
    per_edge: int = 40,
    rate: str = "1Gb/s",
    uplink: str = "10Gb/s",
    duration: str = "10ms",
    seed: int = 1,
    traffic: str = "tcp",
    source_rate: str = "200Mb/s",
    announce: bool = True,
) -> dict:
    """The scenario as data; `nicsim.run` checks its values."""
    if hosts < 2 or hosts % 2 or hosts > 65_534:
        raise _core.ScenarioError(f"--hosts: must be an even number from 2 to 65,534, got {hosts}")
    if not 1 <= per_edge <= 4096:
        raise _core.ScenarioError(f"--per-edge: must be 1 to 4096, got {per_edge}")
    # At least two edges, so that even two hosts talk through the core.
    edges = max(2, -(-hosts // per_edge))
    per_edge = -(-hosts // edges)
    half = hosts // 2
    sc = {"name": f"two-tier-{hosts}", "duration": duration, "seed": seed, "host": [], "source": [], "sink": [], "switch": [], "link": []}
    for i in range(hosts if traffic == "tcp" else 0):
        sends = i < half
        ttcp = {"role": "send", "message": 65536, "bytes": 1 << 40, "to": f"h{i + half}"} if sends else {"role": "receive", "message": 65536}
        sc["host"].append(
            {
                "name": f"h{i}",
                "clock": "2GHz",
                "costs": HOST_COSTS,
                "driver": {"mode": "napi"},
                "bus": {"kind": "pcie"},
                "adapter": [{"interrupt": "min-interval", "interrupt_interval": "50us"}],
                "ttcp": ttcp,
                "tcp": {"rx_buffer": 65535, "tx_buffer": 65535},
            }
        )
    if traffic == "udp":
        sc["source"] = [{"name": f"h{i}", "to": f"h{i + half}", "protocol": "udp", "frame_size": 1518, "rate": source_rate, "start": "2ms"} for i in range(half)]
        sc["sink"] = [{"name": f"h{i}", "announce": announce} for i in range(half, hosts)]
    sc = {k: v for k, v in sc.items() if v != []}
    sc["switch"], sc["link"] = [{"name": "core", "ports": edges}], []
    for e in range(edges):
        members = range(e * per_edge, min(hosts, (e + 1) * per_edge))
        sc["switch"].append({"name": f"edge{e}", "ports": len(members) + 1})
        for j, i in enumerate(members):
            sc["link"].append({"name": f"h{i}-edge{e}", "a": f"h{i}", "b": f"edge{e}:{j}", "rate": rate})
        sc["link"].append({"name": f"edge{e}-core", "a": f"edge{e}:{len(members)}", "b": f"core:{e}", "rate": uplink})
    return sc


def text(scenario: dict) -> str:
    head = "# Generated by `nicsim generate two-tier`: stations h0.. under edge switches and a core;\n# station i of the first half sends to station i + N/2.\n"
    return head + tomli_w.dumps(scenario)


def _option(scenario: dict, key: str) -> str:
    """The command-line option behind a key of the generated scenario."""
    head = key.split(".")[0]
    if head.startswith("link["):
        link = scenario["link"][int(head[5:-1])]
        return "--uplink" if link["name"].endswith("-core") else "--rate"
    if head.startswith("source["):
        return "--source-rate"
    if head in ("duration", "seed"):
        return f"--{head}"
    return f"the generated scenario's {key}"  # not from an option: a defect of the generator


def checked(scenario: dict) -> str:
    """The scenario's text, once the model has checked it: a value it refuses is
    blamed on the option it came from, and nothing is written."""
    body = text(scenario)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "generated.toml"
        path.write_text(body)
        try:
            _core.check_file(str(path), sets=[])
        except _core.ScenarioError as e:
            message = reworded(str(e).removeprefix(f"{path}: "), lambda key: _option(scenario, key))
            if message is None:
                raise
            raise _core.ScenarioError(message) from None
    return body


def reworded(message: str, option_of) -> "str | None":
    """A model error ("[line N: ]KEY: what is wrong") about a scenario a command
    wrote from its options, said of the option `option_of(KEY)` names instead;
    None where it names none."""
    m = re.match(r"(?:line \d+: )?([^:]+): (.*)", message, re.S)
    option = m and option_of(m[1])
    return f"{option}: {m[2]}" if option else None


def command(args) -> int:
    body = checked(two_tier(args.hosts, args.per_edge, args.rate, args.uplink, args.duration, args.seed, args.traffic, args.source_rate, not args.no_announce))
    if args.out:
        write_whole(args.out, body)
        print(f"{args.out}: {args.hosts} hosts", file=sys.stderr)
    else:
        sys.stdout.write(body)
    return 0
