"""Same scenario, same seed: identical results and identical pcap bytes."""

import json

import pytest


def run_twice(cli, scenario, tmp_path, *extra, suffix="pcap"):
    outs = []
    for i in range(2):
        pcap = tmp_path / f"run{i}.{suffix}"
        r = cli("run", scenario, "--json", "--pcap", pcap, *extra)
        assert r.returncode == 0, r.stderr
        outs.append((json.loads(r.stdout), pcap.read_bytes()))
    return outs


@pytest.mark.parametrize("suffix", ["pcap", "pcapng"])
def test_same_seed_same_results_and_bytes(cli, scenarios, tmp_path, suffix):
    (a, pa), (b, pb) = run_twice(cli, scenarios / "switched-udp.toml", tmp_path, suffix=suffix)
    assert a == b
    assert pa == pb
    assert len(pa) > 100_000


def test_another_seed_changes_the_random_parts(cli, scenarios, tmp_path):
    (a, pa), _ = run_twice(cli, scenarios / "switched-udp.toml", tmp_path)
    (c, pc), _ = run_twice(cli, scenarios / "switched-udp.toml", tmp_path / ".." / tmp_path.name, "--seed", "99")
    assert c["seed"] == 99
    assert pa != pc
    assert a["components"] != c["components"]
