"""BRIEF.md experiment 3: the Malta programmable gigabit adapter (Alteon Tigon)."""

from pathlib import Path

import nicsim

DIR = Path(__file__).resolve().parents[2] / "scenarios" / "papers" / "malta2001"
SIZES = [64, 128, 256, 512, 1024, 1518]


def metrics(name, component, **sets):
    return nicsim.run(DIR / f"{name}.toml", overrides=sets).component(component).metrics


def dma_table() -> str:
    rows = []
    for length in [64, 128, 256, 512, 1024, 1512, 2048, 4096, 8192, 16384, 32768, 65536]:
        got = {}
        for d in ("to-host", "to-adapter"):
            got[d] = metrics("dma", "host", **{"smart_host[0].send.length": length, "smart_host[0].send.direction": d})["dma_mbps"]
        note = "calibration point: 665.6 Mb/s" if length == 1512 else "prediction"
        rows.append(f"| {length} | {got['to-host']:.1f} | {got['to-adapter']:.1f} | {note} |")
    return "\n".join(rows)


def line_rate() -> str:
    rows = []
    for payload, frame, mtu in [(1498, 1516, 1500), (9054, 9072, 9054)]:
        m = metrics("adapter-to-adapter", "receiver", mtu=mtu, **{"smart_host[0].send.frame_size": frame, "smart_host[0].send.count": 5000})
        theory = payload / (payload + 38) * 1000
        rows.append(f"| {payload} | {theory:.2f} | {m['rx_l2_payload_mbps']:.2f} | {m['adapter_cpu1_utilization'] * 100:.0f}% |")
    return "\n".join(rows)


def whole_frames() -> str:
    rows = []
    for size in SIZES:
        s = metrics("send", "host", **{"smart_host[0].send.frame_size": size, "smart_host[0].send.count": 10000})
        r = metrics("receive", "host", **{"source[0].frame_size": size})
        h = metrics("host-to-host", "receiver", **{"smart_host[0].send.frame_size": size, "smart_host[0].send.count": 10000})
        rows.append(
            f"| {size} | {s['tx_frames_per_s'] / 1e3:.1f} k/s, {s['tx_goodput_mbps']:.0f} Mb/s | "
            f"{r['rx_frames_per_s'] / 1e3:.1f} k/s, {r['rx_goodput_mbps']:.0f} Mb/s, {r['rx_overruns']} overruns | "
            f"{h['rx_frames_per_s'] / 1e3:.1f} k/s, {h['rx_goodput_mbps']:.0f} Mb/s |"
        )
    return "\n".join(rows)


def batching() -> str:
    rows = []
    for size in (64, 1518):
        for n in (1, 2, 4, 8, 16, 32, 42):
            per_chunk = min(n, 43)
            base = {"smart_host[0].send.frame_size": size, "smart_host[0].send.count": 20000}
            frag = metrics("host-to-host", "receiver", **base, **{"smart_host[0].send.per_chunk": per_chunk})
            coal = metrics("host-to-host", "receiver", **base, **{"smart_host[1].receive.coalesce_frames": n})
            both = metrics(
                "host-to-host", "receiver", **base, **{"smart_host[0].send.per_chunk": per_chunk, "smart_host[1].receive.coalesce_frames": n}
            )
            flood = metrics("receive", "host", **{"source[0].frame_size": size, "smart_host[0].receive.coalesce_frames": n})
            cells = [f"{m['rx_frames_per_s'] / 1e3:.0f} k/s, {m['rx_goodput_mbps']:.0f} Mb/s" for m in (frag, coal, both, flood)]
            rows.append(f"| {size} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def timeouts() -> str:
    rows = []
    for t in ("10us", "50us", "100us", "1ms"):
        m = metrics("receive", "host", **{"source[0].frame_size": 64, "source[0].rate": "100Mbps", "smart_host[0].receive.coalesce_frames": 42, "smart_host[0].receive.coalesce_timeout": t})
        rows.append(f"| {t} | {m['rx_frames_per_host_buffer']:.1f} | {m['rx_frames_per_s'] / 1e3:.0f} k/s | {m['host_cpu_utilization'] * 100:.1f}% |")
    return "\n".join(rows)


def section() -> str:
    return f"""## Malta 2001: the programmable gigabit adapter (scenarios `papers/malta2001/`)

Alteon Tigon (two 88 MHz processors, 1 MB SRAM, one DMA engine each way) on 32-bit
33 MHz PCI; interrupts masked, the host polls an event ring; pinned buffers (zero copy).
The processor clock, memory bandwidth and every firmware cost except the DMA set-up are
**assumed** (`docs/model.md`). BRIEF.md describes these experiments but gives one figure,
the calibration point; everything else here is a prediction with nothing published
beside it.

### DMA throughput against transfer length (`dma.toml`)

The firmware programs a transfer, waits for it, programs the next (Mb/s of data moved).

| length (B) | adapter to host | host to adapter | note |
|---|---|---|---|
{dma_table()}

The DMA set-up cost (570 cycles) is fitted to the 1512-byte adapter-to-host point and
nothing else. Host-to-adapter transfers pay the PCI read round trip as well. Long
transfers approach the bus's 1066 Mb/s because the model lets a burst run unbroken
(no latency-timer disconnects): an optimistic prediction past a few KB.

### Adapter to adapter, firmware-made frames (`adapter-to-adapter.toml`)

| Ethernet payload (B) | line rate, theoretical (Mb/s) | nicsim (Mb/s) | receiving processor busy |
|---|---|---|---|
{line_rate()}

The dissertation reports line rate for this test; the model reaches it with the
firmware processors mostly idle.

### Whole frames with the standard firmware (`send.toml`, `receive.toml`, `host-to-host.toml`)

| frame (B) | send | receive (line-rate flood) | host to host |
|---|---|---|---|
{whole_frames()}

Every frame costs a doorbell, a descriptor fetch, one DMA (with its 570-cycle set-up)
and an event; at 33 MHz PCI the DMA and firmware time per frame, not the wire, set the
rate. Receive overruns count frames dropped when the adapter's receive memory was full.

### Packet fragmentation and packet coalescing (`host-to-host.toml`)

Frames per chunk (fragmentation: the sender's host packs N frames into one DMA) and
frames per host buffer (coalescing: the receiving adapter packs up to N frames into one
DMA), alone and together; receive rate at the far host.

| frame (B) | N | fragmentation | coalescing | both | coalescing, line-rate tester |
|---|---|---|---|---|---|
{batching()}

Host to host, coalescing alone cannot help: the sender, one DMA per frame, is the
limit. Fragmentation alone is then limited by the receiver's per-frame DMA (the same
rate as the flood column at N = 1). Together they lift both ends; against a line-rate
tester coalescing alone shows what the receiver can take.

### Coalescing timeout (64-byte frames at 100 Mb/s offered, 42 frames per buffer)

| timeout | frames per host buffer | frames delivered | host CPU |
|---|---|---|---|
{timeouts()}

Frames arrive every 6.7 µs. With short timeouts the buffers hold more frames than the
timeout alone allows: each buffer costs the receive processor a DMA set-up and an
event (7 µs), so it falls behind and frames gather while it catches up.
"""
