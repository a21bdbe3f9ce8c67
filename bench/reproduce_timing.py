"""Wall time of `nicsim reproduce NAME` end to end (checks, a local Dask pool, DuckDB, report)."""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAPERS = Path(__file__).resolve().parent.parent / "scenarios" / "papers"


def time_reproduce(name: str) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        cmd = [sys.executable, "-m", "nicsim.cli", "reproduce", name, "--out", out, "--quiet", "--papers", str(PAPERS)]
        subprocess.run(cmd, check=True, capture_output=True)
        return time.perf_counter() - start
