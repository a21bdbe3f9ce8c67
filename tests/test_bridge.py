"""The real-wire bridge: a simulated host talks TCP, ARP and ICMP with real Linux
through a TAP device in a network namespace that each test makes and removes.
Real sockets check the bytes (XXH128 at both ends), the kernel's own counters
check the bridge's, and dpkt checks every frame the model wrote to Linux.

These tests need root (network namespaces and TAP devices); where the machine
refuses either, they are skipped with the reason."""

import json
import signal
import subprocess
import sys
import time

import dpkt
import pytest

from nicsim.bridge.netns import Refused, TestHost
from nicsim.sweeping.points import toml_value

from conftest import SCENARIOS, hp_designs, nicsim_cmd
from frames import check_frame, read_pcap

SEND = "bridge/send.toml"
RECEIVE = "bridge/receive.toml"
SIM_IP = "198.18.0.1"
LINUX_IP = "198.18.0.2"
TEN_MB = 10_000_000
# The HP 2001 host's three designs, as its study defines them (the settings of
# each `@design` group); and a NAPI host with moderation and its own stack, as
# it is and with its adapter's segmentation offload, batched write-back of
# in-order data and GRO in its driver.
DESIGNS = {label: [f"{k}={toml_value(v)}" for k, v in sets.items()] for label, sets in hp_designs().items()}
DESIGNS["napi"] = []
DESIGNS["napi-tso-gro"] = [
    "host[0].adapter[0].tso=true",
    "host[0].adapter[0].rx_writeback=8",
    "host[0].adapter[0].rx_writeback_delay='20us'",
    "host[0].adapter[0].rx_writeback_data_only=true",
    "host[0].driver.gro=true",
    "link[0].rate='1 Gb/s'",
]
NAPI = ("napi", "napi-tso-gro")
SENDERS = [(SEND, d) for d in DESIGNS if d not in NAPI] + [("bridge/host-send.toml", d) for d in NAPI]
RECEIVERS = [(RECEIVE, d) for d in DESIGNS if d not in NAPI] + [("bridge/host-receive.toml", d) for d in NAPI]


def namespace_host(**kw):
    """A namespace with a TAP device, removed after the test whatever happens."""
    try:
        with TestHost(**kw) as h:
            yield h
    except Refused as e:
        pytest.skip(f"this machine refuses the bridge's test hosts: {e}")


@pytest.fixture
def host():
    yield from namespace_host()


@pytest.fixture
def jumbo_host():
    yield from namespace_host(mtu=9000)


def realpeer(*args):
    """The real side's program (server, client or fuzzer), to run in the namespace."""
    return [sys.executable, "-m", "nicsim.bridge.realpeer", *args]


def echo(host, count, wait):
    """Ping the simulated host from the namespace (a raw socket: no ping program needed)."""
    out = host.run(*realpeer("ping", "--to", SIM_IP, "--count", str(count), "--wait", str(wait)))
    return json.loads(out.stdout)


def start_bridge(host, scenario, *sets, pcap=None):
    cmd = nicsim_cmd() + ["run", str(scenario), "--json"]
    for s in sets:
        cmd += ["--set", s]
    if pcap:
        cmd += ["--pcap", str(pcap)]
    return host.start_bridged(*cmd)


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out), err


def metrics(result, name):
    return next(c for c in result["components"] if c["name"] == name)


@pytest.mark.parametrize("scenario,design", SENDERS)
def test_simulated_host_sends_ten_megabytes_to_a_real_linux_server(host, scenarios, scenario, design, tmp_path):
    server = host.popen(*realpeer("server", "--bind", LINUX_IP, "--port", "5001"), stdout=subprocess.PIPE, text=True)
    try:
        assert json.loads(server.stdout.readline()) == {"listening": 5001}
        pcap = tmp_path / "send.pcap"
        sets = DESIGNS.get(design, []) + ["tap[0].idle='0.5 s'"]
        bridge = start_bridge(host, scenarios / scenario, *sets, pcap=pcap)
        got = json.loads(server.communicate(timeout=120)[0])
    finally:
        server.kill()
    result, _ = finish(bridge)
    sim = metrics(result, "sim")
    assert got["bytes"] == sim["metrics"]["ttcp_bytes"] == TEN_MB, "exactly the bytes asked for, though not a multiple of 8 KB"
    assert got["xxh128"] == sim["text"]["ttcp_xxh128"], "Linux received exactly the simulated sender's stream"
    assert sim["metrics"]["transfer_complete"] == 1
    assert result["pacing"]["ended_by"] == "idle"
    tap = metrics(result, "linux")["metrics"]
    assert tap["to_linux_failed"] == 0 and tap["from_linux_good"] == tap["from_linux_frames"]
    if design == "full-offload":
        assert sim["metrics"]["mean_segment_bytes"] > 1400, "the adapter's TCP cut the 8 KB messages into segments"
        assert sim["metrics"]["adapter_cycles_per_packet"] > 10_000, "on the offload engine's processor"
    # Every frame the model handed Linux parses and verifies in dpkt too.
    frames = read_pcap(pcap)
    kinds = {check_frame(buf)["l4"] for _, buf in frames if dpkt.ethernet.Ethernet(buf).type == dpkt.ethernet.ETH_TYPE_IP}
    assert kinds == {"tcp"} and len(frames) == tap["to_linux_frames"] + tap["from_linux_frames"]


@pytest.mark.parametrize("scenario,design", RECEIVERS)
def test_real_linux_client_sends_ten_megabytes_to_a_simulated_server(host, scenarios, scenario, design):
    sets = DESIGNS.get(design, []) + ["tap[0].idle='0.5 s'"]
    bridge = start_bridge(host, scenarios / scenario, *sets)
    try:
        sent = json.loads(host.run(*realpeer("client", "--to", SIM_IP, "--bytes", str(TEN_MB)), timeout=120).stdout)
    finally:
        result, _ = finish(bridge)
    sim = metrics(result, "sim")
    assert sim["metrics"]["ttcp_bytes"] == sent["bytes"] == TEN_MB
    assert sim["text"]["ttcp_xxh128"] == sent["xxh128"], "the simulated server received exactly what Linux sent"
    assert sim["metrics"]["transfer_complete"] == 1
    if design == "napi-tso-gro":
        m = sim["metrics"]
        assert m["gro_segments"] > m["gro_batches"] > 0, "Linux's segments went up the simulated stack merged"


def test_ping_and_arp_are_answered_by_the_simulated_host(host, scenarios):
    bridge = start_bridge(host, scenarios / RECEIVE, "duration='2 s'")
    ping = echo(host, 3, wait=2)
    neighbour = host.run("ip", "neigh", "show", SIM_IP).stdout
    result, _ = finish(bridge)
    assert ping["answered"] == 3, ping
    assert "lladdr 02:00:00:00:00:01" in neighbour, "Linux learned the simulated host's MAC by ARP"
    assert result["pacing"]["ended_by"] == "duration"
    tap = metrics(result, "linux")["metrics"]
    assert tap["from_linux_good"] >= 4 and tap["to_linux_frames"] >= 4  # ARP and 3 echoes each way


def test_ten_thousand_hostile_frames_are_all_accounted_for(jumbo_host, scenarios):
    """Random and mutated frames, up to 9000-byte ones (the namespace's MTU is raised
    so that Linux sends giants), pass through the kernel into the bridge. Every frame
    the kernel handed over is in exactly one class, what passed reached the link,
    and the simulated host still answers ping afterwards."""
    host = jumbo_host
    before = host.statistics()
    bridge = start_bridge(host, scenarios / RECEIVE, "duration='5 s'")
    fuzz = json.loads(host.run(*realpeer("fuzz", "--device", host.device, "--frames", "10000"), timeout=120).stdout)
    ping = echo(host, 2, wait=3)
    result, _ = finish(bridge)
    after = host.statistics()
    handed = after["tx_packets"] - before["tx_packets"]
    tap = metrics(result, "linux")["metrics"]
    wire = metrics(result, "wire")["metrics"]
    assert fuzz["sent"] == 10_000
    # The kernel's frames: the fuzz's, plus its own ARP and pings; none dropped unread.
    assert after["tx_dropped"] == before["tx_dropped"]
    assert 10_000 < handed <= 10_000 + 10
    assert tap["from_linux_frames"] == handed
    classes = ["from_linux_dropped_runt", "from_linux_dropped_oversized", "from_linux_truncated", "from_linux_malformed", "from_linux_unknown_protocol", "from_linux_good"]
    assert sum(tap[c] for c in classes) == tap["from_linux_frames"]
    assert tap["from_linux_passed"] == tap["from_linux_frames"] - tap["from_linux_dropped_runt"] - tap["from_linux_dropped_oversized"]
    for c in classes[1:]:
        assert tap[c] > 100, f"the fuzz reached the {c} class"
    assert wire["b_to_a_frames"] + wire["b_to_a_drops"] == tap["from_linux_passed"], "what passed went onto the link"
    assert ping["answered"] == 2, "the simulated host survived and still answers"
    assert result["pacing"]["ended_by"] == "duration"


def test_ctrl_c_ends_a_bridged_run_and_keeps_its_results(host, scenarios):
    # A long idle limit, so that a slow (loaded) machine cannot end the run first.
    bridge = start_bridge(host, scenarios / RECEIVE, "tap[0].idle='30 s'")
    echo(host, 1, wait=2)
    time.sleep(0.3)
    bridge.send_signal(signal.SIGINT)
    result, _ = finish(bridge, timeout=10)
    assert result["pacing"]["ended_by"] == "interrupted"
    assert metrics(result, "linux")["metrics"]["from_linux_frames"] >= 2


def test_a_device_that_is_not_a_tap_is_a_clear_input_error(host, scenarios, tmp_path):
    pcap = tmp_path / "never.pcap"
    cmd = nicsim_cmd() + ["run", str(scenarios / RECEIVE), "--set", "tap[0].device='lo'", "--pcap", str(pcap)]
    done = host.run(*cmd)
    assert done.returncode == 2
    assert 'tap "linux": cannot open TAP device "lo"' in done.stderr
    assert not pcap.exists(), "nothing half-written"


@pytest.mark.parametrize(
    "change, path, words",
    [
        (("device = \"nicsim0\"", "device = \"a-name-too-long-for-linux\""), "tap[0].device", "1 to 15 bytes"),
        (("device = \"nicsim0\"", "device = \"../x\""), "tap[0].device", "without '/'"),
        (("device = \"nicsim0\"", "device = \"nicsim0\"\nidle = \"0 s\""), "tap[0].idle", "must be positive"),
        (("device = \"nicsim0\"", "device = \"nicsim0\"\nspeed = 1"), "tap[0].speed", "unknown field"),
        # The misspelt end is the cause, reported before the tap it leaves unconnected.
        (("a = \"sim\"\nb = \"linux\"", "a = \"sim\"\nb = \"other\""), "link[0].b", "no source, sink, host, tap or switch is named \"other\""),
    ],
)
def test_bad_tap_settings_name_the_key_without_privileges(cli, scenarios, tmp_path, change, path, words):
    """Checked before any device is opened: exit 2, the key named, nothing written."""
    text = (scenarios / RECEIVE).read_text()
    assert change[0] in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(change[0], change[1]))
    pcap = tmp_path / "never.pcap"
    done = cli("run", bad, "--pcap", pcap)
    assert done.returncode == 2, done.stderr
    assert path in done.stderr and words in done.stderr, done.stderr
    assert not pcap.exists()


def test_a_sender_may_name_a_tap_as_its_receiver_but_not_a_stranger(cli, scenarios, tmp_path):
    text = (scenarios / SEND).read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('to = "linux"', 'to = "nobody"'))
    done = cli("check", bad)
    assert done.returncode == 2 and "host[0].ttcp.to: no other host or tap is named \"nobody\"" in done.stderr
    assert cli("check", scenarios / SEND).returncode == 0


def test_one_host_with_a_programmable_and_a_ring_adapter_talks_tcp_to_real_linux():
    """NAPI, moderation and GRO on a ring adapter taking a flood, and the host's
    own TCP over a programmable adapter's event ring, to a real Linux socket."""
    for host in namespace_host(address="198.18.0.3/24"):
        bridge = start_bridge(host, SCENARIOS / "bridge" / "mixed-receive.toml", "tap[0].idle='0.5 s'")
        try:
            sent = json.loads(host.run(*realpeer("client", "--to", "198.18.0.2", "--bytes", str(TEN_MB)), timeout=120).stdout)
        finally:
            result, _ = finish(bridge)
        m = metrics(result, "sim")
        assert m["metrics"]["ttcp_bytes"] == sent["bytes"] == TEN_MB
        assert m["text"]["ttcp_xxh128"] == sent["xxh128"], "the simulated server received exactly what Linux sent"
        s = m["metrics"]
        assert s["adapter0_rx_delivered_frames"] >= TEN_MB // 1460, "every segment came up the programmable adapter's event ring"
        assert s["adapter1_rx_frames"] == 2000 and s["sink_frames"] == 2000, "the ring adapter took the whole flood"
        assert s["polls"] > 0 and s["cpu1_poll"] > 0


def test_one_host_sends_through_a_programmable_adapter_that_segments_its_stacks_sends(tmp_path):
    """The flagship combination: NAPI, moderation and GRO on a ring adapter taking
    a flood, and the host's own smoltcp TCP handing sends of up to 64 KB to a
    programmable adapter that cuts them from host memory (direct segmentation), to
    a real Linux socket: XXH128 equal at both ends, every frame valid in dpkt."""
    for host in namespace_host(address="198.18.0.3/24"):
        server = host.popen(*realpeer("server", "--bind", "198.18.0.3", "--port", "5001"), stdout=subprocess.PIPE, text=True)
        try:
            assert json.loads(server.stdout.readline()) == {"listening": 5001}
            pcap = tmp_path / "mixed.pcap"
            bridge = start_bridge(host, SCENARIOS / "bridge" / "mixed-send.toml", "tap[0].idle='0.5 s'", pcap=pcap)
            got = json.loads(server.communicate(timeout=120)[0])
        finally:
            server.kill()
        result, _ = finish(bridge)
        m = metrics(result, "sim")
        assert got["bytes"] == m["metrics"]["ttcp_bytes"] == TEN_MB
        assert got["xxh128"] == m["text"]["ttcp_xxh128"], "Linux received exactly the simulated sender's stream"
        s = m["metrics"]
        assert s["adapter0_segmented_sends"] > 0, "the adapter cut the stack's large sends"
        assert s["adapter0_tx_frames"] > TEN_MB // 1460 > s["adapter0_sends_completed"], "fewer sends than segments"
        assert s["adapter1_rx_frames"] == 2000 and s["sink_frames"] == 2000, "the ring adapter took the whole flood"
        assert s["polls"] > 0 and s["tcp_retransmits"] == 0
        tap = metrics(result, "linux")["metrics"]
        assert tap["to_linux_failed"] == 0 and tap["from_linux_good"] == tap["from_linux_frames"]
        segments = [check_frame(buf) for _, buf in read_pcap(pcap) if dpkt.ethernet.Ethernet(buf).type == dpkt.ethernet.ETH_TYPE_IP]
        assert len(segments) > TEN_MB // 1460, "every segment the adapter cut parses and verifies in dpkt"
