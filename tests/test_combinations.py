"""Mechanisms of different host kinds combined in one scenario (issue 17): each
test runs a shipped scenario and checks the behaviour that makes it that
combination, and that every frame it put on the wire parses in dpkt."""

import dpkt

import nicsim

from frames import check_frame, read_pcap


def test_a_napi_host_with_moderation_sends_by_ttcp_to_an_offload_host(scenarios, tmp_path):
    pcap = tmp_path / "ttcp.pcap"
    r = nicsim.run(scenarios / "combinations" / "napi-host-ttcp.toml", pcap=str(pcap))
    sender, receiver = r.component("sender"), r.component("receiver")
    s, t = sender.metrics, receiver.metrics
    # The transfer: exactly the bytes asked for, the same stream at both ends.
    assert s["ttcp_bytes"] == t["ttcp_bytes"] == 2_000_000
    assert s["transfer_complete"] == t["transfer_complete"] == 1
    assert sender.text["ttcp_sha256"] == receiver.text["ttcp_sha256"]
    # One connection, nothing sent twice on a network that drops nothing.
    assert s["tcp_connections"] == 1 and s["tcp_retransmits"] == 0 and t["retransmits"] == 0
    # The sender's driver: each interrupt schedules a NAPI poll, which takes the
    # ACKs up the stack as deferred work.
    assert s["polls"] == s["interrupts"] > 0 and s["cpu0_deferred"] > 0
    # The receiver's TCP ran on its adapter's processor.
    assert t["adapter_cycles"] > 0 and t["design"] == 1
    frames = read_pcap(pcap)
    tcp = [buf for _, buf in frames if dpkt.ethernet.Ethernet(buf).type == dpkt.ethernet.ETH_TYPE_IP]
    assert len(tcp) > 1300 and all(check_frame(buf)["l4"] == "tcp" for buf in tcp)
