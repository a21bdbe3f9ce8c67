"""`nicsim reproduce`: run every study under scenarios/papers/ and
scenarios/modern/ (or those named),
one results file each, and one report setting each prediction beside the
published figure or description.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

from nicsim.sweeping.execute import WAIT_WORKERS, executor
from nicsim.studies.report import write_report
from nicsim.sweeping.store import Store
from nicsim.studies.study import find_studies
from nicsim.sweeping.points import points
from nicsim.sweeping.sweeps import Outcome, run_sweep


def reproduce(
    names: Optional[Sequence[str]] = None,
    *,
    papers: "str | os.PathLike[str]",
    out: "str | os.PathLike[str]" = "results",
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    wait_workers: float = WAIT_WORKERS,
    progress: Optional[Callable[[str], Callable[[Outcome], None]]] = None,
    say: Callable[[str], None] = lambda _: None,
) -> tuple:
    """Run the studies; returns the report's path and the results files. Points
    already in a study's results file are not run again (rows from an edited
    scenario are replaced)."""
    studies = find_studies(papers, list(names) if names else None)
    out = Path(out)
    total = sum(len(points(sw["vary"], sw.get("mode", "grid"))) for s in studies for sw in s.sweeps)
    say(f"{len(studies)} studies, {total} runs, results in {out}/")
    pool = executor(jobs or os.cpu_count() or 1, scheduler, total, wait_workers)
    dbs = []
    try:
        for study in studies:
            start = time.perf_counter()
            db = out / f"{study.name}.duckdb"
            for sw in study.sweeps:
                run_sweep(
                    study.scenario(sw),
                    sw["vary"],
                    mode=sw.get("mode", "grid"),
                    db=db,
                    name=sw["name"],
                    restart="stale",
                    extra={"title": sw.get("title")},
                    progress=progress(f"{study.name}/{sw['name']}") if progress else None,
                    pool=pool,
                )
            store = Store(db)
            try:
                store.set_study(study.spec)
            finally:
                store.close()
            dbs.append(db)
            say(f"{study.name}: done in {time.perf_counter() - start:.1f} s")
    finally:
        pool.close()
    return write_report(dbs, out / "report.html", title="nicsim: the published experiments, reproduced"), dbs
