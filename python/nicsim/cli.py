"""The nicsim command: a thin shell over the Python API.

Exit codes: 0 success, 2 bad input (scenario, option or file), 1 internal failure.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nicsim import _core
from nicsim.bench import cli as benchcli
from nicsim import generate, pcie
from nicsim.api import check, check_run_options, run
from nicsim.runs.table import render

EPILOG = """\
exit codes: 0 success, 2 bad input (a malformed scenario, an impossible value, an
unknown option), 1 internal failure of the model, 3 a stall under `run --strict`,
74 an output file could not be written, 130 interrupted (docs/cli.md).

Scenario files are TOML; see docs/scenarios.md for every key and its default.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nicsim",
        description="Simulate a host, its I/O bus, an Ethernet adapter and the wire, with real frames.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"nicsim {_core.__version__} ({_core.build_kind()} build)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    r = sub.add_parser(
        "run",
        help="run one scenario and print its results",
        description="Run one scenario and print a results table (or JSON). The scenario is "
        "checked whole before anything runs; on bad input nothing is written. Ctrl-C stops a run "
        "(exit code 130) and writes nothing, except a run bridged to real Linux, which ends and "
        "prints what it has.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("scenario", metavar="SCENARIO.toml", help="the scenario file")
    r.add_argument("--pcap", metavar="FILE", help="write the frames crossing links to this pcap file (ns timestamps); a name ending in .pcapng gives pcapng with an interface per link")
    r.add_argument(
        "--capture",
        metavar="LINK",
        action="append",
        default=[],
        help="capture only this link (repeatable); default: every link",
    )
    r.add_argument("--json", action="store_true", help="print results as JSON instead of a table")
    r.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar (on a terminal, a run that takes over a second shows one on stderr)",
    )
    r.add_argument("--seed", type=int, metavar="N", help="override the scenario's seed (0 to 2^64-1)")
    r.add_argument(
        "--trace",
        metavar="FILE",
        help="write a timeline of each host (bus, processors, frame arrivals) in the Chrome trace "
        "format; open it in https://ui.perfetto.dev or chrome://tracing",
    )
    r.add_argument(
        "--trace-limit", type=int, default=0, metavar="N", help="keep at most N timeline events (default 1,000,000)"
    )
    r.add_argument("--capture-limit", type=int, default=0, metavar="N", help="capture the first N frames only (default: every frame)")
    r.add_argument(
        "--strict",
        action="store_true",
        help="exit 3 when a TCP connection or a receive ring stalled (the warning is printed either way)",
    )
    _add_set(r)

    c = sub.add_parser("check", help="check a scenario without running it")
    c.add_argument("scenario", metavar="SCENARIO.toml")
    _add_set(c)

    sc = sub.add_parser(
        "schema",
        help="print the scenario format as a JSON Schema (for editors)",
        description="The scenario format as a JSON Schema, generated from the types nicsim reads scenarios into. "
        "Point your editor's TOML support at it (Taplo / Even Better TOML: a `#:schema` comment or its settings) "
        "to have scenario files checked and completed as you type.",
    )
    sc.add_argument("-o", "--out", metavar="FILE", help="write it to FILE instead of standard output")
    sc.add_argument("--keys", action="store_true", help="the key reference in Markdown instead (docs/scenario-keys.md)")

    w = sub.add_parser(
        "sweep",
        help="run a scenario at many points; every run a row in a DuckDB results file",
        description="Run a scenario over a grid (or zipped lists) of values, on local threads "
        "or on a Dask cluster. Rows go to a DuckDB file; points already there are skipped, so "
        "the same command resumes a sweep that was stopped. Without --vary, the scenario's "
        "[sweep] table says what to vary.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    w.add_argument("scenario", metavar="SCENARIO.toml")
    w.add_argument(
        "--vary",
        metavar="KEY=VALUES",
        action="append",
        default=[],
        help="a key and its values: host[0].clock=400MHz,700MHz or source[0].frame_size=64:1518:64 "
        "(start:stop:step, inclusive); a key @NAME is a label recorded with each run (repeatable)",
    )
    w.add_argument("--zip", action="store_true", help="take the --vary lists side by side instead of every combination")
    w.add_argument("--db", metavar="FILE", help="results file (default results/NAME.duckdb)")
    w.add_argument("--name", help="the sweep's name in the results file (default: the scenario's file name)")
    w.add_argument("--jobs", type=int, metavar="N", help="runs at once on local threads (default: one per CPU; 1 runs them one after another)")
    w.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask cluster, e.g. tcp://10.0.0.5:8786")
    _add_wait_workers(w)
    w.add_argument("--restart", action="store_true", help="drop this sweep's earlier rows and run every point again")
    w.add_argument("--quiet", action="store_true", help="no progress bar")

    rp = sub.add_parser(
        "report",
        help="write an HTML report (plots and tables) from results files",
        description="Write one self-contained HTML file from one or more results files: plots of "
        "the metrics against what was varied, the tables behind them and, for a study, each "
        "published figure beside the model's.",
    )
    rp.add_argument("results", metavar="RESULTS.duckdb", nargs="+")
    rp.add_argument("-o", "--out", metavar="FILE", default="report.html", help="the HTML file (default report.html)")

    rr = sub.add_parser(
        "reproduce",
        help="run the studies under scenarios/papers/ and scenarios/modern/ and write their report",
        description="Run every study under scenarios/papers/ and scenarios/modern/ (or those named): one DuckDB results "
        "file each and one HTML report that sets each prediction beside the published figure. "
        "Runs already in a results file are not repeated.",
    )
    _add_studies(rr)

    v = sub.add_parser(
        "validate",
        help="compare every published figure with the model's, with signed errors",
        description="Run the studies as reproduce does (runs already in the results files are not "
        "repeated), then print each published figure beside the model's, calibration points "
        "first, with the signed error, and each study's median absolute error over its "
        "predictions. Exits 0 whatever the errors: it reports, it does not judge.",
    )
    _add_studies(v)
    v.add_argument("--json", action="store_true", help="print one JSON record per comparison")
    v.add_argument("--markdown", metavar="FILE", help="also write the studies' sections as Markdown (docs/validation.md)")
    v.add_argument(
        "--sensitivity",
        action="store_true",
        help="also run each study with each calibrated parameter 20%% lower and higher, and show how every figure moves",
    )

    e = sub.add_parser("export", help="write a results file's runs to Parquet or CSV")
    e.add_argument("results", metavar="RESULTS.duckdb")
    e.add_argument("out", metavar="OUT.parquet|OUT.csv")

    pcie.add_parser(sub)
    generate.add_parser(sub)
    benchcli.add_parser(sub)
    return p


def _add_wait_workers(p: argparse.ArgumentParser) -> None:
    from nicsim.sweeping.execute import WAIT_WORKERS

    p.add_argument(
        "--wait-workers",
        type=float,
        metavar="SECONDS",
        default=WAIT_WORKERS,
        help=f"with --scheduler: how long to wait for a worker when the cluster has none, then stop (default {WAIT_WORKERS:g})",
    )


def _check_wait_workers(args) -> None:
    if not 0 <= args.wait_workers < float("inf"):
        raise _core.ScenarioError(f"--wait-workers: must be a number of seconds, 0 or more, got {args.wait_workers:g}")


def _add_studies(p: argparse.ArgumentParser) -> None:
    p.add_argument("names", metavar="NAME", nargs="*", help="studies to run (default: all)")
    p.add_argument("--all", action="store_true", help="every study (the default when no NAME is given)")
    p.add_argument("--out", metavar="DIR", default="results", help="where results and report.html go (default results/)")
    p.add_argument("--papers", metavar="DIR", help="the studies' folder (default scenarios/papers and scenarios/modern of this checkout)")
    p.add_argument("--jobs", type=int, metavar="N", help="runs at once on local threads (default: one per CPU)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask cluster")
    _add_wait_workers(p)
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _add_set(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="change one scenario value before the run, e.g. --set host[0].cpus=2 (repeatable; "
        "VALUE is TOML, or a plain string)",
    )


# A file could not be written (sysexits' EX_IOERR): the results so far are printed.
EXIT_OUTPUT = 74


def _run(args) -> int:
    from nicsim.api import OutputError

    check_run_options(args.seed, args.trace_limit, ("--seed", "--trace-limit"))
    try:
        result = run(
            args.scenario,
            seed=args.seed,
            pcap=args.pcap,
            capture=args.capture,
            trace=args.trace,
            trace_limit=args.trace_limit,
            capture_limit=args.capture_limit,
            overrides=args.set,
            progress=not args.quiet and sys.stderr.isatty(),
        )
    except OutputError as e:
        print(e.result.to_json() if args.json else render(e.result))
        print(f"nicsim: error: {e}", file=sys.stderr)
        return EXIT_OUTPUT
    print(result.to_json() if args.json else render(result))
    return _warn_stalls(result, args.strict)


def _warn_stalls(result, strict: bool) -> int:
    from nicsim.runs.stalls import EXIT_STALLED, stalls

    found = stalls(result)
    for line in found:
        print(f"nicsim: warning: {line}", file=sys.stderr)
    return EXIT_STALLED if found and strict else 0


def _sweep(args) -> int:
    from nicsim.sweeping.points import parse_vary
    from nicsim.sweeping.sweeps import Interrupted, progress_bar, run_sweep

    if args.jobs is not None and args.jobs < 1:
        raise _core.ScenarioError(f"--jobs: must be at least 1, got {args.jobs}")
    _check_wait_workers(args)
    vary = {}
    for spec in args.vary:
        key, values = parse_vary(spec)
        if key in vary:
            raise _core.ScenarioError(f"--vary {key}: given twice")
        vary[key] = values
    mode = "zip" if args.zip else None
    try:
        o = run_sweep(
            args.scenario,
            vary or None,
            mode=mode,
            db=args.db,
            name=args.name,
            jobs=args.jobs,
            scheduler=args.scheduler,
            restart=args.restart,
            progress=None if args.quiet else progress_bar(),
            wait_workers=args.wait_workers,
        )
    except Interrupted as stop:
        o = stop.outcome
        print(
            f"nicsim: interrupted: {o.skipped + o.ran} of {o.total} points are in {o.db}; "
            "the same command resumes the sweep",
            file=sys.stderr,
        )
        return 130
    print(f"{o.name}: {o.total} points, {o.ran} run now ({o.where}), {o.skipped} already in {o.db}, {len(o.failed)} failed")
    for index, error in o.failed:
        print(f"  point {index} failed: {error}", file=sys.stderr)
    return 1 if o.failed else 0


def _report(args) -> int:
    from nicsim.studies.report import write_report

    out = write_report(args.results, args.out)
    print(f"{out}: written")
    return 0


def _schema(args) -> int:
    from nicsim.files import write_whole

    text = _core.scenario_schema()
    if args.keys:
        import json

        from nicsim.keydoc import reference

        text = reference(json.loads(text))
    if not args.out:
        sys.stdout.write(text)
        return 0
    print(f"{write_whole(args.out, text)}: written")
    return 0


def _studies(args):
    """Run the studies named on the command line: the report's path and the
    results files, or None when interrupted (finished runs are kept)."""
    from nicsim.studies.reproduce import reproduce
    from nicsim.studies.study import study_roots
    from nicsim.sweeping.sweeps import Interrupted, progress_bar

    if args.all and args.names:
        raise _core.ScenarioError("give study names or --all, not both")
    if args.jobs is not None and args.jobs < 1:
        raise _core.ScenarioError(f"--jobs: must be at least 1, got {args.jobs}")
    _check_wait_workers(args)
    papers = Path(args.papers) if args.papers else study_roots()
    say = (lambda _: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    try:
        return reproduce(
            args.names,
            papers=papers,
            out=args.out,
            jobs=args.jobs,
            scheduler=args.scheduler,
            wait_workers=args.wait_workers,
            progress=None if args.quiet else progress_bar,
            say=say,
        )
    except Interrupted:
        print(f"nicsim: interrupted; finished runs are in {args.out}/, the same command resumes", file=sys.stderr)
        return None


def _reproduce(args) -> int:
    done = _studies(args)
    if done is None:
        return 130
    print(f"{done[0]}: written")
    return 0


def _validate(args) -> int:
    from nicsim.studies.document import load, write_validation
    from nicsim.studies.validate import as_json, records, text

    done = _studies(args)
    if done is None:
        return 130
    _, dbs = done
    found = records(dbs)
    moves = None
    if args.sensitivity:
        moves = _sensitivity(args, found)
        if moves is None:
            return 130
    if args.markdown:
        print(f"{write_validation(dbs, args.markdown, moves)}: written", file=sys.stderr)
    if args.json:
        from nicsim.studies.sensitivity import attach

        print(as_json(attach(found, moves) if moves is not None else found))
    else:
        titles = {Path(db).stem: load(db)[0].get("title", "") for db in dbs}
        print(text(found, titles))
        if moves:
            from nicsim.studies import sensitivity

            print("\n" + sensitivity.text(moves, titles))
    return 0


def _sensitivity(args, found: list) -> "list | None":
    """The moves of every calibrated parameter of the studies run; None if interrupted."""
    from nicsim.studies import sensitivity
    from nicsim.sweeping.execute import executor
    from nicsim.studies.study import find_studies, study_roots
    from nicsim.sweeping.sweeps import Interrupted, progress_bar

    papers = Path(args.papers) if args.papers else study_roots()
    studies = [s for s in find_studies(papers, list(args.names) or None) if s.spec.get("calibrated")]
    # The sensitivity runs are many: as many at once as jobs allow.
    jobs = args.jobs or os.cpu_count() or 1
    pool = executor(jobs, args.scheduler, jobs, args.wait_workers)
    moves: list = []
    try:
        for study in studies:
            base = [r for r in found if r["study"] == study.name]
            moves += sensitivity.run(study, base, Path(args.out), pool, None if args.quiet else progress_bar)
    except Interrupted:
        print(f"nicsim: interrupted; finished runs are in {args.out}/sensitivity/, the same command resumes", file=sys.stderr)
        return None
    finally:
        pool.close()
    return moves


def _export(args) -> int:
    from nicsim.sweeping.store import Store

    store = Store(args.results, read_only=True)
    try:
        out = store.export(args.out)
    finally:
        store.close()
    print(f"{out}: written")
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "check":
            check(args.scenario, overrides=args.set)
            print(f"{args.scenario}: ok")
            return 0
        commands = {"schema": _schema, "sweep": _sweep, "report": _report, "reproduce": _reproduce, "validate": _validate, "export": _export, "bench": benchcli.command, "pcie": pcie.command, "generate": generate.command}
        return commands[args.command](args)
    except _core.ScenarioError as e:
        print(f"nicsim: error: {e}", file=sys.stderr)
        return 2
    except _core.SimulationError as e:
        print(f"nicsim: internal failure: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        # A run says where it stopped ("interrupted at 1.2 ms of simulated time").
        print(f"nicsim: {e}" if str(e) else "nicsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`nicsim run ... | head`): stop quietly, and keep
        # Python from failing again when it flushes standard output at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
