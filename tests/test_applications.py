"""Applications of different hosts combined in one scenario (issue 17): ideal
hosts at either end of a transfer, file serving and reading beside TTCP and
blasts, sessions on whichever adapter reaches their far end. Each test runs a
shipped scenario, checks the behaviour that makes it that combination, and that
every frame it put on the wire parses in dpkt."""

import pytest

import nicsim

from frames import check_frame, read_pcap
from transfers import transfer


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
    whole = nicsim.run(path, overrides={"duration": "100ms", "host[0].warmup": "0ms"}).component("client1").metrics
    late = nicsim.run(path, overrides={"duration": "100ms", "host[0].warmup": "0ms", "host[1].warmup": "50ms"}).component("client1").metrics
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
    assert r.component("server").text["ttcp_xxh128"] == r.component("ttcp-rx").text["ttcp_xxh128"]
    assert server["tcp_connections"] == 6
    # Its TTCP figures are the TTCP connection's alone, among all its traffic.
    assert server["data_packets"] == m["ttcp-rx"]["tcp_data_in"] < server["tcp_data_out"] / 10
    assert server["acks_per_data_packet"] == m["ttcp-rx"]["tcp_acks_out"] / m["ttcp-rx"]["tcp_data_in"]
    for name, x in m.items():
        assert x["tcp_retransmits"] == 0 and x["tcp_bad_payload"] == 0 and x["tcp_out_of_order"] == 0, name
    # The server's first SYN to ttcp-rx, which network B's switch has not heard
    # from yet, is flooded to peer-b too: its adapter's address filter drops it
    # at the MAC, before the bus, the driver or the stack see it.
    assert m["peer-b"]["frames_not_for_us"] >= 1 and m["peer-b"]["rx_unclaimed"] == 0
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
    # the receiver reads what its offload engine delivers at 5.6 ns a byte.
    path = scenarios / "combinations" / "napi-host-ttcp.toml"
    sets = {"host[0].costs.copy_ns_per_byte": 2.0}
    copying = nicsim.run(path, overrides=sets)
    pinned = nicsim.run(path, overrides={**sets, "host[0].zero_copy": True, "host[1].zero_copy": True})
    for host, ns_per_byte in (("sender", 2.0), ("receiver", 5.6)):
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
    assert r.component("server").text["ttcp_xxh128"] == r.component("store").text["ttcp_xxh128"]
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
    # The first 20,000 frames: the whole run's capture is 333 MB.
    r = nicsim.run(scenarios / "combinations" / "workload-beside-sessions.toml", pcap=pcap, capture_limit=20_000)
    server, client = r.component("server").metrics, r.component("client").metrics
    # The programmable adapter sends all 43,000 frames onto its link while the
    # host's stack serves files over the ring adapter, which also takes the flood.
    assert server["adapter0_tx_frames"] == r.metric("receiver", "frames") == 43_000
    assert client["answers_read"] > 1000 and server["requests_answered"] >= client["answers_read"]
    assert server["sink_frames"] > 10_000
    for x in (server, client):
        assert x["tcp_retransmits"] == 0 and x["tcp_bad_payload"] == 0 and x["tcp_out_of_order"] == 0
    frames = read_pcap(pcap)
    assert len(frames) == 20_000 and r.data["frames_not_captured"] > 100_000
    for _, f in frames[::20]:
        check_frame(f)
    # With no other adapter, the sessions have nothing to run over.
    malta = scenarios / "papers" / "malta2001" / "send.toml"
    res = cli("check", str(malta), "--set", 'host[0].ttcp={role = "receive", message = 8192}')
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
    assert r.component("server").text["ttcp_xxh128"] == r.component("store").text["ttcp_xxh128"]
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
    assert r.metric("counter", "frames") == 20_000 and server["adapter0_tx_frames"] == 43_000
    assert r.component("client").metrics["answers_read"] > 500
    # The one adapter on the receiver's network is the frame workload's.
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('[host.blast]\nto = "counter"', '[host.blast]\nto = "receiver"'))
    res = cli("check", str(bad))
    assert res.returncode == 2 and "host[0].blast.to: no adapter of the host that takes raw frames" in res.stderr


def test_a_blast_through_a_programmable_adapter_is_the_frame_workload_with_every_slot_posted(scenarios, tmp_path):
    # One sender: Malta's frame workload with all 64 send slots posted, and a
    # blast of the same frames through the same adapter, give the same run.
    text = (scenarios / "papers" / "malta2001" / "send.toml").read_text()
    assert "outstanding = 32" in text and "[host.send]" in text
    workload = tmp_path / "workload.toml"
    workload.write_text(text.replace("outstanding = 32", "outstanding = 64"))
    blast = tmp_path / "blast.toml"
    blast.write_text(text.replace('[host.send]\nkind = "frames"', "[host.blast]").replace("per_chunk = 1\noutstanding = 32\n", ""))
    a, b = nicsim.run(workload), nicsim.run(blast)
    assert a.component("tester").metrics == b.component("tester").metrics
    sent = {k.replace("send_", "blast_", 1): v for k, v in a.component("host").metrics.items()}
    assert sent == b.component("host").metrics, "the same figures, the sender's named after its table"
    host = b.component("host").metrics
    assert host["blast_frames"] == host["sends_completed"] == 20_000
    tester = b.component("tester").metrics
    assert tester["frames"] == 20_000 and tester["bad_checksums"] == 0, "the adapter summed every frame's checksums"
    assert host["cpu0_app"] > 0.1, "the send calls are the application's work"


def test_hosts_of_different_mtus_agree_on_the_smaller_segment(scenarios, cli, tmp_path):
    path = scenarios / "combinations" / "ideal-host-ttcp.toml"
    sizes = {}
    for receiver_mtu in (1500, 9000):
        pcap = tmp_path / f"mtu{receiver_mtu}.pcap"
        r = nicsim.run(path, overrides={"mtu": 9000, "host[1].mtu": receiver_mtu, "host[0].ttcp.bytes": 400_000}, pcap=pcap)
        transfer(r, "sender", "receiver", 400_000)
        frames = [check_frame(b) for _, b in read_pcap(pcap)]
        sizes[receiver_mtu] = max(f["payload_len"] for f in frames if f["l4"] == "tcp")
    # The jumbo sender honours the MSS the standard receiver advertises (MTU - 40).
    assert sizes == {1500: 1460, 9000: 8960}
    res = cli("check", str(path), "--set", "host[1].mtu=9000")
    assert res.returncode == 2 and "host[1].mtu" in res.stderr and "scenario's mtu (1500)" in res.stderr
