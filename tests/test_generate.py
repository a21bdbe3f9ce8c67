"""`nicsim generate two-tier` and the scale benchmark built on it (issue 20): a
generated network runs, every stream crosses the core, hosts past the 255th
talk like the rest, and bad sizes are refused before anything is written."""

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
