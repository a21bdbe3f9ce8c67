"""TCP offload (Ang, HPL-2001-8, the HP 2001 study): a real TCP carries the bytes
intact under loss and reordering, on the host's stack and on its offload engine;
the capture replays as a consistent TCP stream; the three designs of the HP
study (each a group of adapter and driver settings, as its study.toml defines
them) differ as their costs say; and the i960 calibration point holds."""

import json

import dpkt
import pytest
import xxhash

import nicsim

from conftest import hp_designs
from frames import check_frame, read_pcap

SEND = "papers/hp2001/send.toml"
RECEIVE = "papers/hp2001/receive.toml"
DESIGNS = hp_designs()


def run(scenarios, path, design="full-offload", pcap=None, **sets):
    r = nicsim.run(scenarios / path, overrides={**DESIGNS[design], **sets}, pcap=pcap)
    return r.component("sut"), r.component("normal"), r.component("wire").metrics


@pytest.mark.parametrize("design", list(DESIGNS))
@pytest.mark.parametrize("impairment", [{"link[0].loss": 0.01}, {"link[0].reorder": 0.03}])
def test_ten_megabytes_arrive_complete_and_in_order_despite_loss_or_reordering(scenarios, design, impairment):
    sut, normal, wire = run(scenarios, SEND, design, **{"host[0].ttcp.bytes": 10_000_000, **impairment})
    s, n = sut.metrics, normal.metrics
    assert s["ttcp_bytes"] == n["ttcp_bytes"] == 10_000_000
    assert n["transfer_complete"] == 1 and s["transfer_complete"] == 1
    assert normal.text["ttcp_xxh128"] == sut.text["ttcp_xxh128"], "the receiver's digest equals the sender's"
    if "link[0].loss" in impairment:
        assert wire["impaired_dropped"] > 50
        assert s["tcp_retransmits"] > 0, "losses are repaired by retransmission, and counted"
    else:
        assert wire["impaired_reordered"] > 100


def tcp_frames(path):
    out = []
    for ts, buf in read_pcap(path):
        found = check_frame(buf)
        eth = dpkt.ethernet.Ethernet(buf)
        if found["l4"] == "tcp":
            out.append((float(ts), eth.data.src, eth.data.data))
        else:
            assert isinstance(eth.data, dpkt.arp.ARP), "only TCP and ARP on this wire"
    return out


@pytest.mark.parametrize("design", list(DESIGNS))
def test_the_capture_replays_as_a_consistent_tcp_stream(scenarios, tmp_path, design):
    pcap = tmp_path / "ttcp.pcap"
    sut, normal, _ = run(scenarios, SEND, design, pcap=pcap, **{"host[0].ttcp.bytes": 300_000})
    frames = tcp_frames(pcap)
    sender_ip = frames[0][1]
    data, acks = [f[2] for f in frames if f[1] == sender_ip], [f[2] for f in frames if f[1] != sender_ip]
    syn = next(t for t in data if t.flags & dpkt.tcp.TH_SYN)
    assert sum(1 for t in data if t.flags & dpkt.tcp.TH_SYN) == 1 and any(t.flags & dpkt.tcp.TH_FIN for t in data)
    stream, sent_end = {}, syn.seq + 1
    ack_seen = []
    for t in data:
        if t.data:
            off = (t.seq - syn.seq - 1) % 2**32
            stream.setdefault(off, t.data)
            sent_end = max(sent_end, t.seq + len(t.data))
    for t in acks:
        if t.flags & dpkt.tcp.TH_ACK and not t.flags & dpkt.tcp.TH_SYN:
            ack_seen.append(t.ack)
    assert ack_seen == sorted(ack_seen), "the receiver's ACK numbers never go back"
    assert max(ack_seen) <= sent_end + 1, "nothing is acknowledged before it was sent (+1 for the FIN)"
    joined, at = b"", 0
    for off in sorted(stream):
        assert off == at, f"a hole in the stream at {at}"
        joined += stream[off]
        at += len(stream[off])
    assert len(joined) == sut.metrics["ttcp_bytes"]
    assert xxhash.xxh3_128_hexdigest(joined) == sut.text["ttcp_xxh128"] == normal.text["ttcp_xxh128"]


def test_the_stack_answers_before_the_application_works(scenarios, tmp_path):
    """A host stack's reply to a segment (the handshake's last ACK, the data an
    ACK lets go) leaves when its protocol work ends, not after the application's
    reads and writes, and a TTCP end makes one call a step: a sender of 1-byte
    messages fills its 8,760-byte socket buffer one call at a time (about 58 ms
    at 300 MHz), and its ACK of the SYN-ACK used to wait for all of that."""
    pcap = tmp_path / "one-byte.pcap"
    sut, _, _ = run(scenarios, SEND, "host-stack", pcap=pcap, **{"host[0].ttcp.message": 1, "host[1].ttcp.message": 1, "host[0].ttcp.bytes": 20_000})
    frames = tcp_frames(pcap)
    first = next(t for _, src, t in frames if src == frames[0][1] and t.data)
    assert len(first.data) == 1, "one call a step: Nagle's rule sends the first byte alone"
    m = sut.metrics
    assert m["tcp_goodput_mbps"] < 1.02 * 20_000 * 8 / m["host_cpu_seconds"] / 1e6, "no faster than its processor writes"
    sender = frames[0][1]
    syn_ack = next(ts for ts, src, t in frames if src != sender and t.flags & dpkt.tcp.TH_SYN)
    ack = next(ts for ts, src, t in frames if src == sender and ts > syn_ack)
    assert ack - syn_ack < 1e-3, f"the handshake's ACK left {1e3 * (ack - syn_ack):.1f} ms after the SYN-ACK"
    # Each ACK from the receiver that opens the window lets the next data go at once.
    waits = []
    for i, (ts, src, t) in enumerate(frames):
        if src != sender and not t.data and not t.flags & (dpkt.tcp.TH_SYN | dpkt.tcp.TH_FIN):
            nxt = next((f for f in frames[i + 1 :] if f[1] == sender and f[2].data), None)
            if nxt:
                waits.append(nxt[0] - ts)
    assert waits and min(waits) < 1e-3, f"data an ACK let go waited {[round(w * 1e3, 1) for w in waits]} ms"


def test_send_calls_reach_the_engine_in_the_order_they_were_made(scenarios):
    """A completion's interrupt that splits a send call must not let the next
    call overtake it: with 1,460-byte messages and four outstanding, calls and
    completions interleave, and before 2026-11-27 two messages reached the
    engine the wrong way round (the receiver's digest differed)."""
    sets = {"host[0].adapter[0].toe.queue_depth": 4, "host[0].ttcp.message": 1460, "host[0].ttcp.bytes": 2_000_000}
    sut, normal, _ = run(scenarios, SEND, **sets)
    assert sut.metrics["ttcp_bytes"] == normal.metrics["ttcp_bytes"] == 2_000_000
    assert sut.text["ttcp_xxh128"] == normal.text["ttcp_xxh128"], "the receiver read the stream the sender wrote"


@pytest.mark.parametrize("start", ["0ms", "1us", "10us"])
def test_a_sender_that_starts_with_the_run_finds_the_engine_listening(scenarios, start):
    """The offload engine's listening socket is open when the run starts, as a
    host stack's is: before 2026-11-27 the listen reached the engine over the bus
    about 100 us in, a SYN sent at 0 met a closed port, and the transfer moved
    11,244 of 2,000,000 bytes in 2 s."""
    r = nicsim.run(scenarios / "combinations/napi-host-ttcp.toml", overrides={"host[0].ttcp.start": start})
    got = r.component("receiver").metrics
    assert got["ttcp_bytes"] == 2_000_000 and got["transfer_complete"] == 1
    assert r.component("sender").metrics["tcp_retransmits"] == 0, "the first SYN was answered"


def test_the_i960_calibration_point_holds(scenarios):
    sut, normal, _ = run(scenarios, SEND)
    assert sut.metrics["adapter_cycles_per_packet"] == pytest.approx(17_000, rel=0.02), "about 17,000 cycles per full-size packet"
    assert normal.metrics["acks_per_data_packet"] == pytest.approx(0.5, abs=0.01), "the normal receiver ACKs every second segment"


def test_the_engine_receives_at_wire_speed_and_sends_slower_as_its_costs_say(scenarios):
    """A received segment costs 7,610 cycles with an ACK per 8 KB, a sent one 17,000
    with an ACK per two: 100 MHz keeps up with the wire one way and not the other."""
    sut, _, _ = run(scenarios, RECEIVE, **{"host[1].ttcp.bytes": 16 << 20})
    m = sut.metrics
    assert m["ttcp_bytes"] == 16 << 20
    assert m["tcp_sustained_line_fraction"] > 0.98, "the receive keeps the wire full once under way"
    assert m["tcp_line_fraction"] < m["tcp_sustained_line_fraction"] - 0.1, "slow start's waits for the delayed ACK count in the whole run"
    assert m["acks_per_data_packet"] == pytest.approx(1460 / 8192, abs=0.01), "one ACK per 8 KB handed to the host"
    sut, _, _ = run(scenarios, SEND, **{"host[0].ttcp.bytes": 4 << 20})
    ceiling = 100e6 / sut.metrics["adapter_cycles_per_packet"] * 1538 * 8 / 100e6
    # The ceiling is from the whole run's cycles a packet; slow start's ACKs make
    # the early packets dearer than the sustained half's.
    assert 0.85 * ceiling < sut.metrics["tcp_sustained_line_fraction"] <= 1.02 * ceiling, "sending is bound by the firmware's cycles"


def test_a_run_without_a_duration_ends_with_its_transfer_not_after_time_wait(scenarios):
    """The host's stack needs no timer once its connections are closed: TIME-WAIT
    (10 s in smoltcp) stretched this 1 s run to 10.9 s, and the receiving
    application's goodput over it to 2.9 Mb/s."""
    r = nicsim.run(scenarios / RECEIVE)
    assert r.simulated_seconds < 2
    assert r.component("normal").metrics["transfer_complete"] == 1
    assert r.component("normal").metrics["app_goodput_mbps"] > 25


def test_a_bulk_receive_at_the_nts_buffer_size_is_held_to_its_window(scenarios):
    """With 8,760-byte buffers and an ACK only per 8 KB handed up, the sender waits
    on each window update: the window, not the engine, sets the rate."""
    sets = {"host[1].ttcp.bytes": 8 << 20, "host[0].tcp.rx_buffer": 8760, "host[1].tcp.tx_buffer": 8760}
    sut, _, _ = run(scenarios, RECEIVE, **sets)
    assert 0.5 < sut.metrics["tcp_sustained_line_fraction"] < 0.8


def test_nagle_on_the_adapter_aggregates_one_byte_messages(scenarios):
    sut, _, _ = run(scenarios, SEND, **{"host[0].ttcp.message": 1, "host[0].ttcp.bytes": 20_000})
    assert sut.metrics["mean_segment_bytes"] > 200, "many messages per packet"
    assert sut.metrics["adapter_cycles_per_message"] == pytest.approx(nicsim_message_cycles(), rel=0.1), "the host exchange dominates"


def test_the_fast_path_sends_each_small_message_alone_where_nagle_aggregates(scenarios):
    # Ang 2001, p. 5: the fixed-function NIC has "no means of aggregating outgoing
    # messages (i.e. no Nagle Algorithm)"; the host stack's Nagle fills segments.
    small = {"host[0].ttcp.message": 200, "host[1].ttcp.message": 200, "host[0].ttcp.bytes": 400_000}
    host, part = (metrics(scenarios, SEND, d, **small) for d in ("host-stack", "partial-offload"))
    assert host["mean_segment_bytes"] > 1000, "Nagle: many messages per segment"
    # A message is split where the window ends, so some segments carry less.
    assert 100 < part["mean_segment_bytes"] < 300, "no Nagle: about one message per segment"
    assert part["host_cpu_us_per_mb"] > 1.2 * host["host_cpu_us_per_mb"], "a frame's work per message"
    assert part["tcp_retransmits"] == 0 and part["tcp_goodput_mbps"] < host["tcp_goodput_mbps"]


def nicsim_message_cycles():
    # The same solution of the report's two per-packet points that the model uses.
    a, share = 10_000, 1460 / 8192
    return (4_500_000 - (17_000 - a / 2) - a) / (940 - share)


def metrics(scenarios, path, design, **sets):
    return run(scenarios, path, design, **sets)[0].metrics


def test_the_designs_differ_where_their_costs_say(scenarios):
    host, full, part = (metrics(scenarios, SEND, d) for d in ("host-stack", "full-offload", "partial-offload"))
    assert full["host_cpu_us_per_mb"] < 0.7 * host["host_cpu_us_per_mb"], "8 KB sends: full offload saves host CPU"
    assert part["host_cpu_us_per_mb"] > 0.95 * host["host_cpu_us_per_mb"], "the fast path keeps the host stack's per-segment work"
    assert full["interrupts_per_mb"] < host["interrupts_per_mb"] / 2, "completions come back in batches"
    assert full["tcp_goodput_mbps"] < 0.8 * host["tcp_goodput_mbps"], "the 100 MHz i960 cannot keep up with 100 Mb/s"
    assert "adapter_cycles_per_packet" not in host and "adapter_cycles_per_packet" not in part
    small = {"host[0].ttcp.message": 200, "host[1].ttcp.message": 200}
    small_host, small_full = (metrics(scenarios, SEND, d, **small) for d in ("host-stack", "full-offload"))
    assert small_full["host_cpu_us_per_mb"] > small_host["host_cpu_us_per_mb"], "small messages: the per-message exchange costs more"
    rx = metrics(scenarios, RECEIVE, "partial-offload")
    assert rx["gro_segments"] > 2 * rx["gro_batches"] > 0, "in-order segments go up in batches"


def test_a_gigabit_wire_is_not_the_limit_of_the_offload_adapter(scenarios):
    slow = metrics(scenarios, SEND, "full-offload")
    fast = metrics(scenarios, SEND, "full-offload", **{"link[0].rate": "1Gb/s"})
    assert fast["tcp_goodput_mbps"] < 1.3 * slow["tcp_goodput_mbps"], "the adapter's processor bounds it"


@pytest.mark.parametrize(
    "sets, path, words",
    [
        ({"host[0].ttcp.to": "nobody"}, "host[0].ttcp.to", "no other host or tap"),
        ({"host[0].ttcp.count": 5}, "host[0].ttcp.bytes", "not both"),
        ({"host[0].adapter[0].kind": "magic"}, "host[0].adapter[0].kind", "toe"),
        ({"host[0].ttcp.message": 0}, "host[0].ttcp.message", "1 to"),
        ({"host[1].ttcp.count": 5}, "host[1].ttcp.count", "only the sender"),
        ({"host[0].adapter[0].toe.queue_depth": 0}, "host[0].adapter[0].toe.queue_depth", "1 to 4096"),
        ({"link[0].loss": 1.5}, "link[0].loss", "fraction"),
        ({"host[0].tcp.rx_buffer": 10}, "host[0].tcp.rx_buffer", "1024"),
    ],
)
def test_bad_offload_settings_are_named(scenarios, cli, tmp_path, sets, path, words):
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={json.dumps(v) if isinstance(v, str) else v}")]
    p = cli("run", scenarios / SEND, "--pcap", tmp_path / "x.pcap", *args)
    assert p.returncode == 2, p.stderr
    assert path in p.stderr and words in p.stderr, p.stderr
    assert not (tmp_path / "x.pcap").exists(), "nothing half-written"
