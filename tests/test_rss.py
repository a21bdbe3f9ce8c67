"""Several queues per adapter with receive-side scaling (issue 56): the adapter
steers each received frame to a queue by the Toeplitz hash of its addresses
and ports, and each queue's interrupt vector and poll run on the core it is
bound to; a flood of many flows that one core cannot take is taken by four.
The flows themselves are real frames: a source's frames cycle through their
source ports with every checksum valid (read back with dpkt)."""

import dpkt
import pytest

import nicsim

from frames import check_frame, read_pcap

RSS = "combinations/rss-queues.toml"


def server(scenarios, **sets):
    r = nicsim.run(scenarios / RSS, overrides={f"host[0].adapter[0].{k}": v for k, v in sets.items()})
    return r.component("server").metrics


def test_four_queues_on_four_cores_take_the_flood_that_one_core_loses(scenarios):
    one, four = server(scenarios, queues=1), server(scenarios, queues=4)
    assert one["rx_loss"] > 0.5 and one["cpu1_utilization"] == 0, "one queue: its core alone, overwhelmed"
    assert four["rx_loss"] < 0.01
    assert four["rx_frames"] > 3.5 * one["rx_frames"]
    per_queue = [four[f"queue{q}_rx_frames"] for q in range(4)]
    assert sum(per_queue) == four["rx_frames"]
    # 64 flows over 4 queues: the hash is linear in the port bits, so each queue has 16.
    assert max(per_queue) - min(per_queue) <= 1, per_queue
    for k in range(4):
        assert four[f"cpu{k}_utilization"] > 0.5, f"queue {k}'s poll runs on cpu {k}"
        assert four[f"queue{k}_interrupts"] > 0


def test_a_poll_mode_driver_polls_each_queue_on_its_own_core(scenarios):
    # As DPDK gives each queue an lcore: a loop a queue, on the queue's processor.
    sets = {"host[0].driver.mode": "poll"}
    r1 = nicsim.run(scenarios / RSS, overrides={**sets, "host[0].adapter[0].queues": 1}).component("server").metrics
    r4 = nicsim.run(scenarios / RSS, overrides=sets).component("server").metrics
    assert r1["rx_loss"] > 0.5 and all(r1[f"cpu{k}_poll"] == 0 for k in (1, 2, 3))
    assert r4["rx_loss"] < 0.01 and r4["rx_frames"] > 3.5 * r1["rx_frames"]
    for k in range(4):
        assert r4[f"cpu{k}_poll"] > 0.2 and r4[f"cpu{k}_interrupt"] == 0, f"cpu {k} polls its queue"


def test_the_hash_key_is_the_adapters(scenarios):
    # A key of zeros hashes every frame to 0: the table's first entry, queue 0.
    m = server(scenarios, rss_key=":".join(["00"] * 40))
    assert m["queue0_rx_frames"] == m["rx_frames"] > 1000
    assert m["queue1_rx_frames"] == m["queue2_rx_frames"] == m["queue3_rx_frames"] == 0


def test_a_core_sends_by_its_own_queue(scenarios, tmp_path):
    # Linux's XPS: each processor has a transmit queue, the one whose vector it takes.
    text = (scenarios / RSS).read_text()
    text = text.replace('[[source]]\nname = "tester"\nto = "server"', '[[sink]]\nname = "tester"\n\n[[source]]\nname = "unused"\nto = "server"\ncount = 1', 1)
    text = text.replace('a = "tester"\nb = "server"', 'a = "unused"\nb = "server:0"', 1)
    text += '\n[[link]]\nname = "out"\na = "server:1"\nb = "tester"\nrate = "10Gbps"\n'
    text = text.replace("queues = 4 ", "count = 2\nqueues = 4 ", 1)
    text = text.replace("[host.driver]", '[host.blast]\nto = "tester"\nframe_size = 64\ncpu = 2\nburst = 32\n\n[host.driver]', 1)
    path = tmp_path / "xps.toml"
    path.write_text(text)
    m = nicsim.run(path).component("server").metrics
    sent = {q: m[f"adapter1_queue{q}_tx_frames"] for q in range(4)}
    assert sent[2] > 1000 and sent[0] == sent[1] == sent[3] == 0, sent
    assert m["cpu2_utilization"] > 0.5


def test_a_queues_vector_is_taken_by_the_core_it_is_bound_to(scenarios):
    m = server(scenarios, queues=2, irq_cpus=[2, 3])
    assert m["cpu0_utilization"] == m["cpu1_utilization"] == 0
    assert m["cpu2_utilization"] > 0.5 and m["cpu3_utilization"] > 0.5


def test_the_sources_flows_are_real_frames_on_their_own_ports(scenarios, tmp_path):
    pcap = tmp_path / "f.pcap"
    nicsim.run(scenarios / RSS, overrides={"duration": "20us", "host[0].warmup": "0s"}, pcap=pcap)
    frames = [buf for _, buf in read_pcap(pcap)]
    assert len(frames) > 200
    ports = set()
    for buf in frames:
        check_frame(buf)
        ports.add(dpkt.ethernet.Ethernet(buf).data.data.sport)
    assert ports == set(range(10_000, 10_064))


@pytest.mark.parametrize(
    "key, value, where",
    [
        ("host[0].adapter[0].queues", 0, "host[0].adapter[0].queues"),
        ("host[0].adapter[0].queues", 65, "host[0].adapter[0].queues"),
        ("host[0].adapter[0].irq_cpus", [0, 1], "host[0].adapter[0].irq_cpus"),
        ("host[0].adapter[0].irq_cpus", [0, 1, 2, 4], "host[0].adapter[0].irq_cpus[3]"),
        ("host[0].adapter[0].rx_fifo", 4096, "host[0].adapter[0].queues"),
        ("host[0].adapter[0].rss_key", "6d5a", "host[0].adapter[0].rss_key"),
        ("host[0].adapter[0].rss_key", "zz" * 40, "host[0].adapter[0].rss_key"),
        ("source[0].source_ports", 0, "source[0].source_ports"),
        ("source[0].source_ports", 60_000, "source[0].source_ports"),
    ],
)
def test_an_impossible_queue_or_flow_setting_is_refused_where_it_is(scenarios, cli, key, value, where):
    r = cli("check", scenarios / RSS, "--set", f"{key}={value}")
    assert r.returncode == 2, r.stderr
    assert where in r.stderr, r.stderr


def test_queues_belong_to_a_ring_adapter(scenarios, cli, tmp_path):
    path = tmp_path / "toe.toml"
    text = (scenarios / RSS).read_text().replace("queues = 4 ", 'kind = "toe"\nqueues = 4 ', 1)
    path.write_text(text)
    r = cli("check", path)
    assert r.returncode == 2 and "queues" in r.stderr, r.stderr
