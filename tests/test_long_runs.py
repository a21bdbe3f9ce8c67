"""A long run as a user meets it: a progress bar of simulated time on a terminal,
and Ctrl-C that stops it at once, writing nothing."""

import io
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import nicsim_cmd

from nicsim import _core
from nicsim.runs.progress import SHOW_AFTER, run_bar

FLOOD = Path(__file__).resolve().parent.parent / "bench" / "10g-rx-poll.toml"


def test_progress_is_told_in_simulated_time_and_changes_nothing():
    calls = []
    sets = ['duration="50ms"']
    watched = _core.run_file(str(FLOOD), sets=sets, progress=lambda *a: calls.append(a), progress_every=0.01)
    plain = _core.run_file(str(FLOOD), sets=sets)
    assert len(calls) >= 2, "a run of about 0.2 s told every 10 ms"
    simulated = [c[0] for c in calls]
    assert simulated == sorted(simulated) and 0 < simulated[-1] <= 0.05
    assert all(c[1] == 0.05 for c in calls), "the scenario's duration comes with each call"
    assert [c[2] for c in calls] == sorted(c[2] for c in calls), "events so far"
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k != "nicsim_version"}
    assert strip(watched) == strip(plain)


def test_the_bar_shows_only_once_a_run_has_taken_a_second():
    out = io.StringIO()
    tell, close = run_bar(out)
    tell(0.1, 2.0, 1000, SHOW_AFTER / 2)
    assert out.getvalue() == "", "a short run shows nothing"
    tell(0.5, 2.0, 5000, SHOW_AFTER + 0.5)
    tell(1.0, 2.0, 9000, SHOW_AFTER + 1.5)
    shown = out.getvalue()
    assert "simulated:  50%" in shown and "1.000 of 2.000 s" in shown, shown
    close()
    out = io.StringIO()
    tell, close = run_bar(out)
    tell(3.25, None, 9000, SHOW_AFTER + 1)
    assert "simulated: 3.250 s" in out.getvalue(), "without a duration, how far it has got"
    close()


def test_ctrl_c_stops_a_long_run_at_once_and_writes_nothing(tmp_path):
    pcap = tmp_path / "out.pcap"
    # 30 simulated seconds of a 10 GbE flood would take minutes.
    cmd = nicsim_cmd() + ["run", str(FLOOD), "--set", "duration=30s", "--pcap", str(pcap)]
    # Signals a shell's background job ignores are restored to their defaults.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, restore_signals=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(2.0)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert time.monotonic() - sent < 5, "it stops within a fraction of a second, not at the end"
    assert "interrupted at" in err and "of simulated time" in err, err
    assert out == ""
    assert list(tmp_path.iterdir()) == [], "no capture, not even a partial one"


def test_ctrl_c_inside_the_progress_bar_still_stops_the_run(tmp_path):
    """Python raises a Ctrl-C in whatever Python code runs when it lands: while
    the progress bar drew, the KeyboardInterrupt was printed and dropped, and
    the run went on to its end (3 of 15 tries on a terminal). Raised inside the
    bar's callback, it now stops the run, which writes nothing."""

    told = []

    def tell(*progress):
        told.append(progress)
        raise KeyboardInterrupt

    pcap = tmp_path / "out.pcap"
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt, match="interrupted at"):
        _core.run_file(str(FLOOD), pcap=str(pcap), sets=["duration=5s"], progress=tell, progress_every=0.05)
    # The run looks for a stop every tenth of a second; it reports every twentieth.
    assert time.monotonic() - start < 3 and len(told) <= 3, "stopped at once, not at the end"
    assert list(tmp_path.iterdir()) == [], "no capture, not even a partial one"


def test_quiet_is_an_option_of_run(cli):
    r = cli("run", FLOOD, "--set", "duration=1ms", "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
