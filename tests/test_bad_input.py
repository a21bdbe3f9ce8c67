"""Bad input: a clear error naming the key path, exit code 2, no output file."""

import pytest
from snippets import KERNEL_COSTS

GOOD = """
name = "t"
[[source]]
name = "gen"
to = "rx"
frame_size = 1518
count = 10
[[sink]]
name = "rx"
[[switch]]
name = "sw"
ports = 2
[[link]]
name = "l0"
a = "gen"
b = "sw:0"
rate = "1Gbps"
[[link]]
name = "l1"
a = "sw:1"
b = "rx"
rate = "1Gbps"
"""

CASES = {
    "unknown key": (("frame_size = 1518", "frame_size = 1518\ncolour = 'red'"), "source[0].colour", "unknown field"),
    "unknown top-level key": (('name = "t"', 'name = "t"\nspeed = 3'), "speed", "unknown field"),
    "wrong type": (("count = 10", 'count = "many"'), "source[0].count", "invalid type"),
    "wrong type for a rate": (('rate = "1Gbps"\n[[link]]\nname = "l1"', 'rate = true\n[[link]]\nname = "l1"'), "link[0].rate", "invalid type"),
    "zero rate": (('rate = "1Gbps"\n[[link]]\nname = "l1"', 'rate = "0Gbps"\n[[link]]\nname = "l1"'), "link[0].rate", "positive"),
    "negative rate": (('b = "rx"\nrate = "1Gbps"', 'b = "rx"\nrate = -100'), "link[1].rate", "positive"),
    "negative source rate": (("count = 10", 'count = 10\nrate = "-5Mbps"'), "source[0].rate", "positive"),
    "frame below 64": (("frame_size = 1518", "frame_size = 40"), "source[0].frame_size", "below the Ethernet minimum"),
    "frame above the MTU": (("frame_size = 1518", "frame_size = 1519"), "source[0].frame_size", "MTU of 1500"),
    "payload above the MTU": (("frame_size = 1518", "payload_size = 1473"), "source[0].payload_size", "MTU of 1500"),
    "zero queue": (("ports = 2", "ports = 2\nqueue_frames = 0"), "switch[0].queue_frames", "positive"),
    "zero count": (("count = 10", "count = 0"), "source[0].count", "positive"),
    "unknown endpoint": (('b = "sw:0"', 'b = "hub:0"'), "link[0].b", "no source, sink, host, tap or switch"),
    "switch port out of range": (('b = "sw:0"', 'b = "sw:7"'), "link[0].b", "ports 0 to 1"),
    "endless source": (("count = 10", ""), "duration", "no count"),
    # The TCP generator is gone: the error says where TCP comes from now.
    "a tcp source": (("count = 10", 'count = 10\nprotocol = "tcp"'), "source[0].protocol", "come only from a host's TCP: give two hosts a [host.ttcp]"),
    "vlan out of range": (("count = 10", "count = 10\nvlan = 5000"), "source[0].vlan", "0 to 4095"),
    "negative time": (('rate = "1Gbps"\n[[link]]\nname = "l1"', 'rate = "1Gbps"\npropagation = "-5us"\n[[link]]\nname = "l1"'), "link[0].propagation", "negative"),
    "toml syntax": (("count = 10", "count = = 10"), "line 7", "invalid"),
    "number too large for its key": (("count = 10", "count = 99999999999999999999999"), "line 7: source[0].count", "too large"),
    "impossible rate with an exponent": (('b = "rx"\nrate = "1Gbps"', 'b = "rx"\nrate = "1e30Gbps"'), "link[1].rate", "outside 1 b/s to 1 Pb/s"),
    "a name used twice": (('name = "l1"', 'name = "gen"'), "link[1].name", "already the name of source[0]"),
    "a link without a name": (('name = "l1"', 'name = ""'), "link[1].name", "must be non-empty"),
    "a link name with a colon": (('name = "l0"', 'name = "l:0"'), "link[0].name", "without ':'"),
    # A newline split the results table; invisible characters made two names look alike.
    "a name with a newline": (('name = "gen"', 'name = "g\\nen"'), "source[0].name", "printable characters only"),
    "a name with a NUL": (('name = "rx"', 'name = "r\\u0000x"'), "sink[0].name", "U+0000"),
    "a name with a zero-width space": (('name = "sw"', 'name = "s\\u200Bw"'), "switch[0].name", "U+200B"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_scenario(cli, tmp_path, case):
    (old, new), key, words = CASES[case]
    assert old in GOOD
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace(old, new, 1))
    pcap = tmp_path / "out.pcap"
    r = cli("run", bad, "--pcap", pcap)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert key in r.stderr and words in r.stderr, r.stderr
    assert r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"], "nothing half-written"


def test_the_good_scenario_runs(cli, tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    r = cli("run", good, "--json")
    assert r.returncode == 0, r.stderr


def test_missing_file(cli, tmp_path):
    r = cli("run", tmp_path / "nope.toml")
    assert r.returncode == 2 and "nope.toml" in r.stderr


@pytest.mark.parametrize("text", ["", "# nothing but a comment\nseed = 3\n"])
def test_a_scenario_without_parts_is_an_error(cli, tmp_path, text):
    empty = tmp_path / "empty.toml"
    empty.write_text(text)
    for command in ("check", "run"):
        r = cli(command, empty, *(["--pcap", tmp_path / "x.pcap"] if command == "run" else []))
        assert r.returncode == 2 and "empty.toml: has no parts" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.toml"], "nothing written"


def test_a_file_that_is_not_text_is_named_once(cli, tmp_path):
    bad = tmp_path / "g.toml"
    bad.write_bytes(b"\xff\xfe\x00")
    r = cli("check", bad)
    assert r.returncode == 2 and r.stderr.count("g.toml") == 1 and "not UTF-8" in r.stderr, r.stderr


def test_a_name_clash_made_by_set_blames_the_key_that_was_set(cli, tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    r = cli("check", good, "--set", "source[0].name=l1")
    assert r.returncode == 2 and 'source[0].name: "l1" is already the name of link[1]' in r.stderr, r.stderr


def test_unknown_capture_link_writes_nothing(cli, scenarios, tmp_path):
    pcap = tmp_path / "x.pcap"
    r = cli("run", scenarios / "switched-udp.toml", "--pcap", pcap, "--capture", "nowhere")
    assert r.returncode == 2 and "nowhere" in r.stderr
    assert not pcap.exists()


def test_unwritable_pcap_path(cli, scenarios, tmp_path):
    r = cli("run", scenarios / "switched-udp.toml", "--pcap", tmp_path / "no" / "such" / "dir.pcap")
    assert r.returncode == 2 and "dir.pcap" in r.stderr


def test_unknown_option_is_exit_2(cli, scenarios):
    r = cli("run", scenarios / "switched-udp.toml", "--frobnicate")
    assert r.returncode == 2


@pytest.mark.parametrize(
    "scenario, sets, words",
    [
        # Found by fuzzing `--set`: a port count that the segment wiring would
        # have made one by one, and a memory too slow to move a byte a second.
        ("papers/novell1995/server.toml", "host[0].adapter[0].count=4294967296", "host[0].adapter: must make 2 to 64 ports"),
        ("papers/patent-direct-tso/tso.toml", "host[0].adapter[0].programmable.memory_bandwidth=2", "memory_bandwidth: must be at least 8 b/s"),
        # A rate as a plain number is held to the range text is; a source
        # cannot offer more than its link carries (it made a frame a picosecond).
        ("switched-udp.toml", "source[0].rate=9223372036854775807", "outside 1 b/s to 1 Pb/s"),
        ("switched-udp.toml", 'source[0].rate="1000Tbps"', "source[0].rate: offers 1000000000 Mb/s on the wire, above its link's 1000 Mb/s"),
        ("switched-udp.toml", 'source[0].rate="2Mpps"', "above its link's 1000 Mb/s"),
        ("papers/ibm2001/server.toml", "host[0].clock=1", "outside 1 kHz to 100 GHz"),
        # A blast on a host with no ring adapter panicked; an offload engine takes no raw frames.
        ("papers/hp2001/send.toml", 'host[0].blast={to = "x", frame_size = 64}', "host[0].blast: runs through a ring or programmable adapter"),
        # The frame workload takes the programmable adapter: a blast has none to leave by.
        ("papers/malta2001/send.toml", 'host[0].blast={to = "tester", frame_size = 64, count = 10}', "host[0].blast.to: no adapter of the host that takes raw frames"),
        # A run shorter than a host's warmup measured nothing and said so only in zeros.
        ("papers/ibm2001/server.toml", "duration=100ms", "host[0].warmup: 200 ms is not before the end of the run at 100 ms"),
    ],
)
def test_impossible_settings_are_refused_at_once(cli, scenarios, scenario, sets, words):
    r = cli("check", scenarios / scenario, "--set", sets, timeout=30)
    assert r.returncode == 2 and words in r.stderr, r.stderr


APART = """
name = "apart"
duration = "20ms"
[[host]]
name = "server"
clock = "2GHz"
""" + KERNEL_COSTS + """[host.bus]
kind = "pcie"
[[host]]
name = "near"
ideal = true
[[host]]
name = "far"
ideal = true
[host.file_serve]
[[sink]]
name = "far-sink"
[[switch]]
name = "sw"
ports = 3
[[link]]
name = "a"
a = "server"
b = "near"
rate = "1Gbps"
[[link]]
name = "b0"
a = "far"
b = "sw:0"
rate = "1Gbps"
[[link]]
name = "b1"
a = "far-sink"
b = "sw:1"
rate = "1Gbps"
"""


@pytest.mark.parametrize(
    "app, key, reached",
    [
        ('host[0].file_request={peers = ["far"]}', "host[0].file_request.peers[0]", 'host[0].file_request={peers = ["near"]}'),
        ('host[0].file_read={from = "far"}', "host[0].file_read.from", None),
        (
            'host[0].ttcp={role = "send", message = 8192, bytes = 100000, to = "far"}',
            "host[0].ttcp.to",
            'host[0].ttcp={role = "send", message = 8192, bytes = 100000, to = "near"}',
        ),
        ('host[0].blast={to = "far-sink", frame_size = 64}', "host[0].blast.to", None),
        ('host[1].file_request={peers = ["far"]}', "host[1].file_request.peers[0]", 'host[1].file_request={peers = ["server"]}'),
    ],
)
def test_an_application_naming_a_station_its_host_cannot_reach_is_refused(cli, tmp_path, app, key, reached):
    path = tmp_path / "apart.toml"
    path.write_text(APART)
    res = cli("run", path, "--set", app)
    assert res.returncode == 2, res.stderr
    assert key in res.stderr and "is on no network that" in res.stderr
    if reached:  # the same application towards a station it reaches is accepted
        ok = cli("check", path, "--set", reached)
        assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(
    "scenario, sets, key",
    [
        ("papers/ibm2001/server.toml", [], 'host[0].file_request ("server") asks for files for ever'),
        ("combinations/hosts-serve-hosts.toml", [], "host[1].file_read"),
        ("modern/40g-dpdk.toml", ["--set", "source[0].count=1000"], 'host[0].blast ("server") has no count'),
    ],
)
def test_an_application_that_never_stops_needs_a_duration(cli, scenarios, tmp_path, scenario, sets, key):
    text = (scenarios / scenario).read_text()
    path = tmp_path / "endless.toml"
    path.write_text("\n".join(line for line in text.splitlines() if not line.startswith("duration = ")))
    res = cli("check", path, *sets)
    assert res.returncode == 2 and "duration: needed: " in res.stderr and key in res.stderr, res.stderr
    assert cli("check", path, *sets, "--set", "duration=1s").returncode == 0


def test_unwritable_pcapng_path(cli, scenarios, tmp_path):
    r = cli("run", scenarios / "switched-udp.toml", "--pcap", tmp_path / "no" / "such" / "dir.pcapng")
    assert r.returncode == 2 and "dir.pcapng" in r.stderr
    assert not (tmp_path / "no").exists()


LOOPED = GOOD.replace("ports = 2", "ports = 4") + """
[[link]]
name = "loop"
a = "sw:2"
b = "sw:3"
rate = "1Gbps"
"""


def test_a_loop_of_switches_without_a_duration_is_refused(cli, tmp_path):
    """Two ports of a switch cabled together flooded frames round the loop for
    ever: 413 s simulated in 12 s and counting, and `check` said ok."""
    f = tmp_path / "loop.toml"
    f.write_text(LOOPED)
    for command in ("check", "run"):
        r = cli(command, f, timeout=60)
        assert r.returncode == 2, r.stderr
        assert 'duration: needed: link[2] ("loop") closes a loop of switches' in r.stderr
    f.write_text('duration = "1ms"\n' + LOOPED)
    assert cli("check", f).returncode == 0, "with a duration a storm runs, as on a real network"


def test_a_source_that_outlasts_the_clock_without_a_duration_is_refused(cli, tmp_path):
    f = tmp_path / "long.toml"
    f.write_text(GOOD.replace("count = 10", "count = 1000000000000000000"))
    r = cli("check", f)
    assert r.returncode == 2 and "source[0].count: 1000000000000000000 frames take" in r.stderr and "days of the simulator's clock" in r.stderr, r.stderr
    f.write_text(GOOD.replace("count = 10", "count = 1000000000"))
    assert cli("check", f).returncode == 0, "3.4 hours of frames is long, but it ends"


def test_a_misspelt_link_end_is_the_error_reported(cli, scenarios, tmp_path):
    """Checked first, a bad end was reported as a file peer that reaches no
    network: the consequence, not the cause."""
    text = (scenarios / "papers" / "ibm2001" / "server.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('b = "switch:5"', 'b = "nosuchswitch:5"'))
    r = cli("check", bad)
    assert r.returncode == 2 and 'link[5].b: no source, sink, host, tap or switch is named "nosuchswitch"' in r.stderr, r.stderr
