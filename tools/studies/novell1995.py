"""BRIEF.md experiment 4: intelligent LAN adapters and notification policies in a NetWare server."""

from pathlib import Path

import nicsim

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "papers" / "novell1995" / "server.toml"
SMART = {"host[0].adapter.intelligent": True}
POLICIES = [
    ("interrupts", {"host[0].driver.mode": "handler"}),
    ("polling", {"host[0].driver.mode": "os-poll"}),
    ("polling + interrupt backup", {"host[0].driver.mode": "os-poll", "host[0].adapter.interrupt": "backup", "host[0].adapter.backup_timeout": "1ms"}),
]
WRITES = {"host[0].file_serve.request_bytes": 65536, "host[0].file_serve.read_bytes": 64}


def run(**sets):
    return nicsim.run(SCENARIO, overrides=sets).component("server").metrics


def grid() -> str:
    rows = []
    for n in (1, 2, 3, 4):
        for kind, extra in (("dumb", {}), ("intelligent", SMART)):
            cells = []
            for _, policy in POLICIES:
                m = run(**{"host[0].adapters": n, **policy, **extra})
                cells.append(f"{m['app_sent_mbytes_per_s']:.2f} MB/s, {m['cpu_utilization']:.0%}")
            rows.append(f"| {n} | {kind} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def run_queue() -> str:
    rows = []
    for procs in (0, 2, 4, 8):
        cells = []
        for _, policy in POLICIES:
            m = run(**{**WRITES, **policy, "host[0].background.processes": procs, "host[0].background.slice": "1ms"})
            cells.append(f"{m['app_received_mbytes_per_s']:.2f} MB/s, loss {m['rx_loss']:.0%}")
        rows.append(f"| {procs} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def section() -> str:
    base = run()
    head = " | ".join(name for name, _ in POLICIES)
    return f"""## Novell 1995: intelligent adapters in a NetWare server (scenario `papers/novell1995/server.toml`)

A 100 MHz Pentium with two peer 32-bit 33 MHz PCI buses serves 64 KB blocks from its
cache; each adapter has its own 100 Mb/s segment with three clients (BRIEF.md
experiment 4). The one published figure calibrates the host's transmit cost per frame
and the clients' think time: one dumb PRO/100 with interrupts gave a little over
7 MB/s at 50% server CPU. The model gives **{base['app_sent_mbytes_per_s']:.2f} MB/s at
{base['cpu_utilization']:.1%} CPU** ({base['interrupts_per_s']:,.0f} interrupts a second).
Everything below is a prediction: BRIEF.md publishes no other figure, so none is
compared.

Throughput (bytes served a second) and server CPU, against the number and kind of
adapters and the notification policy. "Intelligent" is the PRO/100 Smart: its i960
(assumed 33 MHz, 1000 cycles a frame) fills the receive control block fields and
builds the media headers, which the host driver does for a dumb adapter.

| adapters | kind | {head} |
|---|---|---|---|---|
{grid()}

Additive performance: one dumb adapter's 7.1 MB/s uses half the processor, so two
saturate it and more add nothing (about 14 MB/s with interrupts, 15.7 with polling,
which saves the interrupt entry and exit per frame). Moving the per-frame media work
to the adapter's processor lets three and four adapters go on scaling, to about
20 MB/s (interrupts) and 22-23 MB/s (polling); none is fully additive (4 × 7.1 = 28.5).

The polling-frequency problem: clients *write* 64 KB blocks (the server mostly
receives) while processes that are always ready fill the run queue, each running
1 ms when its turn comes. NetWare's polling process gets a turn once per pass.

| ready processes | {head} |
|---|---|---|---|
{run_queue()}

Pure polling overruns the adapter's 32 buffers and 3 KB FIFO as the run queue grows;
with interrupt backup (the adapter interrupts when a frame waits 1 ms unpolled, or
when four buffers are left) nothing is lost, and interrupts take the processor from
the background processes only when the poll is late.
"""
