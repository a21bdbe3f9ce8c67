"""File reads over NCP in packet-burst mode (IPX), the NetWare clients' protocol:
one request, the whole block in a burst of unacknowledged packets, the missing
part asked for again after a timeout; frames read by dpkt and by Wireshark."""

import shutil
import subprocess

import pytest

import nicsim

from frames import check_frame, read_pcap
from snippets import CHEAP_COSTS

CONGESTED = (
    """
name = "ncp-through-a-congested-switch"
duration = "2s"

[[host]]
name = "server"
clock = "1GHz"
"""
    + CHEAP_COSTS
    + """[host.bus]
kind = "pci"
width = 64
clock = "66MHz"
[[host.adapter]]
ADAPTER
[host.file_serve]
transport = "ncp"
read_bytes = 16384
REQUEST

[[host]]
name = "client"
ideal = true
[host.file_read]
from = "server"

[[switch]]
name = "switch"
ports = 2
queue_frames = 4

[[link]]
name = "uplink"
a = "server"
b = "switch:0"
rate = "1Gbps"

[[link]]
name = "client-link"
a = "client"
b = "switch:1"
rate = "10Mbps"
"""
)


def scenario(tmp_path, adapter="", request=""):
    f = tmp_path / "ncp.toml"
    f.write_text(CONGESTED.replace("ADAPTER", adapter).replace("REQUEST", request))
    return f


def test_a_burst_the_switch_cuts_short_is_asked_for_again_and_every_byte_read_is_right(tmp_path):
    """Bursts at 1 Gb/s into a 10 Mb/s port behind four frames of queue: the switch
    drops most of each, the client asks again for the rest 100 ms later, and
    each block still arrives whole and right."""
    pcap = tmp_path / "ncp.pcap"
    r = nicsim.run(scenario(tmp_path), pcap=pcap, capture=["client-link"])
    client, server = r.component("client").metrics, r.component("server").metrics
    assert r.component("switch").metrics["drops"] > 50
    assert client["answers_read"] >= 5 and client["ncp_bad_payload"] == 0
    assert server["requests_answered"] > 2 * client["answers_read"], "each block took several requests"
    assert client["mean_answer_us"] >= 100_000, "at least one retry time a block"
    kinds = [check_frame(buf) for _, buf in read_pcap(pcap)]
    assert kinds and all(k["l4"] == "ipx" and k["packet_type"] == 17 for k in kinds)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark): Wireshark's NCP dissector checks the capture")
def test_wireshark_reads_the_requests_and_the_bursts(cli, scenarios, tmp_path):
    pcap = tmp_path / "novell.pcap"
    p = cli("run", scenarios / "papers/novell1995/server.toml", "--capture", "server-seg0-uplink", "--pcap", pcap, "--set", 'duration="60ms"', "--set", 'host[0].warmup="0ms"')
    assert p.returncode == 0, p.stderr

    def count(display_filter):
        r = subprocess.run(["tshark", "-r", str(pcap), "-Y", display_filter, "-T", "fields", "-e", "frame.number"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return len(r.stdout.split())

    frames = len(read_pcap(pcap))
    assert frames > 100 and count("ncp") == frames
    assert count("_ws.malformed or _ws.expert.severity >= warning") == 0
    reads = count('ncp.burst_command == 0x01000000 and ncp.burst_len == 65536')
    assert reads >= 3 and count("ncp.system_flags.eob == 1 and ncp.src_connection") >= 2 * reads - 3


@pytest.mark.parametrize(
    "adapter, serve, path, words",
    [
        ("", "request_bytes = 8", "host[0].file_serve.request_bytes", "24 bytes of command"),
        ("", "request_bytes = 2000", "host[0].file_serve.request_bytes", "one packet"),
        ('kind = "toe"', "", "host[0].adapter[0]", "carries TCP alone"),
    ],
)
def test_bad_ncp_settings_are_named(cli, tmp_path, adapter, serve, path, words):
    p = cli("check", scenario(tmp_path, adapter, serve))
    assert p.returncode == 2, p.stderr
    assert path in p.stderr and words in p.stderr, p.stderr
