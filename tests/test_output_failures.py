"""An output file that cannot be written (the disk full) stops the run at once:
exit 74, the file and the operating system's words named, the partial file
removed, and the results so far still printed."""

import json
import os
import subprocess

import pytest

import nicsim

from conftest import nicsim_cmd

FLOOD = os.path.join(os.path.dirname(__file__), "..", "bench", "10g-rx-poll.toml")


@pytest.fixture
def full_disk(tmp_path):
    """A 1 MB tmpfs, mounted for the test and unmounted after it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    small = tmp_path / "small"
    small.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(small)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield small
    finally:
        subprocess.run(["umount", str(small)], check=True)


@pytest.mark.parametrize("option, name", [("--pcap", "out.pcap"), ("--pcap", "out.pcapng"), ("--trace", "timeline.json")])
def test_a_full_disk_stops_the_run_and_keeps_its_results(full_disk, option, name):
    out = full_disk / name
    cmd = nicsim_cmd() + ["run", FLOOD, "--set", "duration=200ms", option, str(out), "--json", "--quiet"]
    if option == "--trace":
        cmd += ["--trace-limit", "100000000"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 74, r.stderr
    assert f"cannot write {out}: No space left on device" in r.stderr, r.stderr
    result = json.loads(r.stdout)
    assert 0 < result["simulated_ps"] < 20e9, "stopped at once, long before the 200 ms it was asked for"
    assert result["components"], "the results so far"
    assert list(full_disk.iterdir()) == [], "no partial file left behind"


def test_the_api_raises_output_error_with_the_results_so_far(full_disk):
    with pytest.raises(nicsim.OutputError, match="No space left on device") as e:
        nicsim.run(FLOOD, pcap=full_disk / "out.pcap", overrides={"duration": "200ms"})
    assert e.value.result.metric("wire", "a_to_b_frames") > 0
    assert list(full_disk.iterdir()) == []
