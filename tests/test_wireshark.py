"""Captures read by Wireshark's own dissectors (tshark), a second independent
implementation beside dpkt: every checksum good, nothing malformed, and on
networks that lose nothing, TCP streams without a retransmission, a segment out
of order, a lost segment or a duplicate ACK. One link is captured at a time:
Wireshark's TCP analysis does not keep links apart."""

import shutil
import subprocess

import pytest

from frames import read_pcap

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (apt-get install tshark): Wireshark's dissectors check the captures")

CHECKSUMS = ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]
# Wireshark's checksum status: 0 bad, 1 good.
BAD = "_ws.malformed or ip.checksum.status == 0 or tcp.checksum.status == 0 or udp.checksum.status == 0"
TCP_TROUBLE = (
    "tcp.analysis.retransmission or tcp.analysis.fast_retransmission or tcp.analysis.spurious_retransmission"
    " or tcp.analysis.out_of_order or tcp.analysis.lost_segment or tcp.analysis.ack_lost_segment"
    " or tcp.analysis.duplicate_ack"
)

# (scenario, link): TCP through every kind of host and adapter, and UDP over IPv4 and IPv6.
CASES = [
    ("papers/ibm2001/server.toml", "server-switch"),
    ("papers/hp2001/send.toml", "wire"),
    ("papers/hp2001/receive.toml", "wire"),
    ("combinations/napi-gro-tso.toml", "wire"),
    ("combinations/toe-file-server.toml", "server-link"),
    ("combinations/hosts-serve-hosts.toml", "client-link"),
    ("switched-udp.toml", "sw-server"),
]


def count(pcap, display_filter):
    r = subprocess.run([TSHARK, "-r", str(pcap), *CHECKSUMS, "-Y", display_filter, "-T", "fields", "-e", "frame.number"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return len(r.stdout.split())


@pytest.mark.parametrize("scenario,link", CASES)
def test_wireshark_finds_every_checksum_good_and_no_tcp_trouble(cli, scenarios, tmp_path, scenario, link):
    pcap = tmp_path / "one.pcap"
    r = cli("run", scenarios / scenario, "--capture", link, "--pcap", pcap)
    assert r.returncode == 0, r.stderr
    frames = len(read_pcap(pcap))
    assert frames > 100
    assert count(pcap, "tcp.checksum.status == 1 or udp.checksum.status == 1") > frames // 2, "Wireshark verified the checksums"
    assert count(pcap, "ip.checksum.status == 1") == count(pcap, "ip"), "every IPv4 header's"
    assert count(pcap, BAD) == 0
    assert count(pcap, TCP_TROUBLE) == 0


def test_the_check_sees_a_frame_spoilt_on_purpose(cli, scenarios, tmp_path):
    pcap = tmp_path / "one.pcap"
    cli("run", scenarios / "papers/hp2001/send.toml", "--capture", "wire", "--pcap", pcap)
    data = bytearray(pcap.read_bytes())
    # The last byte of the first record longer than a bare ACK: TCP payload.
    at = 24
    while int.from_bytes(data[at + 8 : at + 12], "little") < 100:
        at += 16 + int.from_bytes(data[at + 8 : at + 12], "little")
    at += 16 + int.from_bytes(data[at + 8 : at + 12], "little") - 1
    data[at] ^= 0xFF
    spoilt = tmp_path / "spoilt.pcap"
    spoilt.write_bytes(bytes(data))
    assert count(spoilt, BAD) == 1


def test_the_check_sees_tcp_recover_from_a_lossy_link(cli, scenarios, tmp_path):
    pcap = tmp_path / "lossy.pcap"
    r = cli("run", scenarios / "papers/hp2001/send.toml", "--capture", "wire", "--pcap", pcap, "--set", "link[0].loss=0.01")
    assert r.returncode == 0, r.stderr
    assert count(pcap, TCP_TROUBLE) > 0
    assert count(pcap, BAD) == 0


def test_wireshark_reads_a_pcapng_capture_link_by_link(cli, scenarios, tmp_path):
    ng = tmp_path / "all.pcapng"
    assert cli("run", scenarios / "switched-udp.toml", "--pcap", ng).returncode == 0
    for link in ("alice-sw", "bob-sw", "sw-server"):
        one = tmp_path / f"{link}.pcap"
        cli("run", scenarios / "switched-udp.toml", "--capture", link, "--pcap", one)
        assert count(ng, f'frame.interface_name == "{link}"') == len(read_pcap(one))
    outbound = count(ng, 'frame.interface_name == "sw-server" and frame.packet_flags_direction == 2')
    assert outbound == count(ng, 'frame.interface_name == "sw-server"') > 0
