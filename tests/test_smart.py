"""The programmable adapter: direct segmentation checked frame by frame with dpkt,
what each segmentation design moves through adapter memory, data within one MTU
passing unsegmented, the Malta set-ups, and bad adapter settings named."""

import dpkt
import pytest
import xxhash

import nicsim

from frames import check_frame, read_pcap

TSO = "papers/patent-direct-tso/tso.toml"
MALTA = "papers/malta2001"
ONE_MB = 1 << 20


def tso_run(scenarios, tmp_path, **sets):
    pcap = tmp_path / "tso.pcap"
    # Keys of the sending host (its TTCP, zero copy) or of its programmable adapter.
    overrides = {(f"host[0].{k}" if k.startswith(("ttcp.", "tcp.", "zero_copy")) else f"host[0].adapter[0].programmable.{k}"): v for k, v in sets.items()}
    r = nicsim.run(scenarios / TSO, pcap=pcap, overrides=overrides)
    return r, read_pcap(pcap)


def data_segments(frames):
    """The sender's TCP segments with data (to TTCP's port 5001), checked by dpkt."""
    out = []
    for _, buf in frames:
        found = check_frame(buf)  # IPv4 header and TCP checksums
        assert found["l4"] == "tcp"
        if found["ports"][1] == 5001 and found["payload_len"]:
            out.append(dpkt.ethernet.Ethernet(buf).data.data)
    return out


def test_a_1mb_transfer_by_direct_segmentation_is_valid_tcp_that_reassembles(scenarios, tmp_path):
    r, frames = tso_run(scenarios, tmp_path, **{"ttcp.bytes": ONE_MB})
    segs = data_segments(frames)
    assert len(segs) == -(-ONE_MB // 1460) == 719, "full segments but the last, none sent twice"
    assert all(len(t.data) == 1460 for t in segs[:-1])
    assert all(b.seq - a.seq == len(a.data) for a, b in zip(segs, segs[1:])), "each starts where the last ended"
    stream = b"".join(bytes(t.data) for t in segs)
    sender = r.component("server")
    assert xxhash.xxh3_128_hexdigest(stream) == sender.text["ttcp_xxh128"] == r.component("receiver").text["ttcp_xxh128"]
    m = sender.metrics
    # The stack's large sends were cut by the adapter; what it sent whole (a send
    # of one segment or less) went through adapter memory as a frame does.
    assert m["segmented_sends"] >= 10 and m["adapter_memory_payload_bytes"] < 1460 * (m["sends_completed"] - m["segmented_sends"])


def test_store_and_forward_puts_every_payload_byte_in_adapter_memory_and_direct_none(scenarios):
    runs = {}
    for seg in ("direct", "store-and-forward"):
        # The whole 64 MB transfer, past slow start's small sends; no capture.
        r = nicsim.run(scenarios / TSO, overrides={"host[0].adapter[0].programmable.segmentation": seg})
        runs[seg] = r.component("server").metrics
        assert r.component("receiver").metrics["transfer_complete"] == 1 and runs[seg]["tcp_retransmits"] == 0
    direct, saf = runs["direct"], runs["store-and-forward"]
    total = 64 * ONE_MB
    assert direct["adapter_memory_payload_bytes"] < total / 100_000, "only what the stack sent whole"
    assert total <= saf["adapter_memory_payload_bytes"] < total * 1.0001
    assert saf["adapter_memory_bytes"] > 2 * total, "payload written in, then read out by the MAC"
    per_frame = {k: m["bus_tx_data_transactions"] / m["tx_frames"] for k, m in runs.items()}
    assert per_frame["direct"] > 10 * per_frame["store-and-forward"], "one gather read per segment against a few large reads"
    assert direct["tx_goodput_mbps"] > saf["tx_goodput_mbps"], "the adapter memory port limits store and forward"


def test_split_checksums_work_with_direct_segmentation_and_cost_the_firmware_only_the_headers(scenarios, tmp_path):
    """The patent's claims 5 and 15: the firmware sums the headers and the
    pseudo-header, the Ethernet device the payload as it passes."""
    runs = {}
    for where in ("mac", "split"):
        r, frames = tso_run(scenarios, tmp_path, **{"checksum": where, "ttcp.bytes": ONE_MB})
        assert len(data_segments(frames)) == 719
        m = r.component("server").metrics
        assert m["adapter_memory_payload_bytes"] < 1460, "the payload of a large send never enters adapter memory"
        runs[where] = m
    # Each frame, a segment sent or an ACK received, costs the firmware its 54 bytes
    # of Ethernet, IPv4 and TCP headers and the 12-byte pseudo-header, a cycle a byte.
    mac, split = runs["mac"], runs["split"]
    assert mac["tx_frames"] == split["tx_frames"] and mac["rx_frames"] == split["rx_frames"]
    assert split["adapter_cycles_per_frame"] - mac["adapter_cycles_per_frame"] == pytest.approx(54 + 12, abs=0.5)


def test_data_within_one_mtu_passes_through_unsegmented(scenarios, tmp_path):
    r, frames = tso_run(scenarios, tmp_path, **{"ttcp.bytes": 1000})
    assert [len(t.data) for t in data_segments(frames)] == [1000]
    m = r.component("server").metrics
    assert m["segmented_sends"] == 0
    # A send of one segment, like the handshake's and the FIN's frames, is a frame
    # the host hands whole: every byte of it goes through adapter memory.
    sent = [dpkt.ethernet.Ethernet(b) for _, b in frames]
    whole = sum(14 + len(e.data) for e in sent if e.data.data.dport == 5001)
    assert m["adapter_memory_payload_bytes"] == whole == 66 + 54 + 1054 + 54


def test_adapter_to_adapter_reaches_line_rate(scenarios):
    r = nicsim.run(scenarios / MALTA / "adapter-to-adapter.toml", overrides={"host[0].send.count": 2000})
    m = r.component("receiver").metrics
    assert m["rx_counted"] == 2000 and m["rx_overruns"] == 0
    assert m["rx_l2_payload_mbps"] == pytest.approx(975.2604, abs=0.01), "1498-byte payloads at 1 Gb/s"


def test_checksums_left_to_the_adapter_are_inserted(scenarios, tmp_path):
    pcap = tmp_path / "send.pcap"
    r = nicsim.run(scenarios / MALTA / "send.toml", pcap=pcap, overrides={"host[0].send.count": 100, "host[0].send.frame_size": 200})
    frames = read_pcap(pcap)
    assert len(frames) == 100
    assert all(check_frame(b)["l4"] == "udp" for _, b in frames)
    assert r.component("tester").metrics["bad_checksums"] == 0


def test_fragmentation_and_coalescing_carry_every_frame_with_fewer_dmas(scenarios):
    path = scenarios / MALTA / "host-to-host.toml"
    plain = nicsim.run(path, overrides={"host[0].send.count": 4300})
    batched = nicsim.run(path, overrides={"host[0].send.count": 4300, "host[0].send.per_chunk": 43, "host[1].adapter[0].programmable.receive.coalesce_frames": 42})
    for r in (plain, batched):
        rx = r.component("receiver").metrics
        assert rx["rx_delivered_frames"] == 4300 and rx["rx_host_bad"] == 0 and rx["rx_overruns"] == 0
    p, b = plain.component("receiver").metrics, batched.component("receiver").metrics
    # 42 frames a buffer; a buffer goes partly filled when the sender pauses
    # between chunks past the 100 us timeout.
    assert p["rx_host_buffers"] == 4300 and 4300 / 42 <= b["rx_host_buffers"] < 1.1 * 4300 / 42
    assert batched.component("sender").metrics["dma_transfers"] < plain.component("sender").metrics["dma_transfers"] / 20
    assert b["rx_goodput_mbps"] > p["rx_goodput_mbps"]


def test_the_dma_start_up_is_the_engines_so_per_frame_receive_stays_below_the_dma_loop(scenarios):
    # Wadge 2001: each PCI transfer's start-up, not the firmware, is the bottleneck.
    path = scenarios / MALTA / "receive.toml"
    r = nicsim.run(path, overrides={"duration": "5ms"}).component("host").metrics
    loop = nicsim.run(scenarios / MALTA / "dma.toml").component("host").metrics["dma_mbps"]
    assert 660 < loop < 670, "the calibration point: 1512-byte transfers at 665.6 Mb/s"
    # A frame and its event per received frame: less than the loop's rate, the
    # adapter-to-host engine saturated while the receiving processor idles.
    assert r["rx_goodput_mbps"] < loop
    assert r["adapter_dma_write_utilization"] > 0.9 and r["adapter_cpu1_utilization"] < 0.5
    no_start_up = nicsim.run(path, overrides={"duration": "5ms", "host[0].adapter[0].programmable.dma_startup": 0}).component("host").metrics
    assert no_start_up["rx_goodput_mbps"] > 1.6 * r["rx_goodput_mbps"] and no_start_up["rx_overruns"] == 0
    coalesced = nicsim.run(path, overrides={"duration": "5ms", "host[0].adapter[0].programmable.receive.coalesce_frames": 42}).component("host").metrics
    assert coalesced["rx_goodput_mbps"] > 1.4 * r["rx_goodput_mbps"], "one start-up per 42 frames"



def test_a_dma_loop_cut_short_by_the_run_counts_only_the_transfers_that_completed(scenarios):
    whole = nicsim.run(scenarios / MALTA / "dma.toml").component("host").metrics
    short = nicsim.run(scenarios / MALTA / "dma.toml", overrides={"duration": "5ms"}).component("host").metrics
    transfers = short["dma_bytes"] // 1512
    assert short["dma_bytes"] == transfers * 1512 and 0 < transfers < 2000
    # What completed fits the run, at the rate of the whole loop, and the bus was
    # busy no longer than the run (the loop used to be booked ahead to its end).
    assert transfers * 1512 * 8 / (short["dma_mbps"] * 1e6) <= 0.005
    assert short["dma_mbps"] == pytest.approx(whole["dma_mbps"], rel=1e-3)
    assert short["bus_utilization"] <= 1.0


def test_what_a_receive_backlog_books_past_the_end_of_the_run_is_not_counted_in_it(scenarios):
    # The adapter-to-host engine is saturated: the adapter books its backlog's
    # transfers on the PCI bus milliseconds ahead, past the end of a 2 ms run.
    m = nicsim.run(scenarios / MALTA / "receive.toml", overrides={"duration": "2ms"}).component("host").metrics
    assert m["adapter_dma_write_utilization"] > 0.9
    # A transfer holds its engine at least as long as the bus: within the run
    # the bus carried less than the engine's busy time (counted whole, 0.98).
    assert m["bus_rx_data_share"] < m["adapter_dma_write_utilization"]
    # Every host buffer counted was taken by the host (counted as filled, 162
    # buffers held 85 segments).
    assert m["rx_host_buffers"] == m["rx_delivered_segments"] > 0


def test_a_dma_loop_shares_its_bus_with_an_offload_engine(scenarios, tmp_path):
    text = (scenarios / "combinations" / "toe-and-ring.toml").read_text()
    ring = '[[host.adapter]]              # port 1: a plain bus-master adapter\ninterrupt = "min-interval"\ninterrupt_interval = "50us"\n'
    assert ring in text
    loop = '[[host.adapter]]\nkind = "programmable"\n[host.adapter.programmable]\nprocessors = 2\nclock = "88 MHz"\nmemory = 1048576\nmemory_bandwidth = "5.632 Gb/s"\n[host.send]\nkind = "dma"\ndirection = "to-host"\nlength = 1512\ncount = 2000\n'
    path = tmp_path / "toe-and-dma.toml"
    path.write_text(text.replace(ring, loop).replace('duration = "1s"', 'duration = "20ms"'))
    m = nicsim.run(path).component("server").metrics
    # The engine's sends start at 10 ms, in the middle of the loop: both move
    # their bytes over the one bus, and the loop counts only what it finished.
    assert m["ttcp_bytes"] > 0 and m["adapter1_dma_bytes"] < 2000 * 1512
    assert m["bus_up_utilization"] <= 1.0 and m["bus_down_utilization"] <= 1.0
def test_a_coalescing_timeout_moves_a_part_filled_buffer(scenarios):
    path = scenarios / MALTA / "host-to-host.toml"
    r = nicsim.run(path, overrides={"host[0].send.count": 50, "host[1].adapter[0].programmable.receive.coalesce_frames": 42, "host[1].adapter[0].programmable.receive.coalesce_timeout": "50us"})
    rx = r.component("receiver").metrics
    assert rx["rx_delivered_frames"] == 50
    assert rx["rx_host_buffers"] >= 2, "frames trickle in slower than 42 per 50 us, so the timeout moves them"


def test_coalescing_holds_frames_in_adapter_memory_until_its_timeout(scenarios):
    """Wadge 2001: coalescing "causes increased latency", and a timer bounds it. A
    frame every 100 us into buffers of 8 with a 200 us timeout: each buffer leaves
    with two or three frames, which waited up to 200 us for it."""
    path = scenarios / MALTA / "receive.toml"
    slow = {"source[0].rate": "10kpps"}
    alone = nicsim.run(path, overrides=slow).component("host").metrics
    packed = {"host[0].adapter[0].programmable.receive.coalesce_frames": 8, "host[0].adapter[0].programmable.receive.coalesce_timeout": "200us"}
    coalesced = nicsim.run(path, overrides={**slow, **packed}).component("host").metrics
    assert alone["rx_frames"] == coalesced["rx_frames"] == 200
    waited = coalesced["mean_rx_to_memory_us"] - alone["mean_rx_to_memory_us"]
    assert 50 < waited < 200
    assert coalesced["max_rx_to_stack_us"] - alone["max_rx_to_stack_us"] < 250
    for m in (alone, coalesced):
        # The host takes a buffer as its event lands (it polls the event ring).
        assert m["mean_rx_to_driver_us"] == m["mean_rx_to_memory_us"] < m["mean_rx_to_stack_us"]


def test_lro_and_gro_merge_segments_and_deliver_every_byte(scenarios, tmp_path):
    base = {"host[0].ttcp.bytes": ONE_MB}
    # A host with a programmable adapter and its own TCP receives the stream
    # instead of the ideal receiver.
    for where in ("lro_timeout", "gro_timeout"):
        text = (scenarios / TSO).read_text()
        text = text[: text.index('[[host]]\nname = "receiver"')] + text[text.index("[[link]]") :]
        text = text.replace('to = "receiver"', 'to = "peer"').replace('b = "receiver"', 'b = "peer"')
        text += RECEIVER.format(where=where)
        tmp = tmp_path / f"tso-{where}.toml"
        tmp.write_text(text)
        r = nicsim.run(tmp, overrides=base)
        m = r.component("peer").metrics
        assert m["rx_payload_bytes"] == ONE_MB and m["rx_host_bad"] == 0
        assert m["rx_delivered_segments"] == 719 + 3, "every data segment, the handshake's ACK, the FIN and its ACK"
        assert m["ttcp_bytes"] == ONE_MB and r.component("peer").text["ttcp_xxh128"] == r.component("server").text["ttcp_xxh128"]
        assert m["rx_delivered_frames"] < 719 / 4, f"{where}: segments merged"
        # Every wire frame's time is counted once it goes up, held back by the merge or not.
        assert 0 < m["mean_rx_to_driver_us"] <= m["mean_rx_to_stack_us"] <= m["max_rx_to_stack_us"]


RECEIVER = """
[[host]]
name = "peer"
clock = "2 GHz"
zero_copy = true
[host.costs]
interrupt_entry = 0
interrupt_exit = 0
rx_frame = 300
protocol_segment = 1000
tx_frame = 500
gro_segment = 200
completion = 200
[host.bus]
kind = "pcie"
[[host.adapter]]
kind = "programmable"
[host.adapter.programmable]
clock = "500 MHz"
memory_bandwidth = "12.8 Gb/s"
rx_buffers = 256
[host.adapter.programmable.receive]
{where} = "20us"
[host.ttcp]
role = "receive"
message = 1048576
[host.tcp]
rx_buffer = 4194304
tx_buffer = 4194304
"""


@pytest.mark.parametrize(
    "scenario, key, value, path, message",
    [
        (TSO, "host[0].adapter[0].programmable.checksum", "firmware", "host[0].adapter[0].programmable.checksum", "direct segmentation"),
        (TSO, "host[0].adapter[0].programmable.memory", 1000, "host[0].adapter[0].programmable.memory", "must be"),
        (f"{MALTA}/send.toml", "host[0].send.direction", "to-host", "host[0].send.direction", "does not apply"),
        (f"{MALTA}/send.toml", "host[0].send.outstanding", 0, "host[0].send.outstanding", "must be 1 to 64"),
        (f"{MALTA}/send.toml", "host[0].send.to", "nobody", "host[0].send.to", "no station"),
        (f"{MALTA}/send.toml", "host[0].send.kind", "tcp", "host[0].send.kind", "comes from the host's own TCP ([host.ttcp])"),
    ],
)
def test_bad_adapter_settings_are_named(scenarios, scenario, key, value, path, message):
    with pytest.raises(nicsim.ScenarioError) as e:
        nicsim.check(scenarios / scenario, overrides={key: value})
    assert path in str(e.value) and message in str(e.value)


def test_lro_with_coalescing_is_refused(scenarios):
    sets = {"host[0].adapter[0].programmable.receive.lro_timeout": "20us", "host[0].adapter[0].programmable.receive.coalesce_frames": 8}
    with pytest.raises(nicsim.ScenarioError) as e:
        nicsim.check(scenarios / TSO, overrides=sets)
    assert "host[0].adapter[0].programmable.receive.lro_timeout" in str(e.value) and "one or the other" in str(e.value)
