"""Issue 20's benchmarks: `nicsim generate two-tier` and the scale benchmark built
on it (a generated network runs, every stream crosses the core, hosts past the
255th talk like the rest, bad sizes are refused before anything is written), and
`nicsim bench --compare-peers`."""

import json

import nicsim


def test_a_generated_network_of_520_hosts_carries_every_stream(cli, tmp_path):
    path = tmp_path / "net.toml"
    r = cli("generate", "two-tier", "--hosts", "520", "--duration", "2ms", "-o", str(path))
    assert r.returncode == 0, r.stderr
    result = nicsim.run(path)
    hosts = [c for c in result.components if c.kind == "host"]
    switches = {c.name: c.metrics for c in result.components if c.kind == "switch"}
    assert len(hosts) == 520 and len(switches) == 1 + 13, "40 hosts an edge, and the core"
    # Receivers are the second half; numbers past 255 are in the same subnet.
    received = [h.metrics.get("ttcp_bytes", 0) for h in hosts[260:]]
    assert min(received) > 10_000, "every stream moved data"
    assert switches["core"]["received"] > 260 * 10, "all of it through the core"


def test_bad_sizes_are_refused_and_nothing_is_written(cli, tmp_path):
    out = tmp_path / "net.toml"
    for hosts in ("3", "0", "200000"):
        r = cli("generate", "two-tier", "--hosts", hosts, "-o", str(out))
        assert r.returncode == 2 and "--hosts" in r.stderr and not out.exists(), r.stderr
    r = cli("generate", "two-tier", "--hosts", "4", "--per-edge", "0", "-o", str(out))
    assert r.returncode == 2 and "--per-edge" in r.stderr and not out.exists()
    # A value the model refuses is blamed on its option, not on a key of a file
    # the user never wrote, and no scenario is written.
    for option, value in [("--rate", "0Gbps"), ("--uplink", "-1Gbps"), ("--duration", "soon"), ("--seed", "-1")]:
        r = cli("generate", "two-tier", "--hosts", "4", f"{option}={value}", "-o", str(out))
        assert r.returncode == 2 and f"nicsim: error: {option}: " in r.stderr and not out.exists(), r.stderr
    r = cli("generate", "two-tier", "--hosts", "4", "--traffic", "udp", "--source-rate", "20Gbps", "-o", str(out))
    assert r.returncode == 2 and "--source-rate: " in r.stderr and "above its link" in r.stderr and not out.exists()
    # An output that cannot be written is an input error, not a traceback.
    (tmp_path / "file").write_text("")
    r = cli("generate", "two-tier", "--hosts", "4", "-o", str(tmp_path / "file" / "net.toml"))
    assert r.returncode == 2 and "cannot write" in r.stderr, r.stderr


def test_the_scale_bench_reports_each_size_in_its_own_process(cli):
    r = cli("bench", "--case", "scale", "--hosts", "2,20", "--duration", "2ms", "--json")
    assert r.returncode == 0, r.stderr
    small, large = json.loads(r.stdout)
    assert (small["hosts"], large["hosts"]) == (2, 20)
    assert large["frames"] > small["frames"] > 0
    for f in (small, large):
        assert f["wall_ns_per_frame"] > 0 and f["events_per_frame"] > 1 and f["peak_memory_mb"] > 10
    r = cli("bench", "--case", "scale", "--hosts", "5")
    assert r.returncode == 2 and "--hosts" in r.stderr
    # A duration the generated networks cannot have, or none to measure a rate over.
    for duration in ("xyz", "0ms", "0.0s"):
        r = cli("bench", "--case", "scale", "--hosts", "2,4", "--duration", duration)
        assert r.returncode == 2 and r.stderr.startswith("nicsim: error: --duration: "), r.stderr


def test_compare_peers_runs_each_baseline_or_says_why_not(tmp_path):
    import os
    import subprocess
    import sys

    from conftest import nicsim_cmd

    # Stand-ins for the peer scripts and their modules: each prints its figure as the real one does.
    (tmp_path / "ns3_p2p.py").write_text("print('ns3 sim_s=0.005 received=1 wall_s=1 pkts_per_wall_s=200000')\n")
    # SimPy's stand-in counts its runs and gets faster each time.
    (tmp_path / "simpy_link.py").write_text(
        "import pathlib\n"
        "p = pathlib.Path(__file__).with_name('runs')\n"
        "n = int(p.read_text()) if p.exists() else 0\n"
        "p.write_text(str(n + 1))\n"
        "print(f'simpy frames=1 wall_s=1 frames_per_wall_s={100000 + 50000 * n}')\n"
    )
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "simpy.py").write_text("")
    env = {**os.environ, "PYTHONPATH": str(mods)}
    args = ["bench", "--frames", "20000", "--repeat", "1", "--compare-peers", "--peers", str(tmp_path), "--peers-python", sys.executable, "--json"]
    r = subprocess.run(nicsim_cmd() + args, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    f = json.loads(r.stdout)
    peers = {p["peer"]: p for p in f["peers"]}
    assert "no module 'ns'" in peers["ns-3"]["skipped"], "no ns3 module: skipped, saying why"
    assert peers["SimPy"]["frames_per_second"] == 100_000
    assert peers["SimPy"]["nicsim_ratio"] == f["frames_per_second"] / 100_000
    # A peer is measured as often as nicsim (--repeat), and its best run counts.
    r = subprocess.run(nicsim_cmd() + [a if a != "1" else "2" for a in args], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    simpy = next(p for p in json.loads(r.stdout)["peers"] if p["peer"] == "SimPy")
    assert (simpy["frames_per_second"], simpy["runs"]) == (200_000, 2), "runs 2 and 3 of the stand-in: 150,000 and 200,000"
    r = subprocess.run(nicsim_cmd() + ["bench", "--compare-peers", "--peers", str(mods)], capture_output=True, text=True)
    assert r.returncode == 2 and "--peers: no peer scripts" in r.stderr
    r = subprocess.run(nicsim_cmd() + ["bench", "--case", "full-path", "--compare-peers"], capture_output=True, text=True)
    assert r.returncode == 2 and "--compare-peers" in r.stderr


def test_sinks_that_announce_themselves_are_not_flooded(cli, tmp_path):
    # UDP sources to sinks: silent sinks leave every switch flooding every frame.
    figures = {}
    for announce in (True, False):
        path = tmp_path / f"udp-{announce}.toml"
        args = ["generate", "two-tier", "--hosts", "200", "--traffic", "udp", "--duration", "4ms", "-o", path]
        assert cli(*args, *([] if announce else ["--no-announce"])).returncode == 0
        r = nicsim.run(path)
        sinks = [c.metrics for c in r.components if c.kind == "sink"]
        switches = [c.metrics for c in r.components if c.kind == "switch"]
        sent = sum(c.metrics["sent"] for c in r.components if c.kind == "source")
        figures[announce] = (sent, sinks, sum(s["flooded"] for s in switches), sum(s["drops"] for s in switches))
    sent, sinks, flooded, drops = figures[True]
    assert all(s["arp_frames"] > 0 for s in sinks), "each sink hears the others' announcements"
    assert flooded == 100 * 6 and drops == 0, "only the 100 broadcasts flood, at each of the 6 switches"
    assert 0.95 * sent <= sum(s["frames"] for s in sinks) <= sent and all(s["lost"] == 0 for s in sinks)
    assert sum(s["foreign_frames"] for s in sinks) == 0, "no sink is sent another's frames"
    _, silent, flooded_silent, _ = figures[False]
    assert flooded_silent > 10 * flooded, "without them every frame floods"
    foreign = sum(s["foreign_frames"] for s in silent)
    assert foreign > 2 * sent and sum(s["frames"] for s in silent) <= sent, "a sink drops frames for other stations, as a NIC does"


def test_more_stations_than_addresses_is_refused(cli, tmp_path):
    # Stations are numbered in 16 bits; the 65,536th would reuse an address.
    lines = ['duration = "1ms"'] + [f'[[sink]]\nname = "s{i}"' for i in range(65_536)]
    lines.append('[[link]]\nname = "l"\na = "s0"\nb = "s1"\nrate = "1Gbps"')
    path = tmp_path / "many.toml"
    path.write_text("\n".join(lines))
    r = cli("check", path)
    assert r.returncode == 2 and "sink[65535]: is station 65,536" in r.stderr, r.stderr


def test_each_network_size_counts_its_fastest_run_and_the_sizes_take_turns(monkeypatch):
    from nicsim.bench import scale as benchscale

    walls = iter([5.0, 9.0, 3.0, 12.0, 4.0, 10.0])
    order = []

    def fake(hosts, duration, folder):
        order.append(hosts)
        return {"hosts": hosts, "wall_seconds": next(walls)}

    monkeypatch.setattr(benchscale, "one", fake)
    seen = []
    small, large = benchscale.measure([10, 1000], "1ms", repeat=3, each=lambda i, f: seen.append(i))
    assert order == [10, 1000] * 3, "every size once, then again"
    assert (small["wall_seconds"], large["wall_seconds"]) == (3.0, 9.0) and small["runs"] == large["runs"] == 3
    assert seen == [1, 1, 2, 2, 3, 3]


def test_the_goals_are_measured_in_one_run_beside_their_targets(cli, tmp_path):
    r = cli("bench", "--case", "goals", "--hosts", "2,20", "--duration", "2ms", "--repeat", "1", "--frames", "20000", "--peers", tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    g = json.loads(r.stdout)
    link, tcp, ibm, napi, ibm_counted, napi_counted, growth, memory = g["goals"]
    # No peer scripts in that folder: each ns-3 comparison says why it is missing.
    assert link["figure"] is None and "no peer scripts" in link["skipped"] and link["nicsim_frames_per_second"] > 0
    assert tcp["figure"] is None and "no peer scripts" in tcp["skipped"] and tcp["target"] == 20
    assert tcp["nicsim_packets_per_second"] > 100_000, "a second of 10 Gb/s TCP is some 800,000 data packets"
    assert ibm["target"] == 2e6 and ibm["ratio"] == ibm["figure"] / 2e6 == g["cases"]["full-path"]["frames_per_second"] / 2e6
    assert round(napi["target"]) == 14_880_952 and napi["figure"] == g["cases"]["10g-napi"]["frames_per_second"]
    # Instructions are counted only when asked for; the rows say how.
    for row, budget in ((ibm_counted, 7000), (napi_counted, 1300)):
        assert row["figure"] is None and row["target"] == budget and "--instructions" in row["skipped"]
    small, large = g["cases"]["scale"]
    assert (small["hosts"], large["hosts"]) == (2, 20)
    assert growth["figure"] == large["wall_ns_per_frame"] / small["wall_ns_per_frame"] and growth["ratio"] == 2 / growth["figure"]
    assert memory["figure"] == large["peak_memory_mb_per_host"] * 1024 and memory["ratio"] is None
    # The machine is named with the figures.
    assert g["machine"] == g["cases"]["full-path"]["machine"] == g["cases"]["10g-napi"]["machine"] and "processors" in g["machine"]
    for hosts in ("5,10", "10"):
        r = cli("bench", "--case", "goals", "--hosts", hosts)
        assert r.returncode == 2 and "--hosts" in r.stderr, r.stderr
