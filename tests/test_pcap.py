"""Every frame a scenario writes to pcap parses in dpkt with valid checksums."""

import nicsim

from frames import check_frame, read_pcap


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
    r = cli("run", scenarios / "wire-efficiency.toml", "--pcap", pcap, "--capture", "wire-tcp", "--capture", "wire-64")
    assert r.returncode == 0, r.stderr
    frames = [check_frame(b) for _, b in read_pcap(pcap)]
    tcp = [f for f in frames if f["l4"] == "tcp"]
    raw = [f for f in frames if f["type"] == 0x88B5]
    assert len(tcp) == 10_000 and len(raw) == 100_000
    # A byte stream: each segment starts where the previous one ended.
    seqs = [f["seq"] for f in tcp]
    assert all(f["payload_len"] == 1460 for f in tcp)
    assert all(b - a == 1460 for a, b in zip(seqs, seqs[1:]))
    ids = [f["id"] for f in tcp]
    assert ids == [i % 65536 for i in range(len(ids))]


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
