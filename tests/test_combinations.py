"""Mechanisms of different host kinds combined in one scenario (issue 17): each
test runs a shipped scenario and checks the behaviour that makes it that
combination, and that every frame it put on the wire parses in dpkt."""

import dpkt
import pytest

import nicsim

from frames import check_frame, read_pcap
from snippets import KERNEL_COSTS
from transfers import transfer


def test_a_napi_host_with_moderation_sends_by_ttcp_to_an_offload_host(scenarios, tmp_path):
    pcap = tmp_path / "ttcp.pcap"
    r = nicsim.run(scenarios / "combinations" / "napi-host-ttcp.toml", pcap=str(pcap))
    s, t = transfer(r, "sender", "receiver", 2_000_000)
    # The sender's driver: each interrupt schedules a NAPI poll, which takes the
    # ACKs up the stack as deferred work.
    assert s["polls"] == s["interrupts"] > 0 and s["cpu0_deferred"] > 0
    # The receiver's TCP ran on its offload engine's processor: each data segment
    # cost it at least a received segment's 7,610 cycles.
    assert t["adapter_cycles_per_packet"] >= 7_610 and t["deliveries"] > 0
    frames = read_pcap(pcap)
    tcp = [buf for _, buf in frames if dpkt.ethernet.Ethernet(buf).type == dpkt.ethernet.ETH_TYPE_IP]
    assert len(tcp) > 1300 and all(check_frame(buf)["l4"] == "tcp" for buf in tcp)


def test_one_host_runs_its_tcp_on_an_offload_engine_beside_a_plain_adapter(scenarios, tmp_path):
    pcap = tmp_path / "toe.pcap"
    r = nicsim.run(scenarios / "combinations" / "toe-and-ring.toml", pcap=str(pcap), capture=["server-receiver"])
    s, t = transfer(r, "server", "receiver", 2_000_000)
    # The TCP ran on adapter 0's processor: every data segment it sent cost it
    # firmware cycles, and the host only exchanged messages with it.
    assert s["tcp_data_out"] > 1300 and s["adapter_cpu0_cycles"] > 11_000 * s["tcp_data_out"]
    assert s["host_messages"] >= 245 and s["completions"] == s["ttcp_messages"] == 245
    assert "adapter0_rx_frames" not in s, "the engine's frames never reach the host's rings"
    # Adapter 1 is a plain ring adapter with NAPI: the flood arrives through its
    # ring, polls take it, and the sink counts every frame.
    flood = r.metric("flood", "sent")
    assert s["adapter1_rx_frames"] == flood and s["sink_frames"] >= 0.999 * flood, "all but those still in the stack at the end"
    assert s["polls"] > 0 and s["adapter1_interrupts"] > 0
    frames = read_pcap(pcap)
    assert len(frames) > 2000 and all(check_frame(buf)["l4"] in ("tcp", None) for _, buf in frames)


@pytest.mark.parametrize(
    "sets, path, words",
    [
        ({"host[0].adapter[1].toe": {"queue_depth": 4}}, "host[0].adapter[1].toe", 'kind = "toe"'),
        ({"host[0].adapter[0].toe": {"queue_depth": 0}}, "host[0].adapter[0].toe.queue_depth", "1 to 4096"),
        ({"host[0].adapter[0].kind": "magic"}, "host[0].adapter[0].kind", "toe"),
        ({"host[0].adapter[1].programmable": {"clock": '"1GHz"', "memory_bandwidth": '"1Gbps"'}}, "host[0].adapter[1].programmable", 'kind = "programmable"'),
    ],
)
def test_bad_offload_engine_settings_are_named(scenarios, cli, sets, path, words):
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={nicsim_value(v)}")]
    p = cli("run", scenarios / "combinations" / "toe-and-ring.toml", *args)
    assert p.returncode == 2, p.stderr
    assert path in p.stderr and words in p.stderr, p.stderr


@pytest.mark.parametrize(
    "sets, path, words",
    [
        ({"host[0].adapter[0].kind": "ring"}, "host[0].adapter[0].programmable", "applies only"),
        ({"host[0].adapter[0].programmable.memory": 1000}, "host[0].adapter[0].programmable.memory", "must be"),
        ({"host[0].ttcp.to": "nobody"}, "host[0].ttcp.to", 'no other host or tap is named "nobody"'),
    ],
)
def test_bad_programmable_adapter_settings_are_named(scenarios, cli, sets, path, words):
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={nicsim_value(v)}")]
    p = cli("check", scenarios / "combinations" / "ring-and-programmable.toml", *args)
    assert p.returncode == 2, p.stderr
    assert path in p.stderr and words in p.stderr, p.stderr


def test_a_programmable_adapter_needs_its_table(scenarios):
    with pytest.raises(nicsim.ScenarioError) as e:
        nicsim.check(scenarios / "papers" / "hp2001" / "send.toml", overrides={"host[0].adapter[0].kind": "programmable"})
    assert "host[0].adapter[0].programmable" in str(e.value) and "required" in str(e.value)


def test_a_send_workload_needs_a_programmable_adapter(scenarios, cli):
    p = cli("check", scenarios / "combinations" / "napi-gro-tso.toml", "--set", 'host[0].send={kind = "dma", direction = "to-host"}')
    assert p.returncode == 2 and "host[0].send" in p.stderr and "programmable adapter" in p.stderr, p.stderr


def nicsim_value(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {x}" for k, x in v.items()) + "}"
    if isinstance(v, int):
        return str(v)
    return f'"{v}"'


def test_napi_hosts_with_segmentation_offload_and_gro_move_data_at_line_rate(scenarios, tmp_path):
    path = scenarios / "combinations" / "napi-gro-tso.toml"
    pcap = tmp_path / "gro.pcap"
    r = nicsim.run(path, pcap=str(pcap))
    s, t = transfer(r, "sender", "receiver", 20_000_000)
    assert t["tcp_out_of_order"] == 0
    assert t["tcp_goodput_mbps"] > 0.9 * 1000 * 1460 / 1538, "about the TCP ceiling of gigabit Ethernet"
    # NAPI at both ends: every interrupt schedules a poll.
    assert s["polls"] == s["interrupts"] > 0 and t["polls"] == t["interrupts"] > 0
    # GRO: the receiver's protocol passed runs of several segments at once. A
    # run ends where the next send's IPv4 IDs start again (smoltcp gives each
    # send ID 0, the adapter's segmentation counts on from it), as Linux's ends.
    assert t["gro_segments"] > 2 * t["gro_batches"] > 0
    # Without the stages, each end's processors pay per segment.
    plain = nicsim.run(path, overrides={"host[0].adapter[0].tso": False, "host[1].driver.gro": False})
    assert plain.metric("sender", "host_cpu_us_per_mb") > 1.2 * s["host_cpu_us_per_mb"], "TSO: one transmit cost per send"
    assert plain.metric("receiver", "host_cpu_us_per_mb") > 1.1 * t["host_cpu_us_per_mb"], "GRO: one protocol pass per run"
    frames = read_pcap(pcap)
    assert len(frames) > 13_000 and all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)
    # TSO is real: the stack hands over sends of up to 64 KB, one descriptor
    # each, which the adapter cuts into whole segments (a runt only where the
    # data queued ended), each valid in dpkt above. The sends are as large as
    # each ACK opens the window: with an ACK per GRO run, a few segments.
    assert s["bus_tx_status_transactions"] * 2 < s["tx_frames"], "several segments per descriptor"
    sizes = [len(dpkt.ethernet.Ethernet(buf).data.data.data) for _, buf in frames]
    data = [n for n in sizes if n > 0]
    assert sum(n == 1460 for n in data) > 0.99 * len(data)
    assert plain.metric("sender", "bus_tx_status_transactions") >= plain.metric("sender", "tx_frames"), "one descriptor a segment"


def test_gro_merges_each_connection_across_the_other_connections_segments(scenarios, tmp_path):
    path = scenarios / "combinations" / "gro-two-connections.toml"
    pcap = tmp_path / "two.pcap"
    r = nicsim.run(path, pcap=str(pcap))
    t = r.component("receiver").metrics
    for server in ("server1", "server2"):
        assert r.metric(server, "tcp_retransmits") == 0
        assert r.metric(server, "app_goodput_mbps") > 0.9 * 1000 * 1460 / 1538, "each server's gigabit port full"
    # Segments a merge takes go up ahead of the other connection's queued
    # between them, yet each connection's reach its stack in order.
    assert t["tcp_out_of_order"] == 0 and t["tcp_retransmits"] == 0
    # The switch interleaves the connections at the receiver's port: merging
    # only segments queued back to back gave 2.0 segments a pass in this run;
    # holding both merges gives about what one connection alone gets (5.5).
    assert t["gro_segments"] > 4 * t["gro_batches"] > 0
    plain = nicsim.run(path, overrides={"host[0].driver.gro": False})
    per_mbps = lambda run: run.metric("receiver", "cpu_utilization") / run.metric("receiver", "app_goodput_mbps")
    assert per_mbps(plain) > 1.2 * per_mbps(r), "GRO: one protocol pass per merge"
    frames = read_pcap(pcap)
    assert len(frames) > 40_000 and all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)


def test_a_gro_merge_spans_the_pieces_of_a_poll(scenarios):
    # The driver hands buffers back every 4 frames of a poll; Linux's GRO holds
    # its merges across those refills until the poll ends, so merges are as
    # long as with refills every 32 (before, each piece ended them: 2.1 a pass).
    path = scenarios / "combinations" / "gro-two-connections.toml"
    per_pass = {}
    for batch in (4, 32):
        t = nicsim.run(path, overrides={"host[0].driver.refill_batch": batch}).component("receiver").metrics
        assert t["tcp_out_of_order"] == 0 and t["tcp_retransmits"] == 0
        per_pass[batch] = t["gro_segments"] / t["gro_batches"]
    assert per_pass[4] > 4 and per_pass[4] > 0.9 * per_pass[32], per_pass


def test_one_host_drives_a_programmable_adapter_beside_a_ring_adapter(scenarios, tmp_path):
    pcap = tmp_path / "mixed.pcap"
    path = scenarios / "combinations" / "ring-and-programmable.toml"
    r = nicsim.run(path, pcap=str(pcap), capture=["server-receiver"], capture_limit=5000, overrides={"host[0].ttcp.bytes": 16 << 20})
    s = r.component("server").metrics
    # Port 0: the programmable adapter segments the stack's large sends straight
    # from host memory; of the payload only what the stack sent whole (a send of
    # a segment or less) passes through its memory.
    assert r.metric("receiver", "ttcp_bytes") == 16 << 20 and s["tcp_retransmits"] == 0
    assert r.component("server").text["ttcp_xxh128"] == r.component("receiver").text["ttcp_xxh128"]
    assert s["adapter0_adapter_memory_payload_bytes"] < 2000
    assert s["adapter0_tx_goodput_mbps"] > 7500, "slow start, then the wire's 9.49 Gb/s"
    # Port 1: the ring adapter takes the flood through NAPI; the host counts it.
    flood = r.metric("flood", "sent")
    assert s["adapter1_rx_frames"] == flood and s["sink_frames"] >= 0.999 * flood
    assert s["polls"] == s["interrupts"] == s["adapter1_interrupts"] > 0
    # The event ring is polled on processor 1, the ring adapter's work on processor 0.
    assert s["cpu1_poll"] > 0 and s["cpu0_interrupt"] > 0 and s["cpu1_interrupt"] == 0
    frames = read_pcap(pcap)
    assert len(frames) == 5000 and all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)


def test_a_host_runs_its_own_tcp_over_a_programmable_adapter(scenarios, tmp_path):
    pcap = tmp_path / "sop.pcap"
    r = nicsim.run(scenarios / "combinations" / "stack-over-programmable.toml", pcap=str(pcap))
    s, t = transfer(r, "sender", "receiver", 20_000_000)
    # Every segment came up through the adapter's firmware and event ring, one
    # to a host buffer, and the host's stack took each; its ACKs left through
    # the adapter's send ring.
    assert t["rx_delivered_frames"] >= t["tcp_data_in"] >= 13_000
    assert t["tx_frames"] >= t["tcp_acks_out"] > 6_000
    assert t["cpu1_poll"] > 0 and t["cpu1_utilization"] > 100 * t["cpu0_utilization"], "the event ring's poller did the host's work"
    assert t["tcp_goodput_mbps"] > 0.9 * 1000 * 1460 / 1538
    frames = read_pcap(pcap)
    assert all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)


@pytest.mark.parametrize("tso, timeout, merged", [(True, "20us", 0.2), (False, "100us", 0.7)])
def test_large_receive_offload_on_the_adapter_under_the_hosts_own_stack(scenarios, tso, timeout, merged):
    # The firmware merges in-order segments (LRO) before the host's stack sees
    # them. A merged segment carries more than one MSS, which the stack must ACK
    # at once: it used to start the 200 ms delayed-ACK timer, and each of the
    # transfer's first rounds waited for it (434 Mb/s). Without segmentation
    # offload the sender's smoltcp gives every segment IPv4 ID 0 (don't
    # fragment), which LRO takes as Linux's GRO does; it used to merge none.
    lro = {"host[0].adapter[0].tso": tso, "host[1].adapter[0].programmable.receive": {"lro_timeout": timeout}}
    r = nicsim.run(scenarios / "combinations" / "stack-over-programmable.toml", overrides=lro)
    s, t = transfer(r, "sender", "receiver", 20_000_000)
    # The stack counts the wire's segments in a merged one (its gso_size).
    assert t["rx_delivered_segments"] >= t["tcp_data_in"] >= 13_000
    assert t["rx_delivered_frames"] < (1 - merged) * t["rx_delivered_segments"], "segments were merged"
    assert t["tcp_goodput_mbps"] > 0.9 * 1000 * 1460 / 1538


def test_a_host_sends_its_own_tcp_through_a_programmable_adapter(scenarios, tmp_path):
    # The same hosts the other way: the host's stack hands the programmable
    # adapter sends of up to 64 KB through its send ring, and the firmware cuts
    # them into segments straight from host memory (direct segmentation).
    sets = {
        "host[0].ttcp": {"role": "receive", "message": 65536},
        "host[1].ttcp": {"role": "send", "message": 65536, "bytes": 20_000_000, "to": "sender", "start": "1ms"},
    }
    pcap = tmp_path / "direct.pcap"
    r = nicsim.run(scenarios / "combinations" / "stack-over-programmable.toml", overrides=sets, pcap=str(pcap))
    t, s = transfer(r, "receiver", "sender", 20_000_000)
    assert t["tx_frames"] >= t["tcp_data_out"] >= 13_000
    assert 0 < t["segmented_sends"] <= t["sends_completed"] < t["tx_frames"] / 2, "several segments per send"
    assert t["adapter_memory_payload_bytes"] < 20_000_000 / 1000, "only frames of one segment or less are staged in adapter memory"
    assert t["tcp_goodput_mbps"] > 0.9 * 1000 * 1460 / 1538
    assert all(check_frame(buf)["l4"] == "tcp" for _, buf in read_pcap(pcap)), "each segment's checksums verify"



@pytest.mark.parametrize(
    "scenario, key, value, words",
    [
        ("toe-and-ring.toml", "host[0].adapter[0].rx_ring", 64, "applies only to a ring adapter"),
        ("toe-and-ring.toml", "host[0].adapter[0].tso", True, "applies only to a ring adapter"),
        ("ring-and-programmable.toml", "host[0].adapter[0].rx_writeback", 8, "applies only to a ring adapter"),
        ("ring-and-programmable.toml", "host[0].adapter[0].interrupt", "coalesce", "interrupt is masked"),
        ("ring-and-programmable.toml", "host[0].adapter[0].irq_cpu", 1, "interrupt is masked"),
    ],
)
def test_keys_an_adapter_kind_has_no_use_for_are_refused(scenarios, scenario, key, value, words):
    with pytest.raises(nicsim.ScenarioError) as e:
        nicsim.check(scenarios / "combinations" / scenario, overrides={key: value})
    assert key in str(e.value) and words in str(e.value)


def test_an_offload_engine_takes_the_interrupt_moderation_of_a_ring_adapter(scenarios):
    sets = {"host[0].adapter[0].interrupt": "min-interval", "host[0].adapter[0].interrupt_interval": "10ms"}
    plain = nicsim.run(scenarios / "combinations" / "toe-and-ring.toml").component("server").metrics
    moderated = nicsim.run(scenarios / "combinations" / "toe-and-ring.toml", overrides=sets).component("server").metrics
    assert moderated["transfer_complete"] == 1
    # The engine's completions are signalled no more often than every 10 ms:
    # fewer interrupts for the same completions.
    assert moderated["completions"] == plain["completions"] == 245
    assert moderated["engine_interrupts"] < plain["engine_interrupts"]


def test_protocol_work_on_any_processor_sends_a_connection_in_order(scenarios):
    """Steps of the stack on four processors end in another order than they made
    their segments; a connection's segments still leave in the order made (69
    arrived out of order at the store, on a network that reorders nothing)."""
    sets = {"host[0].driver.deferred": "any", "host[0].cpus": 4, "host[0].driver.copy": True, "link[1].propagation": "5us"}
    r = nicsim.run(scenarios / "combinations" / "engines-and-stack.toml", overrides=sets)
    server, store = r.component("server").metrics, r.component("store").metrics
    assert server["ttcp_bytes"] == store["ttcp_bytes"] == 150_000
    assert store["tcp_out_of_order"] == 0 and server["tcp_retransmits"] == 0


GSO_HOST = """
name = "gso"
duration = "20ms"
[[host]]
name = "sender"
clock = "2GHz"
""" + KERNEL_COSTS + """[host.driver]
mode = "napi"
[host.bus]
kind = "pcie"
[[host.adapter]]              # port 0 segments: the stack makes large sends
tso = true
[[host.adapter]]              # port 1 does not: its driver cuts them (GSO)
[host.ttcp]
role = "send"
to = "receiver"
bytes = 2000000
message = 65536
[[host]]
name = "receiver"
ideal = true
[host.ttcp]
role = "receive"
message = 65536
[[sink]]
name = "nobody"
[[link]]
name = "to-nobody"
a = "sender:0"
b = "nobody"
rate = "10Gbps"
[[link]]
name = "to-receiver"
a = "sender:1"
b = "receiver"
rate = "10Gbps"
"""


def test_the_driver_cuts_large_sends_for_an_adapter_that_does_not_segment(tmp_path):
    path, pcap = tmp_path / "gso.toml", tmp_path / "gso.pcap"
    path.write_text(GSO_HOST)
    r = nicsim.run(path, pcap=str(pcap), capture=["to-receiver"])
    s, _ = transfer(r, "sender", "receiver", 2_000_000)
    frames = [dpkt.ethernet.Ethernet(buf) for _, buf in read_pcap(pcap)]
    data = [e for e in frames if isinstance(e.data, dpkt.ip.IP) and len(e.data.data.data) > 0]
    assert all(check_frame(buf)["l4"] == "tcp" for _, buf in read_pcap(pcap)), "every segment's checksums summed by the driver"
    assert len(data) >= 2_000_000 // 1460 and max(len(e.data.data.data) for e in data) == 1460, "no segment over the MSS"
    # One tx_frame a segment: the driver's cut frames are each handed to the adapter.
    assert s["tx_frames"] >= len(data)
