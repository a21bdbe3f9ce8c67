"""Mechanisms of different host kinds combined in one scenario (issue 17): each
test runs a shipped scenario and checks the behaviour that makes it that
combination, and that every frame it put on the wire parses in dpkt."""

import dpkt
import pytest

import nicsim

from frames import check_frame, read_pcap


def transfer(r, sender, receiver, size):
    """The two ends' metrics, after checking that exactly `size` bytes of one
    stream crossed once, on one connection, nothing sent twice."""
    a, b = r.component(sender), r.component(receiver)
    s, t = a.metrics, b.metrics
    assert s["ttcp_bytes"] == t["ttcp_bytes"] == size
    assert s["transfer_complete"] == t["transfer_complete"] == 1
    assert a.text["ttcp_sha256"] == b.text["ttcp_sha256"]
    assert s["tcp_connections"] == 1 and s["tcp_retransmits"] == 0 and t["tcp_retransmits"] == 0
    return s, t


def test_a_napi_host_with_moderation_sends_by_ttcp_to_an_offload_host(scenarios, tmp_path):
    pcap = tmp_path / "ttcp.pcap"
    r = nicsim.run(scenarios / "combinations" / "napi-host-ttcp.toml", pcap=str(pcap))
    s, t = transfer(r, "sender", "receiver", 2_000_000)
    # The sender's driver: each interrupt schedules a NAPI poll, which takes the
    # ACKs up the stack as deferred work.
    assert s["polls"] == s["interrupts"] > 0 and s["cpu0_deferred"] > 0
    # The receiver's TCP ran on its offload engine's processor.
    assert t["adapter_cycles_per_packet"] > 10_000 and t["deliveries"] > 0
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
        ({"host[0].send.to": "nobody"}, "host[0].send.to", "no station"),
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
    # GRO: the receiver's protocol passed runs of several segments at once.
    assert t["gro_segments"] > 3 * t["gro_batches"] > 0
    # Without the stages, each end's processors pay per segment.
    plain = nicsim.run(path, overrides={"host[0].adapter[0].tso": False, "host[1].driver.gro": False})
    assert plain.metric("sender", "host_cpu_us_per_mb") > 1.2 * s["host_cpu_us_per_mb"], "TSO: one transmit cost per send"
    assert plain.metric("receiver", "host_cpu_us_per_mb") > 1.1 * t["host_cpu_us_per_mb"], "GRO: one protocol pass per run"
    frames = read_pcap(pcap)
    assert len(frames) > 13_000 and all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)
    # TSO is real: the stack hands over sends of up to 64 KB, one descriptor
    # each, which the adapter cuts into whole segments (a runt only where the
    # data queued ended), each valid in dpkt above.
    assert s["bus_tx_status_transactions"] * 4 < s["tx_frames"], "several segments per descriptor"
    sizes = [len(dpkt.ethernet.Ethernet(buf).data.data.data) for _, buf in frames]
    data = [n for n in sizes if n > 0]
    assert sum(n == 1460 for n in data) > 0.99 * len(data)
    assert plain.metric("sender", "bus_tx_status_transactions") >= plain.metric("sender", "tx_frames"), "one descriptor a segment"


def test_one_host_drives_a_programmable_adapter_beside_a_ring_adapter(scenarios, tmp_path):
    pcap = tmp_path / "mixed.pcap"
    path = scenarios / "combinations" / "ring-and-programmable.toml"
    r = nicsim.run(path, pcap=str(pcap), capture=["server-receiver"], overrides={"host[0].send.bytes": 16 << 20})
    s = r.component("server").metrics
    # Port 0: the programmable adapter segments the sends straight from host
    # memory; no payload byte passes through its memory.
    assert s["adapter0_tx_payload_bytes"] == 16 << 20 and s["adapter0_adapter_memory_payload_bytes"] == 0
    assert s["adapter0_tx_goodput_mbps"] > 9000
    # Port 1: the ring adapter takes the flood through NAPI; the host counts it.
    flood = r.metric("flood", "sent")
    assert s["adapter1_rx_frames"] == flood and s["sink_frames"] >= 0.999 * flood
    assert s["polls"] == s["interrupts"] == s["adapter1_interrupts"] > 0
    # The event ring is polled on processor 1, the ring adapter's work on processor 0.
    assert s["cpu1_poll"] > 0 and s["cpu0_interrupt"] > 0 and s["cpu1_interrupt"] == 0
    frames = read_pcap(pcap)
    assert len(frames) == s["adapter0_tx_frames"] and all(check_frame(buf)["l4"] == "tcp" for _, buf in frames)


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


def test_an_ideal_host_takes_either_end_of_a_ttcp_transfer(scenarios, tmp_path):
    path = scenarios / "combinations" / "ideal-host-ttcp.toml"
    r = nicsim.run(path)
    ideal, host = transfer(r, "sender", "receiver", 4_000_000)
    # Only the modelled host pays: its processor took the frames; the ideal one has none.
    assert host["cpu0_utilization"] > 0 and host["polls"] > 0 and host["tcp_data_in"] > 2700
    assert not any(k.startswith("cpu") for k in ideal)
    # The same ideal host receives from the other when the roles are swapped.
    text = path.read_text()
    text = text.replace('role = "send"\nmessage = 8192\nbytes = 4_000_000\nto = "receiver"', 'role = "receive"\nmessage = 8192')
    text = text.replace('[host.ttcp]\nrole = "receive"\nmessage = 8192\n[host.tcp]', '[host.ttcp]\nrole = "send"\nmessage = 8192\nbytes = 4_000_000\nto = "sender"\nstart = "1ms"\n[host.tcp]')
    text = text.replace('start = "1ms"                 # the receiver listens first\n', "")
    swapped = tmp_path / "swapped.toml"
    swapped.write_text(text)
    host, ideal = transfer(nicsim.run(swapped), "receiver", "sender", 4_000_000)
    assert host["tcp_data_out"] > 2700 and not any(k.startswith("cpu") for k in ideal)


def test_an_ideal_host_refuses_the_keys_of_what_it_does_not_model(scenarios, cli):
    path = scenarios / "papers" / "ibm2001" / "server.toml"
    res = cli("check", str(path), "--set", "host[3].clock=1GHz")
    assert res.returncode == 2 and "host[3].clock" in res.stderr and "ideal host" in res.stderr
    # A host that is not ideal needs its clock, costs and bus.
    res = cli("check", str(path), "--set", "host[3].ideal=false", "--set", 'host[0].file_request.peers=["client1"]')
    assert res.returncode == 2 and "host[3].clock" in res.stderr and "unless it is ideal" in res.stderr
    # A reader names a host with a file server.
    res = cli("check", str(path), "--set", 'host[1].file_read={from = "client2"}')
    assert res.returncode == 2 and "host[1].file_read.from" in res.stderr and "no host named" in res.stderr


def test_an_ideal_host_measures_from_its_warmup(scenarios):
    path = scenarios / "papers" / "ibm2001" / "server.toml"
    whole = nicsim.run(path, overrides={"duration": "100ms"}).component("client1").metrics
    late = nicsim.run(path, overrides={"duration": "100ms", "host[1].warmup": "50ms"}).component("client1").metrics
    # Half the run counted, at about the same rate over the half it counts.
    assert 0.3 < late["app_sent_bytes"] / whole["app_sent_bytes"] < 0.7
    assert abs(late["app_sent_mbytes_per_s"] / whole["app_sent_mbytes_per_s"] - 1) < 0.2


def test_modelled_hosts_serve_read_and_answer_files_beside_an_ideal_one(scenarios):
    r = nicsim.run(scenarios / "combinations" / "hosts-serve-hosts.toml")
    m = {name: r.component(name).metrics for name in ("server", "client", "requester", "ideal-client")}
    # The server answers both readers; the modelled client reads blocks and
    # answers the requester's files, on one stack.
    assert m["server"]["requests_answered"] > 100 and m["server"]["tcp_connections"] == 3
    assert m["client"]["answers_read"] > 50 and m["client"]["requests_answered"] > 100
    assert m["requester"]["answers_read"] >= m["client"]["requests_answered"] - 2
    # The requester answers the ideal client's file requests, which also reads blocks.
    assert m["requester"]["requests_answered"] > 100
    assert m["ideal-client"]["answers_read"] > m["requester"]["requests_answered"] and m["ideal-client"]["tcp_connections"] == 2
    # Only the modelled hosts pay, and nothing is lost or resent on the way.
    assert m["client"]["cpu0_utilization"] > 0.1 and not any(k.startswith("cpu") for k in m["ideal-client"])
    for name, x in m.items():
        assert x["tcp_retransmits"] == 0 and x["tcp_bad_payload"] == 0 and x["tcp_out_of_order"] == 0, name


def test_one_host_runs_every_application_over_two_networks(scenarios, tmp_path):
    pcap = tmp_path / "mixed.pcap"
    r = nicsim.run(scenarios / "combinations" / "mixed-applications.toml", pcap=pcap)
    m = {n: r.component(n).metrics for n in ("server", "reader", "asker", "peer-b", "ttcp-rx")}
    server = m["server"]
    # It serves blocks and answers requests on network A, and on network B
    # reads the files it asks for and sends a whole TTCP stream: the
    # connections it opens left by the adapter that reaches their far end.
    assert m["reader"]["answers_read"] > 500 and m["asker"]["answers_read"] > 300
    assert server["requests_answered"] >= m["reader"]["answers_read"] + m["asker"]["answers_read"]
    assert server["answers_read"] > 500 and m["peer-b"]["requests_answered"] >= server["answers_read"]
    assert server["ttcp_bytes"] == m["ttcp-rx"]["ttcp_bytes"] == 1_000_000
    assert server["transfer_complete"] == m["ttcp-rx"]["transfer_complete"] == 1
    assert r.component("server").text["ttcp_sha256"] == r.component("ttcp-rx").text["ttcp_sha256"]
    assert server["tcp_connections"] == 6
    # Its TTCP figures are the TTCP connection's alone, among all its traffic.
    assert server["data_packets"] == m["ttcp-rx"]["tcp_data_in"] < server["tcp_data_out"] / 10
    assert server["acks_per_data_packet"] == m["ttcp-rx"]["tcp_acks_out"] / m["ttcp-rx"]["tcp_data_in"]
    for name, x in m.items():
        assert x["tcp_retransmits"] == 0 and x["tcp_bad_payload"] == 0 and x["tcp_out_of_order"] == 0, name
    frames = read_pcap(pcap)
    assert len(frames) > 50_000
    for _, f in frames[::50]:
        check_frame(f)


@pytest.mark.parametrize(
    "sets, words",
    [
        # The asker's requests come to port 80, for 20,000-byte files.
        (["--set", "host[0].file_serve.port=80"], "port 80 is taken twice"),
        (["--set", "host[0].file_serve.port=40000"], "port 40000 is taken twice, by file sessions answering"),
    ],
)
def test_the_sessions_of_one_host_keep_their_ports_apart(scenarios, cli, sets, words):
    res = cli("check", str(scenarios / "combinations" / "mixed-applications.toml"), *sets)
    assert res.returncode == 2 and "host[0]" in res.stderr and words in res.stderr


def test_zero_copy_takes_the_application_copy_off_a_host_stack_and_an_offload_engine(scenarios):
    # The sender copies through its own stack's socket buffers at 2 ns a byte;
    # the receiver reads what its offload engine delivers at 10 ns a byte.
    path = scenarios / "combinations" / "napi-host-ttcp.toml"
    sets = {"host[0].costs.copy_ns_per_byte": 2.0}
    copying = nicsim.run(path, overrides=sets)
    pinned = nicsim.run(path, overrides={**sets, "host[0].zero_copy": True, "host[1].zero_copy": True})
    for host, ns_per_byte in (("sender", 2.0), ("receiver", 10.0)):
        a, b = copying.component(host).metrics, pinned.component(host).metrics
        assert a["ttcp_bytes"] == b["ttcp_bytes"] == 2_000_000 and b["transfer_complete"] == 1
        saved = a["host_cpu_seconds"] - b["host_cpu_seconds"]
        assert saved == pytest.approx(2_000_000 * ns_per_byte * 1e-9, rel=0.05), host


def test_an_offload_engine_carries_a_file_servers_sessions(scenarios, tmp_path):
    pcap = tmp_path / "toe.pcap"
    r = nicsim.run(scenarios / "combinations" / "toe-file-server.toml", pcap=pcap)
    m = {n: r.component(n).metrics for n in ("server", "client1", "client2", "store")}
    server = m["server"]
    # Every session is a socket on the engine: it answers the clients' file
    # requests, reads blocks from the store (thinking between them), asks the
    # store for files from 10 ms and sends it a whole TTCP stream.
    asked = m["client1"]["answers_read"] + m["client2"]["answers_read"]
    assert m["client1"]["answers_read"] > 10 and m["client2"]["answers_read"] > 10
    assert asked <= server["requests_answered"] <= asked + 4
    assert server["answers_read"] > 20 and m["store"]["requests_answered"] >= server["answers_read"]
    assert server["ttcp_bytes"] == m["store"]["ttcp_bytes"] == 150_000 and server["transfer_complete"] == 1
    assert r.component("server").text["ttcp_sha256"] == r.component("store").text["ttcp_sha256"]
    assert server["data_packets"] == m["store"]["data_packets"] and server["tcp_connections"] == 7
    # The engine's processor is what limits the server, not the host's.
    assert server["adapter_cpu0_utilization"] > 0.9 and server["cpu0_utilization"] < 0.2
    for name, x in m.items():
        assert x["tcp_retransmits"] == 0 and x["tcp_bad_payload"] == 0 and x["tcp_out_of_order"] == 0, name
    for _, f in read_pcap(pcap)[::10]:
        check_frame(f)


def test_file_sessions_that_start_late_connect_then(scenarios):
    path = scenarios / "combinations" / "hosts-serve-hosts.toml"
    early = nicsim.run(path).component("requester").metrics
    late = nicsim.run(path, overrides={"host[2].file_request.start": "100ms"}).component("requester").metrics
    # Half the run left: about half the files, on the same connections.
    assert 0.3 < late["answers_read"] / early["answers_read"] < 0.7
    assert late["tcp_connections"] == early["tcp_connections"] and late["tcp_retransmits"] == 0


def test_a_programmable_adapters_workload_runs_beside_the_hosts_sessions(scenarios, cli, tmp_path):
    pcap = tmp_path / "w.pcap"
    r = nicsim.run(scenarios / "combinations" / "workload-beside-sessions.toml", pcap=pcap)
    server, client = r.component("server").metrics, r.component("client").metrics
    # The programmable adapter segments all 64 MB onto its link while the
    # host's stack serves files over the ring adapter, which also takes the flood.
    assert server["adapter0_tx_payload_bytes"] == 64 * 2**20
    assert client["answers_read"] > 1000 and server["requests_answered"] >= client["answers_read"]
    assert server["sink_frames"] > 10_000
    for x in (server, client):
        assert x["tcp_retransmits"] == 0 and x["tcp_bad_payload"] == 0 and x["tcp_out_of_order"] == 0
    for _, f in read_pcap(pcap)[::200]:
        check_frame(f)
    # With no other adapter, the sessions have nothing to run over.
    tso = scenarios / "papers" / "patent-direct-tso" / "tso.toml"
    res = cli("check", str(tso), "--set", 'host[0].ttcp={role = "receive", message = 8192}')
    assert res.returncode == 2 and "host[0].send" in res.stderr and "another adapter" in res.stderr
    # Nor with offload engines beside it: an engine carries only the sessions
    # whose far end it reaches (this one panicked before it was refused).
    engines = scenarios / "combinations" / "engines-and-stack.toml"
    programmable = '{processors = 2, clock = "88MHz", memory = 1048576, memory_bandwidth = "5.632Gb/s"}'
    res = cli(
        "check", str(engines),
        "--set", 'host[0].adapter[1].kind="programmable"',
        "--set", f"host[0].adapter[1].programmable={programmable}",
        "--set", 'host[0].send={kind = "dma", direction = "to-host", length = 1512, count = 2000}',
    )
    assert res.returncode == 2 and "host[0].send" in res.stderr and "another adapter" in res.stderr


def test_an_ideal_host_serves_files_to_modelled_and_ideal_readers(scenarios, tmp_path):
    text = (scenarios / "combinations" / "hosts-serve-hosts.toml").read_text()
    start = text.index('[[host]]\nname = "server"')
    end = text.index("[[host]]", start + 1)
    ideal = '[[host]]\nname = "server"\nideal = true\n[host.file_serve]\nread_bytes = 65536\n\n'
    path = tmp_path / "ideal-server.toml"
    path.write_text(text[:start] + ideal + text[end:])
    r = nicsim.run(path)
    server, client, other = (r.component(n).metrics for n in ("server", "client", "ideal-client"))
    # It costs nothing, so the modelled reader's own path is all that limits it.
    assert not any(k.startswith("cpu") for k in server)
    assert client["answers_read"] > 50 and other["answers_read"] > 50
    # The ideal client's answers also count the files it asks the requester for.
    assert client["answers_read"] + 50 < server["requests_answered"] <= client["answers_read"] + other["answers_read"] + 3
    assert server["tcp_connections"] == 3 and server["tcp_retransmits"] == 0


def test_each_session_runs_on_the_adapter_that_reaches_its_far_end(scenarios, tmp_path):
    pcap = tmp_path / "engines.pcap"
    r = nicsim.run(scenarios / "combinations" / "engines-and-stack.toml", pcap=pcap)
    m = {n: r.component(n).metrics for n in ("server", "client1", "client2", "store")}
    server = m["server"]
    # Each engine answers the client on its own network, with its own processor
    # busy; the host's stack reads from the store and sends it a stream.
    for engine, client in (("adapter0", "client1"), ("adapter1", "client2")):
        answered = server[f"{engine}_requests_answered"]
        assert m[client]["answers_read"] > 20 and m[client]["answers_read"] <= answered <= m[client]["answers_read"] + 2
        assert server[f"{engine}_tcp_connections"] == 2 and server[f"{engine}_adapter_cpu0_utilization"] > 0.8
    assert server["answers_read"] > 100 and m["store"]["requests_answered"] >= server["answers_read"]
    assert server["transfer_complete"] == m["store"]["transfer_complete"] == 1 and server["tcp_connections"] == 3
    assert r.component("server").text["ttcp_sha256"] == r.component("store").text["ttcp_sha256"]
    assert server["data_packets"] == m["store"]["data_packets"]
    for name, x in m.items():
        assert x["tcp_retransmits"] == 0 and x["tcp_bad_payload"] == 0, name
    for _, f in read_pcap(pcap)[::10]:
        check_frame(f)


def test_a_blast_leaves_by_the_ring_adapter_that_reaches_its_sink(scenarios, cli, tmp_path):
    # The host of workload-beside-sessions.toml also blasts 64-byte UDP frames
    # at a sink on its ring adapter's network, beside its workload and sessions.
    text = (scenarios / "combinations" / "workload-beside-sessions.toml").read_text()
    text = text.replace('name = "switch"\nports = 3', 'name = "switch"\nports = 4')
    text += '\n[[sink]]\nname = "counter"\n\n[[link]]\nname = "counter-switch"\na = "counter"\nb = "switch:3"\nrate = "10 Gb/s"\n'
    text = text.replace("[host.send]", '[host.blast]\nto = "counter"\nframe_size = 64\ncount = 20000\ncpu = 1\n\n[host.send]')
    path = tmp_path / "blast.toml"
    path.write_text(text)
    r = nicsim.run(path)
    server = r.component("server").metrics
    assert r.metric("counter", "frames") == 20_000 and server["adapter0_tx_payload_bytes"] == 64 * 2**20
    assert r.component("client").metrics["answers_read"] > 500
    # The programmable adapter's network has no ring adapter to blast from.
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('[host.blast]\nto = "counter"', '[host.blast]\nto = "receiver"'))
    res = cli("check", str(bad))
    assert res.returncode == 2 and "host[0].blast.to" in res.stderr and "no ring adapter" in res.stderr
