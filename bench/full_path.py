"""Simulation speed of the whole host path, every case of `nicsim bench --case`
in one run (its figures: docs/benchmarks.md).

    .venv/bin/python bench/full_path.py [--repeat N] [--json]
"""

import argparse
import json

from nicsim.bench.cases import CASES, measure, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the best is reported (default 3)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {case: measure(case, args.repeat) for case in CASES}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for f in out.values():
        print(f"{summary(f)}; {f['build']} build")


if __name__ == "__main__":
    main()
