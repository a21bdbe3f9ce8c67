"""The Novell AppNote's five adapter designs (Figures 1 to 5): who moves a frame
between the adapter and host memory, and what that costs the host processor."""

import pytest

import nicsim

from frames import check_frame, read_pcap
from test_hosts import RING

NOVELL = "papers/novell1995/server.toml"

# A trickle of full frames into one host on 32-bit 33 MHz PCI (the overrun test's
# host, slowed down), so the handler's time per frame is the driver's cycles plus
# whatever moving the frame costs.
TRICKLE = (
    RING.replace('duration = "5ms"', 'duration = "20ms"')
    .replace('rate = "line"', 'rate = "1000pps"')
    .replace('[host.bus]\nkind = "pci"', '[host.driver]\nmode = "handler"\n[host.bus]\nkind = "pci"\nwidth = 32\nclock = "33MHz"')
    .replace("rx_ring = 16\nrx_fifo = 8192", 'transfer = "TRANSFER"')
    .replace('rate = "1Gbps"', 'rate = "100Mbps"')
)


def per_frame(tmp_path, transfer):
    path = tmp_path / f"{transfer}.toml"
    path.write_text(TRICKLE.replace("TRANSFER", transfer))
    m = nicsim.run(path).component("host").metrics
    assert m["sink_frames"] > 0 and m["rx_fifo_overruns"] == 0
    return m["handler_us_per_full_frame"], m


def test_the_host_pays_for_moving_frames_that_the_adapter_does_not(tmp_path):
    """A bus master moves its own frames: the handler's time is its cycles. With
    programmed I/O or shared memory the processor reads 1514 bytes a word at a
    time (379 reads of the bus, each waited for); with system DMA it programs the
    8237 and is held while the controller moves them at 2.385 MB/s."""
    master, _ = per_frame(tmp_path, "bus-master")
    assert master == pytest.approx(10.0, rel=1e-3), "1000 cycles at 100 MHz"
    pio, m = per_frame(tmp_path, "pio")
    words = 1514 // 4 + 1
    read = (pio - master) / words
    assert 0.1 < read < 1.0, f"one 4-byte read of the PCI bus, in us: {read}"
    assert m["bus_rx_data_transactions"] == m["handler_frames"], "the processor moved every frame it took"
    shared, _ = per_frame(tmp_path, "shared-memory")
    assert shared == pytest.approx(pio, rel=1e-6), "reads are single words either way"
    dma, _ = per_frame(tmp_path, "system-dma")
    assert dma - master == pytest.approx(1514 / 2.385, rel=0.02), "the 8237's rate, plus its programming"


def test_shared_memory_writes_burst_where_programmed_io_does_not(scenarios, tmp_path):
    """Sending, the processor writes each frame into the adapter: through an I/O
    port one non-posted write at a time, through a memory window posted and
    combined into bursts. Every frame of every design is a real IPX packet."""
    got = {}
    for transfer in ("pio", "shared-memory", "system-dma", "bus-master"):
        pcap = tmp_path / f"{transfer}.pcap"
        r = nicsim.run(
            scenarios / NOVELL,
            pcap=pcap,
            capture=["server-seg0-uplink"],
            overrides={"duration": "100ms", "host[0].warmup": "20ms", "host[0].adapter[0].transfer": transfer},
        )
        got[transfer] = r.component("server").metrics
        kinds = [check_frame(buf) for _, buf in read_pcap(pcap)]
        assert len(kinds) > 50 and all(k["l4"] == "ipx" and k["packet_type"] == 17 for k in kinds)
        assert any(len(buf) == 1514 for _, buf in read_pcap(pcap))
    busy = {t: m["bus0_bus_tx_data_share"] / max(m["tx_frames"], 1) for t, m in got.items()}
    assert busy["pio"] > 3 * busy["shared-memory"], busy
    assert got["system-dma"]["app_sent_mbytes_per_s"] < 2.385, "no faster than the 8237"
    per_mb = {t: m["cpu_utilization"] / m["app_sent_mbytes_per_s"] for t, m in got.items()}
    assert per_mb["bus-master"] < per_mb["shared-memory"] < per_mb["pio"], per_mb


def test_only_a_ring_adapter_takes_a_transfer_and_a_dma_rate_needs_system_dma(tmp_path, cli):
    bad = tmp_path / "bad.toml"
    bad.write_text(TRICKLE.replace('transfer = "TRANSFER"', 'transfer = "pio"\ndma_rate = "10Mbps"'))
    r = cli("check", bad)
    assert r.returncode == 2 and "host[0].adapter[0].dma_rate" in r.stderr and "system-dma" in r.stderr
    bad.write_text(TRICKLE.replace('transfer = "TRANSFER"', 'transfer = "telepathy"'))
    r = cli("check", bad)
    assert r.returncode == 2 and "transfer" in r.stderr


def test_the_simple_nic_moves_a_descriptor_and_a_tail_per_frame_where_batching_shares_them(scenarios):
    """pcie-model's simple NIC (scenarios/modern/40g-simple-nic.toml) against the
    DPDK-like host on the same adapter: one descriptor read, one write-back and
    one tail write per frame each way, where the batched design shares each
    among many frames; at 64 bytes that costs the simple NIC its send rate."""
    full = {"source[0].frame_size": 1518, "host[0].blast.frame_size": 1518}
    simple = nicsim.run(scenarios / "modern/40g-simple-nic.toml", overrides=full).component("server").metrics
    batched = nicsim.run(scenarios / "modern/40g-dpdk.toml", overrides=full).component("server").metrics
    for m in (simple, batched):
        assert m["rx_frames"] > 1000 and m["tx_frames"] > 1000
    assert abs(simple["bus_rx_desc_fetch_transactions"] - simple["rx_frames"]) <= 1
    assert simple["bus_tx_desc_fetch_transactions"] == simple["bus_tx_status_transactions"] == simple["tx_frames"]
    assert simple["bus_register_transactions"] >= 0.99 * (simple["rx_frames"] + simple["tx_frames"]), "a tail write per frame"
    assert batched["bus_rx_desc_fetch_transactions"] < batched["rx_frames"] / 10
    assert batched["bus_tx_desc_fetch_transactions"] < batched["tx_frames"] / 20
    assert batched["bus_register_transactions"] < (batched["rx_frames"] + batched["tx_frames"]) / 20
    small = {"source[0].count": 1}
    simple64 = nicsim.run(scenarios / "modern/40g-simple-nic.toml", overrides=small).component("tester-rx").metrics
    batched64 = nicsim.run(scenarios / "modern/40g-dpdk.toml", overrides=small).component("tester-rx").metrics
    assert simple64["frame_rate_pps"] < 0.5 * batched64["frame_rate_pps"]


@pytest.mark.parametrize("transfer", ["pio", "shared-memory", "system-dma"])
def test_segmentation_offload_cuts_sends_the_host_moved_into_packet_memory(scenarios, tmp_path, transfer):
    """With TSO the host moves a whole send into the adapter, which cuts it into
    segments and sums their checksums there (it sent the send whole, its TCP
    checksum never summed)."""
    pcap = tmp_path / "tso.pcap"
    sets = {"duration": "100ms", "host[0].adapter[0].transfer": transfer, "host[0].ttcp.bytes": 100_000}
    r = nicsim.run(scenarios / "combinations" / "napi-gro-tso.toml", pcap=pcap, capture=["wire"], overrides=sets)
    sent = [check_frame(buf) for _, buf in read_pcap(pcap)]
    data = [k["payload_len"] for k in sent if k["l4"] == "tcp" and k["payload_len"]]
    assert len(data) >= 100_000 // 1460 and max(data) == 1460
    s, t = r.component("sender").metrics, r.component("receiver").metrics
    assert s["ttcp_bytes"] == t["ttcp_bytes"] == 100_000 and s["tcp_retransmits"] == 0


def test_each_pcie_direction_shares_out_its_own_time(scenarios):
    """On PCIe a read's request goes up and its data down, each direction a link
    of its own: a purpose's share is of each direction, and each direction's
    shares add up to its utilization (one share of both, for the adapter's reads
    of a send on a busy gen 1 x1 link, was 1.06 of the run)."""
    # Four chunks of frames in flight keep the slow link's downstream busy.
    sets = {"duration": "2ms", "host[0].warmup": "0s", "host[1].warmup": "0s", "host[0].bus": {"kind": "pcie", "generation": 1, "lanes": 1}, "host[0].send.outstanding": 4}
    m = nicsim.run(scenarios / "combinations" / "workload-beside-sessions.toml", overrides=sets).component("server").metrics
    assert m["bus_down_utilization"] > 0.9 and not any(k.startswith("bus_tx_data_share") for k in m)
    for d in ("up", "down"):
        shares = [v for k, v in m.items() if k.startswith(f"bus_{d}_") and k.endswith("_share")]
        assert len(shares) > 3 and sum(shares) == pytest.approx(m[f"bus_{d}_utilization"], abs=1e-6)
    assert m["bus_down_tx_data_share"] > 0.9 and m["bus_up_rx_data_share"] > 10 * m["bus_down_rx_data_share"]
