"""Every frame a scenario writes to pcap parses in dpkt with valid checksums."""

import json

import nicsim

from frames import check_frame, read_pcap, read_pcapng


def test_every_captured_frame_parses_with_valid_checksums(cli, scenarios, tmp_path):
    pcap = tmp_path / "switched.pcap"
    r = cli("run", scenarios / "switched-udp.toml", "--pcap", pcap)
    assert r.returncode == 0, r.stderr
    frames = read_pcap(pcap)
    assert len(frames) > 1000
    kinds = {(f["ip"], f["l4"]) for f in map(check_frame, (b for _, b in frames))}
    assert kinds == {(4, "udp"), (6, "udp")}
    stamps = [ts for ts, _ in frames]
    assert stamps == sorted(stamps), "pcap records are in time order"


def test_tcp_and_raw_frames_in_the_efficiency_scenario(cli, scenarios, tmp_path):
    pcap = tmp_path / "eff.pcap"
    r = cli("run", scenarios / "wire-efficiency.toml", "--pcap", pcap, "--capture", "wire-tcp", "--capture-limit", "3000")
    assert r.returncode == 0, r.stderr
    frames = [check_frame(b) for _, b in read_pcap(pcap)]
    assert len(frames) == 3000 and all(f["l4"] == "tcp" for f in frames), "the stack's segments and ACKs, checksums valid"
    # The sender's stream to TTCP's port: each segment starts where the last ended,
    # full-size (the hosts' MTU of 1,500).
    data = [f for f in frames if f["ports"][1] == 5001 and f["payload_len"] > 0]
    assert len(data) > 1900 and all(f["payload_len"] == 1460 for f in data)
    assert all(b["seq"] - a["seq"] == 1460 for a, b in zip(data, data[1:]))
    acks = [f for f in frames if f["ports"][0] == 5001]
    assert acks and all(f["payload_len"] == 0 for f in acks), "the receiver only acknowledges"
    r = cli("run", scenarios / "wire-efficiency.toml", "--pcap", pcap, "--capture", "wire-64")
    raw = [check_frame(b) for _, b in read_pcap(pcap)]
    assert len(raw) == 100_000 and all(f["type"] == 0x88B5 for f in raw)


def test_minimum_frames_are_padded_to_60_bytes_before_the_fcs(cli, scenarios, tmp_path):
    pcap = tmp_path / "min.pcap"
    cli("run", scenarios / "wire-efficiency.toml", "--pcap", pcap, "--capture", "wire-64")
    lengths = {len(b) for _, b in read_pcap(pcap)}
    assert lengths == {60}


def test_timestamps_follow_the_line_rate(cli, scenarios, tmp_path):
    pcap = tmp_path / "t.pcap"
    cli("run", scenarios / "wire-efficiency.toml", "--pcap", pcap, "--capture", "wire-1536")
    ts = [t for t, _ in read_pcap(pcap)]
    gaps = {round(float(b - a) * 1e9, 3) for a, b in zip(ts, ts[1:])}
    assert gaps == {12288.0}, "1536 true bytes at 1 Gb/s are 12.288 us apart"


def test_a_switch_with_ports_left_unlinked_floods_the_linked_ones(scenarios, tmp_path):
    # Found by fuzzing: a flood to a port with no link stopped the run.
    pcap = tmp_path / "spare.pcap"
    spare = nicsim.run(scenarios / "switched-udp.toml", overrides={"switch[0].ports": 8}, pcap=pcap).component("sw").metrics
    full = nicsim.run(scenarios / "switched-udp.toml").component("sw").metrics
    assert spare["flooded"] > 1000 and all(spare[f"port{p}_forwarded"] == 0 for p in range(3, 8))
    assert {k: v for k, v in spare.items() if not k.startswith(("port3", "port4", "port5", "port6", "port7"))} == full
    for _, f in read_pcap(pcap)[::50]:
        check_frame(f)


def test_a_pcapng_capture_names_each_link_and_each_frames_direction(cli, scenarios, tmp_path):
    ng, flat = tmp_path / "switched.pcapng", tmp_path / "switched.pcap"
    assert cli("run", scenarios / "switched-udp.toml", "--pcap", ng).returncode == 0
    assert cli("run", scenarios / "switched-udp.toml", "--pcap", flat).returncode == 0
    interfaces, records = read_pcapng(ng)
    assert [i["name"] for i in interfaces] == ["alice-sw", "bob-sw", "sw-server"]
    assert interfaces[0]["description"] == 'nicsim link "alice-sw": a = alice, b = sw:0; outbound is a to b'
    assert {i["tsresol"] for i in interfaces} == {9}, "nanosecond stamps"
    # The same records as the pcap, in the same order.
    assert [(t, b) for _, _, t, b in records] == [(round(ts * 10**9), bytes(b)) for ts, b in read_pcap(flat)]
    # Each link's records are what a capture of that link alone holds.
    for i, link in enumerate(["alice-sw", "bob-sw", "sw-server"]):
        one = tmp_path / f"{link}.pcap"
        assert cli("run", scenarios / "switched-udp.toml", "--pcap", one, "--capture", link).returncode == 0
        assert [b for j, _, _, b in records if j == i] == [bytes(b) for _, b in read_pcap(one)]
    # Outbound is end a to end b: alice's frames leave her, bob's reach her flooded.
    alice = {b[6:12] for j, d, _, b in records if j == 0 and d == 2}
    reach = {b[6:12] for j, d, _, b in records if j == 0 and d == 1}
    assert len(alice) == 1 and reach and alice.isdisjoint(reach)
    assert {d for j, d, _, _ in records if j == 2} == {2}, "the switch sends to the server, never back"
    for _, _, _, b in records[::40]:
        check_frame(b)


def test_a_pcapng_capture_counts_each_links_frames_and_losses(cli, scenarios, tmp_path):
    ng = tmp_path / "lossy.pcapng"
    r = nicsim.run(scenarios / "switched-udp.toml", overrides={"link[0].loss": 0.1}, pcap=ng)
    interfaces, records = read_pcapng(ng)
    lost = r.component("alice-sw").metrics["impaired_dropped"]
    assert lost > 100
    assert [i["dropped"] for i in interfaces] == [lost, 0, 0]
    assert [i["received"] for i in interfaces] == [sum(1 for j, *_ in records if j == k) for k in range(3)]


def test_a_capture_limit_keeps_the_first_frames_and_counts_the_rest(cli, scenarios, tmp_path):
    pcap = tmp_path / "first.pcap"
    r = cli("run", scenarios / "switched-udp.toml", "--pcap", pcap, "--capture-limit", "100", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    frames = read_pcap(pcap)
    assert len(frames) == result["frames_captured"] == 100 and result["frames_not_captured"] > 0
    assert [ts for ts, _ in frames] == sorted(ts for ts, _ in frames), "the first frames, in order"
    for _, f in frames:
        check_frame(f)
    whole = cli("run", scenarios / "switched-udp.toml", "--json")
    assert "more past --capture-limit" in cli("run", scenarios / "switched-udp.toml", "--pcap", pcap, "--capture-limit", "100").stdout
    assert json.loads(whole.stdout)["frames_not_captured"] == 0
    assert cli("run", scenarios / "switched-udp.toml", "--capture-limit", "-1").returncode == 2
