"""`nicsim pcie`: what a PCIe link gives one DMA engine, from the model's TLP
accounting: the bandwidth of back-to-back writes, reads and a mix of both, and
the unloaded latency of one read, for transfer sizes and a host offset of your
choice (docs/model.md, "PCIe")."""

from __future__ import annotations

import json
import re

from nicsim import _core

SIZES = [64, 128, 256, 512, 1024, 1518, 2048, 4096, 9000, 65536]
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms)\s*$")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "pcie",
        help="DMA bandwidth and read latency of a PCIe link against transfer size",
        description=__doc__,
    )
    p.add_argument("--gen", type=int, default=3, help="generation 1 to 5 (default 3)")
    p.add_argument("--lanes", type=int, default=8, help="1, 2, 4, 8, 16 or 32 (default 8)")
    p.add_argument("--mps", type=int, default=256, help="Max Payload Size, bytes (default 256)")
    p.add_argument("--mrrs", type=int, default=512, help="Max Read Request Size, bytes (default 512)")
    p.add_argument("--rcb", type=int, default=64, help="Read Completion Boundary, 64 or 128 (default 64)")
    p.add_argument("--completions", choices=["mps", "rcb"], default="mps", help="completions as large as MPS allows, or cut at every RCB (default mps)")
    p.add_argument("--size", default=",".join(map(str, SIZES)), help="transfer sizes in bytes, comma-separated (default %(default)s)")
    p.add_argument("--offset", type=int, default=0, help="host address offset past an aligned boundary, bytes (default 0)")
    p.add_argument("--read-share", type=float, default=0.5, help="share of reads in the mixed column, 0 to 1 (default 0.5)")
    p.add_argument("--read-latency", default="500ns", help="host time from a read request to its first completion (default 500ns)")
    p.add_argument("--json", action="store_true", help="one JSON record per size")


def _bad(option: str, why: str):
    return _core.ScenarioError(f"{option}: {why}")


def _sizes(text: str) -> list:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise _bad("--size", f"must be whole numbers of bytes, comma-separated, got {text!r}") from None
    if not sizes or any(s < 1 or s > 1 << 30 for s in sizes):
        raise _bad("--size", f"each size must be from 1 byte to 1 GiB, got {text!r}")
    return sizes


def _ns(text: str) -> int:
    m = _TIME.match(text)
    if not m:
        raise _bad("--read-latency", f"must be a time such as 500ns or 1us, got {text!r}")
    scale = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000}[m.group(2)]
    return round(float(m.group(1)) * scale)


def profile(args) -> list:
    """One record per size: size, write, read and mixed Gb/s, read latency in ns."""
    if not 0 <= args.read_share <= 1:
        raise _bad("--read-share", f"must be from 0 to 1, got {args.read_share}")
    if not 0 <= args.offset < 1 << 20:
        raise _bad("--offset", f"must be from 0 to 1 MiB, got {args.offset}")
    for name in ("gen", "lanes", "mps", "mrrs", "rcb"):
        if not 0 < getattr(args, name) < 1 << 16:
            raise _bad(f"--{name}", f"out of range, got {getattr(args, name)}")
    sizes, latency = _sizes(args.size), _ns(args.read_latency)
    try:
        rows = _core.pcie_profile(
            args.gen, args.lanes, args.mps, args.mrrs, args.rcb, args.completions == "rcb",
            sizes, args.offset, args.read_share, latency,
        )
    except _core.ScenarioError as e:
        # The link's own check names the field; say it as the option.
        field, _, why = str(e).partition(": ")
        option = {"generation": "--gen"}.get(field, f"--{field}")
        raise _bad(option, why) from None
    keys = ("size", "write_gbps", "read_gbps", "mix_gbps", "read_latency_ns")
    return [dict(zip(keys, r)) for r in rows]


def command(args) -> int:
    rows = profile(args)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(
        f"PCIe Gen{args.gen} x{args.lanes}, MPS {args.mps}, MRRS {args.mrrs}, RCB {args.rcb} "
        f"({args.completions} completions), offset {args.offset} B, read latency {args.read_latency}"
    )
    print(f"| transfer (B) | DMA write (Gb/s) | DMA read (Gb/s) | {args.read_share:.0%} reads (Gb/s) | one read (ns) |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['size']} | {r['write_gbps']:.2f} | {r['read_gbps']:.2f} | {r['mix_gbps']:.2f} | {r['read_latency_ns']:.0f} |")
    return 0
