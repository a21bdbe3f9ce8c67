"""`nicsim bench --case CASE --instructions`: callgrind's output read right (each
function's own instructions, names given once and then by number, a call's
inclusive cost not counted as the caller's), functions put in the part of the
model they belong to, and a counted run whose figures add up."""

import json
import os
import shutil

import pytest

from nicsim.bench import instructions as benchinstr

# Written as callgrind writes it: names compressed to "(id)" after their first
# use (in fn= or cfn=), positions relative ("+2", "*"), and after each calls=
# the callee's inclusive cost at the call's position.
CALLGRIND = """\
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
fl=(1) /src/engine/simulator.rs
fn=(1) nicsim::engine::simulator::Simulator::step
10 5
+2 7
cfl=(2) /src/bus/host_bus.rs
cfn=(2) nicsim::bus::host_bus::HostBus::write_parts
calls=3 100
* 900
+1 2
fl=(2)
fn=(2)
100 300
* 4
fn=(3) <nicsim::link::sink::Sink as nicsim::engine::component::Component>::handle
5 40
cfn=(4) __tls_get_addr
calls=1 0
5 11
fn=(4)
0 11
totals: 369
"""


def test_each_function_counts_its_own_instructions_not_its_callees():
    own = benchinstr.exclusive(CALLGRIND.splitlines(keepends=True))
    assert own == {
        "nicsim::engine::simulator::Simulator::step": 14,
        "nicsim::bus::host_bus::HostBus::write_parts": 304,
        "<nicsim::link::sink::Sink as nicsim::engine::component::Component>::handle": 40,
        "__tls_get_addr": 11,
    }
    assert sum(own.values()) == 369, "the totals line: every instruction once"


@pytest.mark.parametrize(
    "function, part",
    [
        ("nicsim::engine::queue::EventQueue<T>::pop", "engine"),
        ("nicsim::host::steps::<impl nicsim::host::machine::Machine>::deferred", "host"),
        ("<nicsim::link::ethernet::EthernetLink as nicsim::engine::component::Component>::handle", "link"),
        ("nicsim::link::source::Source::write_frame", "source"),
        ("<nicsim::link::switch::Switch as nicsim::engine::component::Component>::handle", "switch"),
        ("nicsim::nic::rx::Rx::pump", "nic"),
        ("smoltcp::wire::tcp::Repr::emit", "smoltcp"),
        ("<alloc::vec::drain::Drain<T,A> as core::ops::drop::Drop>::drop", "rust"),
        ("__memcpy_avx_unaligned_erms", "libc"),
        ("mi_free", "allocator"),
        ("__tls_get_addr", "other"),
    ],
)
def test_a_function_belongs_to_the_part_of_its_own_module(function, part):
    assert benchinstr.part(function) == part


def test_instructions_are_counted_for_one_scenario_or_the_goals_only(cli):
    for case in ("link", "scale"):
        r = cli("bench", "--case", case, "--instructions")
        assert r.returncode == 2
        assert "--instructions" in r.stderr and case in r.stderr


def test_the_goals_refuse_to_count_without_valgrind_before_any_run(cli, tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    r = cli("bench", "--case", "goals", "--instructions", env=env, timeout=20)
    assert r.returncode == 2 and "valgrind" in r.stderr and "measuring" not in r.stderr, r.stderr


def test_without_valgrind_the_count_is_refused_saying_what_it_needs(cli, tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    r = cli("bench", "--case", "10g-napi", "--repeat", "1", "--instructions", env=env)
    assert r.returncode == 2
    assert "valgrind" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind (apt-get install valgrind) to count instructions")
def test_a_counted_run_gives_instructions_per_frame_by_part(cli):
    r = cli("bench", "--case", "10g-napi", "--repeat", "1", "--instructions", "--json", timeout=600)
    assert r.returncode == 0, r.stderr
    f = json.loads(r.stdout)
    assert f["host_frames"] > 290_000, "20 ms of 64-byte frames at 10 Gb/s"
    per = f["instructions_per_frame"]
    assert per == pytest.approx(f["instructions"] / f["host_frames"])
    assert 200 < per < 100_000
    parts = f["parts_per_frame"]
    # The flood's work: adapter, bus, host and source all take a share.
    for name in ("adapters: FIFOs, DMA, rings, firmware", "host bus: PCI, PCIe calendars", "host: driver, steps, applications", "traffic sources"):
        assert parts[name] > 20, name
    assert "TCP/IP: smoltcp" not in parts, "a sink takes the flood: no TCP"
    assert sum(parts.values()) == pytest.approx(per, rel=0.01), "the parts left out are under half an instruction a frame"
    assert f["instructions_per_second"] == pytest.approx(f["instructions"] / f["wall_seconds"])
