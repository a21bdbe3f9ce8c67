"""`nicsim bench`: simulation speed. The link flood (and, with --compare-peers,
ns-3 and SimPy beside it), the whole host path on shipped scenarios (--case), and
generated networks of growing size (--case scale). Figures and method:
docs/benchmarks.md."""

from __future__ import annotations

import json
import sys

from nicsim import _core
from nicsim.bench import peers as benchpeers
from nicsim.bench.machine import machine
from nicsim.generate import reworded


def add_parser(sub) -> None:
    b = sub.add_parser(
        "bench",
        help="measure simulation speed: a link flood, or the whole host path (--case)",
        description="Flood minimum frames back to back through one link into a sink and report "
        "simulated frames and events per wall-clock second; or, with --case, time the whole host "
        "path on a shipped scenario (full-path: IBM 2001 at 700 MHz with 8 clients; 10g-flood: a "
        "10 GbE 64-byte receive flood with NAPI and kernel costs; 10g-napi: the same flood with costs "
        "the host keeps up with; 10g-poll: the same flood taken whole by a poll-mode "
        "driver; direct-tso: 64 MB of direct segmentation; tcp-10g: one TCP transfer at 10 Gb/s "
        "between ideal hosts, counting its data packets) and report host frames per wall second, "
        "events per frame, wall seconds per simulated second and peak memory; --case scale: "
        "generated networks of growing size; --case goals: every speed goal measured in one run, "
        "each beside its target; --compare-peers: ns-3 and SimPy beside the flood.",
    )
    b.add_argument("--case", default="link", help="link (default), full-path, 10g-flood, 10g-napi, 10g-poll, direct-tso, store-and-forward-tso, tcp-10g, scale or goals")
    b.add_argument("--hosts", help="with --case scale: network sizes, comma-separated (default 2,10,100,1000); with --case goals: the smallest and largest are compared (default 10,1000)")
    b.add_argument("--duration", help="with --case scale or goals: simulated time of each size (default 10ms; 100ms for goals)")
    b.add_argument("--frames", type=int, default=2_000_000, help="frames per repetition (default 2,000,000)")
    b.add_argument("--repeat", type=int, default=3, help="repetitions of each measurement, nicsim's and each peer's alike, and each network size of --case scale and goals, the sizes taking turns; the best is reported (default 3)")
    b.add_argument("--frame-size", type=int, default=64, help="frame size in bytes (default 64)")
    b.add_argument("--rate", default="10Gbps", help="link rate (default 10Gbps)")
    b.add_argument("--compare-peers", action="store_true", help="with the link flood: run ns-3 and SimPy's baselines in the same run and print nicsim's ratio to each")
    b.add_argument("--peers", metavar="DIR", help="the peer scripts (default: shared/peers beside the checkout)")
    b.add_argument("--peers-python", metavar="PYTHON", default=sys.executable, help="the Python that has ns3 and simpy (default: this one)")
    b.add_argument("--instructions", action="store_true", help="with a --case of one scenario: also count the instructions one run executes (valgrind's callgrind, about 50 times slower), per host frame and by part of the model; with --case goals: count the two cases that have an instruction budget")
    b.add_argument("--json", action="store_true", help="print figures as JSON")


def command(args) -> int:
    if args.frames < 1 or args.repeat < 1:
        raise _core.ScenarioError("--frames and --repeat must be at least 1")
    if args.instructions and args.case in ("link", "scale"):
        from nicsim.bench.cases import CASES

        raise _core.ScenarioError(f"--instructions: counts one scenario of --case ({', '.join(CASES)}), not {args.case}")
    if args.case == "scale":
        return _bench_scale(args)
    if args.case == "goals":
        return _bench_goals(args)
    if args.compare_peers and args.case != "link":
        raise _core.ScenarioError("--compare-peers: the peers model the link flood only; leave out --case")
    peers = benchpeers.folder(args.peers) if args.compare_peers else None
    figures, line = _bench_case(args) if args.case != "link" else _bench_link(args)
    # The build and machine end the first line; counted instructions follow it.
    first, _, rest = line.partition("\n")
    line = f"{first}; {figures['build']} build on {figures['machine']}" + (f"\n{rest}" if rest else "")
    if peers is not None:
        figures["peers"] = benchpeers.compare(figures["frames_per_second"], peers, args.peers_python, args.repeat)
        line = "\n".join([line, *benchpeers.lines(figures["peers"])])
    print(json.dumps(figures, indent=2) if args.json else line)
    return 0


def _bench_case(args) -> tuple:
    from nicsim.bench.cases import measure, summary

    if args.instructions:
        from nicsim.bench import instructions as benchinstr

        benchinstr.needed()
    figures = measure(args.case, args.repeat)
    line = f"{summary(figures)} (best of {args.repeat})"
    if args.instructions:
        print(f"  counting {args.case}'s instructions under callgrind (a run about 50 times slower)", file=sys.stderr, flush=True)
        figures = benchinstr.figures(args.case, figures)
        line = "\n".join([line, *benchinstr.lines(figures)])
    return figures, line


def _bench_scale(args) -> int:
    from nicsim.bench import scale as benchscale

    sizes, duration = benchscale.parse_hosts(args.hosts or benchscale.SIZES), args.duration or benchscale.DURATION
    benchscale.check(sizes, duration)
    build, on = _core.build_kind(), machine()
    show = None if args.json else (lambda f: print(f"{benchscale.line(f)}; {build} build on {on}", flush=True))
    each = None if args.json else (lambda i, f: print(f"  run {i}/{args.repeat}: {f['hosts']} hosts, {f['wall_seconds']:.2f} s", file=sys.stderr, flush=True))
    figures = benchscale.measure(sizes, duration, show, args.repeat, each)
    for f in figures:
        f["build"], f["machine"] = build, on
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


def _bench_goals(args) -> int:
    from nicsim.bench import goals as benchgoals
    from nicsim.bench import scale as benchscale

    sizes, duration = benchscale.parse_hosts(args.hosts or benchgoals.SIZES), args.duration or benchgoals.DURATION
    if len(set(sizes)) < 2:
        raise _core.ScenarioError("--hosts: --case goals compares the smallest network with the largest; give two sizes")
    benchscale.check(sizes, duration)
    if args.instructions:
        from nicsim.bench import instructions as benchinstr

        benchinstr.needed()  # before the long runs, not after them
    goals = benchgoals.measure(args, (min(sizes), max(sizes)), duration)
    print(json.dumps(goals, indent=2) if args.json else "\n".join(benchgoals.lines(goals)))
    return 0


# The flood scenario's keys that come from options, for its errors.
_FLOOD_OPTIONS = {"source[0].frame_size": "--frame-size", "link[0].rate": "--rate"}


def _flood(args) -> tuple:
    """One run of the link flood; a value the model refuses is blamed on its option."""
    try:
        return _core.bench_flood(args.frames, args.frame_size, args.rate)
    except _core.ScenarioError as e:
        message = reworded(str(e), _FLOOD_OPTIONS.get)
        if message is None:
            raise
        raise _core.ScenarioError(message) from None


def _bench_link(args) -> tuple:
    best = None
    for i in range(args.repeat):
        frames, events, wall = _flood(args)
        if not args.json:
            print(f"  run {i + 1}/{args.repeat}: {frames / wall / 1e6:.2f} M frames/s", file=sys.stderr)
        if best is None or wall < best[2]:
            best = (frames, events, wall)
    frames, events, wall = best
    figures = {
        "frames": frames,
        "events": events,
        "wall_seconds": wall,
        "frames_per_second": frames / wall,
        "events_per_second": events / wall,
        "frame_size": args.frame_size,
        "rate": args.rate,
        "build": _core.build_kind(),
        "machine": machine(),
    }
    line = (
        f"flood of {frames:,} x {args.frame_size} B frames over one {args.rate} link: "
        f"{figures['frames_per_second'] / 1e6:.2f} M simulated frames/s, "
        f"{figures['events_per_second'] / 1e6:.2f} M events/s (best of {args.repeat}, {wall:.3f} s)"
    )
    return figures, line
