"""The command line as a user meets it."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import nicsim


def test_help_documents_commands_and_options(cli):
    top = cli("--help")
    assert top.returncode == 0
    for word in ("run", "check", "bench", "exit codes"):
        assert word in top.stdout
    run = cli("run", "--help")
    for word in ("--pcap", "--json", "--seed", "--capture", "SCENARIO.toml"):
        assert word in run.stdout


def test_table_and_json_agree(cli, scenarios):
    table = cli("run", scenarios / "wire-efficiency.toml")
    assert table.returncode == 0, table.stderr
    assert "952.0202" in table.stdout and "sink rx-792" in table.stdout
    data = json.loads(cli("run", scenarios / "wire-efficiency.toml", "--json").stdout)
    rx = next(c for c in data["components"] if c["name"] == "rx-792")
    assert abs(rx["metrics"]["goodput_mbps"] - 952.0202) < 0.01


def test_identifiers_print_without_separators(cli, scenarios):
    path = scenarios / "combinations" / "ideal-host-ttcp.toml"
    table = cli("run", path)
    assert table.returncode == 0, table.stderr
    digest = int(json.loads(cli("run", path, "--json").stdout)["components"][0]["metrics"]["ttcp_digest48"])
    assert digest > 1000 and f" {digest}\n" in table.stdout, "a digest is one number, not 1,234,567"
    assert f"{digest:,}" not in table.stdout


def test_python_api(scenarios):
    r = nicsim.run(scenarios / "wire-efficiency.toml")
    assert abs(r.metric("tcp-receiver", "app_goodput_mbps") - 949.28) < 0.05
    assert abs(r.metric("rx-64", "frame_rate_pps") / 1e6 - 14.88) < 0.005
    for row, table in [("rx-792", 952.0202), ("rx-1048", 963.7405), ("rx-1536", 975.2604), ("rx-9096", 995.8223)]:
        assert abs(r.metric(row, "goodput_mbps") - table) < 0.01


def test_check_command(cli, scenarios):
    r = cli("check", scenarios / "switched-udp.toml")
    assert r.returncode == 0 and "ok" in r.stdout


def test_bench_reports_rates(cli):
    r = cli("bench", "--frames", "20000", "--repeat", "1", "--json")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["frames"] == 20000
    # A wake-up of the source per 32 frames: the link and the sink take each
    # frame when it is sent, without an event.
    assert figures["events"] == 20000 // 32
    assert figures["frames_per_second"] > 0
    # Which build made the figures (tools/build-pgo's builds name themselves), and
    # on which machine: wall times compare only on one.
    assert figures["build"] in ("release", "release, profile-guided", "debug")
    assert figures["machine"].endswith(f", {len(os.sched_getaffinity(0))} processors") and len(figures["machine"]) > 14
    r = cli("bench", "--frames", "20000", "--repeat", "1")
    assert r.returncode == 0 and r.stdout.strip().endswith(f"{figures['build']} build on {figures['machine']}"), r.stdout
    # A value the flood's scenario refuses is blamed on the option it came from.
    for option, value in (("--rate", "fast"), ("--frame-size", "10")):
        r = cli("bench", option, value, "--repeat", "1")
        assert r.returncode == 2 and r.stderr.startswith(f"nicsim: error: {option}: "), r.stderr


def test_version_names_the_build(cli):
    r = cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"nicsim {nicsim._core.__version__} ({nicsim._core.build_kind()} build)"
    assert nicsim._core.build_kind() in ("release", "release, profile-guided", "debug")


def test_build_pgo_refuses_without_the_setup_it_rebuilds(tmp_path):
    tool = Path(__file__).resolve().parent.parent / "tools" / "build-pgo"
    (tmp_path / "tools").mkdir()
    shutil.copy(tool, tmp_path / "tools")
    r = subprocess.run([str(tmp_path / "tools" / "build-pgo")], capture_output=True, text=True)
    assert r.returncode == 2 and "set up first with the README's command" in r.stderr, r.stderr


def test_bench_times_the_whole_host_path(cli):
    r = cli("bench", "--case", "full-path", "--repeat", "1", "--json")
    assert r.returncode == 0, r.stderr
    f = json.loads(r.stdout)
    # The IBM server at 700 MHz with eight clients: every frame it took or sent.
    assert f["host_frames"] > 100_000 and 3 < f["events_per_frame"] < 10
    assert f["frames_per_second"] > 0 and f["wall_seconds_per_simulated_second"] > 0 and f["peak_memory_mb"] > 0
    r = cli("bench", "--case", "nosuch")
    assert r.returncode == 2 and all(c in r.stderr for c in ("full-path", "scale", "goals")), r.stderr


def test_pcie_prints_dma_bandwidth_mixes_and_read_latency(cli):
    r = cli("pcie", "--size", "64,256,4096", "--json")
    assert r.returncode == 0, r.stderr
    rows = {x["size"]: x for x in json.loads(r.stdout)}
    # Gen3 x8, MPS 256: a 256-byte write is one TLP of 24 bytes' overhead, and
    # the host answers with DLLPs on the other direction.
    link = 8e9 * 8 * 128 / 130 / 8  # bytes a second after 128b/130b
    # SKP ordered sets under 128b/130b: a 16-symbol block every 375 blocks.
    assert rows[256]["write_gbps"] == pytest.approx(256 * 8 * link / (280 * 6016 / 6000) / 1e9, rel=1e-9)
    assert rows[64]["write_gbps"] < rows[256]["write_gbps"] <= rows[4096]["write_gbps"] + 0.01
    assert all(x["mix_gbps"] > max(x["write_gbps"], x["read_gbps"]) for x in rows.values()), "a mix uses both directions"
    assert 500 < rows[64]["read_latency_ns"] < rows[4096]["read_latency_ns"]
    crossing = json.loads(cli("pcie", "--size", "256", "--offset", "8", "--json").stdout)[0]
    assert crossing["write_gbps"] < rows[256]["write_gbps"], "crossing an MPS boundary costs a second TLP"
    wider = json.loads(cli("pcie", "--gen", "4", "--lanes", "16", "--size", "4096", "--json").stdout)[0]
    assert wider["write_gbps"] == pytest.approx(4 * rows[4096]["write_gbps"], rel=1e-6), "twice the rate, twice the lanes"
    table = cli("pcie", "--size", "1518")
    assert table.returncode == 0 and "| 1518 |" in table.stdout
    for bad, words in [
        (["--mps", "100"], "--mps: must be a power of two"),
        (["--gen", "7"], "--gen: must be 1 to 5"),
        (["--size", "64,x"], "--size: must be whole numbers"),
        (["--size", "0"], "--size: each size must be from 1 byte"),
        (["--read-latency", "fast"], "--read-latency: must be a time"),
        (["--read-share", "2"], "--read-share: must be from 0 to 1"),
    ]:
        r = cli("pcie", *bad)
        assert r.returncode == 2 and f"nicsim: error: {words}" in r.stderr and not r.stdout, (bad, r.stderr)


def test_the_readme_python_example_runs_as_a_script(tmp_path):
    """Saved to a file and run with python, as a user would: a parallel sweep must
    not re-run the script in worker processes."""
    import re
    import shutil
    import subprocess
    import sys

    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "scenarios").mkdir()
    shutil.copy(ROOT / "scenarios" / "wire-efficiency.toml", tmp_path / "scenarios")
    script = tmp_path / "example.py"
    script.write_text(code + "\nprint(len(runs), 'runs')\n")
    for how in ([sys.executable, str(script)], [sys.executable, "-"]):
        shutil.rmtree(tmp_path / "results", ignore_errors=True)
        r = subprocess.run(how, cwd=tmp_path, capture_output=True, text=True, timeout=300, input=script.read_text())
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.strip().endswith("3 runs") and (tmp_path / "eff.pcap").stat().st_size > 1000


def test_a_closed_pipe_ends_the_output_quietly(cli, tmp_path):
    import subprocess

    from conftest import nicsim_cmd

    # A report larger than a pipe's buffer, so writing it meets the closed pipe.
    net = tmp_path / "net.toml"
    assert cli("generate", "two-tier", "--hosts", "100", "--duration", "1ms", "-o", net).returncode == 0
    cmd = " ".join(nicsim_cmd() + ["run", str(net)]) + " | head -1"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    assert r.stdout.startswith("scenario two-tier-100") and "Traceback" not in r.stderr, r.stderr
