"""XDP in the driver (issue 56): an eBPF program runs over every received frame
before the stack, and its verdict decides where the frame goes. Each verdict is
checked on real frames: a dropped frame never reaches the stack, a frame sent
back leaves the port it came in by with its addresses swapped (read back from
the capture with dpkt), a redirected one leaves by the adapter named or reaches
an AF_XDP socket's application, and a
program that loops or names nothing real is refused before anything runs."""

import dpkt
import pytest

import nicsim

from frames import check_frame, read_pcap

XDP = "combinations/xdp-in-the-driver.toml"
TESTER_MAC, SERVER_MAC = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def server(scenarios, sets, pcap=None):
    r = nicsim.run(scenarios / XDP, overrides=sets, pcap=pcap)
    return r.component("server").metrics


def with_xdp(scenarios, tmp_path, table, more=""):
    """The XDP scenario with its `[host.driver.xdp]` table's keys replaced by `table`
    (TOML), and `more` added at the end."""
    text = (scenarios / XDP).read_text()
    start = text.index("[host.driver.xdp]\n") + len("[host.driver.xdp]\n")
    end = text.index("\n\n", start)
    path = tmp_path / "xdp.toml"
    path.write_text(text[:start] + table + text[end:] + more)
    return path


def program(name, **more):
    return {"host[0].driver.xdp.program": name, **{f"host[0].driver.xdp.{k}": v for k, v in more.items()}}


def test_a_dropped_frame_never_reaches_the_stack(scenarios):
    m = server(scenarios, program("drop"))
    assert m["rx_frames"] - 64 < m["xdp_drop"] <= m["rx_frames"], "every frame taken but the last poll's"
    assert m["sink_frames"] == m["rx_unclaimed"] == m["xdp_pass"] == m["tx_frames"] == 0


def test_a_port_filter_drops_its_port_and_passes_the_rest_to_the_stack(scenarios):
    dropped = server(scenarios, program("port-filter", port=9))
    assert dropped["xdp_drop"] > 1500 and dropped["xdp_pass"] == dropped["sink_frames"] == 0, "the tester's UDP goes to port 9"
    passed = server(scenarios, program("port-filter", port=53))
    assert passed["xdp_pass"] > 1500 and passed["xdp_drop"] == 0
    assert passed["sink_frames"] > 1000, "what passes reaches the stack, counted after the warm-up"


def test_mac_swap_sends_each_frame_back_out_of_its_port_addresses_swapped(scenarios, tmp_path):
    pcap = tmp_path / "x.pcap"
    m = server(scenarios, program("mac-swap"), pcap=pcap)
    frames = [dpkt.ethernet.Ethernet(buf) for _, buf in read_pcap(pcap)]
    back = [f for f in frames if f.src == SERVER_MAC]
    sent = [f for f in frames if f.src == TESTER_MAC]
    assert m["xdp_tx"] > 1500 and m["sink_frames"] == 0
    assert len(back) == m["tx_frames"] >= m["xdp_tx"] - 64, "all sent back but those still in the ring at the end"
    assert all(f.dst == TESTER_MAC for f in back), "the source's address is now the destination"
    # The frames come back as they went, but for the addresses: checksums still hold.
    for f in back:
        check_frame(bytes(f))
    assert bytes(back[0].data) == bytes(sent[0].data)


def test_a_program_of_ones_own_redirects_out_of_another_adapter(scenarios, tmp_path):
    redirect = '"""\nmov64 r1, 1   ; adapter 1\nmov64 r2, 0\ncall 23       ; bpf_redirect\nexit\n"""'
    far = '\n[[sink]]\nname = "far"\n\n[[link]]\nname = "server-far"\na = "server:1"\nb = "far"\nrate = "10Gbps"\n'
    path = with_xdp(scenarios, tmp_path, f"source = {redirect}\n", far)
    path.write_text(path.read_text().replace('b = "server"', 'b = "server:0"'))
    pcap = tmp_path / "r.pcap"
    r = nicsim.run(path, overrides={"host[0].adapter[0].count": 2}, pcap=pcap, capture=["server-far"])
    m = r.component("server").metrics
    assert m["xdp_redirect"] > 1500 and m["xdp_tx"] == m["xdp_pass"] == 0
    out = [dpkt.ethernet.Ethernet(buf) for _, buf in read_pcap(pcap)]
    assert len(out) == m["adapter1_tx_frames"] > 1400 and m["adapter0_tx_frames"] == 0, "out of adapter 1 alone"
    assert all(f.src == TESTER_MAC for f in out), "sent on as they came"


def test_frames_for_an_af_xdp_socket_reach_its_application_and_never_the_stack(scenarios):
    """The shipped "to-socket" program hands each frame to its queue's AF_XDP
    socket (bpf_redirect_map over the sockets' map): the socket's application
    takes every one, at its own cycles a frame, and the stack sees none."""
    m = server(scenarios, program("to-socket"))
    assert m["xdp_redirect"] > 1500 and m["xdp_pass"] == m["xdp_drop"] == m["xdp_aborted"] == 0
    assert m["rx_frames"] - 64 < m["xdp_socket_frames"] <= m["xdp_redirect"], "every frame but the last poll's"
    assert m["xdp_socket_bytes"] == 60 * m["xdp_socket_frames"], "64-byte frames, FCS stripped"
    assert m["sink_frames"] == m["tx_frames"] == 0
    costly = server(scenarios, program("to-socket", socket_cycles=3000))
    # 1 million frames a second at 3 GHz: 1,000 more cycles each is a third of the processor.
    extra = costly["cpu_utilization"] - m["cpu_utilization"]
    assert extra == pytest.approx((3000 - 48) / 3e9 * costly["xdp_socket_frames_per_s"], rel=0.05), extra


def test_a_socket_the_map_lacks_takes_the_programs_fallback_verdict(scenarios, tmp_path):
    """bpf_redirect_map returns the low bits of its flags where the map has no
    entry, as Linux's does: queue 1 has no socket, so the frame passes."""
    missing = '"""\nmov64 r1, 0\nmov64 r2, 1   ; queue 1: none\nmov64 r3, 2   ; XDP_PASS\ncall 51\nexit\n"""'
    m = nicsim.run(with_xdp(scenarios, tmp_path, f"source = {missing}\n")).component("server").metrics
    assert m["xdp_pass"] > 1500 and m["xdp_socket_frames"] == m["xdp_redirect"] == 0
    assert m["sink_frames"] > 1000, "passed up to the stack"


@pytest.mark.parametrize(
    "table, words",
    [
        ('source = """\ntop:\nmov64 r0, 2\nja top\nexit\n"""\n', "line 3: jumps backwards (a program may not loop)"),
        ('program = "nope"\n', 'no shipped program "nope"'),
        ('program = "port-filter"\n', "give `port`"),
        ('source = "mov64 r0, 2"\n', "source: "),
        ('program = "drop"\nsource = "exit"\n', "not both"),
        ('program = "drop"\nport = 9\n', "drop takes no port"),
        ('program = "to-cpu"\n', "give `cpu`"),
        ('program = "drop"\ncpu = 1\n', "drop takes no cpu"),
    ],
)
def test_a_program_that_loops_or_is_not_a_program_is_refused_naming_the_key(cli, scenarios, tmp_path, table, words):
    pcap = tmp_path / "x.pcap"
    r = cli("run", "--pcap", pcap, with_xdp(scenarios, tmp_path, table))
    assert r.returncode == 2 and "host[0].driver.xdp" in r.stderr and words in r.stderr, r.stderr
    assert not pcap.exists(), "nothing half-written"


MALTA = "papers/malta2001/receive.toml"
OFFLOAD = "host[0].adapter[0].programmable.receive.xdp"


def adapter(scenarios, sets, pcap=None):
    return nicsim.run(scenarios / MALTA, overrides=sets, pcap=pcap).component("host").metrics


def test_offloaded_xdp_drops_on_the_adapter_before_any_transfer_at_its_own_cycles(scenarios):
    plain = adapter(scenarios, {})
    m = adapter(scenarios, {f"{OFFLOAD}.program": "drop"})
    assert m["xdp_offload_drop"] == m["rx_frames"] > 1000
    assert m["rx_delivered_frames"] == m["host_bus_bytes"] == 0, "nothing crosses the bus to the host"
    assert plain["rx_delivered_frames"] > 500 and plain["host_bus_bytes"] > 1_000_000, "without it, frames go to the host"
    costly = adapter(scenarios, {f"{OFFLOAD}.program": "drop", f"{OFFLOAD}.cycles": 1048})
    # 1,000 more of the receiving processor's cycles a frame.
    assert costly["adapter_cpu1_cycles"] - m["adapter_cpu1_cycles"] == 1000 * m["rx_frames"]


def test_offloaded_mac_swap_sends_frames_back_from_the_adapter(scenarios, tmp_path):
    pcap = tmp_path / "o.pcap"
    m = adapter(scenarios, {f"{OFFLOAD}.program": "mac-swap"}, pcap=pcap)
    frames = [dpkt.ethernet.Ethernet(buf) for _, buf in read_pcap(pcap)]
    tester = frames[0].src
    back = [f for f in frames if f.dst == tester]
    assert m["xdp_offload_tx"] == m["rx_frames"] and len(back) >= m["xdp_offload_tx"] - 2, "all but any still on the wire"
    assert all(f.src == frames[0].dst for f in back) and m["host_bus_bytes"] == 0
    for f in back:
        check_frame(bytes(f))


def test_an_adapter_cannot_redirect_so_its_redirects_abort(scenarios, tmp_path):
    path = tmp_path / "r.toml"
    text = (scenarios / MALTA).read_text()
    path.write_text(text.replace("rx_buffers = 256", 'rx_buffers = 256\n\n[host.adapter.programmable.receive.xdp]\nsource = """\nmov64 r1, 1\nmov64 r2, 0\ncall 23\nexit\n"""'))
    m = nicsim.run(path).component("host").metrics
    assert m["xdp_offload_aborted"] == m["rx_frames"] > 1000 and m["xdp_offload_redirect"] == 0


def test_a_frame_sent_back_is_timed_from_its_last_bit_in_to_its_first_bit_out(scenarios, tmp_path):
    """The forwarding latency: a lone frame's, read from the capture (its arrival
    at the server's end of the link is its last bit in), equals the model's."""
    pcap = tmp_path / "x.pcap"
    sets = {**program("mac-swap"), "source[0].rate": "1000pps", "duration": "5ms", "host[0].warmup": "0s"}
    m = server(scenarios, sets, pcap=pcap)
    frames = [(float(ts), dpkt.ethernet.Ethernet(buf)) for ts, buf in read_pcap(pcap)]
    sent = [ts for ts, f in frames if f.src == TESTER_MAC]
    back = [ts for ts, f in frames if f.src == SERVER_MAC]
    assert len(sent) == len(back) == m["xdp_tx"] == 5
    wire = 84 * 8 / 10e9  # a 64-byte frame with preamble and gap at 10 Gb/s
    # The capture stamps a frame when its first bit leaves, so the last bit in is one frame's time later.
    gaps = [(b - (s + wire)) * 1e6 for s, b in zip(sent, back)]
    assert m["mean_forward_us"] == pytest.approx(sum(gaps) / len(gaps), abs=0.01)
    assert 0.5 < m["mean_forward_us"] < 20, "a DMA each way, an interrupt and a poll, at most"


def test_each_verdicts_rate_and_the_frames_handled_are_counted_after_the_warm_up(scenarios):
    dropped = server(scenarios, program("drop"))
    assert dropped["xdp_drop_per_s"] == pytest.approx(1e6, rel=0.02), "the tester's 1 Mpps, all dropped"
    assert dropped["rx_handled_per_s"] == dropped["xdp_drop_per_s"] == pytest.approx(dropped["rx_taken_per_s"])
    passed = server(scenarios, program("port-filter", port=53))
    assert passed["xdp_pass_per_s"] == pytest.approx(1e6, rel=0.02)
    assert passed["rx_handled_per_s"] == pytest.approx(passed["sink_frame_rate_pps"]), "what passes ends at the sink"


CPUS = {"host[0].cpus": 2, "host[0].costs.wakeup": 2000, "host[0].costs.handoff": 100}


def test_a_cpu_map_hands_each_frame_to_another_processor_whose_stack_takes_it(scenarios):
    """`to-cpu`: the driver's processor runs the program and hands each frame
    on; the other one does its protocol work, woken (and paying the wake-up)
    each time it had gone idle."""
    here = server(scenarios, {**CPUS, **program("drop")})
    m = server(scenarios, {**CPUS, **program("to-cpu", cpu=1)})
    assert m["xdp_redirect"] > 1500 and m["xdp_pass"] == m["xdp_drop"] == 0
    assert m["sink_frames"] > 1000, "the other processor's stack took them"
    assert m["rx_handled_per_s"] == pytest.approx(m["sink_frame_rate_pps"]), "each frame counted once, where its way ends"
    assert m["cpu1_deferred"] > 0 and here["cpu1_deferred"] == 0
    # 1 Mpps of frames at 3 GHz: the stack's 700 cycles a frame, and the wake-ups, are processor 1's.
    cycles = m["cpu1_cycles"] - m["wakeups"] * 2000
    assert cycles == pytest.approx(700 * m["xdp_redirect"], rel=0.05)
    assert 0 < m["wakeups"] <= m["xdp_redirect"]
    assert m["cpu0_cycles"] > here["cpu0_cycles"], "handing a frame on costs its processor"


def test_a_wake_up_takes_its_time_before_the_stack_sees_the_frame(scenarios):
    slow = {**CPUS, **program("to-cpu", cpu=1), "source[0].rate": "10kpps", "duration": "5ms"}
    prompt = server(scenarios, slow)
    late = server(scenarios, {**slow, "host[0].costs.wakeup_latency": "20us"})
    assert late["wakeups"] == prompt["wakeups"] == late["xdp_redirect"], "frames 100 µs apart: each finds the processor asleep"
    assert late["mean_rx_to_stack_us"] - prompt["mean_rx_to_stack_us"] == pytest.approx(20, abs=0.01)


def test_a_cpu_the_host_lacks_takes_the_programs_fallback_and_passes(scenarios):
    m = server(scenarios, {**CPUS, **program("to-cpu", cpu=7)})
    assert m["xdp_pass"] > 1500 and m["xdp_redirect"] == m["wakeups"] == 0


def test_each_queue_has_its_socket_and_a_program_reads_its_queue(scenarios, tmp_path):
    """With four queues, `to-socket` hands each frame to its own queue's socket;
    a program that passes only queue 2's frames (`rx_queue_index`, at 16 in the
    context) passes exactly those RSS put on queue 2."""
    queues = {"host[0].cpus": 4, "host[0].adapter[0].queues": 4, "source[0].source_ports": 64}
    m = server(scenarios, {**queues, **program("to-socket")})
    assert m["xdp_redirect"] > 1500 and m["xdp_pass"] == 0
    # Each queue's application may not have taken its last poll's frames when the run ends.
    assert m["xdp_redirect"] - 4 * 64 <= m["xdp_socket_frames"] <= m["xdp_redirect"]
    assert all(m[f"queue{q}_rx_frames"] > 300 for q in range(4)), "RSS spreads the 64 flows"
    only_2 = '"""\nldxw r2, [r1+16]\njne r2, 2, drop\nmov64 r0, 2\nexit\ndrop:\nmov64 r0, 1\nexit\n"""'
    path = with_xdp(scenarios, tmp_path, f"source = {only_2}\n")
    m = nicsim.run(path, overrides=queues).component("server").metrics
    others = sum(m[f"queue{q}_rx_frames"] for q in (0, 1, 3))
    # All but what the last poll of each queue left in its ring.
    assert m["queue2_rx_frames"] - 64 <= m["xdp_pass"] <= m["queue2_rx_frames"] and m["xdp_pass"] > 300
    assert others - 3 * 64 <= m["xdp_drop"] <= others
