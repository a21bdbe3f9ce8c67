"""Work handed between a host's processors (issue 56): the TCP applications on
a processor of their own (`app_cpu`), each received segment's application part
handed over from the processor that did its protocol work, and an idle
processor's wake-up priced in cycles (`costs.wakeup`) and time
(`costs.wakeup_latency`)."""

import pytest

import nicsim

# The HP study's receiver with its own stack on a ring adapter: a TTCP transfer
# at the wire's speed, whose reads are the application's part of each segment.
RECEIVE = "papers/hp2001/receive.toml"
HOST_STACK = {"host[0].cpus": 2, "host[0].adapter[0].kind": "ring"}


def receiver(scenarios, **sets):
    return nicsim.run(scenarios / RECEIVE, overrides={**HOST_STACK, **sets}).component("sut").metrics


def test_the_applications_run_on_their_processor_and_the_work_moves_whole(scenarios):
    here = receiver(scenarios)
    there = receiver(scenarios, **{"host[0].app_cpu": 1})
    assert here["cpu1_cycles"] == 0 and "wakeups" not in here
    assert there["cpu1_cycles"] > 0.2 * there["cpu0_cycles"], "the reads and their copies are processor 1's"
    # With wake-ups free, the work only moves: not a cycle more or less.
    assert there["cpu0_cycles"] + there["cpu1_cycles"] == here["cpu0_cycles"]
    assert there["ttcp_bytes"] == here["ttcp_bytes"] and there["transfer_complete"] == 1
    assert 0 < there["wakeups"] <= there["tcp_data_in"] + 3, "at most one wake-up a segment (the data, the handshake, the FIN)"


def test_each_wake_up_costs_the_woken_processor_its_cycles(scenarios):
    free = receiver(scenarios, **{"host[0].app_cpu": 1})
    paid = receiver(scenarios, **{"host[0].app_cpu": 1, "host[0].costs.wakeup": 3000, "host[0].costs.wakeup_latency": "5us"})
    assert paid["wakeups"] > 1000
    assert paid["cpu1_cycles"] - free["cpu1_cycles"] == pytest.approx(3000 * paid["wakeups"], rel=0.01)
    assert paid["cpu0_cycles"] == pytest.approx(free["cpu0_cycles"], rel=0.01), "the handing processor pays nothing more"


def test_an_application_processor_the_host_lacks_is_refused(cli, scenarios):
    r = cli("run", scenarios / RECEIVE, "--set", "host[0].cpus=2", "--set", "host[0].app_cpu=2")
    assert r.returncode == 2 and "host[0].app_cpu" in r.stderr, r.stderr


QUEUES = "combinations/rss-queues.toml"


def flood(scenarios, **sets):
    return nicsim.run(scenarios / QUEUES, overrides=sets).component("server").metrics


def test_busy_polling_takes_every_queue_on_the_applications_processor(scenarios):
    """Four queues: a poll loop each on its vector's processor takes the flood;
    busy polling from the applications' processor takes every queue there, so
    one processor does it all and loses what it cannot take."""
    spread = flood(scenarios, **{"host[0].driver.mode": "poll"})
    busy = flood(scenarios, **{"host[0].driver.mode": "poll", "host[0].driver.busy_poll": True, "host[0].app_cpu": 3})
    assert spread["rx_loss"] == 0 and all(spread[f"cpu{k}_utilization"] > 0.9 for k in range(4))
    assert busy["cpu3_utilization"] > 0.99 and all(busy[f"cpu{k}_utilization"] == 0 for k in range(3))
    assert all(busy[f"queue{q}_rx_frames"] > 1000 for q in range(4)), "every queue polled"
    assert busy["sink_frame_rate_pps"] == pytest.approx(spread["sink_frame_rate_pps"] / 4, rel=0.05)


def test_busy_polling_answers_sooner_than_an_interrupt_at_a_light_load(scenarios):
    light = {"source[0].rate": "100kpps", "host[0].adapter[0].interrupt": "min-interval", "host[0].adapter[0].interrupt_interval": "20us"}
    napi = flood(scenarios, **light)
    busy = flood(scenarios, **light, **{"host[0].driver.mode": "poll", "host[0].driver.busy_poll": True})
    assert busy["sink_frame_rate_pps"] == pytest.approx(napi["sink_frame_rate_pps"], rel=0.01) == 100_000
    assert busy["mean_rx_to_stack_us"] < napi["mean_rx_to_stack_us"] - 1, "no interrupt, no moderation to wait for"


def test_busy_polling_needs_the_poll_mode(cli, scenarios):
    r = cli("run", scenarios / QUEUES, "--set", "host[0].driver.busy_poll=true")
    assert r.returncode == 2 and "host[0].driver.busy_poll" in r.stderr and 'mode = "poll"' in r.stderr, r.stderr
