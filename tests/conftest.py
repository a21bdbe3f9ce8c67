import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def nicsim_cmd():
    """The installed `nicsim` command next to this interpreter (what a user runs)."""
    exe = Path(sys.executable).parent / "nicsim"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nicsim.cli"]


@pytest.fixture
def cli():
    def run(*args, cwd=None):
        return subprocess.run(nicsim_cmd() + [str(a) for a in args], capture_output=True, text=True, cwd=cwd)

    return run


@pytest.fixture
def scenarios():
    return SCENARIOS
