import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# A shell starts background jobs with Ctrl-C ignored, and children inherit that,
# so the tests that interrupt a run would see it carry on. A handler (unlike an
# ignore) does not survive exec: the programs the tests start get the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"

# The most temporary disk the suite takes at once: its largest test's files
# (a capture of some 160 MB), each test's removed when it ends.
NEEDS_FREE = 1 << 30


def pytest_sessionstart(session):
    """Said before the tests start (even with -q), when the temporary folder
    has less room than the suite takes."""
    where = Path(session.config.option.basetemp or tempfile.gettempdir())
    while not where.exists():
        where = where.parent
    free = shutil.disk_usage(where).free
    if free < NEEDS_FREE:
        say = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"nicsim: only {free / 2**20:.0f} MB free in {where}; the suite needs about 1 GB of temporary disk"
        say.write_line(message) if say else print(message, file=sys.stderr)


@pytest.fixture(autouse=True)
def _remove_test_files(request):
    """Each test's temporary files go when it ends: captures of hundreds of MB
    would otherwise pile up to gigabytes over the suite."""
    yield
    path = request.node.funcargs.get("tmp_path")
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def nicsim_cmd():
    """The installed `nicsim` command next to this interpreter (what a user runs)."""
    exe = Path(sys.executable).parent / "nicsim"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nicsim.cli"]


def hp_designs():
    """The HP 2001 host's designs, label -> {key: value}, from its study."""
    from nicsim.sweeping.points import group_sets

    return group_sets(str(SCENARIOS / "papers" / "hp2001" / "study.toml"), "send", "@design")


@pytest.fixture
def cli():
    def run(*args, cwd=None, timeout=None, env=None):
        return subprocess.run(nicsim_cmd() + [str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)

    return run


@pytest.fixture
def scenarios():
    return SCENARIOS
