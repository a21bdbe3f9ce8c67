import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# A shell starts background jobs with Ctrl-C ignored, and children inherit that,
# so the tests that interrupt a run would see it carry on. A handler (unlike an
# ignore) does not survive exec: the programs the tests start get the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def nicsim_cmd():
    """The installed `nicsim` command next to this interpreter (what a user runs)."""
    exe = Path(sys.executable).parent / "nicsim"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nicsim.cli"]


def hp_designs():
    """The HP 2001 host's designs, label -> {key: value}, from its study."""
    from nicsim.points import group_sets

    return group_sets(str(SCENARIOS / "papers" / "hp2001" / "study.toml"), "send", "@design")


@pytest.fixture
def cli():
    def run(*args, cwd=None, timeout=None, env=None):
        return subprocess.run(nicsim_cmd() + [str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)

    return run


@pytest.fixture
def scenarios():
    return SCENARIOS
