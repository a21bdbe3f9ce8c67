"""The programmable adapter: direct segmentation checked frame by frame with dpkt,
what each segmentation design moves through adapter memory, data within one MTU
passing unsegmented, the Malta set-ups, and bad adapter settings named."""

import dpkt
import pytest

import nicsim

from frames import check_frame, read_pcap

TSO = "papers/patent-direct-tso/tso.toml"
MALTA = "papers/malta2001"
ONE_MB = 1 << 20
PERIOD = 251  # the payload pattern: byte i of the stream is i % 251


def expected_stream(n):
    return bytes(i % PERIOD for i in range(n))


def tso_run(scenarios, tmp_path, **sets):
    pcap = tmp_path / "tso.pcap"
    # Keys of the host's programmable adapter, or of the host itself (its send).
    overrides = {(f"host[0].{k}" if k.startswith(("send.", "zero_copy")) else f"host[0].adapter[0].programmable.{k}"): v for k, v in sets.items()}
    r = nicsim.run(scenarios / TSO, pcap=pcap, overrides=overrides)
    return r, read_pcap(pcap)


def test_a_1mb_send_by_direct_segmentation_is_valid_tcp_that_reassembles(scenarios, tmp_path):
    r, frames = tso_run(scenarios, tmp_path, **{"send.bytes": ONE_MB, "send.message": ONE_MB})
    assert len(frames) == -(-ONE_MB // 1460) == 719
    data = {}
    ids = []
    for i, (_, buf) in enumerate(frames):
        found = check_frame(buf)  # IPv4 header and TCP checksums, by dpkt
        assert found["l4"] == "tcp"
        tcp = dpkt.ethernet.Ethernet(buf).data.data
        last = i == len(frames) - 1
        assert bool(tcp.flags & dpkt.tcp.TH_PUSH) == last, "PSH only on the last segment"
        assert not tcp.flags & dpkt.tcp.TH_FIN
        assert tcp.seq == 1 + 1460 * i, "sequence advances by the bytes already sent"
        data[tcp.seq] = bytes(tcp.data)
        ids.append(found["id"])
    assert ids == [(ids[0] + i) % 65536 for i in range(len(ids))], "IPv4 ID +1 per segment"
    stream = b"".join(data[s] for s in sorted(data))
    assert stream == expected_stream(ONE_MB)
    m = r.component("server").metrics
    assert m["segmented_sends"] == 1 and m["adapter_memory_payload_bytes"] == 0


def test_store_and_forward_puts_every_payload_byte_in_adapter_memory_and_direct_none(scenarios, tmp_path):
    runs = {}
    for seg in ("direct", "store-and-forward"):
        r, frames = tso_run(scenarios, tmp_path, **{"segmentation": seg, "send.bytes": 4 * ONE_MB})
        runs[seg] = r.component("server").metrics
        assert all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)
        assert r.component("receiver").metrics["bad_checksums"] == 0
    direct, saf = runs["direct"], runs["store-and-forward"]
    assert direct["adapter_memory_payload_bytes"] == 0
    assert saf["adapter_memory_payload_bytes"] == 4 * ONE_MB
    assert saf["adapter_memory_bytes"] > 2 * 4 * ONE_MB, "payload written in, then read out by the MAC"
    assert direct["bus_transactions_per_frame"] > 10 * saf["bus_transactions_per_frame"], "one gather read per segment"
    assert direct["tx_goodput_mbps"] > saf["tx_goodput_mbps"], "the adapter memory port limits store and forward"


def test_split_checksums_work_with_direct_segmentation_and_cost_the_firmware_only_the_headers(scenarios, tmp_path):
    """The patent's claims 5 and 15: the firmware sums the headers and the
    pseudo-header, the Ethernet device the payload as it passes."""
    costs = {}
    for where in ("mac", "split"):
        r, frames = tso_run(scenarios, tmp_path, **{"checksum": where, "send.bytes": ONE_MB, "send.message": ONE_MB})
        assert len(frames) == 719 and all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)
        assert r.component("receiver").metrics["bad_checksums"] == 0
        m = r.component("server").metrics
        assert m["adapter_memory_payload_bytes"] == 0, "the payload still never enters adapter memory"
        costs[where] = m["adapter_cycles_per_frame"]
    # 54 bytes of Ethernet, IPv4 and TCP headers and the 12-byte pseudo-header, a cycle a byte.
    assert costs["split"] - costs["mac"] == pytest.approx(54 + 12, abs=0.5)


def test_data_within_one_mtu_passes_through_unsegmented(scenarios, tmp_path):
    r, frames = tso_run(scenarios, tmp_path, **{"send.bytes": 1000 * 10, "send.message": 1000})
    assert len(frames) == 10
    assert [dpkt.ethernet.Ethernet(b).data.data.seq for _, b in frames] == [1 + 1000 * i for i in range(10)]
    assert all(len(dpkt.ethernet.Ethernet(b).data.data.data) == 1000 for _, b in frames)
    assert r.component("server").metrics["segmented_sends"] == 0


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
    base = {"host[0].send.bytes": ONE_MB}
    # A second host with a programmable adapter receives the stream instead of the sink.
    for where in ("lro_timeout", "gro_timeout"):
        text = (scenarios / TSO).read_text().replace('[[sink]]\nname = "receiver"\n', "")
        text = text.replace('to = "receiver"', 'to = "peer"').replace('b = "receiver"', 'b = "peer"')
        text += RECEIVER.format(where=where)
        tmp = tmp_path / f"tso-{where}.toml"
        tmp.write_text(text)
        r = nicsim.run(tmp, overrides=base)
        m = r.component("peer").metrics
        assert m["rx_payload_bytes"] == ONE_MB and m["rx_host_bad"] == 0
        assert m["rx_delivered_segments"] == 719
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
"""


@pytest.mark.parametrize(
    "key, value, path, message",
    [
        ("host[0].adapter[0].programmable.checksum", "firmware", "host[0].adapter[0].programmable.checksum", "direct segmentation"),
        ("host[0].send.frame_size", 100, "host[0].send.frame_size", "does not apply"),
        ("host[0].send.outstanding", 0, "host[0].send.outstanding", "must be 1 to 64"),
        ("host[0].adapter[0].programmable.memory", 1000, "host[0].adapter[0].programmable.memory", "must be"),
        ("host[0].send.to", "nobody", "host[0].send.to", "no station"),
    ],
)
def test_bad_adapter_settings_are_named(scenarios, key, value, path, message):
    with pytest.raises(nicsim.ScenarioError) as e:
        nicsim.check(scenarios / TSO, overrides={key: value})
    assert path in str(e.value) and message in str(e.value)


def test_lro_with_coalescing_is_refused(scenarios):
    sets = {"host[0].adapter[0].programmable.receive.lro_timeout": "20us", "host[0].adapter[0].programmable.receive.coalesce_frames": 8}
    with pytest.raises(nicsim.ScenarioError) as e:
        nicsim.check(scenarios / TSO, overrides=sets)
    assert "host[0].adapter[0].programmable.receive.lro_timeout" in str(e.value) and "one or the other" in str(e.value)
