"""A run names what stopped making progress (issue 54): a TCP connection with
bytes waiting and nothing moved for longer than its retransmission timeout, in
its results, in the summary and in a warning line on stderr; the exit code is
unchanged unless `--strict` (3)."""

import json

TTCP = "combinations/napi-host-ttcp.toml"


def test_a_connection_whose_segments_all_vanish_is_named_and_strict_exits_3(cli, scenarios):
    lossy = ["--set", "link[0].loss=1.0"]
    plain = cli("run", scenarios / TTCP, "--json", *lossy)
    assert plain.returncode == 0, plain.stderr
    sender = next(c for c in json.loads(plain.stdout)["components"] if c["name"] == "sender")
    assert sender["metrics"]["tcp_stalled"] == 1
    assert sender["metrics"]["tcp_longest_stall_ms"] > 1900, "its SYN has waited since 10 ms"
    assert "198.18.0.1:40000 -> 198.18.0.2:5001 (SYN-SENT)" in sender["text"]["tcp_stalled_connections"]
    warnings = [line for line in plain.stderr.splitlines() if line.startswith("nicsim: warning:")]
    assert len(warnings) == 1 and "host sender: 1 TCP connection stalled" in warnings[0], plain.stderr
    strict = cli("run", scenarios / TTCP, "--strict", *lossy)
    assert strict.returncode == 3 and "stalled: host sender" in strict.stdout


def test_a_transfer_that_completes_reports_no_stall(cli, scenarios):
    done = cli("run", scenarios / TTCP, "--json", "--strict")
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    for c in json.loads(done.stdout)["components"]:
        assert c["metrics"].get("tcp_stalled", 0) == 0 and c["metrics"].get("rx_ring_stalled", 0) == 0


def test_the_longest_wait_is_reported_where_the_run_ends_well(cli, scenarios):
    """The receiver (NT 4's stack on the offload engine) delays its ACKs by up
    to 200 ms: the sender's longest wait with nothing acknowledged is about
    that, and well short of the 1 s retransmission timeout, so no stall."""
    r = cli("run", scenarios / TTCP, "--json")
    sender = next(c for c in json.loads(r.stdout)["components"] if c["name"] == "sender")
    assert sender["metrics"]["tcp_stalled"] == 0
    assert 150 < sender["metrics"]["tcp_longest_stall_ms"] < 250
